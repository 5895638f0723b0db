"""The closest fix of an infeasible phase: the smallest change of one constraint that makes it
feasible, computed by re-planning, not guessed.

Each candidate constraint the profile sets (a deadline, a budget, a power limit, a QPS target, the
serving latency targets, a GPU allow-list) is relaxed alone: grown (or, for QPS, shrunk) geometrically until the phase plans
feasibly, then bisected between the last infeasible and the first feasible value. Every candidate
has a bounded number of re-plans (:data:`MAX_STEPS` + :data:`BISECT_STEPS`), and the phase at
most :data:`MAX_PLANS`; no value goes past the profile's limits (:data:`LIMITS`). The fix with the smallest relative change wins; an allow-list
counts as a change of 1 (one GPU type added).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gpuplan.core.fix_contract import ClosestFix
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import Workload
from gpuplan.planning.findings import nearest_miss

#: Geometric steps (x2 each) before a constraint is given up, and bisection steps after.
MAX_STEPS = 6
BISECT_STEPS = 4

#: Re-plans of one phase across all candidates (a phase's search can take seconds).
MAX_PLANS = 16
#: Upper limits of the profile fields (docs/profile.md, "Limits"): a fix past one is no fix.
LIMITS = {"training.deadline_days": 3650.0, "constraints.power_limit_kw": 1e7}

Planner = Callable[[Workload, Catalog], Any]


def closest_fix(phase: str, workload: Workload, catalog: Catalog, planner: Planner,
                nearest_days: float | None = None) -> ClosestFix | None:
    """The smallest one-constraint change that makes ``phase`` of ``workload`` plan feasibly; None
    when no single change within the bounds does. ``nearest_days``: the wall-clock days of the
    fastest training plan found on any GPU (the infeasible plan's nearest miss), tried first as the
    deadline, which the bisection only approaches (it said 18.5 days where the nearest took 17.7)."""
    found: list[tuple[float, ClosestFix]] = []
    budget = [MAX_PLANS]

    def feasible(candidate: Workload) -> bool | None:
        if budget[0] <= 0:
            return None  # out of re-plans: this candidate is not searched further
        budget[0] -= 1
        return planner(candidate, catalog).feasible

    for field, value, grow, apply, show in _candidates(phase, workload):
        limit = LIMITS.get(field)
        if limit is not None and value >= limit:
            continue  # already at the profile's limit (docs/profile.md, "Limits"): no fix here
        fixed = None
        if field == "training.deadline_days" and nearest_days is not None and value < nearest_days:
            # the fastest plan the search found on any GPU: no deadline below it is met, and it meets its own
            trial = math.ceil(nearest_days * 10) / 10
            fixed = trial if (limit is None or trial <= limit) and feasible(apply(trial)) else None
        if fixed is None:
            fixed = _search(value, grow, lambda v, apply=apply: feasible(apply(v)), limit)
        if fixed is not None:
            change = abs(fixed / value - 1) if grow > 1 else abs(1 - fixed / value)
            verb = "raise" if grow > 1 else "lower"
            found.append((change, ClosestFix(constraint=field, from_=show(value), to=show(fixed),
                                             message=f"{verb} {field} from {show(value)} to {show(fixed)}")))
    allowed = workload.constraints.allow_gpus
    if allowed and budget[0] > 0:
        plan = planner(replace(workload, constraints=replace(workload.constraints, allow_gpus=())), catalog)
        if plan.feasible and plan.gpu:
            to = ", ".join([*allowed, plan.gpu])
            found.append((1.0, ClosestFix(constraint="constraints.allow_gpus", from_=", ".join(allowed), to=to,
                                          message=f"allow {plan.gpu} (constraints.allow_gpus)")))
    return min(found, key=lambda pair: pair[0])[1] if found else None


def with_fix(phase: str, workload: Workload, catalog: Catalog, planner: Planner) -> Any:
    """The plan of ``phase`` by ``planner`` and, when it is infeasible, with its closest fix."""
    plan = planner(workload.for_phase(phase), catalog)
    if plan.feasible:
        return plan
    nearest = nearest_miss(plan) if phase == "training" else None
    fix = closest_fix(phase, workload.for_phase(phase), catalog, planner,
                      nearest_days=nearest.wall_clock_days if nearest is not None else None)
    return plan.model_copy(update={"closest_fix": fix}) if fix is not None else plan


def _search(value: float, grow: float, feasible: Callable[[float], bool | None],
            limit: float | None = None) -> float | None:
    """The value nearest ``value`` in direction ``grow`` that is feasible, to within the bisection;
    never past ``limit``."""
    bad, good = value, None
    for _ in range(MAX_STEPS):
        trial = min(bad * grow, limit) if limit is not None else bad * grow
        ok = feasible(trial)
        if ok is None:
            return None
        if ok:
            good = trial
            break
        if trial == limit:
            return None
        bad = trial
    if good is None:
        return None
    for _ in range(BISECT_STEPS):
        mid = (bad * good) ** 0.5
        ok = feasible(mid)
        if ok is None:
            break  # out of re-plans: the feasible end found so far
        if ok:
            good = mid
        else:
            bad = mid
    return good


def _money(v: float) -> str:
    return f"${v:,.0f}"


def _candidates(phase: str, w: Workload) -> list[tuple[str, float, float, Callable[[float], Workload], Callable]]:
    out: list[tuple[str, float, float, Callable[[float], Workload], Callable]] = []
    c = w.constraints
    if c.budget_usd:
        out.append(("constraints.budget_usd", c.budget_usd, 2.0,
                    lambda v: replace(w, constraints=replace(c, budget_usd=v)), _money))
    if c.power_limit_kw:
        out.append(("constraints.power_limit_kw", c.power_limit_kw, 2.0,
                    lambda v: replace(w, constraints=replace(c, power_limit_kw=v)), lambda v: f"{v:,.0f} kW"))
    t = w.training
    if phase == "training" and t is not None:
        if t.deadline_days:
            out.append(("training.deadline_days", t.deadline_days, 2.0,
                        lambda v: replace(w, training=replace(t, deadline_days=v)),
                        lambda v: f"{math.ceil(v * 10) / 10:,.1f} days"))  # rounded up: still feasible
        if t.budget_usd:
            out.append(("training.budget_usd", t.budget_usd, 2.0,
                        lambda v: replace(w, training=replace(t, budget_usd=v)), _money))
    s = w.serving
    if phase == "serving" and s is not None and s.qps and s.hourly_qps is None:
        out.append(("serving.qps", s.qps, 0.5, lambda v: replace(w, serving=replace(s, qps=v)),
                    lambda v: f"{v:,.1f} requests/s"))
    if phase == "serving" and s is not None:  # a latency target below what any layout reaches
        out.append(("serving.tpot_ms", s.tpot_ms, 2.0, lambda v: replace(w, serving=replace(s, tpot_ms=v)),
                    lambda v: f"{math.ceil(v * 10) / 10:,.1f} ms"))  # rounded up: still feasible
        out.append(("serving.ttft_ms", s.ttft_ms, 2.0, lambda v: replace(w, serving=replace(s, ttft_ms=v)),
                    lambda v: f"{math.ceil(v):,.0f} ms"))
    return out
