"""The best option of one GPU type for the training target, or its closest miss and why; how the
GPU types rank against each other. The search itself is :mod:`gpuplan.training.search`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from gpuplan.core.records import dataclass
from typing import TypeVar

from gpuplan.core.collector import collector_paused
from gpuplan.core.contract import TrainingOption
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.model.profile import Workload
from gpuplan.training.layout import Layout
from gpuplan.training.plan_record import bound_of, layout_record
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
from gpuplan.training.framework import constrain
from gpuplan.training.fit import _best_fit
from gpuplan.training.groups import _axes, space_thinned
from gpuplan.training.space import dp_candidates, fits_in_domain, states_can_fit, vp_candidates
from gpuplan.training.sizing import BATCH_TIME_TOLERANCE, batch_options, fixed_count_dps, nearest_counts
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


@dataclass(frozen=True)
class Miss:
    """Why a GPU type misses the target, as the facts its search found; the words are written from
    them after the search (:func:`gpuplan.training.reasons.miss_text`).

    ``kind``: "unpriced" (a budget that cannot be checked, ``limit`` dollars), "budget" (``value``
    dollars over ``limit``), "power" (``gpus`` drawing ``value`` kW over ``limit``), "isolated" (no
    scale-out network, a ``domain``-GPU scale-up domain), "states" (the model states fit no TP x PP),
    "count-memory" (``value`` bytes per GPU at least on ``gpus``), "memory" (``value`` bytes at
    ``layout``), "count" (no layout on exactly ``gpus`` at a batch near ``batch``), "limits" (the
    power limit or the batch), "deadline" (about ``gpus`` GPUs at the speed of ``plan``), "none"."""

    kind: str
    limit: float = 0.0
    value: float = 0.0
    gpus: int = 0
    #: TP x PP the model states need (None: nothing fits; 1: no constraint).
    states: int | None = None
    #: The fastest plan found (deadline and budget misses).
    plan: Evaluation | None = None
    #: The leanest layout the search saw (memory misses).
    layout: Layout | None = None
    batch: int = 0
    domain: int = 0
    #: Nearest whole-server counts below and above ``gpus`` that some layout can use.
    nearest: tuple[int | None, int | None] = (None, None)
    #: The GPU's usable GiB, the bytes a layout may use, and the headroom kept free.
    usable: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: Search axes thinned to stay within ``max_groups`` (said after the reason).
    thinned: tuple[str, ...] = ()
    max_groups: int = 0


def plan_gpu(ev: Evaluator, target: Target, workload: Workload, catalog: Catalog | None = None,
             max_groups: int = MAX_GROUPS, cutoff: float | None = None) -> tuple[Candidate | None, Miss | None]:
    """Best option of one GPU type for the target, or the closest miss and why it misses.

    ``cutoff`` (deadline targets): only a plan costing at most that is wanted; (None, None) when
    there is none (search's ``cutoff``)."""
    gpu, cap = ev.gpu, workload.constraints.budget_usd
    if target.kind == "budget" and cost_usd(gpu, gpu.gpus_per_node, 1.0, target.pricing) is None:
        return None, Miss("unpriced", limit=target.budget_usd or 0.0)
    if no_plan(ev, target):  # what its searches would end with, proven without them
        if cutoff is not None:
            return None, None
        return None, Miss("isolated", domain=ev.hw.domain, max_groups=max_groups,
                          thinned=space_thinned(ev, constrain(ev.framework, Fixed()), target, max_groups))
    # The least memory a search saw is read only for a miss without any plan (_nearest), and not
    # even then on a GPU type whose servers have no scale-out network (its miss says that instead).
    isolated = ev.hw.net.scaleout is None and ev.hw.domain < gpu.gpus_per_node
    with collector_paused():  # the search frees what it allocates by refcount (core/collector.py)
        found = search(ev, Fixed(), target, top=1, max_groups=max_groups, cutoff=cutoff,
                       memory=None if isolated else False)
    if cutoff is not None and not found.best:
        return None, None
    if not found.best and target.kind == "gpus" and workload.training is not None:
        # No DP of this count divides the power-of-two batch: of the batches nearest the requested
        # one that some DP of the count divides (batch_options, nearest first), the nearest whose
        # plan is within BATCH_TIME_TOLERANCE of the fastest (stated in the plan's reasons). The
        # nearest alone may leave only a narrow DP (DP 59 on 472 GPUs: TP8, four times slower).
        requested = workload.training.global_batch_tokens / ev.job.seq
        tried = []
        for batch in batch_options(requested, fixed_count_dps(ev, target.gpus or 0)):
            if batch == ev.job.batch:
                continue
            other = Evaluator(replace(ev.job, batch=batch), gpu, ev.hw.net, ev.cal, ev.attention, ev.headroom)
            again = search(other, Fixed(), target, top=1, max_groups=max_groups, memory=False)
            if again.best:
                tried.append((other, again))
        if tried:
            fastest = min(f.best[0].wall_days for _, f in tried)
            ev, found = next((o, f) for o, f in tried if f.best[0].wall_days <= fastest * (1 + BATCH_TIME_TOLERANCE))
    if not found.best:
        cand, miss = _nearest(ev, target, found)
        return cand, replace(miss, thinned=found.thinned, max_groups=max_groups)
    best = found.best[0]
    cost = cost_usd(gpu, best.gpus, best.gpu_hours, target.pricing)
    cand = Candidate(gpu, best, tuple(found.best[1:]), cost, True, found.thinned, job=ev.job, max_groups=max_groups)
    if cap is not None and cost is None:  # fail closed: an unpriced plan cannot pass a budget
        return replace(cand, meets=False), Miss("unpriced", limit=cap)
    if cap is not None and cost is not None and cost > cap:
        return replace(cand, meets=False), Miss("budget", limit=cap, value=cost)
    limit = workload.constraints.power_limit_kw
    power = gpu.servers_for(best.gpus) * gpu.node_power_kw
    if limit is not None and power > limit:
        return replace(cand, meets=False), Miss("power", limit=limit, value=power, gpus=best.gpus)
    return cand, None


#: Evaluations the probes for "some plan meets the deadline" spend, in turn (:func:`meets_somewhere`).
PROBE_EVALUATIONS = (1, 8)


def meets_somewhere(ev: Evaluator, target: Target, max_groups: int, proofs: list[Layout] | None = None) -> bool:
    """Whether some layout of the space is proven to meet ``target.deadline_days``: the fastest plan
    a search for the fastest finds within :data:`PROBE_EVALUATIONS` evaluations does. The first
    probe settles most GPU types; the second goes on from where it stopped (search's resumable
    limit), and a GPU type that it does not settle misses the deadline or is searched in full, whose
    miss runs the same search on to MAX_RELAXED_EVALUATIONS for its message (search._relaxed, from
    where this one stopped): in the default profile the A100 PCIe meets at the eighth, where its full
    deadline search took twice as long.

    A proof, not a guess: the deadline search has the same groups and DP values (only a GPU-count
    target differs, training/space.py), every bound is a lower bound, and each shape is fitted by
    the same function, so the layout found here is among those the deadline search would reach, and
    that search finds a plan. False says nothing (the probe may stop before the fastest). The layout
    that proves it is appended to ``proofs`` (for :func:`meets_with` on the next GPU types)."""
    if no_plan(ev, target):
        return False
    fastest = Target(kind="fastest", pricing=target.pricing, power_limit_kw=target.power_limit_kw,
                     whole_nodes=target.whole_nodes)
    for evaluations in PROBE_EVALUATIONS:
        with collector_paused():
            found = search(ev, Fixed(), fastest, top=1, relax=False, limit=evaluations, max_groups=max_groups)
        if found.best and found.best[0].wall_days <= target.deadline_days:  # type: ignore[operator]
            if proofs is not None:
                proofs.append(found.best[0].layout)
            return True
    return False


def meets_with(ev: Evaluator, target: Target, max_groups: int, layouts: tuple[Layout, ...]) -> bool:
    """Whether one of ``layouts`` (other GPU types' plans), as a shape of this GPU type's space at
    its largest DP, fits and meets ``target.deadline_days``: a proof as :func:`meets_somewhere`'s
    (a (shape, DP) of the deadline search's space, fitted by the same function; that search is
    exhaustive, so it finds a plan), for one fit where it holds. False says nothing."""
    fixed = constrain(ev.framework, Fixed())
    axes, _ = _axes(ev, fixed, target, max_groups)
    rc, fold, outcome = fixed.recompute or "none", fixed.fold_experts, SearchOutcome(max_groups=max_groups)
    for lay in layouts:
        tp, pp, cp, ep, vp, mb = lay.tp, lay.pp, lay.cp, lay.ep, lay.vp, lay.micro_batch
        if not (tp in axes["tp"] and pp in axes["pp"] and cp in axes["cp"] and ep in axes["ep"] and mb in axes["mb"]
                and vp in vp_candidates(ev.job.arch.layers, pp, fixed) and states_can_fit(ev, tp, pp, cp, ep, fixed)):
            continue  # not a shape of this space (groups._enumerate, bounds._vp_shapes)
        # Its largest DP that leaves interleaving the PP micro-batches it needs (layout.check).
        dps = [d for d in dp_candidates(ev, fixed, target, tp * pp * cp, mb, ep, cp, tp)
               if vp == 1 or ev.job.batch // (d * mb) >= pp]
        if dps:
            sp = fixed.sequence_parallel if fixed.sequence_parallel is not None else tp > 1
            e = _best_fit(ev, Layout(tp, pp, dps[-1], cp, ep, vp, mb, rc, sp, 1, 0, fold), fixed, outcome)
            if e is not None and e.wall_days <= target.deadline_days:  # type: ignore[operator]
                return True
    return False


def no_plan(ev: Evaluator, target: Target) -> bool:
    """Whether every search of ``ev``'s space for ``target`` ends without any plan (a miss that says
    "isolated", :func:`_nearest`), proven without searching: its servers have no scale-out network
    and more GPUs than a scale-up domain; every layout whose DP x CP group spans domains has an
    infinite step (fit._unreachable: the DP sync of the stage's non-expert gradients has no tier),
    and none of the others fits memory (space.fits_in_domain). Not for a GPU-count target, whose
    plan may take another batch (:func:`plan_gpu`)."""
    arch, cal = ev.job.arch, ev.cal
    return (ev.hw.net.scaleout is None and ev.hw.domain < ev.gpu.gpus_per_node and target.kind != "gpus"
            and arch.attention_params_per_layer + arch.norm_params_per_layer > 0
            and cal.state_bytes[1] > 0 and cal.activation_bytes > 0 and not fits_in_domain(ev, Fixed()))


def _nearest(ev: Evaluator, target: Target, found: SearchOutcome) -> tuple[Candidate | None, Miss]:
    """Why nothing met the target, with the closest option when there is one."""
    gpu = ev.gpu
    usable = (gpu.memory_usable_gib, ev.limit, ev.headroom)
    if found.fastest is None:
        if ev.hw.net.scaleout is None and ev.hw.domain < gpu.gpus_per_node:
            return None, Miss("isolated", domain=ev.hw.domain)
        need = min_model_parallel(ev)
        if need is None:
            return None, Miss("states", usable=usable)
        if target.kind == "gpus" and target.gpus is not None:
            least = min_memory_at(ev, target.gpus)
            if least > ev.limit:
                return None, Miss("count-memory", value=least, gpus=target.gpus, states=need, usable=usable,
                                  nearest=nearest_counts(ev, target.gpus))
        if found.min_memory < math.inf:
            return None, Miss("memory", value=found.min_memory, layout=found.min_memory_layout, states=need,
                              usable=usable)
        if target.kind == "gpus":
            return None, Miss("count", gpus=target.gpus or 0, batch=ev.job.batch, states=need,
                              nearest=nearest_counts(ev, target.gpus or 0))
        return None, Miss("limits", states=need)
    e = found.fastest
    cost = cost_usd(gpu, e.gpus, e.gpu_hours, target.pricing)
    cand = Candidate(gpu, e, (), cost, False)
    mp = min_model_parallel(ev)
    if target.kind == "deadline":
        deadline = target.deadline_days or math.inf
        return cand, Miss("deadline", limit=deadline, gpus=math.ceil(e.gpus * e.wall_days / deadline), plan=e,
                          batch=ev.job.batch, states=mp)
    if target.kind == "budget":
        if cost is None:
            return cand, Miss("unpriced", limit=target.budget_usd or 0.0)
        return cand, Miss("budget", limit=target.budget_usd or 0.0, value=cost, plan=e)
    return cand, Miss("none")


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
