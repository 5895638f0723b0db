"""The topology picture of a phase: the plan's Clos design drawn as it is built.

The stored topology is rebuilt into its design (:func:`gpuplan.fabric.topology.design_of`), and the
picture follows it: tiers top-down (core groups, spines by pod, leaves by scalable unit and rail,
then the servers or the rack-scale NVLink racks), one scalable unit (SU) and one pod in detail
and the others as counted groups ("x 8 SUs"). On a rail-optimized fabric GPU i of every server
of an SU goes to the SU's leaf of rail i (the rail's colour). The leaf's down : up port split is
written beside the leaf tier and drawn as two bars, and an oversubscribed leaf's uplinks are
thinner in proportion. Rack-scale systems (GB200 NVL72) draw their compute trays in racks with
the NVLink switch trays of the plan's interconnect.

Size: at most :data:`MAX_SWITCHES` switches per tier, and (render/svg_servers.py) ``MAX_SERVERS``
servers and ``MAX_RACKS`` racks are drawn, whatever the fabric's size (a 16k-GPU three-tier fabric draws
about as many elements as a two-tier one; tests cap it at :data:`MAX_ELEMENTS`).
"""

from __future__ import annotations

from gpuplan.core.contract import Interconnect, Topology
from gpuplan.fabric.sizing import ClosDesign
from gpuplan.render.svg import PALETTE, Labels, el, f, fit, heading, svg, text_width, wrap
from gpuplan.render.svg_servers import (
    GAP, LINK, SWITCH_H, Frame, frame_of, gap_mark, nodes_svg, rack_height, row_x, shown, spread, what,
)

MAX_SWITCHES = 16
#: Elements of one topology picture, at most (tests/render/test_pictures.py checks it).
MAX_ELEMENTS = 600
WIDTH = 960
LEFT = 210  # the drawing starts right of the label column
RIGHT = WIDTH - 12
SWITCH_FILL = "#ddf4ff"


def _switches(xs: dict[int, float], y: float, w: float, tier: str) -> list[str]:
    return [el("rect", {"x": f(x - w / 2), "y": f(y), "width": f(w), "height": SWITCH_H, "rx": 3,
                        "fill": SWITCH_FILL, "stroke": "#57606a", "data-tier": tier, "data-index": i})
            for i, x in sorted(xs.items())]


def _counted(x0: float, y0: float, x1: float, y1: float, lines: list[str], labels: Labels, what: str) -> str:
    """A dashed box standing for identical groups, its count written inside."""
    parts = [el("rect", {"x": f(x0), "y": f(y0), "width": f(x1 - x0), "height": f(y1 - y0), "rx": 6,
                         "fill": "#f6f8fa", "stroke": "#8c959f", "stroke-dasharray": "5 3"})]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2 - 7 * (len(lines) - 1)
    for k, line in enumerate(lines):
        parts.append(labels.place(fit(line, x1 - x0 - 8, bold=k == 0), [(cx, cy + 4 + 14 * k, "middle")], required=True,
                                  **({"font-weight": "bold"} if k == 0 else {})))
    return el("g", {"class": "counted", "data-what": what}, *parts)


def _side(labels: Labels, y: float, lines: list[str], cls: str, **data: object) -> str:
    """The label column left of a tier: what the tier is and its counts."""
    texts = [labels.place(fit(line, LEFT - 16, bold=k == 0), [(10, y + 13 * k, "start")], required=True,
                          **({"font-weight": "bold"} if k == 0 else {})) for k, line in enumerate(lines)]
    return el("g", {"class": cls, **{f"data-{k.replace('_', '-')}": v for k, v in data.items()}}, *texts)


def _ratio_bars(y: float, down: int, up: int, radix: int, labels: Labels) -> str:
    """Two bars under the leaf label: one leaf's down ports and up ports, to scale."""
    scale = (LEFT - 80) / max(1, radix)
    parts = []
    for k, (word, ports, colour) in enumerate((("down", down, "#1a7f37"), ("up", up, "#0969da"))):
        width = max(1.0, ports * scale)
        parts.append(el("rect", {"x": 10, "y": f(y + 12 * k), "width": f(width), "height": 6, "fill": colour}))
        parts.append(labels.place(f"{ports} {word}", [(14 + width, y + 12 * k + 6, "start")], size=9, required=True))
    return el("g", {"class": "port-bars", "data-down": down, "data-up": up}, *parts)


def _ratio_words(d: ClosDesign) -> str:
    r = d.oversubscription
    return "1:1, non-blocking" if abs(r - 1) < 1e-9 else f"{r:.3g}:1 oversubscribed" if r > 1 else f"1:{1 / r:.3g}"


def topology_svg(topo: Topology, ic: Interconnect | None, *, title: str) -> str:
    """The picture of ``topo``; a hand-made topology without Clos parameters gets counts only."""
    try:
        fr = frame_of(topo, ic)
    except ValueError:
        return _counts_only(topo, title)
    d = fr.d
    labels = Labels(WIDTH, 10_000)
    parts = [heading(labels, title, 10, 18, WIDTH - 20)]
    summary = wrap(_summary(topo, fr), WIDTH - 20)
    parts += [labels.place(line, [(10, 36 + 15 * k, "start")], required=True) for k, line in enumerate(summary)]
    y = 58 + 15 * (len(summary) - 1)
    rows: dict[str, float] = {}
    for tier in (["core"] if d.tiers == 3 else []) + (["spine"] if d.tiers >= 2 else []) + ["leaf"]:
        rows[tier] = y
        y += SWITCH_H + GAP
    rows["nodes"] = y
    bottom = y + (rack_height(fr) + 18 if fr.trays_per_rack else 50)  # of the servers and their numbers
    # regions: pod 1 (A) and, with several pods, the other pods (B)
    a0, a1 = LEFT, RIGHT
    if d.tiers == 3 and d.pods > 1:
        a1 = LEFT + (RIGHT - LEFT) * 0.72
    # leaf row inside A: SU 1 in detail, the rest of the pod's SUs counted
    su0, su1 = a0, a1
    if d.tiers > 1 and fr.units_per_pod > 1:
        su1 = a0 + (a1 - a0) * 0.74
    leaf_x, leaf_w, rails = _leaves(fr, su0, su1)
    body: list[str] = []
    uplink_w = max(0.5, 1.6 / max(1.0, d.oversubscription))
    # spines (pod 1 / the only pod) and the links from SU 1's leaves up to them
    spine_x: dict[int, float] = {}
    if d.tiers >= 2:
        per_pod = d.spines_per_pod if d.tiers == 3 else d.spines
        spine_x = row_x(shown(per_pod, MAX_SWITCHES), per_pod, a0 + 10, a1 - 10)
        sw = min(30.0, (a1 - a0) / (len(spine_x) + 1) - 6)
        ly, sy = rows["leaf"], rows["spine"] + SWITCH_H
        links = [el("line", {"x1": f(lx), "y1": f(ly), "x2": f(sx), "y2": f(sy), "stroke": LINK,
                             "stroke-width": f"{uplink_w:.3g}"}) for lx in leaf_x.values() for sx in spine_x.values()]
        if su1 < a1:  # the counted SUs reach every spine too
            cx = (su1 + a1) / 2
            links += [el("line", {"x1": f(cx), "y1": f(ly), "x2": f(sx), "y2": f(sy), "stroke": LINK,
                                  "stroke-opacity": "0.5", "stroke-width": f"{uplink_w:.3g}", "stroke-dasharray": "3 3"})
                      for sx in spine_x.values()]
        body.append(el("g", {"class": "links", "data-between": "leaf-spine", "data-links": topo.leaf_spine_links,
                             "data-stroke": f"{uplink_w:.3g}"}, *links))
        body.append(el("g", {"class": "tier", "data-tier": "spine", "data-switches": topo.spine_switches},
                       *_switches(spine_x, rows["spine"], sw, "spine"), *gap_mark(spine_x, per_pod, rows["spine"] + 16)))
        if d.tiers == 3:
            body.append(el("rect", {"x": f(a0 - 4), "y": f(rows["spine"] - 8), "width": f(a1 - a0 + 8),
                                    "height": f(bottom + 6 - rows["spine"] + 8), "rx": 8, "fill": "none",
                                    "stroke": "#8250df", "stroke-dasharray": "6 3", "class": "pod"}))
            body.append(labels.place(f"pod 1 of {d.pods}", [(a1 + 2, rows["spine"] - 12, "end")],
                                     required=True, fill="#8250df", **{"font-weight": "bold"}))
    if d.tiers == 3:
        body += _core(fr, topo, rows, spine_x, a1, labels)
    # leaves of SU 1
    body.append(el("g", {"class": "tier", "data-tier": "leaf", "data-switches": topo.leaf_switches},
                   *_switches(leaf_x, rows["leaf"], leaf_w, "leaf"),
                   *(_rail_labels(fr, leaf_x, rows["leaf"] + 15, leaf_w, labels) if rails else
                     _plane_labels(fr, leaf_x, rows["leaf"] + 15, leaf_w, labels))))
    if su1 < a1:
        rest = fr.units_per_pod - 1
        first_pod = " of pod 1" if d.tiers == 3 else ""
        in_pod = min(d.spec.nodes, fr.units_per_pod * d.unit_nodes) - fr.su_nodes
        body.append(_counted(su1 + 8, rows["leaf"] - 4, a1 - 4, bottom,
                             [(f"SU 2\u2013{rest + 1}" if rest > 1 else "SU 2") + first_pod,
                              f"x {rest:,} SU{'s' if rest != 1 else ''}",
                              f"{rest * fr.leaves_per_unit:,} leaves", f"{in_pod:,} {what(fr)}"],
                             labels, "units"))
    if d.tiers == 3 and d.pods > 1:
        others = d.pods - 1
        body.append(_counted(a1 + 12, rows["spine"] - 8, RIGHT + 4, bottom + 6,
                             [f"pods 2\u2013{d.pods}", f"x {others:,} pod{'s' if others != 1 else ''}",
                              f"{d.leaves - d.pod_leaves:,} leaves", f"{d.spines - d.spines_per_pod:,} spines",
                              f"{max(0, d.spec.nodes - fr.units_per_pod * d.unit_nodes):,} {what(fr)}"],
                             labels, "pods"))
    body += nodes_svg(fr, rows["nodes"], leaf_x, su0, su1, labels)
    height = bottom + 24
    side = _sides(fr, topo, rows, labels)
    foot = _footnotes(fr, labels, height)
    height += 16 * len(foot) - (4 if foot else 0)
    return svg("topology", WIDTH, height, title, *parts, *side, *body, *foot, kind=topo.kind, tiers=topo.tiers,
               units=d.units, pods=d.pods if d.tiers == 3 else None, oversubscription=f"{d.oversubscription:.3g}",
               planes=d.spec.planes, rails=d.spec.rails)


def _summary(topo: Topology, fr: Frame) -> str:
    d = fr.d
    words = [f"{topo.nodes:,} {'compute trays' if fr.trays_per_rack else 'servers'}"]
    if d.tiers > 1:
        words.append(f"{d.units:,} scalable unit{'s' if d.units != 1 else ''} (SU) of {d.unit_nodes}")
    if d.tiers == 3:
        words.append(f"{d.pods} pods")
    counts = [f"{topo.leaf_switches:,} leaf"] + ([f"{topo.spine_switches:,} spine"] if d.tiers >= 2 else []) + (
        [f"{topo.core_switches:,} core"] if d.tiers == 3 else [])
    words.append(" + ".join(counts) + f" switch{'es' if topo.leaf_switches + topo.spine_switches != 1 else ''}")
    words.append(f"leaf {d.leaf_down} down : {d.leaf_up} up = {_ratio_words(d)}" if d.tiers > 1 else "one switch per plane" if d.copies > 1 else "one switch")
    return "; ".join(words)


def _leaves(fr: Frame, x0: float, x1: float) -> tuple[dict[int, float], float, dict[int, float]]:
    """x of each drawn leaf of SU 1 (key: leaf index in the unit), its width, the rails' centres."""
    d = fr.d
    groups = d.rail_groups if fr.rail_optimized else 1
    per = d.leaves_per_group if d.tiers > 1 else d.copies  # a single switch per plane: draw the planes
    per_drawn = per if groups * per <= MAX_SWITCHES else max(1, MAX_SWITCHES // groups)
    xs: dict[int, float] = {}
    slots = spread(groups * per_drawn, x0 + 4, x1 - 4)
    for g in range(groups):
        for j in range(per_drawn):
            xs[g * per + (j if j < per_drawn - 1 or per_drawn == per else per - 1)] = slots[g * per_drawn + j]
    w = min(56.0, (x1 - x0) / max(1, len(xs)) - 8)
    centres = {g + 1: sum(slots[g * per_drawn:(g + 1) * per_drawn]) / per_drawn for g in range(groups)}
    return xs, w, centres if fr.rail_optimized else {}


def _rail_labels(fr: Frame, leaf_x: dict[int, float], y: float, width: float, labels: Labels) -> list[str]:
    """"rail i" on each drawn leaf of SU 1, in the rail's colour ("x n" where n leaves of a rail
    are drawn as one)."""
    d = fr.d
    drawn: dict[int, int] = {}
    for key in leaf_x:
        drawn[key // d.leaves_per_group] = drawn.get(key // d.leaves_per_group, 0) + 1
    out = []
    for key, x in sorted(leaf_x.items()):
        r = key // d.leaves_per_group + 1
        more = f" x{d.leaves_per_group}" if drawn[r - 1] < d.leaves_per_group else ""
        text = next((w for w in (f"rail {r}{more}", f"r{r}{more}", f"{r}") if text_width(w, bold=True) <= width - 4), f"{r}")
        out.append(labels.place(text, [(x, y, "middle")], required=True, fill=PALETTE[(r - 1) % len(PALETTE)],
                                **{"class": "rail-label", "data-rail": r, "font-weight": "bold"}))
    return out


def _plane_labels(fr: Frame, leaf_x: dict[int, float], y: float, width: float, labels: Labels) -> list[str]:
    """A single switch per plane: "plane i" on each."""
    if fr.d.tiers > 1 or fr.d.copies < 2:
        return []
    return [labels.place(next((w for w in (f"plane {k + 1}", f"p{k + 1}") if text_width(w) <= width - 4), ""),
                         [(x, y, "middle")]) for k, x in sorted(leaf_x.items())]


def _core(fr: Frame, topo: Topology, rows: dict[str, float], spine_x: dict[int, float], a1: float,
          labels: Labels) -> list[str]:
    d = fr.d
    groups = d.spines_per_pod
    core_x = row_x(shown(groups, MAX_SWITCHES), groups, LEFT + 10, RIGHT - 10)
    w = min(34.0, (RIGHT - LEFT) / (len(core_x) + 1) - 6)
    y = rows["core"]
    boxes = []
    for j, x in sorted(core_x.items()):
        inner = [el("rect", {"x": f(x - w / 2 + 3), "y": f(y + 3 + k * (SWITCH_H - 6) / min(4, d.cores_per_group)),
                             "width": f(w - 6), "height": f(max(2.0, (SWITCH_H - 6) / min(4, d.cores_per_group) - 1.5)),
                             "fill": SWITCH_FILL, "stroke": "#57606a", "stroke-width": "0.5"})
                 for k in range(min(4, d.cores_per_group))]
        boxes.append(el("g", {"class": "core-group", "data-index": j, "data-cores": d.cores_per_group},
                        el("rect", {"x": f(x - w / 2), "y": f(y), "width": f(w), "height": SWITCH_H, "rx": 3,
                                    "fill": "#fff", "stroke": "#8250df"}), *inner))
    links = [el("line", {"x1": f(sx), "y1": f(rows["spine"]), "x2": f(core_x[j]), "y2": f(y + SWITCH_H),
                         "stroke": LINK}) for j, sx in spine_x.items() if j in core_x]
    if d.pods > 1:
        bx = (a1 + 8 + RIGHT) / 2
        links += [el("line", {"x1": f(bx), "y1": f(rows["spine"] - 4), "x2": f(cx), "y2": f(y + SWITCH_H),
                              "stroke": LINK, "stroke-opacity": "0.5", "stroke-dasharray": "3 3"})
                  for cx in core_x.values()]
    return [el("g", {"class": "links", "data-between": "spine-core", "data-links": topo.spine_core_links}, *links),
            el("g", {"class": "tier", "data-tier": "core", "data-switches": topo.core_switches,
                     "data-groups": groups * d.copies}, *boxes, *gap_mark(core_x, groups, y + 16))]


def _sides(fr: Frame, topo: Topology, rows: dict[str, float], labels: Labels) -> list[str]:
    d = fr.d
    out = []
    if "core" in rows:
        out.append(_side(labels, rows["core"] + 4, [f"core: {topo.core_switches:,} switches",
                                                   f"{d.spines_per_pod} groups of {d.cores_per_group}",
                                                   "joins spine j of every pod"], "side", tier="core"))
    if "spine" in rows:
        per_spine = d.leaf_up // max(1, d.spines_per_pod if d.tiers == 3 else d.spines)
        second = (f"{d.pods} pods of {d.spines_per_pod} spines" if d.tiers == 3
                  else f"every leaf: {per_spine} link{'s' if per_spine != 1 else ''} to each")
        out.append(_side(labels, rows["spine"] + 4, [f"spine: {topo.spine_switches:,} switches", second], "side",
                         tier="spine"))
    leaf_lines = [f"leaf: {topo.leaf_switches:,} switch{'es' if topo.leaf_switches != 1 else ''}"]
    if d.tiers > 1:
        leaf_lines += [f"{d.leaf_down} down : {d.leaf_up} up ports", _ratio_words(d)]
    else:
        leaf_lines += [f"one {d.spec.radix}-port switch per plane" if d.copies > 1 else f"{d.spec.radix} ports, no uplinks"]
    out.append(_side(labels, rows["leaf"] + 4, leaf_lines, "side", tier="leaf", ratio=f"{d.oversubscription:.3g}"))
    if d.tiers > 1:
        out.append(_ratio_bars(rows["leaf"] + 4 + 13 * 3 - 7, d.leaf_down, d.leaf_up, d.spec.radix, labels))
    node_lines = [f"{what(fr)}: {d.spec.nodes:,}", f"{fr.gpus_per_node} GPUs each, {d.ports_per_node * d.copies} fabric "
                  f"port{'s' if d.ports_per_node * d.copies != 1 else ''}"]
    if d.tiers > 1:
        node_lines.append(f"SU 1 drawn: {fr.su_nodes} {what(fr)}")
    out.append(_side(labels, rows["nodes"] + 8, node_lines, "side", tier="nodes"))
    return out


def _footnotes(fr: Frame, labels: Labels, y: float) -> list[str]:
    d = fr.d
    notes = []
    if fr.trays_per_rack:
        per, n = fr.trays_per_rack, fr.su_nodes
        racks = -(-d.spec.nodes // per)
        notes.append(f"{racks:,} NVL{fr.domain_gpus} racks, each one NVLink domain of {fr.domain_gpus} GPUs: {per} compute "
                     f"trays of {fr.gpus_per_node} GPUs (green)"
                     + (f" and {fr.switch_trays} NVLink switch trays (blue)." if fr.switch_trays else "."))
        wiring = ("Every tray has one port per rail; a line is one rack's trays bundled to that rail's leaf"
                  if fr.rail_optimized else "A line is one rack's trays bundled to their leaf")
        notes.append(wiring + (f"; SU 1 = trays 1\u2013{n}, grey trays belong to SU 2." if n % per and d.units > 1 else "."))
    if d.spec.layout == "rail-only":
        notes.append(f"Rail-only: one network per rail, x {d.spec.rails} rails; no switch joins two rails "
                     "(cross-rail traffic goes over NVLink inside the server). Rail 1 drawn.")
    if d.spec.planes > 1:
        notes.append(f"x {d.spec.planes} planes: every server has a port in each identical plane"
                     + ("; one plane drawn." if d.tiers > 1 else "; both drawn (one switch each)."))
    return [labels.place(fit(n, WIDTH - 20), [(10, y + 16 * k, "start")], required=True)
            for k, n in enumerate(notes)]


def _counts_only(topo: Topology, title: str) -> str:
    """A topology without its Clos parameters (hand-made): one row per tier with its switch count."""
    tiers = [(n, c) for n, c in (("core", topo.core_switches), ("spine", topo.spine_switches),
                                 ("leaf", topo.leaf_switches)) if c > 0] + [("nodes", topo.nodes)]
    height = 50 + 40 * len(tiers)
    labels = Labels(WIDTH, height)
    parts = [heading(labels, title, 10, 18, WIDTH - 20),
             labels.place(f"{topo.oversubscription:.3g}:1; no Clos parameters in the plan, so counts only",
                          [(10, 36, "start")], required=True)]
    for k, (name, count) in enumerate(tiers):
        y = 50 + 40 * k
        words = f"{count:,} {'servers' if name == 'nodes' else name + ' switches'}"
        box = el("rect", {"x": LEFT, "y": f(y), "width": f(RIGHT - LEFT), "height": SWITCH_H, "rx": 3,
                          "fill": SWITCH_FILL if name != "nodes" else "#dafbe1", "stroke": "#57606a"})
        text = labels.place(words, [((LEFT + RIGHT) / 2, y + 15, "middle")], required=True)
        attrs = ({"class": "nodes", "data-count": count} if name == "nodes"
                 else {"class": "tier", "data-tier": name, "data-switches": count})
        parts.append(el("g", attrs, box, text))
    return svg("topology", WIDTH, height, title, *parts, kind=topo.kind, tiers=topo.tiers)


KIND_WORDS = {"rail-optimized-fat-tree": "rail-optimized fat tree", "fat-tree": "fat tree", "leaf-spine": "leaf-spine",
              "rail-only": "rail-only", "single-switch": "single switch"}
TIER_WORDS = {1: "1 tier (leaf)", 2: "2 tiers (leaf, spine)", 3: "3 tiers (leaf, spine, core)"}


def topology_title(topo: Topology, ic: Interconnect | None) -> str:
    """"Compute fabric: rail-optimized fat tree, 2 tiers (leaf, spine), qm9700 (64 x 400G), 1:1"."""
    front = ic is not None and ic.frontend_gbit_per_node > 0 and ic.frontend_fabric is None
    net = "Front-end network" if front else "Compute fabric"
    fabric = f", {ic.scaleout_fabric}" if ic is not None and ic.scaleout_fabric else ""
    switch = (f", {topo.switch} ({topo.clos.switch_radix} x {topo.port_gbit:g}G)" if topo.switch and topo.clos
              else f", {topo.switch}" if topo.switch else "")
    return (f"{net}: {KIND_WORDS.get(topo.kind, topo.kind)}, {TIER_WORDS.get(topo.tiers, f'{topo.tiers} tiers')}"
            f"{fabric}{switch}")
