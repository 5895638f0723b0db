"""One fleet answer for a profile with both phases: separate fleets, one time-sliced fleet, or one
converged cluster (docs/fleet-model.md gives each formula and its sources).

Over one year, with one training run of the profile's size and a year of serving on the demand
curve (``serving.autoscaling.hourly_replicas``):

* ``separate``: the training plan's cluster (T GPUs) and the serving plan's fleet (S GPUs).
* ``time-sliced``: G = max(T, peak serving GPUs on the training GPU), in whole servers. Each hour
  serving takes ``r[h]`` replicas; training runs on the rest in whole model-parallel groups
  (``T / dp`` GPUs), ``t[h] = floor((G - r[h] * g) / group) * group``. Each change of ``r`` is a
  switch: training checkpoints and restarts (``checkpoint_save_hours + restart_hours`` of
  calibration/training.toml, on every training GPU), each replica added loads its model
  (``scale_up_s``) and each replica removed drains its requests (``e2e_ms_mean``). Training GPU-hours a day ``D = sum t[h] - switch losses``; time to train
  ``T_gpu_hours / D`` days. With a deadline, G grows until that fits.
* ``converged``: G = max(T, peak serving GPUs) on the training fabric: it trains for the training
  plan's days, then serves for the rest of the year; what serving leaves idle can be lent out.

``utilization`` = busy GPU-hours (training + serving replicas) / owned GPU-hours.
``cost_usd_per_year`` = capex / horizon_years + energy (capex pricing), the year's rent (cloud).
Energy: power x PUE x $/kWh, busy hours at full power, idle hours at ``idle_power_fraction`` of it.
Horizon, $/kWh and PUE are the plan's cost-of-ownership basis (:class:`gpuplan.fabric.tco.CostBasis`:
the TCO's, so the fleet's year and the phases' TCO price one plan alike; PUE: the phase's bill of
materials, or the default of its cooling for a fleet of another size).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from gpuplan.core.contract import Autoscaling, Fleet, FleetStrategy, Risk, ServingPlan, TrainingPlan
from gpuplan.core.numbers import num
from gpuplan.core.units import DAYS_PER_YEAR, HOURS_PER_YEAR
from gpuplan.hardware.fleet_calibration import fleet_calibration
from gpuplan.fabric.tco import CostBasis, cost_basis
from gpuplan.hardware.training_calibration import calibration as training_calibration
from gpuplan.model.profile import Workload

HOURS_PER_DAY = 24.0
#: Largest time-sliced fleet tried to meet a deadline, as a multiple of the larger need.
MAX_GROWTH = 4


def energy_usd_per_year(power_kw: float, utilization: float, pue: float, basis: CostBasis) -> float:
    """Power x PUE x $/kWh over a year: busy hours at full power, idle at ``idle_power_fraction``."""
    idle = fleet_calibration(basis.catalog).cost.idle_power_fraction
    u = min(1.0, max(0.0, utilization))
    return power_kw * pue * basis.usd_per_kwh * HOURS_PER_YEAR * (u + (1 - u) * idle)


def _per_year(capex: float | None, energy: float, basis: CostBasis) -> float | None:
    return None if capex is None else capex / basis.years + energy


def _pue(plan: TrainingPlan | ServingPlan, basis: CostBasis, catalog: Any) -> float:
    """The PUE of a phase's bill of materials (the default of its cooling without one)."""
    return basis.phase_pue(plan.bom, catalog.gpus[plan.gpu], plan.nodes) if plan.gpu else 1.0


def _serving_busy(a: Autoscaling, s: ServingPlan, days: float = DAYS_PER_YEAR) -> float:
    """Serving GPU-hours over ``days``: the replicas' hours, and the spare GPUs outside whole
    replicas (a disaggregated fleet's spare workers) all day."""
    return (a.replica_hours_per_day * s.gpus_per_replica + s.spare_gpus * HOURS_PER_DAY) * days


def _serving_gpus(s: ServingPlan, replicas: int) -> int:
    """The serving plan's GPUs with ``replicas`` replicas up (its spare GPUs always in)."""
    return replicas * s.gpus_per_replica + s.spare_gpus


def _train_busy(t: TrainingPlan, gpus: int) -> float:
    """GPU-hours of one run, at most a year of ``gpus``."""
    return min(t.gpu_hours, gpus * HOURS_PER_YEAR)


def plan_fleet(workload: Workload, catalog: Any, training: TrainingPlan | None, serving: ServingPlan | None,
               serve_on: Callable[[str], ServingPlan]) -> Fleet | None:
    """The fleet strategies of a two-phase plan; ``serve_on(gpu)`` plans serving on one GPU."""
    if training is None or serving is None:
        return None
    if not (training.feasible and serving.feasible and serving.autoscaling and training.gpu and serving.gpu):
        return Fleet(strategies=[], recommended=None,
                     reasons=["no fleet strategy: a phase has no feasible plan"])
    cloud = workload.constraints.pricing == "cloud"
    basis = cost_basis(workload.constraints.tco, catalog)
    out = [_separate(training, serving, catalog, cloud, basis)]
    shared = serving if serving.gpu == training.gpu else serve_on(training.gpu)
    if not shared.feasible or shared.autoscaling is None:
        why = "; ".join(shared.infeasible) or "no serving layout meets the targets"
        for name in ("time-sliced", "converged"):
            out.append(FleetStrategy(name=name, feasible=False, gpu=training.gpu, gpus=0, capex_usd=None,  # type: ignore[arg-type]
                                     cost_usd_per_year=None, energy_usd_per_year=None, utilization=0.0,
                                     training_days=0.0, serving_slo_met=False,
                                     reasons=[f"{training.gpu} (the training GPU) cannot serve the model: {why}"]))
    else:
        deadline = workload.training.deadline_days if workload.training else None
        out.append(_time_sliced(training, shared, catalog, cloud, deadline, basis))
        out.append(_converged(training, shared, catalog, cloud, serving, basis))
    recommended, reasons = _recommend(out, workload)
    return Fleet(strategies=out, recommended=recommended, reasons=reasons)


def _cloud_year(gpu_id: str, gpus: int, catalog: Any) -> float | None:
    """A year of ``gpus`` rented always-on at the reserved rate."""
    gpu = catalog.gpus[gpu_id]
    if gpu.cloud_usd_per_gpu_hour is None:
        return None
    d = fleet_calibration(catalog).cost.reserved_discount
    return gpu.billed_gpus(gpus) * gpu.cloud_usd_per_gpu_hour * (1 - d) * HOURS_PER_YEAR


def _separate(t: TrainingPlan, s: ServingPlan, catalog: Any, cloud: bool, basis: CostBasis) -> FleetStrategy:
    a = s.autoscaling
    assert a is not None
    busy_t, busy_s = _train_busy(t, t.gpus), _serving_busy(a, s)
    owned = (t.gpus + s.gpus) * HOURS_PER_YEAR
    energy = (energy_usd_per_year(t.power_kw, busy_t / (t.gpus * HOURS_PER_YEAR), _pue(t, basis, catalog), basis)
              + energy_usd_per_year(s.power_kw, busy_s / (s.gpus * HOURS_PER_YEAR), _pue(s, basis, catalog), basis))
    capex = None if t.capex_usd is None or s.capex_usd is None else t.capex_usd + s.capex_usd
    if cloud:
        serve = a.cloud_usd_per_year
        year = None if t.run_cost_usd is None or serve is None else t.run_cost_usd + serve
    else:
        year = _per_year(capex, energy, basis)
    idle_t = t.gpus * HOURS_PER_YEAR - busy_t
    risks = [Risk(severity="note", code="fleet-training-idle",
                  message=f"the training cluster trains {t.wall_clock_days:.0f} days a year and idles "
                          f"{idle_t / 24 / t.gpus:.0f} GPU-days per GPU between runs")]
    gpu = t.gpu if t.gpu == s.gpu else f"{t.gpu} + {s.gpu}"
    return FleetStrategy(name="separate", feasible=True, gpu=gpu, gpus=t.gpus + s.gpus, capex_usd=capex,
                         cost_usd_per_year=year, energy_usd_per_year=energy, utilization=(busy_t + busy_s) / owned,
                         training_days=t.wall_clock_days, serving_slo_met=True,
                         lendable_gpu_hours_per_day=(owned - busy_t - busy_s) / DAYS_PER_YEAR,
                         reasons=[f"training: {t.gpus:,} x {t.gpu} for {num(t.wall_clock_days)} days; serving: "
                                  f"{s.gpus:,} x {s.gpu}, {a.span()} replicas"],
                         risks=risks)


def _peak_words(s: ServingPlan, replicas: int) -> str:
    """``R x G GPUs`` (``+ S spare``): peak serving as the plan counts it."""
    return (f"{replicas} x {s.gpus_per_replica} GPUs" + (f" + {s.spare_gpus} spare" if s.spare_gpus else "")
            + (f" = {_serving_gpus(s, replicas):,}" if s.spare_gpus else ""))


def _whole_servers(gpus: int, gpu: Any) -> int:
    return gpu.servers_for(gpus) * gpu.gpus_per_node


def _time_slice(t: TrainingPlan, s: ServingPlan, a: Autoscaling, fleet: int, catalog: Any
                ) -> tuple[float, int, int]:
    """Training GPU-hours a day on a fleet of ``fleet`` GPUs, switches a day, and the training GPUs
    at serving's trough (the most serving ever leaves: below one model-parallel group training never runs)."""
    cal = training_calibration(catalog)
    group = max(1, t.gpus // (t.layout.dp if t.layout else 1))
    g = s.gpus_per_replica
    train = [max(0, (fleet - _serving_gpus(s, r)) // group * group) for r in a.hourly_replicas]
    lost, switches = 0.0, 0
    for h, r in enumerate(a.hourly_replicas):
        before = a.hourly_replicas[h - 1]
        if r == before:
            continue
        switches += 1
        lost += max(train[h - 1], train[h]) * (cal.checkpoint_save_hours + cal.restart_hours)
        lost += max(0, r - before) * g * a.scale_up_s / 3600.0  # load: server start + weights
        lost += max(0, before - r) * g * s.e2e_ms_mean / 3.6e6  # unload: drain the requests in flight
    return max(0.0, sum(train) - lost), switches, max(train)


def _grow(t: TrainingPlan, s: ServingPlan, a: Autoscaling, need: int, deadline: float, catalog: Any,
          step: int) -> int:
    """The smallest fleet, in purchase units of ``step`` GPUs above ``need`` (at most
    ``MAX_GROWTH x need``), whose time-sliced training meets the deadline: a bisection, since
    training GPU-hours a day only grow with the fleet."""
    def meets(units: int) -> bool:
        daily = _time_slice(t, s, a, need + units * step, catalog)[0]
        return daily > 0 and t.gpu_hours / daily <= deadline
    lo, hi = 0, max(1, (MAX_GROWTH - 1) * need // step)
    if not meets(hi):
        return need + hi * step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return need + hi * step


def _time_sliced(t: TrainingPlan, s: ServingPlan, catalog: Any, cloud: bool, deadline: float | None,
                 basis: CostBasis) -> FleetStrategy:
    a = s.autoscaling
    assert a is not None and t.gpu is not None
    gpu = catalog.gpus[t.gpu]
    peak = _serving_gpus(s, a.max_replicas)
    need = _whole_servers(max(t.gpus, peak), gpu)
    fleet = need
    daily, switches, trough = _time_slice(t, s, a, fleet, catalog)
    group = max(1, t.gpus // (t.layout.dp if t.layout else 1))
    reasons = [f"{need:,} x {t.gpu}: the larger of training ({t.gpus:,}) and peak serving "
               f"({_peak_words(s, a.max_replicas)})"]
    days = t.gpu_hours / daily if daily > 0 else math.inf
    first_days = days
    if deadline is not None and days > deadline:
        fleet = _grow(t, s, a, need, deadline, catalog, gpu.gpus_per_node * gpu.purchase_unit_nodes)
        daily, switches, trough = _time_slice(t, s, a, fleet, catalog)
        days = t.gpu_hours / daily if daily > 0 else math.inf
    if fleet > need:
        reasons.append(f"grown to {fleet:,} GPUs to train within {deadline:g} days "
                       f"({first_days:.0f} days on {need:,})")
    risks = [Risk(severity="warning", code="fleet-tail-latency",
                  message="training collectives share the servers' network and power with serving: "
                          "serving tail latency (TTFT p99) can stretch while both run"),
             Risk(severity="note", code="fleet-coupled-capacity",
                  message="coupled capacity planning: serving growth takes training hours, and a training "
                          "deadline takes serving headroom")]
    feasible = trough >= group and math.isfinite(days)
    if not feasible:
        reasons.append(f"training does not fit at the serving trough: {trough} GPUs left, one model-parallel "
                       f"group needs {group}")
        risks.append(Risk(severity="error", code="fleet-trough-too-small",
                          message="serving leaves less than one training model-parallel group at its trough"))
    if deadline is not None and days > deadline:
        risks.append(Risk(severity="warning", code="fleet-training-late",
                          message=f"training takes {days:.0f} days, over the {deadline:g}-day deadline"))
    train_year = min(t.gpu_hours, daily * DAYS_PER_YEAR) if math.isfinite(days) else 0.0
    busy = train_year + _serving_busy(a, s)
    owned = fleet * HOURS_PER_YEAR
    scale = gpu.servers_for(fleet) / gpu.servers_for(t.gpus)  # capex and power by whole servers
    capex = None if t.capex_usd is None else t.capex_usd * scale
    energy = energy_usd_per_year(t.power_kw * scale, busy / owned, basis.pue(gpu, gpu.servers_for(fleet)), basis)
    year = _cloud_year(t.gpu, fleet, catalog) if cloud else _per_year(capex, energy, basis)
    cal = training_calibration(catalog)
    switching = (f"{switches} switches a day, each a checkpoint and restart of "
                 f"{(cal.checkpoint_save_hours + cal.restart_hours) * 60:.1f} min and {a.scale_up_s:.0f} s of model "
                 f"load per replica added" if switches else "no switches (serving never changes size)")
    reasons.append(f"{switching}; training gets {daily:,.0f} GPU-hours a day ({num(days)} days against "
                   f"{num(t.wall_clock_days)} alone)")
    return FleetStrategy(name="time-sliced", feasible=feasible, gpu=t.gpu, gpus=fleet, capex_usd=capex,
                         cost_usd_per_year=year, energy_usd_per_year=energy, utilization=busy / owned,
                         training_days=days if math.isfinite(days) else 0.0, serving_slo_met=True,
                         lendable_gpu_hours_per_day=(owned - busy) / DAYS_PER_YEAR, switches_per_day=switches,
                         reasons=reasons, risks=risks)


def _bridge_usd(a: Autoscaling, days: float, serving: ServingPlan, catalog: Any,
                basis: CostBasis) -> tuple[float | None, str]:
    """The serving plan's replica-hours for ``days`` while the converged cluster trains (the model
    in service keeps its users meanwhile): at the catalog cloud rate, or without one at the hourly
    cost of owning the serving plan's fleet (an hour at the planned load on the cost basis,
    :meth:`CostBasis.owned_usd_per_hour`: a borrowed replica-hour is a loaded one)."""
    if serving.replicas <= 0:
        return None, "unpriced"
    if serving.cloud_usd_per_hour is not None:
        per_hour, how = serving.cloud_usd_per_hour, "rented on demand at the catalog cloud rate"
    elif serving.capex_usd is not None:
        per_hour = basis.owned_usd_per_hour(serving.capex_usd, serving.power_kw, _pue(serving, basis, catalog))
        how = "at the hourly cost of owning the serving fleet (no cloud rate in the catalog)"
    else:
        return None, "unpriced (no cloud rate, no server price)"
    return a.replica_hours_per_day * days * per_hour / serving.replicas, how


def _converged(t: TrainingPlan, s: ServingPlan, catalog: Any, cloud: bool, serving: ServingPlan,
               basis: CostBasis) -> FleetStrategy:
    a = s.autoscaling
    assert a is not None and t.gpu is not None
    gpu = catalog.gpus[t.gpu]
    g = s.gpus_per_replica
    peak = _serving_gpus(s, a.max_replicas)
    fleet = _whole_servers(max(t.gpus, peak), gpu)
    days = t.wall_clock_days
    serve_days = max(0.0, DAYS_PER_YEAR - days)
    busy = _train_busy(t, t.gpus) + _serving_busy(a, s, serve_days)
    owned = fleet * HOURS_PER_YEAR
    idle_gpus = fleet - peak
    parked = (a.max_replicas * HOURS_PER_DAY - a.replica_hours_per_day) * g
    lendable = idle_gpus * 24 + parked
    scale = gpu.servers_for(fleet) / gpu.servers_for(t.gpus)  # capex and power by whole servers
    capex = None if t.capex_usd is None else t.capex_usd * scale
    energy = energy_usd_per_year(t.power_kw * scale, busy / owned, basis.pue(gpu, gpu.servers_for(fleet)), basis)
    year = _cloud_year(t.gpu, fleet, catalog) if cloud else _per_year(capex, energy, basis)
    served = serving.autoscaling or a
    bridge, how = _bridge_usd(served, days, serving, catalog, basis)
    year = None if year is None or bridge is None else year + bridge
    reasons = [f"{fleet:,} x {t.gpu} on the training fabric: trains {num(days)} days, then serves "
               f"{a.span()} replicas for {serve_days:.0f} days",
               f"after training {idle_gpus:,} GPUs idle and {parked:,.0f} GPU-hours a day parked off-peak: "
               f"{lendable:,.0f} GPU-hours a day to lend to fine-tuning or RL",
               f"serving during the {num(days)} training days: {served.replica_hours_per_day:g} replica-hours a "
               f"day of {serving.gpus_per_replica} x {serving.gpu}"
               + (f" (its {serving.spare_replicas} spare replica{'s' if serving.spare_replicas != 1 else ''} included)"
                  if serving.spare_replicas else "")
               + f" {how}"
               + (f", ${bridge:,.0f} (in the cost a year)" if bridge is not None else "")]
    risks = [Risk(severity="warning", code="fleet-serving-waits",
                  message=f"serving moves onto the cluster when training ends ({days:.0f} days): until then the "
                          "model in service runs on rented capacity"),
             Risk(severity="note", code="fleet-coupled-capacity",
                  message="coupled capacity planning: the next training run takes the serving capacity back")]
    if idle_gpus > 0:
        risks.append(Risk(severity="note", code="fleet-idle-after-training",
                          message=f"{idle_gpus:,} of {fleet:,} GPUs ({idle_gpus / fleet:.0%}) have no serving work "
                                  "after training unless lent out"))
    return FleetStrategy(name="converged", feasible=True, gpu=t.gpu, gpus=fleet, capex_usd=capex,
                         cost_usd_per_year=year, energy_usd_per_year=energy, utilization=busy / owned,
                         training_days=days, serving_slo_met=bridge is not None, lendable_gpu_hours_per_day=lendable,
                         utilization_if_lent=min(1.0, (busy + lendable * serve_days) / owned),
                         idle_gpus_after_training=idle_gpus,
                         reasons=reasons, risks=risks)


ORDER = ("separate", "time-sliced", "converged")


def _recommend(strategies: list[FleetStrategy], workload: Workload) -> tuple[str | None, list[str]]:
    """The cheapest strategy a year that serves within its targets and trains by the deadline."""
    deadline = workload.training.deadline_days if workload.training else None
    ok = [s for s in strategies if s.feasible and s.serving_slo_met and s.cost_usd_per_year is not None
          and (deadline is None or s.training_days <= deadline * (1 + 1e-9))]
    if not ok:
        return None, ["no strategy is priced, serves within its targets and trains by the deadline"]
    best = min(ok, key=lambda s: (s.cost_usd_per_year, ORDER.index(s.name)))
    reasons = [f"{best.name}: ${best.cost_usd_per_year:,.0f} a year at {best.utilization:.0%} utilisation, "
               f"training in {num(best.training_days)} days"]
    for s in strategies:
        if s is best:
            continue
        if s not in ok:
            why = ("not feasible" if not s.feasible else "unpriced" if s.cost_usd_per_year is None
                   else f"trains in {s.training_days:.0f} days, over the {deadline:g}-day deadline")
            reasons.append(f"{s.name}: {why}")
        else:
            extra = (s.cost_usd_per_year or 0.0) - (best.cost_usd_per_year or 0.0)
            reasons.append(f"{s.name}: ${s.cost_usd_per_year:,.0f} a year (+${extra:,.0f}) at "
                           f"{s.utilization:.0%} utilisation")
    return best.name, reasons
