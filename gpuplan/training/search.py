"""Evaluate layouts and search the layout space of one GPU type (branch and bound).

The space: TP (powers of two inside the scale-up domain dividing heads, KV heads and the MLP),
CP (powers of two while each rank keeps >= ``MIN_CP_TOKENS`` tokens of a sequence), EP (powers
of two dividing the experts and DP x CP), PP (for each number of layers per stage, the smallest
PP that gives it), VP (divisors of the layers per stage), micro-batch (powers of two), recompute
(none / selective / full on as few layers as memory needs), ZeRO stage (1, 2, 3; 3 only
without PP) and DP (divisors of the global batch that fill whole nodes).

Nothing better than the result is pruned:

* every (TP, CP, EP, PP, VP, micro-batch) gets a lower bound of its ranking key: the step
  without DP sync, pipeline sends and optimizer, with the least recompute memory allows at the
  largest DP, the bubble and the goodput of its GPU count (no host time: a lower bound); shapes are visited
  in bound order and the search stops once a bound exceeds the best key found;
* recompute and ZeRO are tried from the cheapest; a costlier one only when memory demands;
* a (TP, PP, CP, EP) whose 16-bit weights and gradients alone exceed memory is skipped, and
  so are larger micro-batches once one does not fit at the most sharding and recompute.

Iteration is over sorted lists and ties break on the layout tuple: results are deterministic.
"""

from __future__ import annotations

import bisect
import heapq
import math
from typing import NamedTuple

from gpuplan.hardware.schema import Gpu
from gpuplan.training.framework import constrain
from gpuplan.training.layout import (
    Layout,
    check,
    layers_per_stage,
)
from gpuplan.training.memory import (
    Memory,
    recompute_layers_to_fit,
)

from gpuplan.training.evaluator import (  # noqa: F401  (re-exported: the search's public names)
    HOURS_PER_DAY,
    MAX_GROUPS,
    MAX_RELAXED_EVALUATIONS,
    MAX_TOTAL_GROUPS,
    MICRO_BATCHES,
    MIN_CP_TOKENS,
    MIN_GROUPS,
    ZERO_STAGES,
    Evaluation,
    Evaluator,
    Fixed,
    SearchOutcome,
    Target,
    cost_usd,
    group_limit,
)
from gpuplan.training.space import (  # noqa: F401  (re-exported)
    cp_candidates,
    dp_candidates,
    ep_candidates,
    mb_candidates,
    min_memory_at,
    min_model_parallel,
    pp_candidates,
    recompute_candidates,
    states_can_fit,
    tp_candidates,
    vp_candidates,
    zero_candidates,
)

# -- evaluation of one (shape, DP) -------------------------------------------------------------------
def _best_fit(ev: Evaluator, base: Layout, fixed: Fixed, outcome: SearchOutcome) -> Evaluation | None:
    """The fastest (recompute, ZeRO) of ``base`` that fits memory. For each recompute setting,
    least first, the smallest ZeRO stage that fits; more recompute is tried only while the last one
    needed more than the smallest ZeRO stage (it may fit with less sharding: ZeRO-2/3 add a
    reduce-scatter or all-gather per micro-batch, which can cost more than recomputing layers)."""
    zeros = zero_candidates(fixed, base.pp, base.dp * base.cp)
    rcs = recompute_candidates(ev, fixed)
    if check(base.but(recompute=rcs[0], zero=zeros[0]), ev.job.arch, ev.job.seq, ev.job.batch, ev.hw.domain):
        return None
    partial = fixed.recompute is None

    def fit(rc: str, zero: int) -> tuple[Layout, Memory]:
        lay = base.but(recompute=rc, zero=zero, recompute_layers=0)
        if rc == "full" and partial:
            lay = _partial(ev, lay)
        return lay, ev.memory(lay)

    best: Evaluation | None = None
    for rc in rcs:
        lay, mem = fit(rc, zeros[-1])
        if not mem.fits:
            # The most sharded stage does not fit: no smaller one will.
            if mem.total < outcome.min_memory:
                outcome.min_memory, outcome.min_memory_layout = mem.total, lay
            continue
        for zc in zeros[:-1]:
            # The cheapest stage that also fits has the least traffic.
            cheaper, m2 = fit(rc, zc)
            if m2.fits:
                lay, mem = cheaper, m2
                break
        e = ev.evaluate(lay, mem)
        outcome.evaluated += 1
        if math.isfinite(e.step_time) and (best is None or (e.step_time, e.layout) < (best.step_time, best.layout)):
            best = e
        if lay.zero == zeros[0]:
            break  # the least sharding already: more recompute would only add compute
    return best


def _partial(ev: Evaluator, lay: Layout) -> Layout:
    """Recompute only as many layers per stage as memory needs (Megatron --recompute-num-layers)."""
    arch = ev.job.arch
    k = recompute_layers_to_fit(arch, ev.job.seq, ev.job.batch, lay, ev.attention, ev.cal,
                                ev.activation_budget(lay), pair=ev.activation_pair(lay))
    if k is None or k >= layers_per_stage(arch.layers, lay.pp):
        return lay
    return lay.but(recompute_layers=k)


# -- lower bounds ------------------------------------------------------------------------------------
def _rank_key(e: Evaluation, target: Target, gpu: Gpu) -> tuple[float, float, Layout]:
    """Ranking of evaluations of one GPU type: lower is better."""
    if target.kind == "deadline":
        cost = cost_usd(gpu, e.gpus, e.gpu_hours, target.pricing)
        return (cost if cost is not None else e.gpu_hours, e.wall_days, e.layout)
    if target.kind in ("budget", "fastest"):
        return (e.wall_days, 0.0, e.layout)
    return (e.step_time, 0.0, e.layout)


#: Stages of a heap entry: a (TP, CP, EP, PP, micro-batch) group bounded at its largest VP
#: (the smallest bubble), one VP, and one VP with the recompute its memory needs.
GROUP, SHAPE, REFINED = 0, 1, 2


class _Bounded(NamedTuple):
    """A shape (or group of shapes) with the lower bound of its ranking key and the DP values
    worth evaluating."""

    key: tuple[float, float]
    shape: Layout
    dps: tuple[int, ...]
    level: int


def _light_stage(ev: Evaluator, shape: Layout, dp: int, fixed: Fixed, outcome: SearchOutcome) -> float | None:
    """Stage seconds with the least recompute that can fit at ``dp`` with the largest ZeRO
    stage (None: nothing fits, and ``outcome`` keeps the least memory seen); a lower bound of the
    stage time at any DP <= ``dp``."""
    zero = fixed.zero if fixed.zero is not None else (3 if shape.pp == 1 else 2)
    for rc in recompute_candidates(ev, fixed):
        lay = shape.but(dp=dp, recompute=rc, zero=zero)
        if rc == "full" and fixed.recompute is None:
            lay = _partial(ev, lay)
        mem = ev.memory(lay)
        if mem.fits:
            return ev.stage_time(lay)
        if mem.total < outcome.min_memory:
            outcome.min_memory, outcome.min_memory_layout = mem.total, lay
    return None


class _Scale(NamedTuple):
    """What the bound of one (TP, CP, EP, PP, micro-batch) needs, shared by its VP values."""

    stage: float          # seconds per micro-batch on the slowest stage (a lower bound over VP)
    dps: list[int]
    mp: int


def thin_axes(axes: dict[str, list[int]], limit: int) -> tuple[dict[str, list[int]], tuple[str, ...]]:
    """Keep the product of the axis lengths within ``limit``: halve the longest axis (every other
    value, both ends kept) until it fits. Deterministic; returns the axes and what was thinned."""
    out = {k: list(v) for k, v in axes.items()}
    before = {k: len(v) for k, v in axes.items()}
    while math.prod(len(v) for v in out.values()) > limit:
        name = max(out, key=lambda k: (len(out[k]), k))
        values = out[name]
        if len(values) <= 2:
            break
        out[name] = values[::2] if values[-1] in values[::2] else values[::2] + [values[-1]]
    notes = tuple(f"{k.upper()} {before[k]} -> {len(out[k])} values" for k in axes if len(out[k]) < before[k])
    return out, notes


def _bounds(ev: Evaluator, fixed: Fixed, target: Target, outcome: SearchOutcome) -> list[_Bounded]:
    """Every (TP, CP, EP, PP, micro-batch) group with a first bound of its key (no recompute,
    the largest VP); groups whose bound already misses the target are left out. At most
    ``MAX_GROUPS`` groups (:func:`thin_axes`)."""
    arch, job = ev.job.arch, ev.job
    bounded: list[_Bounded] = []
    pps = pp_candidates(arch.layers, fixed, every=target.kind == "gpus")
    axes, outcome.thinned = thin_axes({"tp": tp_candidates(ev, fixed), "cp": cp_candidates(job.seq, fixed),
                                       "ep": ep_candidates(ev, fixed), "pp": pps,
                                       "mb": mb_candidates(fixed, job.batch)}, outcome.max_groups)
    for tp in axes["tp"]:
        sp = fixed.sequence_parallel if fixed.sequence_parallel is not None else tp > 1
        for cp in axes["cp"]:
            for ep in axes["ep"]:
                for pp in axes["pp"]:
                    if not states_can_fit(ev, tp, pp, cp, ep, fixed):
                        continue
                    mp = tp * pp * cp
                    for mb in axes["mb"]:
                        dps = dp_candidates(ev, fixed, target, mp, mb, ep, cp, tp)
                        if not dps:
                            continue
                        base = Layout(tp=tp, pp=pp, dp=1, cp=cp, ep=ep, micro_batch=mb, sequence_parallel=sp,
                                      recompute=fixed.recompute or "none", fold_experts=fixed.fold_experts)
                        scale = _Scale(ev.stage_time_any_vp(base), dps, mp)
                        vps = vp_candidates(arch.layers, pp, fixed)
                        b = _bound_shape(ev, base._replace(vp=vps[-1]), scale, target, GROUP)
                        outcome.bounded += 1
                        if b is not None:
                            bounded.append(b)
    return bounded


def _expand(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target) -> list[_Bounded]:
    """The VP values of a group, each with its own bound."""
    shape = b.shape
    base = shape._replace(vp=1)
    mp = shape.tp * shape.pp * shape.cp
    dps = dp_candidates(ev, fixed, target, mp, shape.micro_batch, shape.ep, shape.cp, shape.tp)
    scale = _Scale(ev.stage_time_any_vp(base), dps, mp)
    out = []
    for vp in vp_candidates(ev.job.arch.layers, shape.pp, fixed):
        one = _bound_shape(ev, base._replace(vp=vp), scale, target, SHAPE)
        if one is not None:
            out.append(one)
    return out


def _bound_shape(ev: Evaluator, shape: Layout, scale: _Scale, target: Target, level: int) -> _Bounded | None:
    """Bound of one shape's ranking key over its DP values (see the module docstring).

    Deadline: (cost, days) at the smallest DP whose bound meets the deadline (a larger DP only
    costs more). Budget: (days, 0) at the largest DP whose bound cost fits. GPU count: (step
    seconds, 0). None when the bound already misses the target.
    """
    batch, mb = ev.job.batch, shape.micro_batch
    bubble = (shape.pp - 1) / shape.vp
    stage, dps, mp = scale
    per_day = ev.steps * stage / 86400.0

    def days(d: int) -> float:
        return per_day * (batch / (d * mb) + bubble) / ev.goodput(mp * d).fraction

    if target.kind == "gpus":
        d = dps[0]
        return _Bounded(((batch / (d * mb) + bubble) * stage, 0.0), shape, (d,), level)
    if target.kind == "deadline":
        deadline = target.deadline_days
        # Smallest DP that can meet the deadline with the best goodput of these counts: a DP
        # below it cannot (goodput only falls with the GPU count), so the scan starts there.
        g = ev.goodput(mp * dps[0]).fraction
        room = deadline * g / per_day - bubble  # type: ignore[operator]
        if room <= 0:
            return None
        i = bisect.bisect_left(dps, batch / (mb * room) * (1 - 1e-12))
        while i < len(dps) and days(dps[i]) > deadline:  # type: ignore[operator]
            i += 1
        if i == len(dps):
            return None
        d = dps[i]
        t = days(d)
        n = mp * d
        cost = cost_usd(ev.gpu, n, t * HOURS_PER_DAY * n, target.pricing)
        return _Bounded((cost if cost is not None else t * HOURS_PER_DAY * n, t), shape, tuple(dps[i:]), level)
    if target.kind == "fastest":
        return _Bounded((days(dps[-1]), 0.0), shape, tuple(reversed(dps)), level)
    fits = [d for d in dps
            if (cost_usd(ev.gpu, mp * d, days(d) * HOURS_PER_DAY * mp * d, target.pricing) or math.inf)
            <= target.budget_usd]  # type: ignore[operator]
    if not fits:
        return None
    return _Bounded((days(fits[-1]), 0.0), shape, tuple(reversed(fits)), level)


def _refine(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target, outcome: SearchOutcome) -> _Bounded | None:
    """The bound again with the least recompute that fits at the shape's largest DP."""
    shape = b.shape
    descending = target.kind in ("budget", "fastest")
    stage = _light_stage(ev, shape, b.dps[0] if descending else b.dps[-1], fixed, outcome)
    if stage is None:
        return None
    scale = _Scale(stage, sorted(b.dps) if descending else list(b.dps),
                   shape.tp * shape.pp * shape.cp)
    return _bound_shape(ev, shape, scale, target, REFINED)


# -- the search --------------------------------------------------------------------------------------
def search(ev: Evaluator, fixed: Fixed, target: Target, top: int = 1, relax: bool = True,
           limit: int | None = None, max_groups: int = MAX_GROUPS) -> SearchOutcome:
    """Branch and bound over the layout space of one GPU type for ``target``; keeps ``top``.

    Groups of shapes wait in a heap ordered by their bound; a group reaching the top is split
    into its VP values, a shape reaching the top has its bound refined for the recompute its
    memory needs, and is evaluated only if it is still the most promising. The search stops
    when the best bound left exceeds the ``top``-th key found.
    """
    outcome = SearchOutcome(max_groups=max_groups)
    fixed = constrain(ev.framework, fixed)
    heap = _bounds(ev, fixed, target, outcome)
    heapq.heapify(heap)
    pool: list[Evaluation] = []
    worst: tuple[float, float] = (math.inf, math.inf)
    while heap:
        b = heapq.heappop(heap)
        if b.key > worst or (limit is not None and outcome.evaluated >= limit):
            break
        if b.level == GROUP:
            for one in _expand(ev, b, fixed, target):
                heapq.heappush(heap, one)
            continue
        if b.level == SHAPE:
            r = _refine(ev, b, fixed, target, outcome)
            if r is None:
                continue
            if heap and r.key > heap[0].key:
                heapq.heappush(heap, r)
                continue
            b = r
            if b.key > worst:
                continue
        chosen = _evaluate_shape(ev, b, fixed, target, outcome)
        if chosen is None:
            continue
        pool.append(chosen)
        pool.sort(key=lambda e: _rank_key(e, target, ev.gpu))
        del pool[top:]
        if len(pool) == top:
            k = _rank_key(pool[-1], target, ev.gpu)
            worst = (k[0], k[1])
    outcome.best = pool
    if not pool and relax and target.kind in ("deadline", "budget"):
        # Nothing meets the target: the fastest plan at any cost (for a missed deadline) or the
        # cheapest at any speed (for a missed budget) says by how much. Only for the message,
        # so the effort is capped (MAX_RELAXED_EVALUATIONS): the fastest found, not proven.
        relaxed = (Target(kind="fastest", pricing=target.pricing, power_limit_kw=target.power_limit_kw,
                          whole_nodes=target.whole_nodes)
                   if target.kind == "deadline" else
                   Target(kind="deadline", deadline_days=math.inf, pricing=target.pricing,
                          power_limit_kw=target.power_limit_kw, whole_nodes=target.whole_nodes))
        near = search(ev, fixed, relaxed, top=1, relax=False, limit=MAX_RELAXED_EVALUATIONS, max_groups=max_groups)
        outcome.fastest = near.best[0] if near.best else None
        outcome.evaluated += near.evaluated
        outcome.bounded += near.bounded
        if near.min_memory < outcome.min_memory:
            outcome.min_memory, outcome.min_memory_layout = near.min_memory, near.min_memory_layout
    return outcome


def _evaluate_shape(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target,
                    outcome: SearchOutcome) -> Evaluation | None:
    """The best DP of one shape for the target (DP values in the order the bound gives)."""
    for d in b.dps:
        e = _best_fit(ev, b.shape.but(dp=d), fixed, outcome)
        if e is None:
            continue
        if outcome.fastest is None or (e.wall_days, e.layout) < (outcome.fastest.wall_days, outcome.fastest.layout):
            outcome.fastest = e
        if target.kind == "deadline":
            if e.wall_days <= target.deadline_days:  # type: ignore[operator]
                return e
            continue
        if target.kind == "budget":
            cost = cost_usd(ev.gpu, e.gpus, e.gpu_hours, target.pricing)
            if cost is not None and cost <= target.budget_usd:  # type: ignore[operator]
                return e
            continue
        return e
    return None


