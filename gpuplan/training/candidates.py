"""The best option of one GPU type for the training target, or its closest miss and why; how the
GPU types rank against each other. The search itself is :mod:`gpuplan.training.search`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from gpuplan.core.collector import collector_paused
from gpuplan.core.contract import TrainingOption
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.model.profile import Workload
from gpuplan.training.memory import GIB
from gpuplan.training.plan_record import bound_of, layout_record, short_layout
from gpuplan.training.search import (
    MAX_GROUPS,
    Evaluation,
    Evaluator,
    Fixed,
    SearchOutcome,
    Target,
    cost_usd,
    min_memory_at,
    min_model_parallel,
    search,
)
from gpuplan.training.sizing import batch_options, counts_phrase, fixed_count_dps, usable_text
from gpuplan.training.timing import Job

#: Search results shared by the calls of one planning run (see plan_training).
Memo = dict[tuple[object, ...], object]


@dataclass(frozen=True)
class Candidate:
    gpu: Gpu
    best: Evaluation
    others: tuple[Evaluation, ...]
    cost: float | None
    meets: bool
    #: Search axes thinned to stay within ``max_groups`` (SearchOutcome.thinned).
    thinned: tuple[str, ...] = ()
    #: The job searched (its batch differs from the profile's power of two on some fixed counts).
    job: Job | None = None
    max_groups: int = MAX_GROUPS


def batch_of(c: Candidate, job: Job) -> int:
    return (c.job or job).batch


R = TypeVar("R")


def memoized(memo: Memo, key: tuple[object, ...], make: Callable[[], R]) -> R:
    """``make()`` once per key of ``memo`` (keys hold everything the search reads)."""
    if key not in memo:
        memo[key] = make()
    return memo[key]  # type: ignore[return-value]


def plan_gpu(ev: Evaluator, target: Target, workload: Workload, catalog: Catalog | None = None,
             max_groups: int = MAX_GROUPS, cutoff: float | None = None) -> tuple[Candidate | None, str | None]:
    """Best option of one GPU type for the target, or the closest miss and why it misses.

    ``cutoff`` (deadline targets): only a plan costing at most that is wanted; (None, None) when
    there is none (search's ``cutoff``)."""
    gpu, cap = ev.gpu, workload.constraints.budget_usd
    if target.kind == "budget" and cost_usd(gpu, gpu.gpus_per_node, 1.0, target.pricing) is None:
        return None, f"no {target.pricing} price in the catalog: the ${target.budget_usd:,.0f} budget cannot be checked"
    with collector_paused():  # the search frees what it allocates by refcount (core/collector.py)
        found = search(ev, Fixed(), target, top=1, max_groups=max_groups, cutoff=cutoff)
    if cutoff is not None and not found.best:
        return None, None
    if not found.best and target.kind == "gpus" and workload.training is not None:
        # No DP of this count divides the power-of-two batch: the batch nearest the requested one
        # that some DP of the count divides (stated in the plan's reasons).
        requested = workload.training.global_batch_tokens / ev.job.seq
        for batch in batch_options(requested, fixed_count_dps(ev, target.gpus or 0)):
            if batch == ev.job.batch:
                continue
            other = Evaluator(replace(ev.job, batch=batch), gpu, ev.hw.net, ev.cal, ev.attention, ev.headroom)
            again = search(other, Fixed(), target, top=1, max_groups=max_groups)
            if again.best:
                ev, found = other, again
                break
    if not found.best:
        cand, why = _nearest(ev, target, found)
        return cand, why + (f" (layout space thinned to {max_groups:,} groups: {'; '.join(found.thinned)})"
                            if found.thinned else "")
    best = found.best[0]
    cost = cost_usd(gpu, best.gpus, best.gpu_hours, target.pricing)
    cand = Candidate(gpu, best, tuple(found.best[1:]), cost, True, found.thinned, job=ev.job, max_groups=max_groups)
    if cap is not None and cost is None:  # fail closed: an unpriced plan cannot pass a budget
        return replace(cand, meets=False), (f"no {target.pricing} price in the catalog: the ${cap:,.0f} budget "
                                            f"cannot be checked")
    if cap is not None and cost is not None and cost > cap:
        return replace(cand, meets=False), (f"the plan costs ${cost:,.0f}, over the ${cap:,.0f} budget "
                                            f"by {cost / cap - 1:.0%}")
    limit = workload.constraints.power_limit_kw
    power = gpu.servers_for(best.gpus) * gpu.node_power_kw
    if limit is not None and power > limit:
        return replace(cand, meets=False), (f"{best.gpus:,} GPUs draw {power:,.0f} kW, over the "
                                            f"{limit:,.0f} kW power limit by {power / limit - 1:.0%}")
    return cand, ""


def _nearest(ev: Evaluator, target: Target, found: SearchOutcome) -> tuple[Candidate | None, str]:
    """Explain why nothing met the target, with the closest option when there is one."""
    gpu = ev.gpu
    if found.fastest is None:
        if ev.hw.net.scaleout is None and ev.hw.domain < gpu.gpus_per_node:
            return None, (f"the reference server has no scale-out network and a {ev.hw.domain}-GPU scale-up "
                          f"domain: its GPUs cannot train one model together")
        need = min_model_parallel(ev)
        states = f"; the model states need TP*PP >= {need}" if need and need > 1 else ""
        if need is None:
            return None, f"does not fit: the model states exceed {gpu.memory_usable_gib:.1f} GiB at any TP x PP"
        if target.kind == "gpus" and target.gpus is not None:
            least = min_memory_at(ev, target.gpus)
            if least > ev.limit:
                return None, (f"does not fit on {target.gpus:,} GPUs: needs at least {least / GIB:.1f} GiB per GPU "
                              f"(full recompute, ZeRO-2/3), has {usable_text(ev)}{states}"
                              f"{counts_phrase(ev, target.gpus)}")
        if found.min_memory < math.inf:
            lay = found.min_memory_layout
            where = f" (best: TP{lay.tp} PP{lay.pp} DP{lay.dp})" if lay else ""
            return None, (f"does not fit: needs {found.min_memory / GIB:.1f} GiB per GPU{where}, "
                          f"has {usable_text(ev)}{states}")
        if target.kind == "gpus":
            return None, (f"no valid layout on exactly {target.gpus:,} GPUs (TP x PP x CP x DP must match "
                          f"and DP x micro-batch divide a global batch near {ev.job.batch}){states}"
                          f"{counts_phrase(ev, target.gpus or 0)}")
        return None, f"no layout fits the power limit or the global batch{states}"
    e = found.fastest
    cost = cost_usd(gpu, e.gpus, e.gpu_hours, target.pricing)
    cand = Candidate(gpu, e, (), cost, False)
    mp = min_model_parallel(ev)
    states = f"; the model states need TP*PP >= {mp}" if mp and mp > 1 else ""
    if target.kind == "deadline":
        deadline = target.deadline_days or math.inf
        need = math.ceil(e.gpus * e.wall_days / deadline)
        limit = ("the power limit" if target.power_limit_kw is not None else
                 f"the global batch of {ev.job.batch} sequences")
        return cand, (f"needs about {need:,} GPUs for the {deadline:g}-day deadline at the per-GPU speed of its "
                      f"fastest plan found ({e.gpus:,} GPUs, {short_layout(e.layout)}: {e.wall_days:.1f} days, "
                      f"{e.wall_days / deadline - 1:.0%} over), more than {limit} allows{states}")
    if target.kind == "budget":
        if cost is None:
            return cand, f"no {target.pricing} price in the catalog: the ${target.budget_usd:,.0f} budget cannot be checked"
        return cand, (f"the cheapest plan found ({e.gpus:,} GPUs, {e.wall_days:.1f} days) costs ${cost:,.0f}, "
                      f"{cost / target.budget_usd - 1:.0%} over the ${target.budget_usd:,.0f} budget")  # type: ignore[operator]
    return cand, "no layout fits"


def rank(c: Candidate, target: Target) -> tuple[object, ...]:
    priced = 0 if c.cost is not None else 1
    if target.kind == "deadline":
        return (priced, c.cost if c.cost is not None else c.best.gpu_hours, c.best.wall_days, c.gpu.id)
    return (priced, c.best.wall_days, c.cost or 0.0, c.gpu.id)


def option_of(c: Candidate, batch: int) -> TrainingOption:
    e = c.best
    return TrainingOption(gpu=c.gpu.id, gpus=e.gpus, nodes=c.gpu.servers_for(e.gpus),
                          layout=layout_record(e, batch), step_time_s=e.step_time, mfu=e.mfu, wall_clock_days=e.wall_days,
                          gpu_hours=e.gpu_hours, cost_usd=c.cost, meets_target=c.meets, bound=bound_of(e)[0])
