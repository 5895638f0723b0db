"""Intervals on a plan's predicted figures, and plans sized to hold at a confidence level.

Each phase's band comes from the residuals of its regime (``catalog/calibration/residuals.toml``,
:mod:`gpuplan.hardware.intervals`): the GPU with the phase's framework or engine, else its vendor
and generation, else every published run widened (an unvalidated regime, said in the plan).
A time (step, days, GPU-hours, TTFT, TPOT, cost) scales with the band; a rate (MFU, TFLOP/s,
QPS, tokens/s) with its inverse; GPUs needed for a deadline or a QPS scale like a time and are
rounded up to whole replicas (serving) or whole GPUs (training).

``plan_at_confidence``: a target that must hold at ``level`` (one-sided) is tightened by the
band's upper quantile and the phase planned again: deadline / high, TTFT and TPOT / high,
QPS x high. Docs: docs/calibration.md.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from gpuplan.core.contract import Finding, Plan, ServingPlan, TrainingPlan
from gpuplan.hardware.intervals import DEFAULT_LEVEL, Band, band_of, generation, residual_table, software_of
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import Workload


def phase_band(kind: str, gpu_id: str | None, software: str | None, catalog: Catalog, *, moe: bool = False,
               level: float = DEFAULT_LEVEL, side: str = "two") -> Band | None:
    """The band of a phase planned on ``gpu_id`` with ``software`` (None: the planner default)."""
    table = residual_table(catalog)
    if table is None or gpu_id is None or gpu_id not in catalog.gpus:
        return None
    gpu = catalog.gpus[gpu_id]
    tail = "/moe" if moe else ""
    key = f"{gpu.id}/{software_of(kind, software, catalog)}{tail}"
    return band_of(table, kind, key, generation(gpu.vendor, gpu.arch) + tail,
                   level=level, side=side)  # type: ignore[arg-type]


def _software(workload: Workload, phase: str, catalog: Catalog) -> str:
    spec = getattr(workload, phase)
    return software_of(phase, getattr(spec, "framework" if phase == "training" else "engine", None), catalog)


def _r(pair: tuple[float, float], digits: int = 6) -> tuple[float, float]:
    return (float(f"{pair[0]:.{digits}g}"), float(f"{pair[1]:.{digits}g}"))


def training_intervals(t: TrainingPlan, band: Band) -> dict[str, tuple[float, float]]:
    out = {"step_time_s": band.time(t.step_time_s), "mfu": band.rate(t.mfu),
           "model_tflops_per_gpu": band.rate(t.model_tflops_per_gpu), "tokens_per_s": band.rate(t.tokens_per_s),
           "wall_clock_days": band.time(t.wall_clock_days), "gpu_hours": band.time(t.gpu_hours)}
    if t.run_cost_usd is not None:
        out["run_cost_usd"] = band.time(t.run_cost_usd)
    # GPUs that meet the same deadline: the time scales with the band, the GPUs with the time
    out["gpus_for_deadline"] = (float(max(1, math.ceil(t.gpus * band.low - 1e-9))),
                                float(math.ceil(t.gpus * band.high - 1e-9)))
    if t.capex_usd is not None and t.gpus:
        # the cluster that meets the deadline: capex scales with its GPUs
        out["capex_usd"] = tuple(t.capex_usd * g / t.gpus for g in out["gpus_for_deadline"])  # type: ignore[assignment]
    return {k: _r(v) for k, v in out.items()}


def serving_intervals(s: ServingPlan, band: Band) -> dict[str, tuple[float, float]]:
    out = {"ttft_ms_mean": band.time(s.ttft_ms_mean), "ttft_ms_at_percentile": band.time(s.ttft_ms_at_percentile),
           "ttft_ms_p99": band.time(s.ttft_ms_p99), "tpot_ms": band.time(s.tpot_ms),
           "e2e_ms_mean": band.time(s.e2e_ms_mean), "max_qps": band.rate(s.max_qps),
           "qps_per_replica": band.rate(s.qps_per_replica),
           "output_tokens_per_s": delivered_tokens(s, band)}
    if s.usd_per_million_output_tokens is not None:
        out["usd_per_million_output_tokens"] = band.time(s.usd_per_million_output_tokens)
    out["gpus_for_qps"] = tuple(float(gpus_for_qps(s, f)) for f in (band.low, band.high))  # type: ignore[assignment]
    if s.capex_usd is not None and s.gpus:
        out["capex_usd"] = tuple(s.capex_usd * g / s.gpus for g in out["gpus_for_qps"])  # type: ignore[assignment]
    return {k: _r(v) for k, v in out.items()}


def delivered_tokens(s: ServingPlan, band: Band) -> tuple[float, float]:
    """Output tokens/s the fleet delivers: the target QPS's (``output_tokens_per_s``, not a
    prediction), less only where the pessimistic capacity (``max_qps``'s low end) falls short of the
    target QPS (``utilization x max_qps``); never more than the demand."""
    demand = s.output_tokens_per_s
    target_qps = s.utilization * s.max_qps
    if demand <= 0 or target_qps <= 0:
        return (demand, demand)
    return (demand * min(1.0, band.rate(s.max_qps)[0] / target_qps), demand)


def gpus_for_qps(s: ServingPlan, factor: float) -> int:
    """GPUs that serve the same QPS when a worker's capacity is ``1 / factor`` of the prediction:
    the active replicas (or, in a scale-out disaggregated fleet, each pool's active workers) scale
    by ``factor``, rounded up to whole ones; the spares stay. ``factor = 1`` gives the plan's GPUs."""
    d = s.disaggregation
    if s.layout is not None and s.layout.disaggregated and d is not None and d.placement == "scale-out":
        return sum((max(1, math.ceil(p.workers * factor - 1e-9)) + p.spare_workers) * p.gpus_per_worker
                   for p in d.pools)
    active = max(s.replicas - s.spare_replicas, 1)
    return (max(1, math.ceil(active * factor - 1e-9)) + s.spare_replicas) * max(s.gpus_per_replica, 1) + s.spare_gpus


def with_intervals(plan: Plan, workload: Workload, catalog: Catalog, *, level: float = DEFAULT_LEVEL,
                   confidence: float | None = None) -> Plan:
    """``plan`` with ``intervals``, ``interval_level`` and ``interval_basis`` on each feasible
    phase, and a finding where the regime is unvalidated or a target holds only at the optimistic
    end (of the interval; with ``confidence``, of that one-sided level)."""
    update: dict[str, Any] = {}
    findings = list(plan.findings)
    for phase in ("training", "serving"):
        p = getattr(plan, phase)
        if p is None or not p.feasible:
            continue
        software, moe = _software(workload, phase, catalog), workload.arch.is_moe
        band = phase_band(phase, p.gpu, software, catalog, level=level, moe=moe)
        if band is None or band.scope == "none":
            continue
        values = training_intervals(p, band) if phase == "training" else serving_intervals(p, band)
        update[phase] = p.model_copy(update={"intervals": values, "interval_level": level,
                                             "interval_basis": band.why})
        if band.scope == "kind":
            findings.append(Finding(severity="note", code=f"{phase}-interval-unvalidated", phase=phase,  # type: ignore[arg-type]
                                    message=f"{phase} on {p.gpu}: {band.why}; the {level:.0%} interval is wider",
                                    field=phase))
        if confidence is not None:
            upper = phase_band(phase, p.gpu, software, catalog, level=confidence, moe=moe, side="upper")
            findings += _optimistic(phase, p, workload, upper.high if upper else 1.0, f"{confidence:.0%} confidence")
        else:
            findings += _optimistic(phase, p, workload, band.high, f"{level:.0%} interval")
    if not update:
        return plan
    return plan.model_copy(update={**update, "findings": findings})


def _optimistic(phase: str, p: Any, workload: Workload, high: float, what: str) -> list[Finding]:
    """A target the point estimate meets but the pessimistic end (prediction x ``high``) misses."""
    misses = []
    if phase == "training" and workload.training is not None and workload.training.deadline_days is not None:
        deadline = workload.training.deadline_days
        if p.wall_clock_days <= deadline * (1 + 1e-9) and p.wall_clock_days * high > deadline * (1 + 1e-6):
            misses.append(f"the {deadline:g}-day deadline holds only at the optimistic end: {p.wall_clock_days:.3g} "
                          f"days predicted, up to {p.wall_clock_days * high:.3g} at the {what}")
    if phase == "serving" and workload.serving is not None:
        s = workload.serving
        for name, target, fig in (("TTFT", s.ttft_ms, "ttft_ms_at_percentile"), ("TPOT", s.tpot_ms, "tpot_ms")):
            value = getattr(p, fig)
            if value <= target * (1 + 1e-9) and value * high > target * (1 + 1e-6):
                misses.append(f"the {target:g} ms {name} target holds only at the optimistic end: {value:.3g} ms "
                              f"predicted, up to {value * high:.3g} ms at the {what}")
    return [Finding(severity="warning", code=f"{phase}-optimistic-only", phase=phase,  # type: ignore[arg-type]
                    message=m + " (--confidence sizes the plan to hold at a level)", field=phase) for m in misses]


def plan_at_confidence(workload: Workload, catalog: Catalog, *, phases: tuple[str, ...], level: float,
                       planner: Any) -> Plan:
    """Plan so each phase's target holds with probability ``level`` under its regime's residuals.

    ``planner(workload, catalog, phases=...)`` is :func:`gpuplan.planning.compose.plan_workload`.
    The first plan picks the GPU; its band's one-sided ``level`` quantile tightens the targets,
    and the phases are planned again (twice at most, in case the GPU changes)."""
    plan = planner(workload, catalog, phases=phases)
    tightened = workload
    for _ in range(2):
        changed = False
        t, s = tightened.training, tightened.serving
        if t is not None and plan.training is not None and plan.training.feasible and workload.training is not None \
                and workload.training.deadline_days is not None:
            band = phase_band("training", plan.training.gpu, _software(workload, "training", catalog), catalog,
                              moe=workload.arch.is_moe, level=level, side="upper")
            if band is not None and band.high > 1:
                want = workload.training.deadline_days / band.high
                if t.deadline_days is None or abs(t.deadline_days - want) > 1e-9:
                    t, changed = replace(t, deadline_days=want), True
        if s is not None and plan.serving is not None and plan.serving.feasible and workload.serving is not None:
            band = phase_band("serving", plan.serving.gpu, _software(workload, "serving", catalog), catalog,
                              moe=workload.arch.is_moe, level=level, side="upper")
            if band is not None and band.high > 1:
                w = workload.serving
                want_s = replace(s, ttft_ms=w.ttft_ms / band.high, tpot_ms=w.tpot_ms / band.high, qps=w.qps * band.high)
                if want_s != s:
                    s, changed = want_s, True
        if not changed:
            break
        tightened = replace(tightened, training=t, serving=s)
        plan = planner(tightened, catalog, phases=phases)
    note = Finding(severity="note", code="confidence", phase="profile",
                   message=f"sized so the targets hold at {level:.0%} confidence under the validation residuals "
                           "(deadline, TTFT and TPOT divided, QPS multiplied by the upper quantile of the band)")
    return plan.model_copy(update={"findings": [*plan.findings, note]})
