"""The groups of a capex deadline search bounded lazily (training/search.py): each group waits,
unbounded, behind a floor of its key's cost until that floor can reach the heap's top.

A group's LOWER key (bounds._deadline_scan) is the capex at its first DP whose bound meets the
deadline, and the scan never looks below the DP its ``room`` gives (the smallest that can meet it
with the best goodput of the group's counts). Capex grows with the GPU count, so the capex at
that DP is a floor of the key's cost. The floors take about half the bytecodes of a scan and
need no terms (bounds._terms); the groups wait by floor, and a search bounds a floor's groups
(bounds._deadline_scan, all at once) only when it is at most the heap's top and the incumbent's
cost: every entry that could rank at or before the top is in the heap, so the heap meets the
entries in the order of their full tuples, as when every group was bounded first (ties
included), and the search stops at the same place. On the default profile 1,729 of the 8,510
groups are bounded (their floor reaches the cost of the plan found); the rest are never bounded.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from heapq import heapify, heappop, heappush

from gpuplan.training.bounds import (
    LOWER,
    _Bounded,
    _bounds,
    _deadline_scan,
    _exact,
    _group_terms,
    _terms,
)
from gpuplan.training.evaluator import Evaluator, Fixed, SearchOutcome, Target
from gpuplan.training.groups import search_groups


class Pending:
    """The groups of one search not yet in its heap, by their cost floors (increasing): the
    floors, the groups of each and their LOWER entries once bounded (:func:`levels`, shared by
    the searches of a space), and where this search is."""

    __slots__ = ("at", "bounded", "cap", "ev", "floors", "groups", "straggle", "target")

    def __init__(self, ev: Evaluator, target: Target, cap: float, straggle: bool,
                 levels: tuple[list[float], dict[float, list[tuple]], dict[float, list[_Bounded]]]) -> None:
        self.ev, self.target, self.cap, self.straggle = ev, target, cap, straggle
        self.floors, self.groups, self.bounded = levels
        self.at = 0

    def next(self) -> float:
        """The least floor still pending (``inf``: none)."""
        return self.floors[self.at] if self.at < len(self.floors) else math.inf

    def fill(self, heap: list[_Bounded], limit: float) -> float:
        """Bound and push the groups whose floor is at most the least of ``limit`` and the
        heap's top cost, one floor at a time (the top may fall below the next): no entry left out
        ranks at or before the top, or costs at most ``limit``. Returns :meth:`next`."""
        floors, at, end, bounded = self.floors, self.at, len(self.floors), self.bounded
        while at < end:
            low = floors[at]
            if heap and low > heap[0][0][0] or low > limit:
                break
            new = bounded.get(low)
            if new is None:
                waiting = self.groups[low]
                new = bounded[low] = _deadline_scan(
                    self.ev, waiting if type(waiting) is _Terms else _terms(self.ev, waiting), self.target, LOWER,
                    self.cap, self.straggle, True)
            at += 1
            if len(new) > len(heap):
                heap.extend(new)
                heapify(heap)
            else:
                for b in new:
                    heappush(heap, b)
        self.at = at
        return floors[at] if at < end else math.inf

    def settle(self, heap: list[_Bounded], below: tuple[float, float], worst: float) -> float:
        """bounds._settle with the groups pending: the LOWER entries at the top whose key is below
        ``below`` replaced by their GROUP entries, the groups whose floor can reach the top (up to
        the least of ``below``'s cost and ``worst``, the incumbent's) pushed first. Returns
        :meth:`next`."""
        limit = min(worst, below[0])
        ev, target, cap, straggle = self.ev, self.target, self.cap, self.straggle
        while True:
            after = self.fill(heap, limit)
            if not heap or heap[0][3] != LOWER or not heap[0][0] < below:
                return after
            exact = _exact(ev, heappop(heap), target, cap, straggle)
            if exact is not None:
                heappush(heap, exact)


def levels(ev: Evaluator, groups: tuple, target: Target, cap: float,
           straggle: bool) -> tuple[list[float], dict[float, list[tuple]], dict[float, list[_Bounded]]]:
    """:func:`pending`'s floors (sorted) and groups of a search, with the LOWER entries of the
    floors bounded so far, memoised beside the groups (checked by identity, held): a plan's
    layout alternatives search the best GPU type's space again."""
    memo = ev._terms
    key = ("lazy", id(groups), ev.steps, ev.host_days, target, cap, straggle)
    hit = memo.get(key)
    if hit is None or hit[0] is not groups:
        if len(memo) >= 4096:
            memo.clear()
        # A space searched again (a deadline sweep's next point, a probe) bounds its groups from
        # their terms, memoised with them (bounds._group_terms); its first search computes none.
        seen = ("lazy seen", id(groups), ev.steps, ev.host_days)
        if memo.get(seen) is groups:
            waiting = pending_terms(ev, _group_terms(ev, groups), target, cap)
        else:
            memo[seen] = groups
            waiting = pending(ev, groups, target, cap)
        hit = memo[key] = (groups, (sorted(waiting), waiting, {}))
    return hit[1]


def pending_terms(ev: Evaluator, terms: list[tuple], target: Target, cap: float) -> dict[float, list[tuple]]:
    """:func:`pending` from the groups' terms (bounds._terms); the buckets hold terms
    (:class:`_Terms`)."""
    out: dict[float, list[tuple]] = defaultdict(_Terms)
    _add_floors(ev, terms, True, target, cap, out)
    return out


class _Terms(list):
    """A bucket of :func:`pending_terms`: terms, not groups."""

    __slots__ = ()


def pending(ev: Evaluator, groups: tuple, target: Target, cap: float) -> dict[float, list[tuple]]:
    """The groups of a capex deadline search that can meet the deadline within ``cap``, by their
    cost floor (:func:`_add_floors`); the groups the scan drops are left out (no room; no DP
    large enough)."""
    out: dict[float, list[tuple]] = defaultdict(list)
    _add_floors(ev, groups, False, target, cap, out)
    return out


def _add_floors(ev: Evaluator, items: Iterable[tuple], terms: bool, target: Target, cap: float,
                out: dict[float, list[tuple]]) -> None:
    """Each of ``items`` (groups; with ``terms``, their bounds._terms) that the deadline scan keeps,
    appended to ``out`` under its cost floor: the capex at the first DP not below the one the scan
    starts at, by its ``room`` (``(deadline x g - per_bubble - host_step) / per_mb``, from the terms
    or by bounds._terms' expressions) with the batch a little lower (``1 - 1e-9``), so the DP is
    never above the scan's. Left out: no room, no DP large enough, a floor above ``cap``. One loop
    for every item (a function call per group cost ~2k instructions more)."""
    steps = ev.steps
    host_step, host_mb = ev.host_days
    capex, deadline, pricing, share = ev._capex, target.deadline_days, target.pricing, ev.job.batch * (1 - 1e-9)
    fractions: dict[int, float] = {}  # the goodput fraction by GPU count
    for item in items:
        if terms:
            _, dps, mp, mb, _, _, per_bubble, per_mb, g, _ = item
        else:
            shape, (stage, dps, mp) = item
            mb, per_day, n = shape[6], steps * stage / 86400.0, mp * dps[0]
            g = fractions.get(n)
            if g is None:
                g = fractions[n] = ev.goodput(n).fraction
            per_bubble, per_mb = per_day * ((shape[1] - 1) / shape[5]), per_day + host_mb
        room = deadline * g - per_bubble - host_step  # type: ignore[operator]
        if room <= 0:
            continue
        i = bisect_left(dps, per_mb * share / (mb * room))
        if i == len(dps):
            continue
        n = mp * dps[i]
        floor = capex.get(n)
        if floor is None:
            floor = ev.cost(n, 0.0, pricing)
        if not floor > cap:
            out[floor].append(item)


def first_bounds(ev: Evaluator, fixed: Fixed, target: Target, outcome: SearchOutcome, cap: float,
                 straggle: bool) -> tuple[list[_Bounded], Pending | None]:
    """A search's first heap (bounds._bounds, heapified) and the groups left pending behind their
    cost floors (None: every group is in the heap). A capex deadline search of groups bounded by
    their stage floors (LOWER) starts with an empty heap and every group pending."""
    if target.kind == "deadline" and target.pricing != "cloud" and ev.hw.node_price_usd:
        found = search_groups(ev, fixed, target, outcome.max_groups)
        if not found.exact:
            outcome.thinned = found.thinned
            outcome.bounded += len(found.groups)
            return [], Pending(ev, target, cap, straggle, levels(ev, found.groups, target, cap, straggle))
    heap = _bounds(ev, fixed, target, outcome, cap, straggle)
    heapify(heap)
    return heap, None
