"""Lower bounds of the layout search's ranking keys (training/search.py): the heap entries of
groups, shapes and refined shapes, and the bounds that order them.

Every bound is a lower bound of the key of the best layout it stands for: the step without DP
sync, pipeline sends and optimizer, with the least recompute memory allows at the largest DP, the
bubble and the goodput of its GPU count, and host time without its straggler share. In an
exhaustive capex deadline search (``_search``'s ``straggle``) the straggler share of that step is
counted at every level, and a shape of one VP also counts its pipeline sends, which read neither
the recompute nor the ZeRO stage (timing.pipeline_sends_s: exact).
"""

# No ``from __future__ import annotations``: the NamedTuples' field types stay objects (typing
# turns a string annotation into a ForwardRef, compiled at import: ~70k instructions a field).

from bisect import bisect_left
import heapq
import math
from collections.abc import Iterable
from typing import NamedTuple

from gpuplan.training.evaluator import HOURS_PER_DAY, Evaluator, Fixed, SearchOutcome, Target
from gpuplan.training.fit import MEMO_ENTRIES, _light_stage, _table
from gpuplan.training.groups import Scale, search_groups
from gpuplan.training.layout import Layout
from gpuplan.training.space import dp_candidates, vp_candidates
from gpuplan.training.scan_parts import LAST_SCAN, _bracket_days, _send_days, gpu_factor, gpu_factors  # noqa: F401


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
            cap: float = math.inf, straggle: bool = False) -> list[_Bounded]:
    """Every (TP, CP, EP, PP, micro-batch) group (training/groups.py) with a first bound of its key
    (no recompute, the largest VP); groups whose bound already misses the target are left out, and
    so are those whose bound costs more than ``cap`` (a search's cutoff: they would never be
    taken from the heap, and every entry left in it costs less).

    Where a group's key only grows with its stage time (:func:`_lower_first`; a deadline's always),
    it is bounded with the lower bound of its stage time the groups carry (level LOWER) and its own
    stage time is computed once it reaches the top of the heap (:func:`_exact`); else at once."""
    found = search_groups(ev, fixed, target, outcome.max_groups)
    outcome.thinned = found.thinned
    outcome.bounded += len(found.groups)
    lower = not found.exact and _lower_first(ev, target)
    if target.kind == "deadline":
        if found.exact:
            return _deadline_bounds(ev, found.groups, target, GROUP, cap, straggle)
        return _lower_scan(ev, found.groups, target, cap, straggle)
    if target.kind == "fastest":  # its groups' stage times are exact where not lower (found.exact)
        return _fastest_bounds(ev, found.groups, LOWER if lower else GROUP, whole=lower)
    bounded = []
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
    racks (DPs of one price, the larger with fewer days: :func:`_deadline_scan`'s ``bracket``)."""
    if target.kind in ("fastest", "gpus"):
        return True
    if target.kind != "deadline":
        return False
    hw = ev.hw
    return (target.pricing == "cloud" or not hw.node_price_usd
            or (target.whole_nodes and hw.purchase_unit_nodes == 1))


def _exact(ev: Evaluator, b: _Bounded, target: Target, cap: float, straggle: bool = False) -> _Bounded | None:
    """A LOWER group's GROUP entry: its bound with its own stage time (None: it misses the target
    or costs more than ``cap``, as :func:`_bounds` would have left it out)."""
    shape = b.shape
    scale = tuple.__new__(Scale, (ev.stage_time_any_vp(shape), b.dps, shape[0] * shape[1] * shape[3]))
    if target.kind == "deadline":  # the group's deadline bound (:func:`_deadline_bounds`; ~700 calls a plan)
        found = _deadline_scan(ev, _terms(ev, ((shape, scale),)), target, GROUP, cap, straggle, False)
        return found[0] if found and not found[0].key[0] > cap else None
    out = _bound_shape(ev, shape, scale, target, GROUP, cap, straggle)
    return None if out is None or out.key[0] > cap else out


def _settle(ev: Evaluator, heap: list[_Bounded], target: Target, cap: float, below: tuple[float, float],
            straggle: bool = False) -> None:
    """Replace the LOWER entries at the top of ``heap`` whose key is below ``below`` by their
    GROUP entries, so that the top's key is the least key of the groups' own bounds (or at least
    ``below``)."""
    while heap and heap[0].level == LOWER and heap[0].key < below:
        exact = _exact(ev, heapq.heappop(heap), target, cap, straggle)
        if exact is not None:
            heapq.heappush(heap, exact)


def _expand(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target, straggle: bool = False) -> list[_Bounded]:
    """The VP values of a group, each with its own bound."""
    shapes = _vp_shapes(ev, b.shape, fixed, target)
    if target.kind == "deadline":
        return _deadline_scan(ev, _shape_terms(ev, shapes, straggle), target, SHAPE, math.inf, straggle, False)
    out = []
    for one_shape, scale in shapes:
        one = _bound_shape(ev, one_shape, scale, target, SHAPE)
        if one is not None:
            out.append(one)
    return out


def _vp_shapes(ev: Evaluator, shape: Layout, fixed: Fixed, target: Target) -> list[tuple[Layout, Scale]]:
    """A group's shapes, one per VP, with the scale they share; memoised on the Evaluator's shared
    parts (none of it reads the deadline or the budget, only what the DP values read)."""
    table = _table(ev, ev._expanded, fixed)
    key = (shape, target.kind == "gpus", target.gpus, target.power_limit_kw, target.whole_nodes)
    hit = table.get(key)
    if hit is None:
        if len(table) >= MEMO_ENTRIES:
            table.clear()
        head, tail = shape[:5], shape[6:]  # the shape at each VP: shape.but(vp=...)
        base = tuple.__new__(Layout, (*head, 1, *tail))
        mp = shape.tp * shape.pp * shape.cp
        dps = dp_candidates(ev, fixed, target, mp, shape.micro_batch, shape.ep, shape.cp, shape.tp)
        scale = tuple.__new__(Scale, (ev.stage_time_any_vp(base), dps, mp))  # Scale(stage, dps, mp)
        hit = table[key] = [(tuple.__new__(Layout, (*head, vp, *tail)), scale)
                            for vp in vp_candidates(ev.job.arch.layers, shape.pp, fixed)]
    return hit  # type: ignore[return-value]


def _shape_terms(ev: Evaluator, shapes: list[tuple[Layout, Scale]], sends: bool) -> list[tuple]:
    """:func:`_terms` of a group's VP shapes (``sends``: their pipeline sends counted), memoised
    with the shapes (:func:`_vp_shapes`: read neither the deadline nor the cap). Checked by
    identity; the shapes are held in the entry."""
    memo = ev._terms
    key = ("shapes", id(shapes), sends, ev.steps, ev.host_days)
    hit = memo.get(key)
    if hit is None or hit[0] is not shapes:
        if len(memo) >= 4096:
            memo.clear()
        hit = memo[key] = (shapes, _terms(ev, shapes, sends))
    return hit[1]


def _bound_shape(ev: Evaluator, shape: Layout, scale: Scale, target: Target, level: int,
                 cap: float = math.inf, straggle: bool = False) -> _Bounded | None:
    """Bound of one shape's ranking key over its DP values (see the module docstring), for the
    targets other than a deadline (whose bounds are :func:`_deadline_scan`'s, called directly).

    Budget: (days, 0) at the largest DP whose bound cost fits. Fastest: (days, 0) at the largest
    DP. GPU count: (step seconds, 0). None when the bound already misses the target.
    """
    if target.kind == "fastest":
        return _fastest_bounds(ev, ((shape, scale),), level)[0]
    batch, mb = ev.job.batch, shape.micro_batch
    bubble = (shape.pp - 1) / shape.vp
    stage, dps, mp = scale
    per_day = ev.steps * stage / 86400.0
    host_step, host_mb = ev.host_days  # host time without its straggler share (>= 0)

    def days(d: int) -> float:
        m = batch / (d * mb)
        return (per_day * (m + bubble) + host_mb * m + host_step) / ev.goodput(mp * d).fraction

    if target.kind == "gpus":
        d = dps[0]
        m = batch / (d * mb)
        return _Bounded(((m + bubble) * stage + m * ev.cal.host_microbatch_s + ev.cal.host_step_s, 0.0),
                        shape, (d,), level)
    fits = [d for d in dps
            if (ev.hw.cost_usd(mp * d, days(d) * HOURS_PER_DAY * mp * d, target.pricing) or math.inf)
            <= target.budget_usd]  # type: ignore[operator]
    if not fits:
        return None
    return _Bounded((days(fits[-1]), 0.0), shape, tuple(reversed(fits)), level)


def _deadline_bounds(ev: Evaluator, shapes: Iterable[tuple[Layout, Scale]], target: Target, level: int,
                     cap: float = math.inf, straggle: bool = False, whole: bool = False) -> list[_Bounded]:
    """The deadline bound of each of ``shapes`` (groups: their pipeline sends are not counted; a
    shape of one VP's are, with ``straggle``, :func:`_expand` and :func:`_refine`), those whose
    bound meets the deadline at a cost within ``cap``. ``whole``: each entry keeps every DP of its
    scale (a LOWER entry, :func:`_exact`)."""
    return _deadline_scan(ev, _terms(ev, shapes), target, level, cap, straggle, whole)


def _lower_scan(ev: Evaluator, groups: tuple[tuple[Layout, Scale], ...], target: Target, cap: float,
                straggle: bool) -> list[_Bounded]:
    """:func:`_deadline_scan` of a space's groups at level LOWER, memoised beside the groups (checked
    by identity, held): it reads the groups' terms, the target, ``cap`` and ``straggle`` only (a
    plan's layout alternatives search the best GPU type's space again). A new list each call: the
    search makes it its heap."""
    memo = ev._terms
    key = ("lower", id(groups), ev.steps, ev.host_days, target, cap, straggle)
    hit = memo.get(key)
    if hit is None or hit[0] is not groups:
        if len(memo) >= 4096:
            memo.clear()
        hit = memo[key] = (groups, _deadline_scan(ev, _group_terms(ev, groups), target, LOWER, cap, straggle, True))
    return list(hit[1])


def _group_terms(ev: Evaluator, groups: tuple[tuple[Layout, Scale], ...]) -> list[tuple]:
    """:func:`_terms` of a search space's groups, memoised with them (they read neither the deadline
    nor the cap: every search of the space, each point of a deadline sweep, bounds the same
    groups). Kept beside the groups object on the Evaluator's shared parts, checked by identity."""
    memo = ev._terms
    key = (id(groups), ev.steps, ev.host_days)
    hit = memo.get(key)
    if hit is None or hit[0] is not groups:
        if len(memo) >= 4096:
            memo.clear()
        hit = memo[key] = (groups, _terms(ev, groups))
    return hit[1]


def _terms(ev: Evaluator, shapes: Iterable[tuple[Layout, Scale]], sends: bool = False) -> list[tuple]:
    """What a shape's deadline bound reads that the deadline does not change: the shape, its DP
    values and model parallelism, micro-batch, bubble (in stages), days per micro-batch of stages,
    their product, the days per micro-batch with host time, the goodput at the least DP, and
    whether its pipeline sends are counted (``sends``: one VP's shape, PP > 1)."""
    steps = ev.steps
    _, host_mb = ev.host_days
    good, goodput = ev._good, ev.goodput
    out = []
    for shape, (stage, dps, mp) in shapes:
        pp = shape[1]  # the Layout's fields by index (a named tuple's attribute loads are slower)
        bubble = (pp - 1) / shape[5]
        per_day = steps * stage / 86400.0
        n = mp * dps[0]
        g = (good.get(n) or goodput(n)).fraction
        out.append((shape, dps, mp, shape[6], bubble, per_day, per_day * bubble, per_day + host_mb, g,
                    sends and pp > 1))
    return out


def _deadline_scan(ev: Evaluator, terms: list[tuple], target: Target, level: int, cap: float, straggle: bool,
                   whole: bool) -> list[_Bounded]:
    """Each of ``terms`` (:func:`_terms`) at its first DP whose bound meets the deadline: (cost, days)
    there, those within ``cap``. Where one price buys several GPU counts (racks), the days are the
    least of that DP's and the next ones' of its price (``bracket``), at every level: a shape's plan
    (the fastest of its DPs of its least price that meet the deadline, search._evaluate_shape) costs
    more or has no fewer days, so each level's key is at most the next one's and the plan's."""
    setup = LAST_SCAN[0]  # the last scan's, shared by the scans of a search (~1,300 a plan)
    if setup[0] is not ev or setup[1] is not target or setup[2] != straggle:
        sigma = ev.cal.straggler_sigma if straggle else 0.0
        setup = LAST_SCAN[0] = (ev, target, straggle, not _lower_first(ev, target), sigma, gpu_factors(ev, sigma))
    _, _, _, bracket, sigma, factors = setup
    batch = ev.job.batch
    host_step, host_mb = ev.host_days
    deadline, pricing = target.deadline_days, target.pricing
    cost_of = ev.cost
    # The hot path reads the Evaluator's memo of capex directly (ev.cost) and the lag and goodput
    # of each GPU count from one memo (scan_parts.gpu_factors).
    capex = None if pricing == "cloud" else ev._capex
    capped = cap < math.inf and pricing != "cloud"
    new = tuple.__new__
    out = []
    append = out.append
    for shape, dps, mp, mb, bubble, per_day, per_bubble, per_mb, g, sends in terms:
        # Smallest DP that can meet the deadline with the best goodput of these counts: a DP
        # below it cannot (goodput only falls with the GPU count), so the scan starts there.
        # lazy_scan._add_floors finds a floor of the cost by this room and first DP: change both.
        room = (deadline * g - per_bubble - host_step) / per_mb  # type: ignore[operator]
        if room <= 0:
            continue
        i = bisect_left(dps, batch / (mb * room) * (1 - 1e-12))
        count = len(dps)
        if capped and i < count:
            # Capex grows with the count: no DP from here on costs less than this one.
            n = mp * dps[i]
            least = capex.get(n, False)  # type: ignore[union-attr]
            if least is False:
                least = cost_of(n, 0.0, pricing)
            if least is not None and least > cap:
                continue
        while i < count:  # the first DP whose bound meets it
            d = dps[i]
            n = mp * d
            m = batch / (d * mb)
            f = factors.get(n)
            if f is None:
                f = gpu_factor(ev, factors, n, sigma)
            lag, fraction = f
            if sends:  # exact: they read neither the recompute nor the ZeRO stage (straggle only)
                t = (((per_day * (m + bubble) + _send_days(ev, shape, d)) * lag
                      + host_mb * m + host_step) / fraction)
            elif sigma:
                t = ((per_day * (m + bubble) * lag + host_mb * m + host_step)
                     / fraction)
            else:
                t = (per_day * (m + bubble) + host_mb * m + host_step) / fraction
            if not t > deadline:  # type: ignore[operator]
                break
            i += 1
        else:
            continue
        if capex is None:
            cost = cost_of(n, t * HOURS_PER_DAY * n, pricing)
        else:
            cost = capex.get(n, False)
            if cost is False:
                cost = cost_of(n, t * HOURS_PER_DAY * n, pricing)
        first = cost if cost is not None else t * HOURS_PER_DAY * n
        if first > cap:
            continue
        if bracket:
            t = _bracket_days(ev, dps, i, mp, mb, bubble, per_day, cost, t, pricing)
        append(new(_Bounded, ((first, t), shape, dps if whole else tuple(dps[i:]), level)))
    return out


def _fastest_bounds(ev: Evaluator, shapes: Iterable[tuple[Layout, Scale]], level: int,
                    whole: bool = False) -> list[_Bounded]:
    """:func:`_bound_shape` of the fastest target for each of ``shapes``: the days at the largest
    DP. ``whole``: each entry keeps the DP values of its scale (a LOWER entry, :func:`_exact`)."""
    batch, steps, goodput, good = ev.job.batch, ev.steps, ev.goodput, ev._good
    host_step, host_mb = ev.host_days
    out = []
    for shape, (stage, dps, mp) in shapes:
        mb = shape[6]  # the Layout's micro-batch, PP and VP by index (faster than a named tuple's attributes)
        bubble = (shape[1] - 1) / shape[5]
        per_day = steps * stage / 86400.0
        d = dps[-1]
        m = batch / (d * mb)
        gp = good.get(mp * d) or goodput(mp * d)  # ev.goodput's memo read first
        days = (per_day * (m + bubble) + host_mb * m + host_step) / gp.fraction
        out.append(tuple.__new__(_Bounded, ((days, 0.0), shape, dps if whole else tuple(reversed(dps)), level)))
    return out


def _refine(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target, outcome: SearchOutcome,
            straggle: bool = False) -> _Bounded | None:
    """The bound again with the least recompute that fits at the shape's largest DP (and, with
    ``straggle``, the straggler share of the step: the module docstring)."""
    shape = b.shape
    descending = target.kind in ("budget", "fastest")
    stage = _light_stage(ev, shape, b.dps[0] if descending else b.dps[-1], fixed, outcome)
    if stage is None:
        return None
    scale = tuple.__new__(Scale, (stage, sorted(b.dps) if descending else list(b.dps),  # Scale(...)
                                  shape[0] * shape[1] * shape[3]))
    if target.kind == "deadline":  # one VP's shape: its pipeline sends counted with ``straggle``
        found = _deadline_scan(ev, _terms(ev, ((shape, scale),), straggle), target, REFINED, math.inf, straggle, False)
        return found[0] if found else None
    return _bound_shape(ev, shape, scale, target, REFINED, straggle=straggle)
