"""A scale-out network given by the user instead of designed: the proposed cluster of
``gpuplan check --against`` (its fabric, NIC speed per GPU), so that the interconnect, the bill of
materials and the power describe the cluster being checked, not the network the planner would pick."""

from __future__ import annotations

from gpuplan.fabric.demand import TrafficDemand
from gpuplan.fabric.interconnect import ScaleOut, traffic_reason, choose_scaleout
from gpuplan.fabric.parts import pick_nic
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu


def given_scaleout(demand: TrafficDemand, gpu: Gpu, catalog: Catalog, fabric_id: str | None,
                   gbit_per_gpu: float | None) -> ScaleOut:
    """The cluster's fabric (else the technology the planner would pick, at the cluster's speed) with
    as many ports per GPU as carry ``gbit_per_gpu`` (at least one; a slower share of a port is timed
    at the given rate by the caller)."""
    planned = choose_scaleout(demand, gpu, catalog, need=demand.required_gbit_per_gpu)
    if fabric_id is not None:
        fabric = catalog.fabrics[fabric_id]
    else:  # only a speed given: the planner's technology, the fastest port speed not above it
        same = sorted((f for f in catalog.fabrics.values() if f.kind == planned.fabric.kind),
                      key=lambda f: (f.port_gbit, f.id))
        fitting = [f for f in same if gbit_per_gpu is None or f.port_gbit <= gbit_per_gpu + 1e-6]
        fabric = fitting[-1] if fitting else same[0]
    gbit = fabric.port_gbit if gbit_per_gpu is None else gbit_per_gpu
    ports = max(1, round(gbit / fabric.port_gbit))
    nic = pick_nic(catalog, fabric, gpu=gpu, ports=1) if planned.nic is not None else None
    why = (f"{gbit:g} Gb/s per GPU on the cluster's {fabric.name} ({ports} x {fabric.port_gbit:g}G port"
           f"{'s' if ports != 1 else ''} per GPU, NIC {nic.name if nic else 'on die'}): the network being checked, "
           f"not designed; the planner would pick {planned.gbit_per_gpu:g}G {planned.fabric.name}.")
    return ScaleOut(fabric=fabric, ports_per_gpu=ports, nic=nic,
                    reasons=(traffic_reason(demand, demand.required_gbit_per_gpu), why))
