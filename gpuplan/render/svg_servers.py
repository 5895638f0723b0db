"""Servers, rack-scale racks and the drawing frame of the topology picture (render/svg_topology.py).

:class:`Frame` reads what the picture needs from the plan's Clos design and interconnect; the
helpers place rows of drawn items (the first few and the last, a gap for the rest); the servers of
the detailed scalable unit are drawn with their GPUs in rail colours and one link per rail, and a
rack-scale system's compute trays in racks with their NVLink switch trays, one bundle per rail.
"""

from __future__ import annotations

from gpuplan.core.records import dataclass

from gpuplan.core.contract import Interconnect, Topology
from gpuplan.fabric.sizing import ClosDesign
from gpuplan.fabric.topology import design_of
from gpuplan.render.svg import PALETTE, Labels, el, f

MAX_SERVERS = 8
MAX_RACKS = 3
SWITCH_H = 22
GAP = 66  # between tiers: the links
SERVER_FILL, TRAY_FILL, NVSWITCH_FILL, OTHER_FILL = "#dafbe1", "#1a7f37", "#0969da", "#eaeef2"
LINK = "#8c959f"
TRAY_H, SW_TRAY_H = 5.0, 4.0


@dataclass(frozen=True)
class Frame:
    """What the picture draws, read from the design and the interconnect."""

    d: ClosDesign
    gpus_per_node: int
    trays_per_rack: int  # 0 unless the scale-up domain spans several nodes (NVL72: 18)
    switch_trays: int
    domain_gpus: int
    su_nodes: int  # nodes in SU 1 (the detailed one)

    @property
    def rail_optimized(self) -> bool:
        return self.d.spec.layout == "rail-optimized" and self.d.tiers > 1

    @property
    def leaves_per_unit(self) -> int:
        return self.d.rail_groups * self.d.leaves_per_group

    @property
    def units_per_pod(self) -> int:
        return max(1, self.d.pod_leaves // self.leaves_per_unit) if self.d.tiers == 3 else self.d.units


def frame_of(topo: Topology, ic: Interconnect | None) -> Frame:
    d = design_of(topo)
    gpn = (ic.gpus_per_node if ic is not None else 0) or d.spec.rails  # saved before gpus_per_node: a port per GPU
    domain = ic.scaleup_domain_gpus if ic is not None else 0
    trays = domain // gpn if domain > gpn and domain % gpn == 0 else 0
    return Frame(d=d, gpus_per_node=gpn, trays_per_rack=trays, switch_trays=ic.scaleup_switch_trays if ic else 0,
                 domain_gpus=domain, su_nodes=min(d.unit_nodes, d.spec.nodes) if d.tiers > 1 else d.spec.nodes)


def spread(n: int, x0: float, x1: float) -> list[float]:
    """Centres of n equal slots between x0 and x1."""
    return [x0 + (x1 - x0) * (i + 0.5) / n for i in range(n)]


def shown(n: int, cap: int) -> list[int]:
    """Indices drawn of n items: all, or the first cap - 2 and the last (a gap slot marks the rest)."""
    return list(range(n)) if n <= cap else list(range(cap - 2)) + [n - 1]


def row_x(indices: list[int], n: int, x0: float, x1: float) -> dict[int, float]:
    """x of each drawn item; a skipped run leaves one slot for the ellipsis."""
    slots = len(indices) + (1 if len(indices) < n else 0)
    xs = spread(slots, x0, x1)
    out = {i: xs[k] for k, i in enumerate(indices[:-1])}
    out[indices[-1]] = xs[-1]
    return out


def gap_mark(xs: dict[int, float], n: int, y: float) -> list[str]:
    if len(xs) >= n:
        return []
    keys = sorted(xs)
    x = (xs[keys[-2]] + xs[keys[-1]]) / 2 if len(keys) > 1 else xs[keys[0]] + 20
    return [el("text", {"x": f(x), "y": f(y), "text-anchor": "middle", "fill": "#57606a"}, "\u2026")]


def what(fr: Frame) -> str:
    return "compute trays" if fr.trays_per_rack else "servers"


def nodes_svg(fr: Frame, y: float, leaf_x: dict[int, float], x0: float, x1: float, labels: Labels) -> list[str]:
    """SU 1's servers (or NVL racks of trays) and their links to SU 1's leaves."""
    d = fr.d
    if fr.trays_per_rack:
        return _racks(fr, y, leaf_x, x0, x1, labels)
    n = fr.su_nodes
    drawn = shown(n, MAX_SERVERS)
    xs = row_x(drawn, n, x0 + 4, x1 - 4)
    w = min(96.0, (x1 - x0) / (len(xs) + 1) - 8)
    ports = d.ports_per_node if not fr.rail_optimized else d.rail_groups
    servers, links = [], []
    for i, x in sorted(xs.items()):
        cell = (w - 6) / max(1, fr.gpus_per_node)
        gpus = [el("rect", {"x": f(x - w / 2 + 3 + g * cell), "y": f(y + 16), "width": f(max(1.0, cell - 1.5)),
                            "height": 12, "fill": PALETTE[g % len(PALETTE)] if fr.rail_optimized or
                            (d.spec.layout == "rail-only" and g == 0) else "#1a7f37"})
                for g in range(fr.gpus_per_node)]
        servers.append(el("g", {"class": "server", "data-index": i},
                          el("rect", {"x": f(x - w / 2), "y": f(y), "width": f(w), "height": 32, "rx": 3,
                                      "fill": SERVER_FILL, "stroke": "#57606a"}), *gpus))
        for p in range(ports if fr.rail_optimized else 1):
            leaf = leaf_of(fr, i, p, leaf_x)
            if leaf is None:
                continue
            px = x - w / 2 + 3 + (p + 0.5) * (w - 6) / max(1, fr.gpus_per_node if fr.rail_optimized else 1)
            targets = [leaf] if d.tiers > 1 else list(leaf_x.values())  # one switch per plane: every plane
            colour = PALETTE[p % len(PALETTE)] if fr.rail_optimized else LINK
            links += [el("line", {"x1": f(px), "y1": f(y), "x2": f(lx), "y2": f(y - GAP), "stroke": colour,
                                  "stroke-width": "1.2"}) for lx in targets]
    tags = [labels.place(str(i + 1), [(x, y + 46, "middle")], size=10) for i, x in sorted(xs.items())]
    return [el("g", {"class": "links", "data-between": "node-leaf"}, *links),
            el("g", {"class": "nodes", "data-count": d.spec.nodes, "data-drawn": len(xs)}, *servers, *tags,
               *gap_mark(xs, n, y + 20))]


def leaf_of(fr: Frame, node: int, port: int, leaf_x: dict[int, float]) -> float | None:
    """x of the SU-1 leaf that node ``node``'s port ``port`` plugs into (nearest drawn one)."""
    d = fr.d
    if d.tiers == 1:
        return next(iter(leaf_x.values()))
    j = min(node // max(1, d.slots_per_leaf), d.leaves_per_group - 1)
    g = port if fr.rail_optimized else 0
    key = g * d.leaves_per_group + j
    if key in leaf_x:
        return leaf_x[key]
    same = [k for k in leaf_x if k // d.leaves_per_group == g]
    return leaf_x[min(same, key=lambda k: abs(k - key))] if same else None


TRAY_H, SW_TRAY_H = 5.0, 4.0


def rack_height(fr: Frame) -> float:
    return fr.trays_per_rack * TRAY_H + fr.switch_trays * SW_TRAY_H + 8


def _racks(fr: Frame, y: float, leaf_x: dict[int, float], x0: float, x1: float, labels: Labels) -> list[str]:
    """Rack-scale domains (NVL72): the racks holding SU 1's trays, their NVLink switch trays in the
    middle, one bundle per rail from each rack to that rail's leaf."""
    d, per = fr.d, fr.trays_per_rack
    n = fr.su_nodes
    racks_needed = -(-n // per)
    drawn = shown(racks_needed, MAX_RACKS)
    rack_w, tray_h, sw_h = 64.0, TRAY_H, SW_TRAY_H
    height = rack_height(fr)
    xs = {r: x0 + 8 + rack_w / 2 + k * (rack_w + 36) for k, r in enumerate(drawn)}
    out, links = [], []
    for r, x in sorted(xs.items()):
        cells = []
        ty = y + 4
        top_half = (per + 1) // 2
        for tr in range(per):
            node = r * per + tr
            mine = node < n
            if tr == top_half and fr.switch_trays:
                for _ in range(fr.switch_trays):
                    cells.append(el("rect", {"x": f(x - rack_w / 2 + 4), "y": f(ty), "width": f(rack_w - 8),
                                             "height": f(sw_h - 1), "fill": NVSWITCH_FILL, "class": "nvswitch-tray"}))
                    ty += sw_h
            cells.append(el("rect", {"x": f(x - rack_w / 2 + 4), "y": f(ty), "width": f(rack_w - 8),
                                     "height": f(tray_h - 1), "fill": TRAY_FILL if mine else OTHER_FILL,
                                     "class": "tray"}))
            ty += tray_h
        out.append(el("g", {"class": "rack", "data-trays": per, "data-switch-trays": fr.switch_trays,
                            "data-gpus": fr.domain_gpus},
                      el("rect", {"x": f(x - rack_w / 2), "y": f(y), "width": f(rack_w), "height": f(height),
                                  "rx": 2, "fill": "#f6f8fa", "stroke": "#57606a"}), *cells))
        in_su = max(0, min(per, n - r * per))
        for p in range(d.rail_groups if fr.rail_optimized else 1):
            leaf = leaf_of(fr, r * per, p, leaf_x)
            if leaf is None or not in_su:
                continue
            px = x - rack_w / 2 + 8 + p * (rack_w - 16) / max(1, d.rail_groups - 1 if fr.rail_optimized else 1)
            links.append(el("line", {"x1": f(px), "y1": f(y), "x2": f(leaf), "y2": f(y - GAP),
                                     "stroke": PALETTE[p % len(PALETTE)] if fr.rail_optimized else LINK,
                                     "stroke-width": f(0.8 + in_su / 6), "data-trays": in_su}))
        out.append(labels.place(f"NVL{fr.domain_gpus} rack {r + 1}", [(x, y + height + 14, "middle")], size=10))
    out += gap_mark({k: v for k, v in xs.items()}, racks_needed, y + height / 2)
    racks = -(-d.spec.nodes // per)
    return [el("g", {"class": "links", "data-between": "node-leaf"}, *links),
            el("g", {"class": "nodes racks", "data-count": d.spec.nodes, "data-racks": racks}, *out)]
