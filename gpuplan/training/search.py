"""Evaluate layouts and search the layout space of one GPU type (branch and bound).

The space: TP (powers of two inside the scale-up domain dividing heads, KV heads and the MLP),
CP (powers of two while each rank keeps >= ``MIN_CP_TOKENS`` tokens of a sequence), EP (powers
of two dividing the experts and DP x CP), PP (for each number of layers per stage, the smallest
PP that gives it), VP (divisors of the layers per stage), micro-batch (powers of two), recompute
(none / selective / full on as few layers as memory needs), ZeRO stage (1, 2, 3; 3 only
without PP) and DP (divisors of the global batch that fill whole nodes).

Nothing better than the result is pruned:

* every (TP, CP, EP, PP, VP, micro-batch) gets a lower bound of its ranking key
  (training/bounds.py): the step without DP sync, pipeline sends and optimizer, with the least
  recompute memory allows at the largest DP, the bubble and the goodput of its GPU count; shapes
  are visited in bound order and the search stops once a bound exceeds the best key found;
* recompute and ZeRO are tried from the cheapest; a costlier one only when memory demands;
* a (TP, PP, CP, EP) whose 16-bit weights and gradients alone exceed memory is skipped, and
  so are larger micro-batches once one does not fit at the most sharding and recompute.

Iteration is over sorted lists and ties break on the layout tuple: results are deterministic.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import replace

from gpuplan.training.framework import constrain
from gpuplan.training.fit import MEMO_ENTRIES, _best_fit, _fit_once, _hopeless, _light_stage, _partial  # noqa: F401
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
from gpuplan.training.lazy_scan import first_bounds
from gpuplan.training.groups import Scale, exact_stages, search_groups, thin_axes  # noqa: F401  (re-exported)
from gpuplan.training.bounds import (  # noqa: F401  (re-exported)
    GROUP,
    LOWER,
    REFINED,
    SHAPE,
    _bound_shape,
    _Bounded,
    _bounds,
    _exact,
    _expand,
    _lower_first,
    _refine,
    _settle,
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

# -- lower bounds ------------------------------------------------------------------------------------
def _rank_key(e: Evaluation, target: Target, ev: Evaluator) -> tuple[float, float, Layout]:
    """Ranking of evaluations of one GPU type: lower is better."""
    if target.kind == "deadline":
        cost = ev.cost(e.gpus, e.gpu_hours if target.pricing == "cloud" else 0.0, target.pricing)
        return (cost if cost is not None else e.gpu_hours, e.wall_days, e.layout)
    if target.kind in ("budget", "fastest"):
        return (e.wall_days, 0.0, e.layout)
    return (e.step_time, 0.0, e.layout)


# -- the search --------------------------------------------------------------------------------------
def search(ev: Evaluator, fixed: Fixed, target: Target, top: int = 1, relax: bool = True,
           limit: int | None = None, max_groups: int = MAX_GROUPS, cutoff: float | None = None,
           memory: bool | None = True) -> SearchOutcome:
    """:func:`_search`; a deadline search reuses an earlier search of the same space whose result
    holds for this deadline too (memoised on the Evaluator's shared parts).

    The result of a deadline ``D`` holds for every deadline ``D'`` from the longest time of the
    ``top`` plans found up to ``D``: each of them still meets ``D'``, and a tighter deadline only
    removes plans, so none better appears (a shape's plan is the fastest of its DPs of the least
    price that meet the deadline; that price only grows as the deadline tightens). When nothing
    meets ``D``, nothing meets a tighter one either, and the fastest plan the message quotes does
    not depend on the deadline. So a sweep that plans its longest deadline first
    (planning/sweep.py) searches once per distinct result.

    ``cutoff`` (a deadline search for the best plan only, when planning needs only the best few
    GPU types): plans of a higher ranking cost (``inf``: none) are not wanted, so the search starts
    with it as its incumbent and finds nothing (no miss to explain) when no plan costs at most
    ``cutoff``; what it finds is the best plan, as without a cutoff. A result from the memo may
    cost more than ``cutoff``.

    ``memory=False``: the caller reads ``min_memory`` only when the outcome has neither a best nor a
    fastest plan (planning does: training/candidates.py), so a search that finds a fastest plan
    need not be run again for it (:func:`_search`); ``memory=None``: the caller never reads it
    (planning on a GPU type without a scale-out network, whose miss says so instead)."""
    if target.kind != "deadline" or limit is not None or target.deadline_days is None:
        return _search(ev, fixed, target, top, relax, limit, max_groups, memory=memory)
    deadline = target.deadline_days
    key = (ev.capacity, ev.headroom, fixed, target.pricing, target.power_limit_kw, target.whole_nodes, top,
           max_groups, memory)
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
    found = _search(ev, fixed, target, top, relax, limit, max_groups, cutoff, memory=memory)
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
            straggle: bool = True, memory: bool | None = True) -> SearchOutcome:
    """Branch and bound over the layout space of one GPU type for ``target``; keeps ``top``.

    Groups of shapes wait in a heap ordered by their bound; a group reaching the top is split
    into its VP values, a shape reaching the top has its bound refined for the recompute its
    memory needs, and is evaluated only if it is still the most promising. The search stops
    when the best bound left exceeds the ``top``-th key found.
    """
    outcome = SearchOutcome(max_groups=max_groups)
    fixed = constrain(ev.framework, fixed)
    # The straggler share tightens the bounds (groups, shapes and refined shapes) of an exhaustive
    # deadline search priced by server, whole: a DP whose lagged bound misses the deadline cannot
    # meet it, so the key's cost (the first DP that can) is at most the plan's, and its days are at
    # most the plan's at that price (bought one by one: one DP; by the rack: the least bound of the
    # DPs of that price, scan_parts._bracket_days). Fewer shapes are expanded, refined and evaluated for
    # the same best plans (GB200 NVL72, default profile: 104 evaluations -> 8). What a search that
    # finds none tells (the least memory seen) depends on the shapes it evaluated, so such a search
    # runs again without.
    gpu = ev.gpu
    straggle = (straggle and target.kind == "deadline" and limit is None and target.pricing == "capex"
                and target.whole_nodes and bool(gpu.node_price_usd)
                and not exact_stages(ev))
    cap = math.inf if cutoff is None else cutoff
    # A search for the fastest plan within ``limit`` evaluations goes on from where one of the same
    # space stopped at a lower limit (the probe of planner.meets_somewhere, then the relaxed search
    # of a missed deadline): the limit is read only where the loop stops (_suspended).
    resumable = limit is not None and target.kind == "fastest" and cutoff is None
    saved = _suspended(ev, fixed, target, top, max_groups, limit) if resumable else None
    waiting = None
    if saved is not None:
        outcome, heap, pool, worst = saved
    else:
        heap, waiting = first_bounds(ev, fixed, target, outcome, cap, straggle)
        pool: list[Evaluation] = []
        worst: tuple[float, float] = (cap, math.inf)
    # The groups pending behind their cost floors (lazy_scan.py): the least floor, inf when none.
    floor = math.inf if waiting is None else waiting.next()
    while True:
        if floor <= worst[0] and (not heap or floor <= heap[0][0][0]) and waiting is not None:
            floor = waiting.fill(heap, worst[0])
        if not heap:
            break
        b = heap[0]
        if b.key > worst or (limit is not None and outcome.evaluated >= limit):
            break
        heapq.heappop(heap)
        if b.level == LOWER:
            exact = _exact(ev, b, target, cap, straggle)
            if exact is not None:
                heapq.heappush(heap, exact)
            continue
        if b.level == GROUP:
            for one in _expand(ev, b, fixed, target, straggle):
                heapq.heappush(heap, one)
            continue
        if b.level == SHAPE:
            r = _refine(ev, b, fixed, target, outcome, straggle)
            if r is None:
                continue
            if waiting is None:
                _settle(ev, heap, target, cap, r.key, straggle)
            else:
                floor = waiting.settle(heap, r.key, worst[0])
            if heap and r.key > heap[0].key:
                heapq.heappush(heap, r)
                continue
            b = r
            if b.key > worst:
                continue
        chosen = _evaluate_shape(ev, b, fixed, target, outcome, worst[0])
        if chosen is None or (cutoff is not None and _rank_key(chosen, target, ev)[0] > cutoff):
            continue
        pool.append(chosen)
        pool.sort(key=lambda e: _rank_key(e, target, ev))
        del pool[top:]
        if len(pool) == top:
            k = _rank_key(pool[-1], target, ev)
            worst = (k[0], k[1])
    if resumable:
        ev._searches[_suspended_key(ev, fixed, target, top, max_groups)] = [
            (limit, replace(outcome, best=list(outcome.best)), list(heap), list(pool), worst)]
    if straggle and not pool and cutoff is None:
        if memory or not relax or target.kind != "deadline":
            return _search(ev, fixed, target, top, relax, limit, max_groups, cutoff, straggle=False)
        # The caller reads the least memory only when the relaxed search finds no plan either
        # (``memory=False``): only then is the search without the straggler share run again,
        # with the same relaxed search's result.
        near = _relaxed(ev, fixed, target, max_groups)
        if not near.best and memory is not None:  # None: the least memory is never read
            again = _search(ev, fixed, target, top, False, limit, max_groups, cutoff, straggle=False)
            return again if again.best else _with_relaxed(again, near)
        return _with_relaxed(outcome, near)
    outcome.best = pool
    if not pool and relax and target.kind in ("deadline", "budget"):
        _with_relaxed(outcome, _relaxed(ev, fixed, target, max_groups))
    return outcome


def _suspended_key(ev: Evaluator, fixed: Fixed, target: Target, top: int, max_groups: int) -> tuple[object, ...]:
    """The key of a suspended search of this space in the Evaluator's searches (:func:`_suspended`)."""
    return ("suspended", ev.capacity, ev.headroom, fixed, target, top, max_groups)


def _suspended(ev: Evaluator, fixed: Fixed, target: Target, top: int, max_groups: int,
               limit: int) -> tuple[SearchOutcome, list, list, tuple[float, float]] | None:
    """Copies of the (outcome, heap, pool, incumbent) where a search of this space for the
    fastest plan stopped at a limit of at most ``limit`` evaluations (None: none did). Going on
    from there is that search with the higher limit: its loop reads the limit only to stop."""
    held = ev._searches.get(_suspended_key(ev, fixed, target, top, max_groups))
    if not held or held[0][0] > limit:  # type: ignore[index]
        return None
    _, outcome, heap, pool, worst = held[0]  # type: ignore[misc]
    return replace(outcome, best=list(outcome.best)), list(heap), list(pool), worst


def _relaxed(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int) -> SearchOutcome:
    """Nothing meets the target: the fastest plan at any cost (for a missed deadline) or the
    cheapest at any speed (for a missed budget) says by how much. Only for the message, so the
    effort is capped (MAX_RELAXED_EVALUATIONS): the fastest found, not proven."""
    relaxed = (Target(kind="fastest", pricing=target.pricing, power_limit_kw=target.power_limit_kw,
                      whole_nodes=target.whole_nodes)
               if target.kind == "deadline" else
               Target(kind="deadline", deadline_days=math.inf, pricing=target.pricing,
                      power_limit_kw=target.power_limit_kw, whole_nodes=target.whole_nodes))
    return search(ev, fixed, relaxed, top=1, relax=False, limit=MAX_RELAXED_EVALUATIONS, max_groups=max_groups)


def _with_relaxed(outcome: SearchOutcome, near: SearchOutcome) -> SearchOutcome:
    """``outcome`` (nothing found) with the relaxed search ``near``'s fastest plan and counts."""
    outcome.fastest = near.best[0] if near.best else None
    outcome.evaluated += near.evaluated
    outcome.bounded += near.bounded
    if near.min_memory < outcome.min_memory:
        outcome.min_memory, outcome.min_memory_layout = near.min_memory, near.min_memory_layout
    return outcome


def _evaluate_shape(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target,
                    outcome: SearchOutcome, above: float = math.inf) -> Evaluation | None:
    """The best DP of one shape for the target (DP values in the order the bound gives). Under a
    deadline, the first that meets it, or where one price buys several GPU counts (servers bought
    by the rack), the fastest of those of its price that meet it (:func:`_fastest_of_price`).

    ``above`` (a deadline search's incumbent cost, or its cutoff): a plan whose ranking cost
    exceeds it is not wanted (the search would drop it). Under capex that cost reads only the GPU
    count and grows with it, and a deadline's DP values come in increasing order, so the DP values
    from the first that costs more are not evaluated (what they would add is the outcome's fastest
    plan and least memory, which a search that ends with a plan leaves unread)."""
    shape = b.shape
    tp, pp, rest = shape[0], shape[1], shape[3:]
    dps = b.dps
    if shape.vp > 1 and dps:
        # Interleaving needs at least PP micro-batches (layout.check): a DP that leaves fewer has
        # no layout (_best_fit: None, nothing told), and neither has any larger one.
        batch, mb = ev.job.batch, shape.micro_batch
        if batch // (max(dps) * mb) < pp:
            dps = tuple([d for d in dps if batch // (d * mb) >= pp])
    if above < math.inf and target.kind == "deadline" and target.pricing != "cloud" and ev.hw.node_price_usd:
        mp = tp * pp * shape[3]
        for i, d in enumerate(dps):
            cost = ev.cost(mp * d, 0.0, target.pricing)
            if cost is not None and cost > above:
                dps = dps[:i]
                break
    # DP values in decreasing order (the fastest, a budget) stop at the first that fits nothing by
    # far (fit._hopeless): the smaller ones fit nothing and tell nothing; DP x CP = 1, whose ZeRO
    # stages differ, is still fitted.
    descending, hopeless, cp = len(dps) > 1 and dps[0] > dps[-1], False, shape[3]
    for d in dps:
        if hopeless and d * cp > 1:
            continue
        base = tuple.__new__(Layout, (tp, pp, d, *rest))  # shape.but(dp=d)
        e = _best_fit(ev, base, fixed, outcome)
        if e is None:
            if descending and not hopeless:
                hopeless = _hopeless(ev, base, fixed)
            continue
        if outcome.fastest is None or (e.wall_days, e.layout) < (outcome.fastest.wall_days, outcome.fastest.layout):
            outcome.fastest = e
        if target.kind == "deadline":
            if e.wall_days <= target.deadline_days:  # type: ignore[operator]
                if _lower_first(ev, target):
                    return e
                # Servers bought by the rack: the next DPs of its price cost the same and may be faster.
                return _fastest_of_price(ev, e, dps[dps.index(d) + 1:], base, fixed, target, outcome)
            continue
        if target.kind == "budget":
            cost = ev.hw.cost_usd(e.gpus, e.gpu_hours, target.pricing)
            if cost is not None and cost <= target.budget_usd:  # type: ignore[operator]
                return e
            continue
        return e
    return None


def _fastest_of_price(ev: Evaluator, e: Evaluation, later: tuple[int, ...], base: Layout, fixed: Fixed,
                      target: Target, outcome: SearchOutcome) -> Evaluation:
    """The best ranked (least days, then layout) of ``e``, the first DP of a shape that meets a
    deadline, and the ``later`` DPs (increasing) that cost the same (servers bought by the rack:
    one price buys several GPU counts) and meet it too."""
    pricing, deadline = target.pricing, target.deadline_days
    mp = base.tp * base.pp * base.cp
    cost = ev.cost(e.gpus, 0.0, pricing)
    for d in later:
        if ev.cost(mp * d, 0.0, pricing) != cost:
            break
        other = _best_fit(ev, base._replace(dp=d), fixed, outcome)
        if other is None:
            continue
        if (other.wall_days, other.layout) < (outcome.fastest.wall_days, outcome.fastest.layout):  # type: ignore[union-attr]
            outcome.fastest = other
        if other.wall_days <= deadline and (other.wall_days, other.layout) < (e.wall_days, e.layout):  # type: ignore[operator]
            e = other
    return e
