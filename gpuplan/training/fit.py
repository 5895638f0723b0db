"""Evaluate one shape of the layout search (training/search.py) at one DP: the fastest
(recompute, ZeRO) that fits memory, and the light stage time a shape's bound is refined with.

Neither reads the target or the deadline, so both are memoised on the Evaluator's shared parts
(training/evaluator.py, ``_Parts``) with what they told the search's outcome: a search that meets a
(shape, DP) another search of the same space evaluated (a runner-up re-planned, a point of a
deadline or budget sweep) reuses it, and its outcome is the same as if it had evaluated it.
"""

from __future__ import annotations

import math

from gpuplan.training.evaluator import Evaluation, Evaluator, Fixed, SearchOutcome
from gpuplan.training.layout import Group, Layout, check, layers_per_stage
from gpuplan.training.memory import Memory, recompute_layers_to_fit, stage_params
from gpuplan.training.space import most_sharded, recompute_candidates, zero_candidates


def _best_fit(ev: Evaluator, base: Layout, fixed: Fixed, outcome: SearchOutcome) -> Evaluation | None:
    """:func:`_fit_once`, memoised on the Evaluator's shared parts: it reads neither the target nor
    the deadline, so a search that meets a (shape, DP) another search of the space evaluated (a
    runner-up re-planned, a sweep point) reuses it, and what it told that search's outcome."""
    table = _table(ev, ev._fits, fixed)
    hit = table.get(base)
    if hit is None:
        if len(table) >= MEMO_ENTRIES:
            table.clear()
        own = _Tally()
        hit = table[base] = (_fit_once(ev, base, fixed, own), own.evaluated, own.min_memory, own.min_memory_layout)
    best, evaluated, least, least_layout = hit  # type: ignore[misc]
    outcome.evaluated += evaluated
    if least < outcome.min_memory:
        outcome.min_memory, outcome.min_memory_layout = least, least_layout
    return best


#: How far above the memory limit (relative) the least memory of a fit must be for :func:`_hopeless`:
#: far beyond rounding, so that the partial-recompute arithmetic cannot flip near the limit.
OVER_LIMIT = 1e-9


def _hopeless(ev: Evaluator, base: Layout, fixed: Fixed) -> bool:
    """Whether the memoised fit of ``base`` (:func:`_best_fit`) fits nothing, every (recompute,
    ZeRO) it tried needing more than the memory limit by ``OVER_LIMIT``. Then no smaller DP of its
    shape with DP x CP > 1 fits either, nor tells a search anything: each setting's memory only
    grows as the DP falls (states sharded over fewer ranks, at least as many micro-batches in
    flight; the same ZeRO stages while DP x CP > 1), and so does each memory the search keeps the
    least of (:class:`SearchOutcome` ``min_memory``, replaced only by a smaller one)."""
    hit = _table(ev, ev._fits, fixed).get(base)
    if hit is None:
        return False
    best, evaluated, least, _ = hit  # type: ignore[misc]
    return best is None and not evaluated and ev.limit * (1.0 + OVER_LIMIT) < least < math.inf


class _Tally:
    """What one fit tells a search's outcome (the fields of SearchOutcome that :func:`_fit_once`
    and :func:`_light_once` write), without a SearchOutcome's dataclass construction."""

    __slots__ = ("evaluated", "min_memory", "min_memory_layout")

    def __init__(self) -> None:
        self.evaluated = 0
        self.min_memory = math.inf
        self.min_memory_layout: Layout | None = None


#: Entries of each search memo per Evaluator parts and memory limit (bounded: cleared when full).
MEMO_ENTRIES = 20_000


def _table(ev: Evaluator, store: dict[tuple[object, ...], object], fixed: Fixed) -> dict[object, object]:
    """The memo of ``store`` for the Evaluator's memory limit and ``fixed``, looked up by identity
    on the Evaluator (hashing the key once per search, not once per shape)."""
    mine: dict[tuple[int, int, float, float], tuple[Fixed, dict[object, object]]] = ev._memo_tables
    key = (id(store), id(fixed), ev.capacity, ev.headroom)
    hit = mine.get(key)
    if hit is None or hit[0] is not fixed:
        if len(store) >= 64:
            store.clear()
        table = store.setdefault((ev.capacity, ev.headroom, fixed), {})
        hit = mine[key] = (fixed, table)  # type: ignore[assignment]
    return hit[1]


def _fit_once(ev: Evaluator, base: Layout, fixed: Fixed, outcome: SearchOutcome) -> Evaluation | None:
    """The fastest (recompute, ZeRO) of ``base`` that fits memory. For each recompute setting,
    least first, the smallest ZeRO stage that fits; more recompute is tried only while the last one
    needed more than the smallest ZeRO stage (it may fit with less sharding: ZeRO-2/3 add a
    reduce-scatter or all-gather per micro-batch, which can cost more than recomputing layers)."""
    zeros = zero_candidates(fixed, base.pp, base.dp * base.cp)
    rcs = recompute_candidates(ev, fixed)
    # Copies of ``base`` with other (recompute, ZeRO) built positionally (Layout's field order:
    # tp, pp, dp, cp, ep, vp, micro_batch | recompute | sequence_parallel | zero | recompute_layers
    # | fold_experts), as ``base.but`` would.
    head, sp, fold, new = base[:7], base[8], base[11], tuple.__new__
    if check(new(Layout, (*head, rcs[0], sp, zeros[0], base[10], fold)), ev.job.arch, ev.job.seq, ev.job.batch,
             ev.hw.domain):
        return None
    partial = fixed.recompute is None
    unreachable = _unreachable(ev, base)

    def fit(rc: str, zero: int) -> tuple[Layout, Memory]:
        lay = new(Layout, (*head, rc, sp, zero, 0, fold))
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
        outcome.evaluated += 1
        if not unreachable:
            e = ev.evaluate(lay, mem)
            if math.isfinite(e.step_time) and (best is None or (e.step_time, e.layout) < (best.step_time, best.layout)):
                best = e
        if lay.zero == zeros[0]:
            break  # the least sharding already: more recompute would only add compute
    return best


def _unreachable(ev: Evaluator, base: Layout) -> bool:
    """Whether every (recompute, ZeRO) of ``base`` has an infinite step time, so that its
    evaluation would be discarded: the network has no scale-out tier and the DP (x CP) group,
    which reduces the stage's non-expert gradients at every ZeRO stage, spans scale-up domains
    (groupcomm.group_collective: infinite seconds; timing.step_time adds them to the step). The
    GPU types without a scale-out fabric (a PCIe card in a server of several scale-up domains)
    find no plan after evaluating their space's best-bounded shapes."""
    net = ev.hw.net
    if net.scaleout is not None:
        return False
    dp = Group(base.dp * base.cp, base.tp)  # layout.groups' "dp": DP x CP members, TP ranks apart
    return (dp.size > 1 and dp.local(net.scaleup_domain) < dp.size and stage_params(ev.job.arch, base)[0] > 0
            and ev.cal.state_bytes[1] > 0 and ev.cal.activation_bytes > 0)


def _partial(ev: Evaluator, lay: Layout) -> Layout:
    """Recompute only as many layers per stage as memory needs (Megatron --recompute-num-layers)."""
    arch = ev.job.arch
    k = recompute_layers_to_fit(arch, ev.job.seq, ev.job.batch, lay, ev.attention, ev.cal,
                                ev.activation_budget(lay), pair=ev.activation_pair(lay), split=ev.job.pipeline_split)
    if k is None or k >= layers_per_stage(arch.layers, lay.pp):
        return lay
    return tuple.__new__(Layout, (*lay[:10], k, lay[11]))  # lay.but(recompute_layers=k)


def _light_stage(ev: Evaluator, shape: Layout, dp: int, fixed: Fixed, outcome: SearchOutcome) -> float | None:
    """:func:`_light_once`, memoised as :func:`_best_fit` is."""
    table = _table(ev, ev._light, fixed)
    hit = table.get((shape, dp))
    if hit is None:
        if len(table) >= MEMO_ENTRIES:
            table.clear()
        own = _Tally()
        hit = table[(shape, dp)] = (_light_once(ev, shape, dp, fixed, own), own.min_memory, own.min_memory_layout)
    stage, least, least_layout = hit  # type: ignore[misc]
    if least < outcome.min_memory:
        outcome.min_memory, outcome.min_memory_layout = least, least_layout
    return stage


def _light_once(ev: Evaluator, shape: Layout, dp: int, fixed: Fixed, outcome: SearchOutcome) -> float | None:
    """Stage seconds with the least recompute that can fit at ``dp`` with the largest ZeRO
    stage (None: nothing fits, and ``outcome`` keeps the least memory seen); a lower bound of the
    stage time at any DP <= ``dp``."""
    zero = most_sharded(fixed, shape.pp)
    tp, pp, mid, sp, rl, fold = shape[0], shape[1], shape[3:7], shape[8], shape[10], shape[11]
    for rc in recompute_candidates(ev, fixed):
        lay = tuple.__new__(Layout, (tp, pp, dp, *mid, rc, sp, zero, rl, fold))  # shape.but(dp, recompute, zero)
        if rc == "full" and fixed.recompute is None:
            lay = _partial(ev, lay)
        mem = ev.memory(lay)
        if mem.fits:
            return ev.stage_time(lay)
        if mem.total < outcome.min_memory:
            outcome.min_memory, outcome.min_memory_layout = mem.total, lay
    return None
