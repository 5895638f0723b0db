"""Catalog parts of a fabric: the front-end speed and oversubscription, the NIC of a fabric, the
switch that reaches a number of endpoints. Shared by the compute-fabric design
(:mod:`gpuplan.fabric.interconnect`) and the serving front end (:mod:`gpuplan.fabric.frontend`).
"""

from __future__ import annotations

import math

from gpuplan.core.errors import InputError
from gpuplan.core.memo import memo
from gpuplan.fabric.sizing import SizingError, leaf_split, tier_capacity
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Fabric, Gpu, Nic

#: Front-end oversubscription candidates, most oversubscribed first (fabric.md section 4:
#: serving front ends 3:1 to 4:1), then the blocking-free fallbacks.
FRONTEND_RATIOS = (4.0, 3.0, 2.0, 1.0)
#: Smallest front-end speed per node: 100 GbE (fabric.md section 1.9: AMD RA 100 GbE front end;
#: NVIDIA RA in-band 100/200 GbE).
FRONTEND_MIN_GBIT = 100.0

#: What :func:`choose_frontend` and :func:`switch_for` read of a catalog, by the catalog's (and the
#: fabric's) identity, held in the entry: a plan designs about ten fabrics, each sorting the
#: catalog's fabrics and switches again. The lists are those the functions sorted, in the same
#: order. Bounded.
_SORTED: dict[tuple[object, ...], tuple[object, ...]] = memo()


def _front_speeds(catalog: Catalog) -> list[tuple[Fabric, float, float]]:
    """The catalog's Ethernet fabrics of 100G or more by speed, then id, with their port speed and efficiency."""
    key = ("frontend", id(catalog))
    hit = _SORTED.get(key)
    if hit is None:
        if len(_SORTED) >= 256:
            _SORTED.clear()
        eth = sorted((f for f in catalog.fabrics.values() if f.kind == "ethernet" and f.port_gbit >= FRONTEND_MIN_GBIT),
                     key=lambda f: (f.port_gbit, f.id))
        hit = _SORTED[key] = (catalog, [(f, f.port_gbit, f.efficiency) for f in eth])
    return hit[1]  # type: ignore[return-value]


def choose_frontend(gbit_per_node: float, catalog: Catalog) -> tuple[Fabric, int]:
    """The smallest Ethernet speed >= 100G whose achievable rate carries the node's front-end traffic."""
    eth = _front_speeds(catalog)
    if not eth:
        raise InputError("the catalog has no Ethernet fabric of 100G or more for the serving front end")
    for fab, port, efficiency in eth:
        if port * efficiency >= gbit_per_node:
            return fab, 1
    top, port, efficiency = eth[-1]
    return top, math.ceil(gbit_per_node / (port * efficiency))


def frontend_ratio(gbit_per_node: float, front: Fabric, ports: int) -> float:
    """Largest of 4:1, 3:1, 2:1, 1:1 whose uplink share still carries the node's traffic."""
    rate = ports * front.port_gbit * front.efficiency
    for r in FRONTEND_RATIOS:
        if gbit_per_node * r <= rate:
            return r
    return 1.0


def pick_nic(catalog: Catalog, fabric: Fabric, *, gpu: Gpu | None, ports: int) -> Nic | None:
    """The reference server's NIC, else the fabric's default, else any NIC at that speed."""
    def ok(n: Nic) -> bool:
        return fabric.kind in n.kinds and abs(n.port_gbit - fabric.port_gbit) < 1e-6
    order = [gpu.reference_nic if gpu else None, fabric.default_nic]
    for nid in order:
        if nid and nid in catalog.nics and ok(catalog.nics[nid]):
            return catalog.nics[nid]
    found = sorted((n for n in catalog.nics.values() if ok(n)),
                   key=lambda n: (n.ports != min(ports, n.ports), n.ports, n.id))
    return found[0] if found else None


def switch_for(fabric: Fabric, catalog: Catalog, endpoints: int, ratio: float) -> tuple[str, int]:
    """The fabric's default switch, or the largest-radix switch of its kind when three tiers do not suffice."""
    most = 0
    for sw_id, k in _switch_radixes(fabric, catalog):
        cap = tier_capacity(k, 3, down_ports(k, ratio)) if k else 0
        if k and cap >= endpoints:
            return sw_id, k
        most = max(most, cap)
    raise SizingError(f"{endpoints:,} endpoints exceed three tiers of every {fabric.kind} switch at "
                      f"{fabric.port_gbit:g}G in the catalog (at most {most:,})")


def _switch_radixes(fabric: Fabric, catalog: Catalog) -> list[tuple[str, int | None]]:
    """:func:`switch_for`'s candidates in its order, each (id, radix at the fabric's port speed)."""
    key = ("switches", id(catalog), id(fabric))
    hit = _SORTED.get(key)
    if hit is None:
        if len(_SORTED) >= 256:
            _SORTED.clear()
        port = fabric.port_gbit
        cands = [catalog.switches[fabric.default_switch]] if fabric.default_switch in catalog.switches else []
        cands += sorted((s for s in catalog.switches.values() if fabric.kind in s.kinds and s.id != fabric.default_switch),
                        key=lambda s: (-(s.radix(port) or 0), s.id))
        hit = _SORTED[key] = (catalog, fabric, [(s.id, s.radix(port)) for s in cands])
    return hit[2]  # type: ignore[return-value]


def down_ports(k: int, ratio: float) -> int:
    return leaf_split(k, ratio)[0]
