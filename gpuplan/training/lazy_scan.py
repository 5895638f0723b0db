"""The groups of a capex deadline search bounded lazily (training/search.py): each group waits,
unbounded, behind a floor of its key's cost until that floor can reach the heap's top.

A group's LOWER key (bounds._deadline_scan) is the capex at its first DP whose bound meets the
deadline, and the scan never looks below the DP its ``room`` gives (the smallest that can meet it
with the best goodput of the group's counts). Capex grows with the GPU count, so the capex at
that DP is a floor of the key's cost: the same expressions, computed for every group at once by
``map`` over the columns of the groups' terms (no bytecode per group), then sorted. A search takes
a group's entry into its heap only when that floor is at most the heap's top (or the incumbent):
every entry that could rank at or before the top is in the heap, so the heap meets the entries in
the order of their full tuples, as when every group was bounded first. In the default plan about
80% of the groups' floors exceed the cost of the plan found: they are never bounded.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from heapq import heapify, heappush
from itertools import repeat
from operator import getitem, mul, sub, truediv
from bisect import bisect_left

from gpuplan.training.bounds import LOWER, _Bounded, _bounds, _deadline_scan, _group_terms
from gpuplan.training.evaluator import Evaluator, Fixed, SearchOutcome, Target
from gpuplan.training.groups import search_groups

#: A DP past a group's last one (the scan finds none that can meet the deadline): no capex.
_BEYOND = 1 << 62


class Pending:
    """The groups of one search not yet in its heap, in increasing order of their cost floors."""

    __slots__ = ("ev", "target", "cap", "straggle", "floors", "terms", "at")

    def __init__(self, ev: Evaluator, target: Target, cap: float, straggle: bool,
                 floors: list[float], terms: list[tuple]) -> None:
        self.ev, self.target, self.cap, self.straggle = ev, target, cap, straggle
        self.floors, self.terms, self.at = floors, terms, 0

    def fill(self, heap: list[_Bounded], limit: float) -> None:
        """Bound and push the groups whose floor is at most the least of ``limit`` and the
        heap's top cost (and again as the top falls), so no entry left out ranks at or before the
        top, or costs at most ``limit``."""
        floors, at, end = self.floors, self.at, len(self.floors)
        while at < end:
            top = heap[0][0][0] if heap else math.inf
            upto = top if top < limit else limit
            low = floors[at]
            if low > upto:
                break
            stop = bisect_right(floors, upto if upto < math.inf else low, at)
            new = _deadline_scan(self.ev, self.terms[at:stop], self.target, LOWER, self.cap, self.straggle, True)
            at = stop
            if len(new) > len(heap):
                heap.extend(new)
                heapify(heap)
            else:
                for b in new:
                    heappush(heap, b)
        self.at = at

    def fill_to(self, heap: list[_Bounded], limit: float) -> None:
        """Bound and push every group whose floor is at most ``limit``."""
        floors, at = self.floors, self.at
        stop = bisect_right(floors, limit, at)
        if stop > at:
            for b in _deadline_scan(self.ev, self.terms[at:stop], self.target, LOWER, self.cap, self.straggle, True):
                heappush(heap, b)
            self.at = stop


def pending(ev: Evaluator, groups: tuple, target: Target, cap: float, straggle: bool) -> Pending | None:
    """The groups of a LOWER deadline search of ``target`` behind their cost floors (None: the
    target is not priced by capex, whose floor this is)."""
    if not groups:
        return None
    terms = _group_terms(ev, groups)
    _, dps, mps, mbs, _, _, per_bubble, per_mb, good, _ = zip(*terms)
    host_step = ev.host_days[0]
    try:
        # bounds._deadline_scan's room and first DP: (deadline x g - per_bubble - host_step) / per_mb
        room = map(truediv, map(sub, map(sub, map(mul, repeat(target.deadline_days), good), per_bubble),
                                repeat(host_step)), per_mb)
        least = map(mul, map(truediv, repeat(ev.job.batch), map(mul, mbs, room)), repeat(1 - 1e-12))
        first = list(map(bisect_left, dps, least))
        counts = list(map(mul, mps, map(getitem, map(tuple.__add__, dps, repeat((_BEYOND,))), first)))
    except (ZeroDivisionError, TypeError):  # a room of exactly 0 (or DP values in a list): bound every group
        return None
    capex = ev._capex
    for n in set(counts).difference(capex):
        if n < _BEYOND:
            ev.cost(n, 0.0, target.pricing)
    floors = list(map(capex.get, counts, repeat(math.inf)))
    order = sorted(range(len(floors)), key=floors.__getitem__)
    return Pending(ev, target, cap, straggle, [floors[i] for i in order], [terms[i] for i in order])


def first_bounds(ev: Evaluator, fixed: Fixed, target: Target, outcome: SearchOutcome, cap: float,
                 straggle: bool) -> tuple[list[_Bounded], Pending | None]:
    """A search's first heap (bounds._bounds, heapified) and the groups left pending behind their
    cost floors (None: every group is in the heap). A capex deadline search of groups bounded by
    their stage floors (LOWER) starts with an empty heap and every group pending."""
    if target.kind == "deadline" and target.pricing != "cloud" and ev.hw.node_price_usd:
        found = search_groups(ev, fixed, target, outcome.max_groups)
        if not found.exact:
            waiting = pending(ev, found.groups, target, cap, straggle)
            if waiting is not None:
                outcome.thinned = found.thinned
                outcome.bounded += len(found.groups)
                return [], waiting
    heap = _bounds(ev, fixed, target, outcome, cap, straggle)
    heapify(heap)
    return heap, None
