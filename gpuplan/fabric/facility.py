"""Racks, power, cooling and management of one phase (docs/bom.md).

Rules, with the constants in ``catalog/calibration/bom.toml`` and the parts in
``catalog/facility/parts.toml``:

* **Rack density.** A rack-scale system (GB200 NVL72) is one rack of its scale-up domain; a server
  whose catalog record has ``rack_servers`` (the vendor's reference rack layout: four DGX H100 per
  rack in RA-11333-001) takes that many; any other takes as many as the rack power budget and
  42 U allow. The rack's power is servers x ``node_power_kw``.
* **Cooling** by the densest compute rack: up to ``air_rack_max_kw`` room air (aisle containment
  per rack); up to ``rear_door_rack_max_kw`` an active rear-door heat exchanger per rack; above
  that, or for a server built for cold plates (``liquid_cooled``), direct liquid cooling with
  in-row CDUs, N+1, sized on the liquid racks' power. Other racks are air cooled.
* **Power.** Rack PDUs: at least two per rack (A and B feeds), more when the rack's power exceeds
  two PDUs' rating (41 kW DGX H100 racks take three 17.3 kW PDUs, as RA-11333-001's 96 PDUs for
  32 compute racks). NVL72 racks are fed through their own power shelves (8 x 33 kW, RA-11338-001),
  priced inside the system.
* **Management.** Head / management nodes: ``head_nodes`` for a quorum (scheduler and Kubernetes
  control plane in HA) plus one per full ``head_nodes_per_servers`` servers (RA-11333-001: 4 for
  127 DGX). Out-of-band 1 GbE switches with one port per server, switch, PDU, head node and storage
  node, and one Cat6 cable per port.
* **PUE.** Facility power = IT power x PUE: ``[constraints] pue`` or the default for the cooling
  (``pue_air``, ``pue_liquid``; a rear-door hall counts as air).
"""

from __future__ import annotations

import math
from gpuplan.core.memo import memo
from gpuplan.core.records import dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu, Part
from gpuplan.core.contract import BomItem

#: Usable height of a standard 19-inch rack (EIA-310), rack units.
RACK_UNITS = 42


@dataclass(frozen=True)
class RackPlan:
    servers_per_rack: int
    rack_kw: float
    cooling: str


def servers_per_rack(gpu: Gpu, catalog: Catalog) -> int:
    """Servers per compute rack (see the module docstring)."""
    return _rack_terms(gpu, catalog)[0]


def _servers_per_rack(gpu: Gpu, catalog: Catalog) -> int:
    if gpu.scaleup_domain > gpu.gpus_per_node:
        return max(1, gpu.scaleup_domain // gpu.gpus_per_node)
    if gpu.rack_servers:
        return gpu.rack_servers
    by_power = int(float(catalog.table("bom").rack_power_kw) // gpu.node_power_kw)
    return max(1, min(by_power, RACK_UNITS // gpu.node_rack_units))


#: What :func:`rack_plan` reads of a GPU and the catalog, by (GPU, catalog): (servers per rack, a
#: server's kW, cold plates, the rear-door and room-air limits). A plan prices ~150 fleets' racks
#: (their PUE) over a few GPUs. Both are keyed by identity and held in the entry. Bounded.
_RACKS: dict[tuple[int, int], tuple[Gpu, Catalog, tuple[int, float, bool, float, float]]] = memo()


def _rack_terms(gpu: Gpu, catalog: Catalog) -> tuple[int, float, bool, float, float]:
    key = (id(gpu), id(catalog))
    hit = _RACKS.get(key)
    if hit is None:
        if len(_RACKS) >= 256:
            _RACKS.clear()
        cal = catalog.table("bom")
        hit = _RACKS[key] = (gpu, catalog, (_servers_per_rack(gpu, catalog), gpu.node_power_kw, gpu.liquid_cooled,
                                            cal.rear_door_rack_max_kw, cal.air_rack_max_kw))
    return hit[2]


def rack_plan(gpu: Gpu, nodes: int, catalog: Catalog) -> RackPlan:
    """The compute racks of ``nodes`` servers: :func:`servers_per_rack`, the fullest rack's kW and
    its :func:`cooling_for`, over the figures read once (:data:`_RACKS`)."""
    per_rack, node_kw, liquid, rear_door_kw, air_kw = _rack_terms(gpu, catalog)
    kw = min(per_rack, nodes) * node_kw
    return RackPlan(per_rack, kw, rack_cooling(liquid, kw, rear_door_kw, air_kw))


def cooling_for(gpu: Gpu, rack_kw: float, catalog: Catalog) -> str:
    """:func:`rack_cooling` of ``gpu``'s racks at ``rack_kw`` with the catalog's limits."""
    cal = catalog.table("bom")
    return rack_cooling(gpu.liquid_cooled, rack_kw, cal.rear_door_rack_max_kw, cal.air_rack_max_kw)


def rack_cooling(liquid: bool, rack_kw: float, rear_door_max_kw: float, air_max_kw: float) -> str:
    """A rack's cooling: liquid for liquid-cooled servers or above the rear-door limit, air up to
    the room-air limit, rear-door heat exchangers between."""
    if liquid or rack_kw > rear_door_max_kw:
        return "liquid"
    return "air" if rack_kw <= air_max_kw else "rear-door"


def default_pue(cooling: str, catalog: Catalog) -> float:
    cal = catalog.table("bom")
    return float(cal.pue_liquid if cooling == "liquid" else cal.pue_air)


#: :func:`part_for` by (catalog, role): a bill asks for a dozen roles, some several times. The catalog
#: is keyed by identity and held in the entry, so its id is not reused while it lives. Bounded.
_PARTS: dict[tuple[int, str], tuple[Catalog, Part | None]] = memo()


def part_for(catalog: Catalog, role: str) -> Part | None:
    """The catalog part for a role: the cheapest priced one, then by id (overlays may add others)."""
    key = (id(catalog), role)
    hit = _PARTS.get(key)
    if hit is None:
        if len(_PARTS) >= 256:
            _PARTS.clear()
        found = sorted((p for p in catalog.parts.values() if p.role == role),
                       key=lambda p: (p.price_usd is None, p.price_usd or 0.0, p.id))
        hit = _PARTS[key] = (catalog, found[0] if found else None)
    return hit[1]


#: BOM tier of a part whose price is inside the rack-scale system's (the line reads "in rack").
INSIDE_RACK = "inside-rack"


def part_line(part: Part | None, role: str, category: str, tier: str, quantity: int, catalog: Catalog,
              note: str = "") -> BomItem:
    """A BOM line of a facility part; a role without a catalog part is an unpriced ``no-catalog-part``."""
    if part is None:
        return BomItem(category=category, tier=tier, part_id=f"no-catalog-part:{role}",  # type: ignore[arg-type]
                       description=f"needed but not in the catalog: {role}", quantity=quantity, unit_price_usd=None,
                       unit_power_w=None, total_price_usd=None, total_power_w=None, source=None)
    ids = list(dict.fromkeys(s for s in (part.sources.get("price"), part.sources.get("default")) if s))
    date = part.price_date or (catalog.sources[ids[0]].date if ids and ids[0] in catalog.sources else None)
    price = part.price_usd
    if price == 0:
        # The catalog's 0: priced inside another line (an NVL72 rack's enclosure and power
        # shelves are in the rack-scale system's price, spread over its compute trays).
        tier = INSIDE_RACK
    return BomItem(category=part.category, tier=tier, part_id=part.id,  # type: ignore[arg-type]
                   description=part.name + (f" ({note})" if note else ""), quantity=quantity,
                   unit_price_usd=price, unit_power_w=part.power_w,
                   total_price_usd=None if price is None else price * quantity,
                   total_power_w=None if part.power_w is None else part.power_w * quantity,
                   source="; ".join(ids) or None, price_date=date, estimate=part.price_estimate,
                   price_uncertainty=part.price_uncertainty)


def pdus_for(rack_kw: float, catalog: Catalog) -> int:
    pdu = part_for(catalog, "pdu")
    cap = pdu.capacity_kw if pdu is not None and pdu.capacity_kw else 17.3
    return max(int(catalog.table("bom").pdus_per_rack), math.ceil(rack_kw / cap - 1e-9))


def rack_lines(gpu: Gpu, plan: RackPlan, compute_racks: int, other_racks: int, other_kw: float,
               catalog: Catalog) -> list[BomItem]:
    """Racks, power distribution and cooling of the compute racks and the other (network, storage,
    management) racks; ``other_kw`` is the power of the equipment in the other racks."""
    lines: list[BomItem] = []
    system = gpu.scaleup_domain > gpu.gpus_per_node
    if system:
        lines.append(part_line(part_for(catalog, "system-rack"), "system-rack", "rack", "compute", compute_racks,
                               catalog, f"{plan.servers_per_rack} compute trays each"))
        shelf = part_for(catalog, "power-shelf")
        per = 2 * math.ceil(plan.rack_kw / (shelf.capacity_kw or 33.0)) if shelf else 8
        lines.append(part_line(shelf, "power-shelf", "power", "compute", per * compute_racks, catalog,
                               f"{per} per rack, N+N"))
    else:
        lines.append(part_line(part_for(catalog, "rack"), "rack", "rack", "compute", compute_racks, catalog,
                               f"{plan.servers_per_rack} servers each, {plan.rack_kw:.1f} kW"))
        per = pdus_for(plan.rack_kw, catalog)
        lines.append(part_line(part_for(catalog, "pdu"), "pdu", "power", "compute", per * compute_racks, catalog,
                               f"{per} per rack"))
    if other_racks:
        lines.append(part_line(part_for(catalog, "rack"), "rack", "rack", "network", other_racks, catalog,
                               "network, storage and management"))
        per = pdus_for(other_kw / other_racks, catalog)
        lines.append(part_line(part_for(catalog, "pdu"), "pdu", "power", "network", per * other_racks, catalog,
                               f"{per} per rack"))
    lines += _cooling_lines(plan, compute_racks, other_racks, catalog)
    return lines


def _cooling_lines(plan: RackPlan, compute_racks: int, other_racks: int, catalog: Catalog) -> list[BomItem]:
    lines: list[BomItem] = []
    air_racks = other_racks
    if plan.cooling == "liquid":
        kw = plan.rack_kw * compute_racks
        options = []  # (cost, count, part, note): in-row CDUs N+1 on the whole load, or in-rack ones per rack
        row, rack = part_for(catalog, "cdu"), part_for(catalog, "cdu-rack")
        if row is not None and row.capacity_kw:
            n = math.ceil(kw / row.capacity_kw - 1e-9) + 1
            options.append(((row.price_usd or math.inf) * n, n, row, f"{kw:,.0f} kW of liquid-cooled racks, N+1"))
        if rack is not None and rack.capacity_kw:
            n = compute_racks * math.ceil(plan.rack_kw / rack.capacity_kw - 1e-9)
            options.append(((rack.price_usd or math.inf) * n, n, rack, f"{kw:,.0f} kW of liquid-cooled racks"))
        if options:
            _, n, part, note = min(options, key=lambda o: (o[0], o[2].id))
            lines.append(part_line(part, part.role, "cooling", "compute", n, catalog, note))
        else:
            lines.append(part_line(None, "cdu", "cooling", "compute", 1, catalog))
    elif plan.cooling == "rear-door":
        lines.append(part_line(part_for(catalog, "rear-door"), "rear-door", "cooling", "compute", compute_racks,
                               catalog, f"{plan.rack_kw:.1f} kW racks"))
    else:
        air_racks += compute_racks
    if air_racks:
        lines.append(part_line(part_for(catalog, "air"), "air", "cooling", "air", air_racks, catalog,
                               "air-cooled racks"))
    return lines


def head_nodes(servers: int, catalog: Catalog) -> int:
    cal = catalog.table("bom")
    return int(cal.head_nodes) + servers // int(cal.head_nodes_per_servers)


def management_lines(servers: int, switches: int, pdus: int, storage_nodes: int, catalog: Catalog) -> list[BomItem]:
    """Head nodes, out-of-band switches and their cables."""
    heads = head_nodes(servers, catalog)
    lines = [part_line(part_for(catalog, "head-node"), "head-node", "management", "head", heads, catalog,
                       "scheduler, Kubernetes control plane, provisioning")]
    ports = servers + switches + pdus + heads + storage_nodes
    oob = sorted((s for s in catalog.switches.values() if "1" in s.radix_by_gbit),
                 key=lambda s: (-s.radix_by_gbit["1"], s.id))
    if oob:
        sw = oob[0]
        count = -(-ports // sw.radix_by_gbit["1"])
        ids = list(dict.fromkeys(x for x in (sw.sources.get("price"), sw.sources.get("default")) if x))
        lines.append(BomItem(category="management", tier="oob", part_id=sw.id,
                             description=f"{sw.name} ({ports} management ports)", quantity=count,
                             unit_price_usd=sw.price_usd, unit_power_w=sw.power_w,
                             total_price_usd=None if sw.price_usd is None else sw.price_usd * count,
                             total_power_w=None if sw.power_w is None else sw.power_w * count,
                             source="; ".join(ids) or None, price_date=sw.price_date, estimate=sw.price_estimate,
                             price_uncertainty=sw.price_uncertainty))
    lines.append(part_line(part_for(catalog, "oob-cable"), "oob-cable", "management", "oob", ports, catalog))
    return lines


__all__ = ["RackPlan", "cooling_for", "default_pue", "head_nodes", "management_lines", "part_for", "part_line",
           "rack_lines", "rack_plan", "servers_per_rack"]
