"""Bill of materials of one phase: servers, NICs, switches, optics, cables, storage, management,
racks, power and cooling (docs/bom.md).

Every line carries quantity, unit price, unit power, source and date from the catalog. A part
without a catalog price is listed in ``Bom.unpriced_parts`` and left out of ``capex_usd`` (never
counted as $0); a part without a power figure is listed in ``Bom.unpowered_parts``. Parts the
design needs but the catalog does not have (a module type, a single-mode fibre) appear as
``no-catalog-part:...`` lines, unpriced. Rules (docs/fabric-model.md, "Bill of materials"):

* Servers: the GPU's reference server at ``node_price_usd`` (without compute-fabric NICs and
  optics, which are separate lines) and ``node_power_kw`` (the system's maximum, NICs inside:
  NIC lines show their own power but add none). GPUs are listed inside the servers.
* Optics and cables: :mod:`gpuplan.fabric.media` (RA-11333-001 Table 8 conventions).
* Storage and its converged storage / front-end fabric: :mod:`gpuplan.fabric.storage`.
* Racks, PDUs / power shelves, cooling, head nodes and out-of-band management:
  :mod:`gpuplan.fabric.facility` (compute racks by the server's reference layout or the power
  budget; switches, storage and head nodes go into other racks by rack units).
* A line priced by an estimate (a catalog ``price_estimate``) is marked ``estimate`` with its
  uncertainty; ``Bom.estimated_capex_usd`` is their share of capex.
"""

from __future__ import annotations

from gpuplan.core.records import dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu, Nic, Optic, Switch
from gpuplan.fabric.media import (
    LINK_TIERS, REACH_M, ModuleCounts, choose_media, count_modules, pick_cable, pick_fiber, pick_module,
)
from gpuplan.fabric.facility import (
    RACK_UNITS, default_pue, head_nodes, management_lines, part_for, rack_lines, rack_plan, servers_per_rack,
)
from gpuplan.fabric.frontend import FrontEnd
from gpuplan.fabric.interconnect import FabricDesign
from gpuplan.fabric.sizing import ClosDesign
from gpuplan.fabric.storage import StorageNeed, size_storage, storage_lines, storage_network
from gpuplan.core.contract import Bom, BomItem, Interconnect, Topology

NETWORK = ("nic", "switch", "transceiver", "cable")


def rack_power_budget_kw(catalog: Catalog) -> float:
    """Compute-rack power budget, kW (``catalog/calibration/bom.toml``, validated at load)."""
    return float(catalog.table("bom").rack_power_kw)


def nodes_per_rack(gpu: Gpu, catalog: Catalog) -> int:
    """Servers per compute rack: a rack-scale domain (NVL72) is one rack, a reference rack layout
    (``rack_servers``) its count; else power and space decide (gpuplan.fabric.facility)."""
    return servers_per_rack(gpu, catalog)


# ---------------------------------------------------------------------------- lines
def _source(rec: object, catalog: Catalog, *groups: str) -> tuple[str | None, str | None]:
    """Source ids of the given groups (falling back to 'default') and the price date."""
    sources: dict[str, str] = getattr(rec, "sources", {})
    ids = []
    for grp in groups:
        sid = sources.get(grp) or sources.get("default")
        if sid and sid not in ids:
            ids.append(sid)
    date = getattr(rec, "price_date", None)
    if date is None and ids and ids[0] in catalog.sources:
        date = catalog.sources[ids[0]].date
    return ("; ".join(ids) or None), date


def _item(category: str, tier: str | None, part_id: str, description: str, quantity: int, price: float | None,
          power: float | None, source: str | None, date: str | None, *, adds_power: bool = True,
          estimate: bool = False, uncertainty: float | None = None) -> BomItem:
    return BomItem(category=category, tier=tier, part_id=part_id,  # type: ignore[arg-type]
                   description=description, quantity=quantity, unit_price_usd=price, unit_power_w=power,
                   total_price_usd=None if price is None else price * quantity,
                   total_power_w=None if power is None or not adds_power else power * quantity,
                   source=source, price_date=date, estimate=estimate and price is not None,
                   price_uncertainty=uncertainty if estimate and price is not None else None)


def _part(category: str, tier: str, rec: Optic | Switch | Nic, quantity: int, catalog: Catalog, note: str = "",
          *, adds_power: bool = True) -> BomItem:
    source, date = _source(rec, catalog, "price", "power")
    desc = rec.name + (f" ({note})" if note else "")
    return _item(category, tier, rec.id, desc, quantity, rec.price_usd, rec.power_w, source, date,
                 adds_power=adds_power, estimate=rec.price_estimate, uncertainty=rec.price_uncertainty)


def _missing(category: str, tier: str, what: str, quantity: int) -> BomItem:
    return _item(category, tier, f"no-catalog-part:{what}", f"needed but not in the catalog: {what}", quantity,
                 None, None, None, None)


# ---------------------------------------------------------------------------- fabric lines
@dataclass(frozen=True)
class _Net:
    role: str
    design: ClosDesign
    switch: Switch
    port_gbit: float
    nic: Nic | None
    nics: int


def _fabric_lines(net: _Net, gpu: Gpu, catalog: Catalog) -> list[BomItem]:
    lines: list[BomItem] = []
    role, d = net.role, net.design
    if net.nic is not None and net.nics:
        lines.append(_part("nic", role, net.nic, net.nics, catalog, "power inside the server figure",
                           adds_power=False))
    for tier, count in (("leaf", d.leaf_switches), ("spine", d.spine_switches), ("core", d.core_switches)):
        if count:
            lines.append(_part("switch", f"{role}-{tier}", net.switch, count, catalog))
    media = choose_media(d, net.switch, net.port_gbit, gpu, nodes_per_rack(gpu, catalog), catalog)
    counts = count_modules(d, media)
    lines += _module_lines(counts, media.switch_lpc, media.node_lpm, net, catalog, media.reach_m, media.dac_links)
    return lines


def _module_lines(counts: ModuleCounts, lpc: int, node_lpm: int, net: _Net, catalog: Catalog, reach,
                  dac_links: int) -> list[BomItem]:
    lines: list[BomItem] = []
    gbit = net.port_gbit
    modes: dict[str, str | None] = {}  # fibre mode of each link tier's switch-side modules
    for (sw_tier, link_tier), qty in sorted(counts.switch_modules.items()):
        optic, note = pick_module(catalog, "switch", gbit, lpc, reach(link_tier))
        if optic is not None:
            modes.setdefault(link_tier, optic.fiber_mode)
        tier = f"{net.role}-{sw_tier}:{link_tier}"
        lines.append(_part("transceiver", tier, optic, qty, catalog, note) if optic else
                     _missing("transceiver", tier, f"switch-{lpc}x{gbit:g}g-{reach(link_tier):g}m", qty))
    if counts.node_modules:
        optic, note = pick_module(catalog, "node", gbit, node_lpm, reach("node-leaf"))
        tier = f"{net.role}-node:node-leaf"
        lines.append(_part("transceiver", tier, optic, counts.node_modules, catalog, note) if optic else
                     _missing("transceiver", tier, f"node-{node_lpm}x{gbit:g}g-{reach('node-leaf'):g}m",
                              counts.node_modules))
    for link_tier in LINK_TIERS:
        if link_tier not in counts.cables:
            continue
        medium, qty = counts.cables[link_tier]
        if not qty:
            continue
        tier = f"{net.role}:{link_tier}"
        metres = reach(link_tier)
        per_item = dac_links if medium == "dac" and link_tier == "node-leaf" else 1
        cable = (pick_fiber(catalog, metres, modes.get(link_tier)) if medium == "optical"
                 else pick_cable(catalog, medium, gbit * per_item, metres))
        what = "fibre" if medium == "optical" else medium
        lines.append(_part("cable", tier, cable, qty, catalog) if cable else
                     _missing("cable", tier, f"{what}-{gbit * per_item:g}g-{metres:g}m", qty))
    return lines


def _compute_net(interconnect: Interconnect, topology: Topology, design: ClosDesign, catalog: Catalog,
                 role: str) -> _Net:
    switch = catalog.switches[topology.switch or ""]
    nic = catalog.nics.get(interconnect.nic or "")
    return _Net(role=role, design=design, switch=switch, port_gbit=topology.port_gbit, nic=nic,
                nics=topology.nodes * interconnect.nics_per_node)


def _frontend_net(front: FrontEnd, nodes: int, catalog: Catalog) -> _Net:
    """The separate front end of a serving phase with an east-west fabric, as design_fabric made it."""
    return _Net(role="frontend", design=front.design, switch=catalog.switches[front.switch_id],
                port_gbit=front.fabric.port_gbit, nic=front.nic, nics=nodes * front.nics_per_node)


# ---------------------------------------------------------------------------- the BOM
def build_bom(phase: str, gpu: Gpu, gpus: int, fabric: FabricDesign, catalog: Catalog, *,
              storage: StorageNeed | None = None, pue: float | None = None,
              servers: tuple[tuple[Gpu, int], ...] = ()) -> Bom:
    """The bill of materials of one phase from its designed fabric (see the module docstring for the rules).

    ``servers``: (GPU, servers) of each pool when the phase runs on servers of several GPU types
    (disaggregated prefill and decode pools); each pool gets its own server lines and compute
    racks, ``gpu`` (whose fabric was designed) the network, storage and management racks. Empty:
    every server is ``gpu``'s."""
    interconnect, topology = fabric.interconnect, fabric.topology
    pools = servers or ((gpu, max(topology.nodes, gpu.servers_for(gpus))),)
    nodes = sum(n for _, n in pools)
    lines = [line for g, n in pools for line in _server_lines(g, n, catalog)]
    nets: list[_Net] = []
    if topology.kind != "none" and topology.switch and fabric.compute is not None:
        role = "frontend" if phase == "serving" and interconnect.frontend_fabric is None else "compute"
        nets.append(_compute_net(interconnect, topology, fabric.compute, catalog, role))
    if phase == "serving" and fabric.frontend is not None:
        nets.append(_frontend_net(fabric.frontend, nodes, catalog))
    sizing = size_storage(storage, nodes, catalog) if storage is not None else None
    storage_nodes = storage_ru = storage_kw = 0.0
    if sizing is not None:
        lines += storage_lines(sizing, catalog)
        part = catalog.parts.get(sizing.part)
        storage_ru = sizing.units * ((part.rack_units or 0) if part else 0)
        storage_kw = sizing.units * ((part.power_w or 0) if part else 0) / 1000
        storage_nodes = sizing.units * (part.nodes if part else 1)
        snet = storage_network(nodes, sizing, catalog) if phase == "training" else None
        if snet is not None:
            nets.append(_Net(role="storage", design=snet.design, switch=catalog.switches[snet.switch_id],
                             port_gbit=snet.port_gbit, nic=catalog.nics.get(snet.nic_id or ""), nics=snet.nics))
    for net in nets:
        lines += _fabric_lines(net, gpu, catalog)
    racks = [(g, rack_plan(g, n, catalog), n) for g, n in pools]
    rack = max((r for _, r, _ in racks), key=lambda r: r.rack_kw)
    compute_racks = sum(-(-n // r.servers_per_rack) for _, r, n in racks)
    fabric_switches = sum(n.design.leaf_switches + n.design.spine_switches + n.design.core_switches for n in nets)
    heads = head_nodes(nodes, catalog)
    switch_lines = [i for i in lines if i.category == "switch" and i.part_id in catalog.switches]
    switch_ru = sum(i.quantity * catalog.switches[i.part_id].rack_units for i in switch_lines)
    head = part_for(catalog, "head-node")
    other_ru = switch_ru + storage_ru + heads * ((head.rack_units or 0) if head else 0)
    other_racks = -(-int(other_ru) // RACK_UNITS) if other_ru else 0
    other_kw = (sum(i.total_power_w or 0.0 for i in switch_lines) / 1000 + storage_kw
                + heads * ((head.power_w or 0) if head else 0) / 1000)
    facility = [line for k, (g, r, n) in enumerate(racks) for line in
                rack_lines(g, r, -(-n // r.servers_per_rack), other_racks if k == 0 else 0,
                           other_kw if k == 0 else 0.0, catalog)]
    facility = _merge(facility) if len(racks) > 1 else facility
    pdus = sum(i.quantity for i in facility if i.category == "power")
    lines += management_lines(nodes, fabric_switches, pdus, int(storage_nodes), catalog)
    lines += facility
    cooling_pue = pue if pue is not None else default_pue(rack.cooling, catalog)
    bom = _totals(lines, gpu, gpus, compute_racks + other_racks, min(rack.servers_per_rack, nodes))
    if servers:  # each pool's rack power and cloud rate, not the fabric GPU's
        rented = [g.billed_gpus(n * g.gpus_per_node) * g.cloud_usd_per_gpu_hour if g.cloud_usd_per_gpu_hour
                  else None for g, n in pools]
        cloud = None if None in rented else sum(r for r in rented if r is not None)
        bom = bom.model_copy(update={"rack_power_kw": rack.rack_kw, "cloud_usd_per_hour": cloud})
    return bom.model_copy(update={"cooling": rack.cooling, "servers_per_rack": rack.servers_per_rack,
                                  "pue": cooling_pue, "facility_power_kw": bom.power_kw * cooling_pue,
                                  "storage": sizing})


def _merge(lines: list[BomItem]) -> list[BomItem]:
    """One line per part and tier: the racks, PDUs and cooling of two pools' racks add up."""
    out: dict[tuple[str, str | None, str], BomItem] = {}
    for i in lines:
        key = (i.category, i.tier, i.part_id)
        if key not in out:
            out[key] = i
            continue
        q = out[key].quantity + i.quantity
        out[key] = out[key].model_copy(update={
            "quantity": q, "total_price_usd": None if i.unit_price_usd is None else i.unit_price_usd * q,
            "total_power_w": None if out[key].total_power_w is None or i.total_power_w is None
            else out[key].total_power_w + i.total_power_w})
    return list(out.values())


def _server_lines(gpu: Gpu, nodes: int, catalog: Catalog) -> list[BomItem]:
    # the server line's price is node_price_usd: cite its own source ("node_price") when it has one
    source, date = _source(gpu, catalog, "node_price" if "node_price" in gpu.sources else "price", "power")
    if gpu.price_date and "node_price" not in gpu.sources:
        date = gpu.price_date
    server = _item("server", None, gpu.id, f"{gpu.server_name} ({gpu.gpus_per_node} x {gpu.name})", nodes,
                   gpu.node_price_usd, gpu.node_power_kw * 1000, source, date, estimate=gpu.node_price_estimate,
                   uncertainty=gpu.node_price_uncertainty)
    inside = BomItem(category="server", tier="inside-server", part_id=f"{gpu.id}:gpu",
                     description=f"{gpu.name} GPUs inside the servers (priced and powered with them)",
                     quantity=nodes * gpu.gpus_per_node, unit_price_usd=None, unit_power_w=gpu.tdp_w,
                     total_price_usd=None, total_power_w=None, source=_source(gpu, catalog, "power")[0],
                     price_date=None)
    return [server, inside]


def _totals(lines: list[BomItem], gpu: Gpu, gpus: int, racks: int, per_rack: int) -> Bom:
    priced = [i for i in lines if i.total_price_usd is not None]
    unpriced = sorted({i.part_id for i in lines if i.unit_price_usd is None and i.quantity > 0
                       and i.tier != "inside-server"})
    unpowered = sorted({i.part_id for i in lines if i.unit_power_w is None and i.quantity > 0
                        and i.category in ("server", "switch", "transceiver", "cable", "storage", "management",
                                           "cooling")})
    power = sum(i.total_power_w or 0.0 for i in lines) / 1000
    net_power = sum(i.total_power_w or 0.0 for i in lines if i.category in NETWORK) / 1000
    cloud = gpu.billed_gpus(gpus) * gpu.cloud_usd_per_gpu_hour if gpu.cloud_usd_per_gpu_hour else None
    by_category: dict[str, float] = {}
    for i in priced:
        by_category[i.category] = by_category.get(i.category, 0.0) + (i.total_price_usd or 0.0)
    return Bom(items=lines, capex_usd=sum(i.total_price_usd or 0.0 for i in priced), unpriced_parts=unpriced,
               power_kw=power, network_capex_usd=sum(i.total_price_usd or 0.0 for i in priced if i.category in NETWORK),
               network_power_kw=net_power, racks=racks, rack_power_kw=per_rack * gpu.node_power_kw,
               cloud_usd_per_hour=cloud, unpowered_parts=unpowered, capex_by_category_usd=by_category,
               estimated_capex_usd=sum(i.total_price_usd or 0.0 for i in priced if i.estimate))


def network_cost_per_gpu(bom: Bom, gpus: int) -> float | None:
    """Network capex (NICs, switches, optics, cables of the compute, front-end and storage fabrics)
    per GPU, or None when one of those lines has no price: a per-GPU figure that silently left out a
    switch would not compare with another. Out-of-band management is not counted (category
    ``management``)."""
    if any(i.unit_price_usd is None and i.quantity > 0 for i in bom.items if i.category in NETWORK):
        return None
    return bom.network_capex_usd / gpus if gpus else None


__all__ = ["build_bom", "nodes_per_rack", "network_cost_per_gpu", "REACH_M"]
