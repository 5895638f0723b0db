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
from dataclasses import replace
from typing import NamedTuple

from gpuplan.training.framework import constrain
from gpuplan.training.fit import MEMO_ENTRIES, _best_fit, _fit_once, _light_stage, _partial  # noqa: F401
from gpuplan.training.layout import Layout, layers_per_stage  # noqa: F401  (re-exported)
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
from gpuplan.training.groups import Scale, exact_stages, search_groups, thin_axes  # noqa: F401  (re-exported)
from gpuplan.training.timing import straggler
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

# -- lower bounds ------------------------------------------------------------------------------------
def _rank_key(e: Evaluation, target: Target, ev: Evaluator) -> tuple[float, float, Layout]:
    """Ranking of evaluations of one GPU type: lower is better."""
    if target.kind == "deadline":
        cost = ev.cost(e.gpus, e.gpu_hours if target.pricing == "cloud" else 0.0, target.pricing)
        return (cost if cost is not None else e.gpu_hours, e.wall_days, e.layout)
    if target.kind in ("budget", "fastest"):
        return (e.wall_days, 0.0, e.layout)
    return (e.step_time, 0.0, e.layout)


#: Stages of a heap entry: a (TP, CP, EP, PP, micro-batch) group bounded at its largest VP
#: (the smallest bubble), one VP, and one VP with the recompute its memory needs; before GROUP, a
#: group bounded with a lower bound of its stage time (LOWER: training/groups.py), whose stage
#: time is computed when it reaches the top of the heap.
GROUP, SHAPE, REFINED, LOWER = 0, 1, 2, 3


class _Bounded(NamedTuple):
    """A shape (or group of shapes) with the lower bound of its ranking key and the DP values
    worth evaluating."""

    key: tuple[float, float]
    shape: Layout
    dps: tuple[int, ...]
    level: int


def _bounds(ev: Evaluator, fixed: Fixed, target: Target, outcome: SearchOutcome,
            cap: float = math.inf) -> list[_Bounded]:
    """Every (TP, CP, EP, PP, micro-batch) group (training/groups.py) with a first bound of its key
    (no recompute, the largest VP); groups whose bound already misses the target are left out, and
    so are those whose bound costs more than ``cap`` (a search's cutoff: they would never be
    taken from the heap, and every entry left in it costs less).

    Where a group's key only grows with its stage time (:func:`_lower_first`), it is bounded with
    the lower bound of its stage time the groups carry (level LOWER) and its own stage time is
    computed once it reaches the top of the heap (:func:`_exact`); else at once."""
    found = search_groups(ev, fixed, target, outcome.max_groups)
    outcome.thinned = found.thinned
    outcome.bounded += len(found.groups)
    bounded = []
    lower = not found.exact and _lower_first(ev, target)
    for shape, scale in found.groups:
        if lower:
            b = _bound_shape(ev, shape, scale, target, GROUP, cap)
            if b is not None and not b.key[0] > cap:
                bounded.append(_Bounded(b.key, shape, scale.dps, LOWER))
            continue
        if not found.exact:
            scale = scale._replace(stage=ev.stage_time_any_vp(shape))
        b = _bound_shape(ev, shape, scale, target, GROUP, cap)
        if b is not None and not b.key[0] > cap:
            bounded.append(b)
    return bounded


def _lower_first(ev: Evaluator, target: Target) -> bool:
    """Whether a group's key bounded with a lower stage time is at most its key bounded with its
    own (so the heap meets the groups in the order of their own keys, :func:`_exact`): the fastest
    (the largest DP) and the fixed-count (its one DP) keys grow with the stage time, and so does a
    deadline's (cost, days) where the cost grows with the DP: GPU-hours (cloud, unpriced) or
    servers bought one by one on whole servers. Not under a budget, nor with servers bought in
    racks (two DPs of one rack count cost the same, the larger one with fewer days)."""
    if target.kind in ("fastest", "gpus"):
        return True
    if target.kind != "deadline":
        return False
    gpu = ev.gpu
    return (target.pricing == "cloud" or not gpu.node_price_usd
            or (target.whole_nodes and gpu.purchase_unit_nodes == 1))


def _exact(ev: Evaluator, b: _Bounded, target: Target, cap: float) -> _Bounded | None:
    """A LOWER group's GROUP entry: its bound with its own stage time (None: it misses the target
    or costs more than ``cap``, as :func:`_bounds` would have left it out)."""
    shape = b.shape
    scale = Scale(ev.stage_time_any_vp(shape), b.dps, shape.tp * shape.pp * shape.cp)  # type: ignore[arg-type]
    out = _bound_shape(ev, shape, scale, target, GROUP, cap)
    return None if out is None or out.key[0] > cap else out


def _settle(ev: Evaluator, heap: list[_Bounded], target: Target, cap: float, below: tuple[float, float]) -> None:
    """Replace the LOWER entries at the top of ``heap`` whose key is below ``below`` by their
    GROUP entries, so that the top's key is the least key of the groups' own bounds (or at least
    ``below``)."""
    while heap and heap[0].level == LOWER and heap[0].key < below:
        exact = _exact(ev, heapq.heappop(heap), target, cap)
        if exact is not None:
            heapq.heappush(heap, exact)


def _expand(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target) -> list[_Bounded]:
    """The VP values of a group, each with its own bound."""
    shape = b.shape
    base = shape._replace(vp=1)
    mp = shape.tp * shape.pp * shape.cp
    dps = dp_candidates(ev, fixed, target, mp, shape.micro_batch, shape.ep, shape.cp, shape.tp)
    scale = Scale(ev.stage_time_any_vp(base), dps, mp)
    out = []
    for vp in vp_candidates(ev.job.arch.layers, shape.pp, fixed):
        one = _bound_shape(ev, base._replace(vp=vp), scale, target, SHAPE)
        if one is not None:
            out.append(one)
    return out


def _bound_shape(ev: Evaluator, shape: Layout, scale: Scale, target: Target, level: int,
                 cap: float = math.inf, straggle: bool = False) -> _Bounded | None:
    """Bound of one shape's ranking key over its DP values (see the module docstring).

    Deadline: (cost, days) at the smallest DP whose bound meets the deadline (a larger DP only
    costs more). Budget: (days, 0) at the largest DP whose bound cost fits. GPU count: (step
    seconds, 0). None when the bound already misses the target.

    ``straggle`` (deadline): the bound also counts the wait for the slowest GPU
    (timing.host_overhead), on the part of the step it bounds: the step's busy time is at least
    ``(m + bubble) x stage``, so its straggler share is at least that times ``straggler(N)``.
    """
    batch, mb = ev.job.batch, shape.micro_batch
    bubble = (shape.pp - 1) / shape.vp
    stage, dps, mp = scale
    per_day = ev.steps * stage / 86400.0
    # The host time every step pays whatever its layout (training/timing.host_overhead without its
    # straggler share, which is >= 0): a fixed time per step and one per micro-batch.
    host_step = ev.steps * ev.cal.host_step_s / 86400.0
    host_mb = ev.steps * ev.cal.host_microbatch_s / 86400.0

    def days(d: int) -> float:
        m = batch / (d * mb)
        return (per_day * (m + bubble) + host_mb * m + host_step) / ev.goodput(mp * d).fraction

    if target.kind == "gpus":
        d = dps[0]
        m = batch / (d * mb)
        return _Bounded(((m + bubble) * stage + m * ev.cal.host_microbatch_s + ev.cal.host_step_s, 0.0),
                        shape, (d,), level)
    if target.kind == "deadline":
        deadline = target.deadline_days
        goodput = ev.goodput
        # Smallest DP that can meet the deadline with the best goodput of these counts: a DP
        # below it cannot (goodput only falls with the GPU count), so the scan starts there.
        g = goodput(mp * dps[0]).fraction
        room = (deadline * g - per_day * bubble - host_step) / (per_day + host_mb)  # type: ignore[operator]
        if room <= 0:
            return None
        i = bisect.bisect_left(dps, batch / (mb * room) * (1 - 1e-12))
        count = len(dps)
        if cap < math.inf and i < count and target.pricing != "cloud":
            # Capex grows with the count: no DP from here on costs less than this one.
            least = ev.cost(mp * dps[i], 0.0, target.pricing)
            if least is not None and least > cap:
                return None
        sigma = ev.cal.straggler_sigma if straggle else 0.0
        while i < count:  # the first DP whose bound (days(d), inlined: the search's hot path) meets it
            d = dps[i]
            m = batch / (d * mb)
            if sigma:
                t = ((per_day * (m + bubble) * (1.0 + straggler(mp * d, sigma)) + host_mb * m + host_step)
                     / goodput(mp * d).fraction)
            else:
                t = (per_day * (m + bubble) + host_mb * m + host_step) / goodput(mp * d).fraction
            if not t > deadline:  # type: ignore[operator]
                break
            i += 1
        else:
            return None
        n = mp * d
        cost = ev.cost(n, t * HOURS_PER_DAY * n, target.pricing)
        return _Bounded((cost if cost is not None else t * HOURS_PER_DAY * n, t), shape, tuple(dps[i:]), level)
    if target.kind == "fastest":
        return _Bounded((days(dps[-1]), 0.0), shape, tuple(reversed(dps)), level)
    fits = [d for d in dps
            if (cost_usd(ev.gpu, mp * d, days(d) * HOURS_PER_DAY * mp * d, target.pricing) or math.inf)
            <= target.budget_usd]  # type: ignore[operator]
    if not fits:
        return None
    return _Bounded((days(fits[-1]), 0.0), shape, tuple(reversed(fits)), level)


def _refine(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target, outcome: SearchOutcome,
            straggle: bool = False) -> _Bounded | None:
    """The bound again with the least recompute that fits at the shape's largest DP (and, with
    ``straggle``, the straggler share of the step: :func:`_bound_shape`)."""
    shape = b.shape
    descending = target.kind in ("budget", "fastest")
    stage = _light_stage(ev, shape, b.dps[0] if descending else b.dps[-1], fixed, outcome)
    if stage is None:
        return None
    scale = Scale(stage, sorted(b.dps) if descending else list(b.dps),
                   shape.tp * shape.pp * shape.cp)
    return _bound_shape(ev, shape, scale, target, REFINED, straggle=straggle)


# -- the search --------------------------------------------------------------------------------------
def search(ev: Evaluator, fixed: Fixed, target: Target, top: int = 1, relax: bool = True,
           limit: int | None = None, max_groups: int = MAX_GROUPS, cutoff: float | None = None) -> SearchOutcome:
    """:func:`_search`; a deadline search reuses an earlier search of the same space whose result
    holds for this deadline too (memoised on the Evaluator's shared parts).

    The result of a deadline ``D`` holds for every deadline ``D'`` from the longest time of the
    ``top`` plans found up to ``D``: each of them still meets ``D'``, and a tighter deadline only
    removes plans, so none better appears (a shape's plan is its fewest GPUs that meet the deadline;
    they only grow as the deadline tightens). When nothing meets ``D``, nothing meets a tighter one
    either, and the fastest plan the message quotes does not depend on the deadline. So a sweep that
    plans its longest deadline first (planning/sweep.py) searches once per distinct result.

    ``cutoff`` (a deadline search for the best plan only, when planning needs only the best few
    GPU types): plans of a higher ranking cost (``inf``: none) are not wanted, so the search starts
    with it as its incumbent and finds nothing (no miss to explain) when no plan costs at most
    ``cutoff``; what it finds is the best plan, as without a cutoff. A result from the memo may
    cost more than ``cutoff``."""
    if target.kind != "deadline" or limit is not None or target.deadline_days is None:
        return _search(ev, fixed, target, top, relax, limit, max_groups)
    deadline = target.deadline_days
    key = (ev.capacity, ev.headroom, fixed, target.pricing, target.power_limit_kw, target.whole_nodes, top,
           max_groups)
    known = ev._searches.setdefault(key, [])
    for low, high, relaxed, held in known:
        if low <= deadline <= high and (held.best or relaxed == relax):  # type: ignore[attr-defined]
            return replace(held, best=list(held.best))  # type: ignore[type-var]
    if cutoff is not None:
        # Nothing costing at most c meets D: then nothing costing at most c' <= c meets D' <= D.
        none = ev._searches.setdefault((*key, "none within"), [])
        if any(deadline <= d and cutoff <= c for d, c, *_ in none):
            return SearchOutcome(max_groups=max_groups)
        relax = False  # nothing found within the cutoff is no miss to explain
    found = _search(ev, fixed, target, top, relax, limit, max_groups, cutoff)
    if found.best:
        low = max(e.wall_days for e in found.best)
    elif cutoff is not None:
        if len(none) >= 256:
            del none[:128]
        none.append((deadline, cutoff, False, found))
        return found
    elif found.fastest is not None:  # the message quotes the fastest plan at any size
        low = -math.inf
    else:  # a message quoting the least memory this search saw: it depends on the deadline
        return found
    if len(known) >= 256:
        del known[:128]
    known.append((low, deadline, relax, replace(found, best=list(found.best))))
    return found


def _search(ev: Evaluator, fixed: Fixed, target: Target, top: int = 1, relax: bool = True,
            limit: int | None = None, max_groups: int = MAX_GROUPS, cutoff: float | None = None,
            straggle: bool = True) -> SearchOutcome:
    """Branch and bound over the layout space of one GPU type for ``target``; keeps ``top``.

    Groups of shapes wait in a heap ordered by their bound; a group reaching the top is split
    into its VP values, a shape reaching the top has its bound refined for the recompute its
    memory needs, and is evaluated only if it is still the most promising. The search stops
    when the best bound left exceeds the ``top``-th key found.
    """
    outcome = SearchOutcome(max_groups=max_groups)
    fixed = constrain(ev.framework, fixed)
    # The straggler share tightens the refined bounds of an exhaustive deadline search priced by
    # server (bought one by one, whole, so a shape's cost grows with its DP and its key's bound
    # holds whatever DP it ends at): fewer shapes are evaluated for the same best plans. What a
    # search that finds none tells (the least memory seen) depends on the shapes it evaluated, so
    # such a search runs again without.
    gpu = ev.gpu
    straggle = (straggle and target.kind == "deadline" and limit is None and target.pricing == "capex"
                and target.whole_nodes and bool(gpu.node_price_usd) and gpu.purchase_unit_nodes == 1
                and not exact_stages(ev))
    refined = False
    cap = math.inf if cutoff is None else cutoff
    heap = _bounds(ev, fixed, target, outcome, cap)
    heapq.heapify(heap)
    pool: list[Evaluation] = []
    worst: tuple[float, float] = (cap, math.inf)
    while heap:
        b = heap[0]
        if b.key > worst or (limit is not None and outcome.evaluated >= limit):
            break
        heapq.heappop(heap)
        if b.level == LOWER:
            exact = _exact(ev, b, target, cap)
            if exact is not None:
                heapq.heappush(heap, exact)
            continue
        if b.level == GROUP:
            for one in _expand(ev, b, fixed, target):
                heapq.heappush(heap, one)
            continue
        if b.level == SHAPE:
            r = _refine(ev, b, fixed, target, outcome, straggle)
            refined = True
            if r is None:
                continue
            _settle(ev, heap, target, cap, r.key)
            if heap and r.key > heap[0].key:
                heapq.heappush(heap, r)
                continue
            b = r
            if b.key > worst:
                continue
        chosen = _evaluate_shape(ev, b, fixed, target, outcome)
        if chosen is None or (cutoff is not None and _rank_key(chosen, target, ev)[0] > cutoff):
            continue
        pool.append(chosen)
        pool.sort(key=lambda e: _rank_key(e, target, ev))
        del pool[top:]
        if len(pool) == top:
            k = _rank_key(pool[-1], target, ev)
            worst = (k[0], k[1])
    if straggle and refined and not pool and cutoff is None:
        return _search(ev, fixed, target, top, relax, limit, max_groups, cutoff, straggle=False)
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


