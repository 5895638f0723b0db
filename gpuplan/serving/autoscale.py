"""Autoscaling bounds from a daily demand curve (docs/fleet-model.md, "Autoscaling").

* ``scale_up_s = server_start_s + W * 8 / (ports * port_gbit * efficiency * 1e9)``: a new replica
  starts its server (calibration/fleet.toml) and reads its weights, ``W`` bytes per server
  (weights per GPU x the replica's GPUs on one server), from storage over the front-end link.
* Demand moves linearly from one hour's rate to the next, so while a replica starts the load rises
  by ``ramp_h = max(0, q[h+1] - q[h]) * scale_up_s / 3600``. The replicas of hour ``h`` carry
  ``q[h] + ramp_h`` at ``L * qps_per_replica`` each, ``L`` the profile's ``max_load_fraction``: the
  load the serving planner sizes the peak fleet at (serving/planner.py), so the peak hour of the
  curve gets the plan's fleet. An autoscaler that targets ``L * f_h``, ``f_h = q[h] / (q[h] +
  ramp_h)``, of a replica's latency-limited rate keeps up; ``target_load_fraction`` is ``L`` times
  the smallest ``f_h`` (the steepest ramp relative to its load), ``headroom_fraction`` is
  ``1 - min f_h`` (the ramp's share alone).
* ``r[h] = max(min_replicas, ceil((q[h] + ramp_h) / (L * qps_per_replica)) + spare_replicas)``;
  ``max_replicas = max(max_h r[h], the plan's replicas)``.
* The load a fleet carries over a day (:func:`demand_load`): ``utilization = mean(q) / qps``, the
  planned rate's share the curve carries; every hour powered; the replicas parked below the plan's
  (``sum_h max(0, replicas - r[h]) / 24`` on average) draw ``idle_power_fraction`` of their power.
* Cloud pricing: replica ``k`` is reserved (always on) when it runs at least
  ``24 * (1 - reserved_discount)`` hours a day (then the discounted rate all day costs less than the
  on-demand rate for its hours); the rest is rented by the hour.
"""

from __future__ import annotations

import math
from typing import Any

from gpuplan.core.contract import Autoscaling, ServingPlan
from gpuplan.core.units import DAYS_PER_YEAR, GIB
from gpuplan.hardware.fleet_calibration import fleet_calibration
from gpuplan.fabric.tco import CostBasis, Load
from gpuplan.model.profile import ServingSpec

HOURS_PER_DAY = 24


def frontend_gbit_per_node(plan: ServingPlan, catalog: Any) -> tuple[float, str]:
    """Achievable front-end Gb/s of one server (ports x speed x the fabric's efficiency) and a label."""
    from gpuplan.fabric.interconnect import choose_frontend

    ic = plan.interconnect
    need = ic.frontend_gbit_per_node if ic is not None else 0.0
    fab, ports = choose_frontend(need, catalog)
    if ic is not None and ic.frontend_fabric in catalog.fabrics:
        fab = catalog.fabrics[ic.frontend_fabric]
    elif ic is not None and ic.scaleout_fabric in catalog.fabrics and ic.scaleout_kind == "ethernet":
        fab, ports = catalog.fabrics[ic.scaleout_fabric], max(1, ic.rails)  # front-end-only design
    return ports * fab.port_gbit * fab.efficiency, f"{ports} x {fab.port_gbit:g}G at {fab.efficiency:.0%}"


def scale_up_seconds(plan: ServingPlan, catalog: Any) -> tuple[float, str]:
    """Server start plus the weights of one server read over its front-end link."""
    cal = fleet_calibration(catalog)
    gpus_per_node = catalog.gpus[plan.gpu].gpus_per_node
    weight_bytes = plan.weights_gib_per_gpu * GIB * min(plan.gpus_per_replica, gpus_per_node)
    rate, label = frontend_gbit_per_node(plan, catalog)
    load_s = weight_bytes * 8 / (rate * 1e9)
    start = cal.autoscaling.server_start_s
    return start + load_s, (f"scale-up {start + load_s:.0f} s = {start:g} s server start + "
                            f"{weight_bytes / 1e9:.1f} GB of weights per server over {label} ({load_s:.1f} s)")


def hourly_replicas(curve: list[float], rate: float, spare: int, floor: int, scale_up_s: float,
                    max_load: float = 1.0) -> tuple[list[int], float, float]:
    """Replicas per hour (each carrying at most ``max_load`` of its latency-limited ``rate``), the
    ramp's target fraction (smallest f_h, before ``max_load``) and the largest ramp headroom."""
    out, target, ramp_max = [], 1.0, 0.0
    for h, q in enumerate(curve):
        ramp = max(0.0, curve[(h + 1) % HOURS_PER_DAY] - q) * scale_up_s / 3600.0
        if q > 0 and ramp > 0:
            target = min(target, q / (q + ramp))
        ramp_max = max(ramp_max, ramp)
        active = math.ceil((q + ramp) / (rate * max_load) - 1e-9) if q + ramp > 0 else 0
        out.append(max(floor, active + spare))
    return out, target, ramp_max


def reserved_split(hourly: list[int], discount: float) -> tuple[int, float]:
    """Replicas worth reserving (on at least ``24 * (1 - discount)`` hours a day) and the
    replica-hours a day left to on-demand."""
    reserved = max((k for k in range(1, max(hourly, default=0) + 1)
                    if sum(r >= k for r in hourly) >= HOURS_PER_DAY * (1 - discount)), default=0)
    return reserved, float(sum(max(0, r - reserved) for r in hourly))


def autoscaling(plan: ServingPlan, spec: ServingSpec, catalog: Any, pricing: str,
                cost: CostBasis) -> Autoscaling | None:
    """The autoscaler's bounds for a feasible serving plan; a parked replica's energy is priced on
    the plan's cost basis (the TCO's $/kWh, and the PUE of the plan's bill of materials)."""
    if not plan.feasible or plan.gpu is None or plan.qps_per_replica <= 0 or plan.replicas <= 0:
        return None
    cal = fleet_calibration(catalog)
    constant = spec.hourly_qps is None
    curve = [spec.qps] * HOURS_PER_DAY if constant else list(spec.hourly_qps or ())
    floor = spec.min_replicas if spec.min_replicas is not None else cal.autoscaling.default_min_replicas
    if plan.spare_gpus:  # a scale-out disaggregated fleet: its spare workers are the floor's spare replica
        floor = max(1, floor - 1)
    scale_up, why = scale_up_seconds(plan, catalog)
    load = spec.max_load_fraction
    hourly, ramp_fraction, ramp = hourly_replicas(curve, plan.qps_per_replica, plan.spare_replicas, floor,
                                                  scale_up, load)
    target = load * ramp_fraction
    max_r = max(max(hourly), plan.replicas)
    hours = float(sum(hourly))
    peak_hours = float(max_r * HOURS_PER_DAY)
    reasons = [why]
    if constant:
        reasons.append(f"constant demand of {spec.qps:g} requests/s (no [serving.demand] curve): the fleet runs "
                       f"at its peak size all day, {max_r} replicas at {target:.0%} of "
                       f"{plan.qps_per_replica:.2f} requests/s each (max_load_fraction); nothing to park")
    else:
        reasons.append(f"steepest ramp adds {ramp:.2f} requests/s while a replica starts: target "
                       f"{target:.0%} of {plan.qps_per_replica:.2f} requests/s per replica "
                       f"({load:.0%} max_load_fraction x {ramp_fraction:.0%} for the ramp)")
    if max(hourly) > plan.replicas:
        reasons.append(f"ramp headroom needs {max(hourly) - plan.replicas} replica(s) beyond the peak sizing")
    gpu = catalog.gpus[plan.gpu]
    gpr = plan.gpus_per_replica
    saved_hours_year = (peak_hours - hours) * DAYS_PER_YEAR
    update: dict[str, Any] = {}
    if pricing == "cloud" and plan.cloud_usd_per_hour is not None:
        per_replica = plan.cloud_usd_per_hour / plan.replicas
        d = cal.cost.reserved_discount
        reserved, on_demand_hours = reserved_split(hourly, d)
        reserved_usd = reserved * per_replica * (1 - d) * HOURS_PER_DAY * DAYS_PER_YEAR
        on_demand_usd = on_demand_hours * per_replica * DAYS_PER_YEAR
        total = reserved_usd + on_demand_usd
        peak_usd = max_r * per_replica * (1 - d) * HOURS_PER_DAY * DAYS_PER_YEAR
        update = {"reserved_replicas": reserved, "on_demand_replica_hours_per_day": on_demand_hours,
                  "reserved_usd_per_year": reserved_usd, "on_demand_usd_per_year": on_demand_usd,
                  "cloud_usd_per_year": total, "saving_usd_per_year": peak_usd - total}
        reasons.append(f"{reserved} replica(s) reserved (on at least {HOURS_PER_DAY * (1 - d):g} h a day at "
                       f"{d:.0%} off), {on_demand_hours:g} on-demand replica-hours a day")
    else:
        kw_per_gpu = gpu.node_power_kw / gpu.gpus_per_node
        pue = cost.phase_pue(plan.bom, gpu, plan.nodes)
        update = {"saving_usd_per_year": saved_hours_year * gpr * kw_per_gpu * (1 - cal.cost.idle_power_fraction)
                  * pue * cost.usd_per_kwh}
    next_year = None
    if spec.growth_per_year:
        grown, _, _ = hourly_replicas([q * (1 + spec.growth_per_year) for q in curve], plan.qps_per_replica,
                                      plan.spare_replicas, floor, scale_up, load)
        next_year = max(grown)
    return Autoscaling(min_replicas=min(hourly), max_replicas=max_r, target_load_fraction=target,
                       scale_up_s=scale_up, ramp_headroom_qps=ramp, headroom_fraction=1 - ramp_fraction,
                       hourly_replicas=hourly, replica_hours_per_day=hours, peak_replica_hours_per_day=peak_hours,
                       saving_fraction=1 - hours / peak_hours, demand="constant" if constant else "hourly",
                       growth_per_year=spec.growth_per_year, max_replicas_next_year=next_year,
                       reasons=reasons, **update)


def demand_load(a: Autoscaling, plan: ServingPlan, spec: ServingSpec, catalog: Any) -> Load | None:
    """What a fleet on a daily demand curve carries and draws (the TCO's and serving's $ per million
    tokens, fabric/tco.py :class:`Load`); None without a curve. The servers' kW per replica and
    the idle fraction are the autoscaler's saving's: with capex pricing the energy not drawn is
    exactly ``saving_usd_per_year`` when the peak hour needs no replica beyond the plan's."""
    if spec.hourly_qps is None or plan.gpu is None or spec.qps <= 0:
        return None
    curve = list(spec.hourly_qps)
    mean = sum(curve) / len(curve)
    gpu = catalog.gpus[plan.gpu]
    kw_per_replica = plan.gpus_per_replica * gpu.node_power_kw / gpu.gpus_per_node
    parked = sum(max(0, plan.replicas - r) for r in a.hourly_replicas) / len(a.hourly_replicas)
    idle = fleet_calibration(catalog).cost.idle_power_fraction
    which = "peak" if spec.qps == max(curve) else "planned"
    note = (f"utilisation {mean / spec.qps:.2f} from the daily demand curve (mean {mean:.3g} of {which} "
            f"{spec.qps:g} req/s): tokens at the curve's mean; powered every hour, {parked:.3g} replicas parked "
            f"on average at {idle:.0%} of their power (idle_power_fraction)")
    return Load(utilization=mean / spec.qps, powered=1.0, saved_kw=parked * kw_per_replica * (1 - idle), note=note)
