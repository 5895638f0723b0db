"""Choose the interconnect of a phase from the traffic its layout puts on the network.

``design_fabric`` takes a :class:`~gpuplan.fabric.demand.TrafficDemand` and returns a
:class:`FabricDesign`: the :class:`~gpuplan.core.contract.Interconnect` (scale-up domain, scale-out
technology, speed, NICs, rails, and the reasons in numbers), the
:class:`~gpuplan.core.contract.Topology` (sized in closed form), and the designs behind them (the
Clos of the topology, a serving phase's separate front end), which the BOM prices as they are.

Defaults an experienced engineer would pick (docs/fabric-model.md, "Choosing the interconnect"):

* Training on a baseboard server: one NIC per GPU (rails = GPUs per node, RA-11333-001: 8 x
  NDR400 per DGX H100) at the reference server's speed when that meets the need, else the
  smallest catalog speed that does; never above what the GPU's host link can feed. NVIDIA ->
  InfiniBand, AMD / Intel -> RoCE Ethernet (AMD MI3xx cluster RA). Rail-optimized, non-blocking
  fat tree in whole scalable units (RA-11333-001).
* Serving whose replica fits in one node: no east-west fabric, only a front-end Ethernet
  leaf-spine (NVIDIA NVL72 enterprise RA: the E/W compute fabric is optional for pure
  inference) at 100G or 200G per node, oversubscribed 4:1 or 3:1 as the traffic allows (Juniper
  AI inference JVD: 3:1 front end), dual-homed to two independent planes and sized for the
  requests plus weight loading (fabric/frontend.py). A replica crossing nodes (TP/PP/EP) or
  disaggregated KV transfer adds an east-west fabric sized like training's.
"""

from __future__ import annotations

import math
from gpuplan.core.memo import memo
from gpuplan.core.records import dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Fabric, Gpu, Nic
from gpuplan.core.errors import InputError
from gpuplan.fabric.compact import compact_reason, fewest_switches
from gpuplan.fabric.demand import TrafficDemand, frontend_text, training_traffic_text
from gpuplan.fabric.frontend import FRONTEND_PLANES, FrontEnd, frontend_design
from gpuplan.fabric.parts import (  # noqa: F401  (re-exported)
    FRONTEND_MIN_GBIT,
    FRONTEND_RATIOS,
    choose_frontend,
    down_ports,
    frontend_ratio,
    pick_nic,
    switch_for,
)
from gpuplan.fabric.sizing import ClosDesign, ClosSpec, Layout, SizingError, leaf_split, size_clos, tier_capacity
from gpuplan.fabric.topology import build_topology, no_fabric
from gpuplan.core.contract import Interconnect, Topology

GROUP_NAMES = {"dp": "DP gradient sync", "pp": "PP activation sends", "ep": "EP all-to-all",
               "cp": "CP ring attention", "tp": "TP collectives"}
TOPOLOGY_CHOICES = {"rail-optimized": "rail-optimized", "rail-optimized-fat-tree": "rail-optimized",
                    "fat-tree": "fat-tree", "leaf-spine": "fat-tree", "rail-only": "rail-only"}
#: Fabrics planned with a graph check by default (endpoints); larger ones on request.
GRAPH_CHECK_LIMIT = 4096


@dataclass(frozen=True)
class FabricDesign:
    """The network of one phase as designed: what the plan reports (interconnect, topology) and
    the designs behind it, so that nothing downstream sizes the fabric again."""

    interconnect: Interconnect
    topology: Topology
    #: The Clos behind ``topology`` (a frontend-only serving phase: the front end's); None without one.
    compute: ClosDesign | None
    #: A serving phase's separate dual-homed front end (next to an east-west fabric).
    frontend: FrontEnd | None = None


@dataclass(frozen=True)
class ScaleOut:
    """A chosen scale-out network: technology, port speed, ports per GPU and NIC."""

    fabric: Fabric
    ports_per_gpu: int
    nic: Nic | None
    reasons: tuple[str, ...]

    @property
    def gbit_per_gpu(self) -> float:
        return self.fabric.port_gbit * self.ports_per_gpu


def design_fabric(demand: TrafficDemand, gpu: Gpu, catalog: Catalog, *, oversubscription: float | None = None,
                  topology: str | None = None, scalable_unit_nodes: int | None = None,
                  reserved_node_slots: int = 0, check: bool | None = None,
                  scaleout: ScaleOut | None = None) -> FabricDesign:
    """Interconnect, topology and designs of one phase (``topology`` None = the phase default;
    ``scaleout``: a given training network, fabric/given.py, instead of the chosen one).

    ``topology``: "rail-optimized" (training default), "fat-tree" / "leaf-spine", "rail-only".
    ``check``: build and check the graph (default: fabrics up to GRAPH_CHECK_LIMIT endpoints).
    """
    if topology is not None and topology not in TOPOLOGY_CHOICES:
        raise InputError(f"unknown topology {topology!r}; expected one of {', '.join(sorted(TOPOLOGY_CHOICES))}",
                         field="topology")
    if oversubscription is not None and not (oversubscription > 0 and math.isfinite(oversubscription)):
        raise InputError("oversubscription must be a positive number", field="oversubscription")
    nodes = gpu.servers_for(demand.gpus)  # spare trays of a last NVL72 rack are cabled too
    reasons = [_scaleup_reason(gpu, demand.gpus)]
    if demand.phase == "serving":
        return _serving(demand, gpu, catalog, nodes, reasons, oversubscription, topology, scalable_unit_nodes,
                        reserved_node_slots, check)
    if _single_domain(demand, gpu, nodes):
        reasons.append(f"All {demand.gpus} GPUs sit in one scale-up domain: no scale-out fabric.")
        return FabricDesign(_interconnect(gpu, None, demand.required_gbit_per_gpu, 0, reasons), no_fabric(nodes), None)
    out = scaleout or choose_scaleout(demand, gpu, catalog, need=demand.required_gbit_per_gpu)
    reasons += out.reasons
    layout = _layout(topology, gpu, default="rail-optimized", reasons=reasons)
    ratio = 1.0 if oversubscription is None else oversubscription
    if ratio > 1:
        reasons.append(f"Leaf tier oversubscribed {ratio:g}:1 at the user's request: cross-leaf traffic gets "
                       f"1/{ratio:g} of the NIC rate; the step time is re-evaluated with it.")
    topo, design, out = _size(out, gpu, catalog, nodes, layout, ratio, scalable_unit_nodes, reserved_node_slots,
                              check, reasons, rail_planes=_rail_planes(demand, gpu, topology))
    rails = gpu.gpus_per_node * out.ports_per_gpu
    return FabricDesign(_interconnect(gpu, out, demand.required_gbit_per_gpu, rails, reasons), topo, design)


# ---------------------------------------------------------------------------- serving
def _serving(demand: TrafficDemand, gpu: Gpu, catalog: Catalog, nodes: int, reasons: list[str],
             oversubscription: float | None, topology: str | None, su: int | None, reserved: int,
             check: bool | None) -> FabricDesign:
    front, front_ports = choose_frontend(demand.frontend_gbit_per_node, catalog)
    crosses = bool(demand.cross_node_groups) or demand.kv_transfer_gbit_per_gpu > 0
    fr_reason = (f"Front end: {frontend_text(demand)} -> {front_ports} x {front.port_gbit:g}G Ethernet per node "
                 f"({front.name}).")
    if not crosses:
        reasons.append("Each replica fits in one node (no cross-node TP/PP/EP, no KV transfer): no east-west "
                       "fabric, only a front-end Ethernet leaf-spine.")
        reasons.append(fr_reason)
        return _frontend_only(demand, gpu, catalog, nodes, front, front_ports, reasons, oversubscription, topology,
                              su, reserved, check)
    need = max(demand.required_gbit_per_gpu, demand.kv_transfer_gbit_per_gpu)
    out = choose_scaleout(demand, gpu, catalog, need=need)
    reasons += out.reasons
    default: Layout = "rail-optimized" if demand.rail_aligned else "fat-tree"
    layout = _layout(topology, gpu, default=default, reasons=reasons)
    ratio = 1.0 if oversubscription is None else oversubscription
    topo, design, out = _size(out, gpu, catalog, nodes, layout, ratio, su, reserved, check, reasons,
                              rail_planes=_rail_planes(demand, gpu, topology))
    reasons.append(fr_reason + " It is a separate network (BOM: front-end lines).")
    try:  # the front end has its own default units and no reserved slots
        frontend = frontend_design(demand.frontend_gbit_per_node, nodes, catalog)
    except SizingError as exc:
        raise SizingError(f"the front end cannot connect {nodes:,} nodes: {exc}") from None
    ic = _interconnect(gpu, out, need, gpu.gpus_per_node * out.ports_per_gpu, reasons)
    ic = ic.model_copy(update={"frontend_fabric": front.id, "frontend_gbit_per_node": demand.frontend_gbit_per_node})
    return FabricDesign(ic, topo, design, frontend)


def _frontend_only(demand: TrafficDemand, gpu: Gpu, catalog: Catalog, nodes: int, front: Fabric, ports: int,
                   reasons: list[str], oversubscription: float | None, topology: str | None, su: int | None,
                   reserved: int, check: bool | None) -> FabricDesign:
    if topology is not None and TOPOLOGY_CHOICES[topology] != "fat-tree":
        reasons.append(f"Requested topology {topology!r} ignored: a front-end network is a plain leaf-spine.")
    try:
        fe = frontend_design(demand.frontend_gbit_per_node, nodes, catalog, oversubscription=oversubscription, su=su,
                             reserved=reserved)
    except SizingError as exc:
        raise SizingError(f"the front end cannot connect {nodes:,} nodes: {exc}") from None
    front, ports, ratio, design, nic = fe.fabric, fe.ports, fe.ratio, fe.design, fe.nic
    topo = _finish(design, fe.switch_id, front.port_gbit, check, frontend=True)
    reasons.append(f"Dual-homed: every node has {ports} x {front.port_gbit:g}G in each of {FRONTEND_PLANES} "
                   f"independent front-end planes, and either plane alone carries its traffic (a failed port, "
                   f"NIC port or switch does not cut a server off).")
    if oversubscription is None and topo.tiers > 1:
        reasons.append(f"Leaf-spine oversubscribed {ratio:g}:1: every node's request traffic crosses the spine, "
                       f"and {demand.frontend_gbit_per_node:.3g} Gb/s per node fits in 1/{ratio:g} of "
                       f"{ports} x {front.port_gbit:g}G at {front.efficiency:.0%} efficiency.")
    elif oversubscription is None:
        reasons.append(f"One switch per plane holds all {nodes:,} node{'s' if nodes != 1 else ''}: no spine "
                       f"tier, so nothing is oversubscribed.")
    reasons.append(_topology_reason(topo, design))
    ic = Interconnect(scaleup_tech=gpu.scaleup_tech, scaleup_domain_gpus=gpu.scaleup_domain,
                      scaleup_uni_gb_per_s=gpu.scaleup_uni_gb_per_s, **_node_fields(gpu), scaleout_fabric=front.id, scaleout_kind=front.kind,
                      nic=nic.id if nic else None, nics_per_node=fe.nics_per_node,
                      nic_gbit_per_gpu=ports * FRONTEND_PLANES * front.port_gbit / gpu.gpus_per_node,
                      required_gbit_per_gpu=demand.frontend_gbit_per_node / gpu.gpus_per_node, rails=ports,
                      reasons=reasons, frontend_gbit_per_node=demand.frontend_gbit_per_node)
    return FabricDesign(ic, topo, design)


# ---------------------------------------------------------------------------- scale-out choice
def choose_scaleout(demand: TrafficDemand, gpu: Gpu, catalog: Catalog, *, need: float) -> ScaleOut:
    """Technology, speed and NIC per GPU: reference speed when it meets the need, else the smallest that does."""
    kinds = ("infiniband", "ethernet") if gpu.vendor == "nvidia" else ("ethernet", "infiniband")
    kind = next((k for k in kinds if any(f.kind == k for f in catalog.fabrics.values())), None)
    if kind is None:
        raise InputError("the catalog has no scale-out fabric")
    fabrics = sorted((f for f in catalog.fabrics.values() if f.kind == kind), key=lambda f: (f.port_gbit, f.id))
    cap = gpu.host_link_uni_gb_per_s * 8
    ref = gpu.reference_scaleout_gbit_per_gpu
    on_die = gpu.reference_nic is None and ref > 0
    why_kind = _kind_reason(gpu, kind)
    chosen, ports, note = _speed(fabrics, ref, need, cap, on_die)
    nic = None if on_die else pick_nic(catalog, chosen, gpu=gpu, ports=1)
    reasons = [traffic_reason(demand, need)]
    achievable = chosen.port_gbit * ports * chosen.efficiency
    headroom = achievable / need if need > 0 else math.inf
    if not math.isfinite(headroom):
        head = "no measured need"
    elif headroom >= 1:
        head = f"{headroom:.1f}x headroom"
    else:
        head = f"{1 / headroom:.1f}x short of the {need:,.0f} Gb/s needed"
    nic_text = (f"{ports} on-die {chosen.port_gbit:g}G ports per GPU" if on_die else
                f"one {nic.name if nic else 'NIC (none in catalog)'} per GPU")
    reasons.append(f"{ports * chosen.port_gbit:g}G {chosen.name} per GPU ({why_kind}): {nic_text}, achievable "
                   f"{achievable:.0f} Gb/s at {chosen.efficiency:.0%} efficiency = {head}; {note}")
    if need > achievable:
        reasons.append(f"Shortfall: the layout needs {need:,.0f} Gb/s per GPU but the fastest speed the host link "
                       f"feeds gives {achievable:,.0f}; part of the communication is exposed.")
    return ScaleOut(fabric=chosen, ports_per_gpu=ports, nic=nic, reasons=tuple(reasons))


def _kind_reason(gpu: Gpu, kind: str) -> str:
    vendor = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel"}[gpu.vendor]
    if kind == "infiniband":
        return f"{vendor} GPU -> InfiniBand, the DGX SuperPOD compute fabric (RA-11333-001)"
    return f"{vendor} GPU -> RoCE Ethernet (AMD MI3xx cluster RA: RoCEv2 backend; Gaudi: on-die RoCE)"


def _speed(fabrics: list[Fabric], ref: float, need: float, cap: float, on_die: bool) -> tuple[Fabric, int, str]:
    if on_die:
        # Integrated ports (Gaudi 3: 3 x 200 GbE scale-out ports per GPU, habana-gaudi3-network).
        fits = [f for f in fabrics if ref % f.port_gbit == 0]
        if fits:
            fab = fits[-1]
            return fab, int(ref // fab.port_gbit), "the GPU's integrated scale-out ports."
    by_ref = [f for f in fabrics if abs(f.port_gbit - ref) < 1e-6]
    if by_ref and by_ref[0].port_gbit * by_ref[0].efficiency >= need:
        return by_ref[0], 1, "chosen because it is the reference server's own configuration and meets the need."
    feedable = [f for f in fabrics if f.port_gbit <= cap + 1e-6 or abs(f.port_gbit - ref) < 1e-6]
    for fab in feedable:
        if fab.port_gbit * fab.efficiency >= need:
            return fab, 1, (f"chosen as the smallest catalog speed that meets the need within the host link "
                            f"({cap:.0f} Gb/s).")
    if feedable:
        return feedable[-1], 1, f"the fastest speed the host link ({cap:.0f} Gb/s) can feed."
    return fabrics[0], 1, "the slowest catalog speed (nothing fits the host link)."


def _nics(nic: Nic | None, ports: int) -> int:
    return -(-ports // nic.ports) if nic else 0


# ---------------------------------------------------------------------------- sizing glue
def _layout(topology: str | None, gpu: Gpu, *, default: Layout, reasons: list[str]) -> Layout:
    layout: Layout = TOPOLOGY_CHOICES[topology] if topology else default  # type: ignore[assignment]
    if layout == "rail-only":
        if gpu.scaleup_domain < gpu.gpus_per_node or gpu.scaleup_tech in ("pcie", "nvlink-bridge"):
            raise InputError(f"rail-only needs every GPU of a node in one scale-up domain to forward cross-rail "
                             f"traffic; {gpu.id} has a {gpu.scaleup_domain}-GPU {gpu.scaleup_tech} domain",
                             field="topology")
        reasons.append("Rail-only (Wang, Ghobadi et al., arXiv 2307.12169): each rail is its own Clos, no spine "
                       "joins rails; cross-rail traffic goes over NVLink inside the node (reported 38-77% lower "
                       "network cost, 8.2-11.2% all-to-all overhead).")
    return layout


def _rail_planes(demand: TrafficDemand, gpu: Gpu, topology: str | None) -> bool:
    """Whether a sub-unit fabric may split the rails into planes: the default topology, rail-aligned
    cross-node traffic, and every GPU of a node in one NVLink-class domain (cross-rail via PXN)."""
    return (topology is None and demand.rail_aligned and gpu.scaleup_domain >= gpu.gpus_per_node
            and gpu.scaleup_tech not in ("pcie", "nvlink-bridge"))


def _size(out: ScaleOut, gpu: Gpu, catalog: Catalog, nodes: int, layout: Layout, ratio: float, su: int | None,
          reserved: int, check: bool | None, reasons: list[str], *,
          rail_planes: bool = False) -> tuple[Topology, ClosDesign, ScaleOut]:
    """Size the compute fabric; fall back to the other technology at the same speed when it cannot reach."""
    rails = gpu.gpus_per_node * out.ports_per_gpu
    candidates = [out.fabric] + sorted((f for f in catalog.fabrics.values() if f.kind != out.fabric.kind
                                        and abs(f.port_gbit - out.fabric.port_gbit) < 1e-6), key=lambda f: f.id)
    last_err: SizingError | None = None
    for fab in candidates:
        try:
            switch_id, radix = switch_for(fab, catalog, nodes * rails if layout != "rail-only" else nodes, ratio)
            spec = ClosSpec(radix=radix, nodes=nodes, rails=rails, layout=layout, oversubscription=ratio,
                            scalable_unit_nodes=su, reserved_node_slots=reserved)
            design = fewest_switches(spec, rail_planes=rail_planes)
        except SizingError as exc:
            last_err = exc
            continue
        if fab is not out.fabric:
            reasons.append(f"{out.fabric.name} cannot connect {nodes * rails} endpoints in three tiers with the "
                           f"catalog's switches; {fab.name} on {switch_id} can (four tiers are not modelled).")
            out = ScaleOut(fabric=fab, ports_per_gpu=out.ports_per_gpu,
                           nic=pick_nic(catalog, fab, gpu=gpu, ports=1) if out.nic else None, reasons=out.reasons)
        topo = _finish(design, switch_id, fab.port_gbit, check)
        if design.spec != spec:
            reasons.append(compact_reason(design, size_clos(spec)))
        reasons.append(_topology_reason(topo, design))
        return topo, design, out
    raise SizingError(f"no fabric in the catalog connects {nodes:,} nodes of {rails} rails: {last_err}")


#: Checked topologies by what they are built from: a design's graph is built and checked once,
#: however often a plan's runners-up or a sweep's points need the same fabric. Bounded.
_CHECKED: dict[tuple[object, ...], Topology] = memo()


def _finish(design: ClosDesign, switch_id: str, port_gbit: float, check: bool | None, *,
            frontend: bool = False) -> Topology:
    topo = build_topology(design, switch=switch_id, port_gbit=port_gbit, frontend=frontend)
    if check or (check is None and design.endpoints <= GRAPH_CHECK_LIMIT):
        from gpuplan.fabric.graph import checked_topology

        key = (design, switch_id, port_gbit, frontend)
        hit = _CHECKED.get(key)
        if hit is None:
            if len(_CHECKED) >= 256:
                _CHECKED.clear()
            hit = _CHECKED[key] = checked_topology(topo, design)
        topo = hit
    return topo


def _topology_reason(topo: Topology, design: ClosDesign) -> str:
    parts = [f"{topo.leaf_switches:,} leaf"]
    if topo.spine_switches:
        parts.append(f"{topo.spine_switches:,} spine")
    if topo.core_switches:
        parts.append(f"{topo.core_switches:,} core")
    tbit = topo.bisection_gbit / 1000
    hops = f"{topo.max_switch_hops} switch hop{'s' if topo.max_switch_hops != 1 else ''}"
    unit = f", built in units of {design.unit_nodes} nodes" if design.tiers > 1 else ""
    divisor = ""
    if design.tiers == 2 and design.spines > -(-design.leaves * design.leaf_up // design.spec.radix):
        divisor = (f"; {design.spines} spines (not {-(-design.leaves * design.leaf_up // design.spec.radix)}) so each "
                   f"leaf's {design.leaf_up} uplinks divide evenly (RA-11333-001 divisor rule)")
    return (f"Topology: {topo.kind.replace('-', ' ')}, {topo.tiers} tier{'s' if topo.tiers > 1 else ''} of "
            f"{topo.switch} ({design.spec.radix} ports at {topo.port_gbit:g}G): {', '.join(parts)} switch"
            f"{'es' if topo.leaf_switches + topo.spine_switches + topo.core_switches > 1 else ''}"
            f"{unit}; oversubscription {topo.oversubscription:.3g}:1; {hops} worst case; "
            + (f"bisection {f'{tbit:,.0f}' if tbit >= 1000 else f'{tbit:.4g}'} Tb/s one direction" if topo.nodes > 1 else
               "no bisection (one node: nothing to cut)") + f"{divisor}.")


# ---------------------------------------------------------------------------- texts
def _single_domain(demand: TrafficDemand, gpu: Gpu, nodes: int) -> bool:
    return nodes == 1 or (gpu.scaleup_domain >= demand.gpus and gpu.scaleup_domain > gpu.gpus_per_node)


def _scaleup_reason(gpu: Gpu, gpus: int) -> str:
    if gpu.scaleup_domain <= 1:
        return f"Scale-up: none ({gpu.scaleup_tech}); every GPU talks to others over {gpu.host_link}."
    text = (f"Scale-up: {gpu.scaleup_tech} domain of {gpu.scaleup_domain} GPUs at {gpu.scaleup_uni_gb_per_s:g} GB/s "
            f"per GPU per direction")
    if gpu.scaleup_domain > gpu.gpus_per_node:
        racks = -(-gpus // gpu.scaleup_domain)
        trays = gpu.scaleup_domain // gpu.gpus_per_node
        text += f" ({racks} rack-scale domain{'s' if racks > 1 else ''} of {trays} trays)"
    else:
        text += " (one baseboard)"
    return text + "."


def traffic_reason(demand: TrafficDemand, need: float) -> str:
    names = [GROUP_NAMES.get(g, g) for g in demand.cross_node_groups] or ["cross-node traffic"]
    # "DP gradient sync and PP activation sends move ...", "EP all-to-all moves ..."
    groups = (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1])
    groups += " moves" if len(names) == 1 else " move"
    gb = demand.scaleout_bytes_per_gpu / 1e9
    if demand.phase == "training":
        return training_traffic_text(demand, groups, need)
    kv = (f"; disaggregated KV transfer {demand.kv_transfer_gbit_per_gpu:.3g} Gb/s per GPU"
          if demand.kv_transfer_gbit_per_gpu > 0 else "")
    return f"{groups} {gb:.3g} GB per GPU per second{kv}: needs {need:.3g} Gb/s per GPU."


def _node_fields(gpu: Gpu) -> dict[str, int]:
    """GPUs per node and the scale-up domain's switch trays, for the report's pictures."""
    return {"gpus_per_node": gpu.gpus_per_node, "scaleup_switch_trays": gpu.scaleup_switch_trays or 0}


def _interconnect(gpu: Gpu, out: ScaleOut | None, need: float, rails: int, reasons: list[str]) -> Interconnect:
    fab = out.fabric if out else None
    nic = out.nic if out else None
    nics_per_node = _nics(nic, rails) if nic else 0
    return Interconnect(scaleup_tech=gpu.scaleup_tech, scaleup_domain_gpus=gpu.scaleup_domain,
                        scaleup_uni_gb_per_s=gpu.scaleup_uni_gb_per_s, **_node_fields(gpu), scaleout_fabric=fab.id if fab else None,
                        scaleout_kind=fab.kind if fab else None, nic=nic.id if nic else None,
                        nics_per_node=nics_per_node, nic_gbit_per_gpu=out.gbit_per_gpu if out else 0.0,
                        required_gbit_per_gpu=need, rails=rails, reasons=list(reasons))
