"""Bill of materials of one phase: servers, NICs, switches, optics, cables, management, racks.

Every line carries quantity, unit price, unit power, source and date from the catalog. A part
without a catalog price is listed in ``Bom.unpriced_parts`` and left out of ``capex_usd`` (never
counted as $0); a part without a power figure is listed in ``Bom.unpowered_parts``. Parts the
design needs but the catalog does not have (a module type, a single-mode fibre) appear as
``no-catalog-part:...`` lines, unpriced. Rules (docs/fabric-model.md, "Bill of materials"):

* Servers: the GPU's reference server at ``node_price_usd`` (without compute-fabric NICs and
  optics, which are separate lines) and ``node_power_kw`` (the system's maximum, NICs inside:
  NIC lines show their own power but add none). GPUs are listed inside the servers.
* Optics and cables: :mod:`gpuplan.fabric.media` (RA-11333-001 Table 8 conventions).
* Out-of-band management: 1 GbE switches (SN2201 in RA-11333-001) with one port per server,
  per fabric switch and per rack, ``ceil(ports / radix)`` switches.
* Racks: compute racks hold as many servers as the rack power budget and 42 U allow (an NVL72
  rack holds its scale-up domain); switches go into network racks by rack units.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu, Nic, Optic, Switch
from gpuplan.fabric.media import (
    LINK_TIERS, REACH_M, ModuleCounts, choose_media, count_modules, pick_cable, pick_fiber, pick_module,
)
from gpuplan.fabric.sizing import ClosDesign
from gpuplan.fabric.topology import design_of
from gpuplan.core.contract import Bom, BomItem, Interconnect, Topology

#: Usable height of a standard 19-inch rack (EIA-310), rack units.
RACK_UNITS = 42
NETWORK = ("nic", "switch", "transceiver", "cable")


def rack_power_budget_kw(catalog: Catalog) -> float:
    """Compute-rack power budget, kW (``catalog/calibration/bom.toml``, validated at load)."""
    return float(catalog.table("bom").rack_power_kw)


def nodes_per_rack(gpu: Gpu, catalog: Catalog) -> int:
    """Servers per compute rack: a rack-scale domain (NVL72) is one rack; else power and space decide."""
    if gpu.scaleup_domain > gpu.gpus_per_node:
        return max(1, gpu.scaleup_domain // gpu.gpus_per_node)
    by_power = int(rack_power_budget_kw(catalog) // gpu.node_power_kw)
    return max(1, min(by_power, RACK_UNITS // gpu.node_rack_units))


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
          power: float | None, source: str | None, date: str | None, *, adds_power: bool = True) -> BomItem:
    return BomItem(category=category, tier=tier, part_id=part_id,  # type: ignore[arg-type]
                   description=description, quantity=quantity, unit_price_usd=price, unit_power_w=power,
                   total_price_usd=None if price is None else price * quantity,
                   total_power_w=None if power is None or not adds_power else power * quantity,
                   source=source, price_date=date)


def _part(category: str, tier: str, rec: Optic | Switch | Nic, quantity: int, catalog: Catalog, note: str = "",
          *, adds_power: bool = True) -> BomItem:
    source, date = _source(rec, catalog, "price", "power")
    desc = rec.name + (f" ({note})" if note else "")
    return _item(category, tier, rec.id, desc, quantity, rec.price_usd, rec.power_w, source, date,
                 adds_power=adds_power)


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


def _compute_net(interconnect: Interconnect, topology: Topology, catalog: Catalog, role: str) -> _Net:
    design = design_of(topology)
    switch = catalog.switches[topology.switch or ""]
    nic = catalog.nics.get(interconnect.nic or "")
    return _Net(role=role, design=design, switch=switch, port_gbit=topology.port_gbit, nic=nic,
                nics=topology.nodes * interconnect.nics_per_node)


def _frontend_net(interconnect: Interconnect, nodes: int, catalog: Catalog) -> _Net:
    """The separate front end of a serving phase with an east-west fabric (same rules as design_fabric)."""
    from gpuplan.fabric.frontend import frontend_design, frontend_nics

    # the same dual-homed design as design_fabric's front end (fabric/frontend.py)
    front, ports, _, switch_id, design, nic = frontend_design(interconnect.frontend_gbit_per_node, nodes, catalog)
    return _Net(role="frontend", design=design, switch=catalog.switches[switch_id], port_gbit=front.port_gbit,
                nic=nic, nics=nodes * frontend_nics(nic, ports))


def _oob_switch(catalog: Catalog) -> Switch | None:
    found = sorted((s for s in catalog.switches.values() if "1" in s.radix_by_gbit),
                   key=lambda s: (-s.radix_by_gbit["1"], s.id))
    return found[0] if found else None


# ---------------------------------------------------------------------------- the BOM
def build_bom(phase: str, gpu: Gpu, gpus: int, interconnect: Interconnect, topology: Topology,
              catalog: Catalog) -> Bom:
    """The bill of materials of one phase (see the module docstring for the rules)."""
    nodes = max(topology.nodes, gpu.servers_for(gpus))
    lines = _server_lines(gpu, nodes, catalog)
    nets: list[_Net] = []
    if topology.kind != "none" and topology.switch:
        role = "frontend" if phase == "serving" and interconnect.frontend_fabric is None else "compute"
        nets.append(_compute_net(interconnect, topology, catalog, role))
    if phase == "serving" and interconnect.frontend_fabric is not None:
        nets.append(_frontend_net(interconnect, nodes, catalog))
    for net in nets:
        lines += _fabric_lines(net, gpu, catalog)
    per_rack = nodes_per_rack(gpu, catalog)
    compute_racks = -(-nodes // per_rack)
    fabric_switches = sum(n.design.leaf_switches + n.design.spine_switches + n.design.core_switches for n in nets)
    oob = _oob_switch(catalog)
    if oob is not None:
        ports = nodes + fabric_switches + compute_racks
        count = -(-ports // oob.radix_by_gbit["1"])
        lines.append(_part("switch", "oob", oob, count, catalog, f"{ports} management ports"))
    switch_ru = sum(i.quantity * catalog.switches[i.part_id].rack_units for i in lines
                    if i.category == "switch" and i.part_id in catalog.switches)
    network_racks = -(-switch_ru // RACK_UNITS) if switch_ru else 0
    racks = compute_racks + network_racks
    lines.append(_item("rack", "compute", "rack-42u", f"compute racks, {per_rack} servers each", compute_racks,
                       None, None, None, None))
    if network_racks:
        lines.append(_item("rack", "network", "rack-42u", f"network racks, {switch_ru} U of switches",
                           network_racks, None, None, None, None))
    return _totals(lines, gpu, gpus, racks, min(per_rack, nodes))


def _server_lines(gpu: Gpu, nodes: int, catalog: Catalog) -> list[BomItem]:
    # the server line's price is node_price_usd: cite its own source ("node_price") when it has one
    source, date = _source(gpu, catalog, "node_price" if "node_price" in gpu.sources else "price", "power")
    if gpu.price_date and "node_price" not in gpu.sources:
        date = gpu.price_date
    server = _item("server", None, gpu.id, f"{gpu.server_name} ({gpu.gpus_per_node} x {gpu.name})", nodes,
                   gpu.node_price_usd, gpu.node_power_kw * 1000, source, date)
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
                        and i.category in ("server", "switch", "transceiver", "cable")})
    power = sum(i.total_power_w or 0.0 for i in lines) / 1000
    net_power = sum(i.total_power_w or 0.0 for i in lines if i.category in NETWORK) / 1000
    cloud = gpu.billed_gpus(gpus) * gpu.cloud_usd_per_gpu_hour if gpu.cloud_usd_per_gpu_hour else None
    return Bom(items=lines, capex_usd=sum(i.total_price_usd or 0.0 for i in priced), unpriced_parts=unpriced,
               power_kw=power, network_capex_usd=sum(i.total_price_usd or 0.0 for i in priced if i.category in NETWORK),
               network_power_kw=net_power, racks=racks, rack_power_kw=per_rack * gpu.node_power_kw,
               cloud_usd_per_hour=cloud, unpowered_parts=unpowered)


def network_cost_per_gpu(bom: Bom, gpus: int) -> float | None:
    """Network capex (NICs, switches, optics, cables of the compute and front-end fabrics) per GPU,
    or None when one of those lines has no price: a per-GPU figure that silently left out a switch
    would not compare with another. The out-of-band management switches are not counted."""
    if any(i.unit_price_usd is None and i.quantity > 0 for i in bom.items
           if i.category in NETWORK and i.tier != "oob"):
        return None
    return bom.network_capex_usd / gpus if gpus else None


__all__ = ["build_bom", "nodes_per_rack", "network_cost_per_gpu", "REACH_M"]
