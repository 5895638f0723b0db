"""Items in ascending order of a cost that is dear to compute, each computed only when it may come
next: the disaggregation search's prefill and decode workers (serving/disagg_search.py).

Each item waits under a lower bound of its cost (a cost computed from the same formula at a rate
no worker exceeds: the float operations are monotone, so the bound is never above the cost). The
waiting item with the least ``(bound, key)`` is computed when no computed item comes before it;
so the items come out in exactly the order of sorting them all by ``(cost, key)``, as long as the
keys are unique. A caller that stops at the first item whose cost fails a monotone test (``fails``)
learns that without computing the items whose bound already fails it, and a caller that skips an
item for good (``drop``) never computes it. An item may have a second, tighter bound that is
cheaper than its cost but too dear to compute for every item (``refine``): it is computed when the
item would be, and the item waits again under it where it is larger, so that the items it puts
after the rest are computed only if they still may come next.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable
from typing import Any

#: (cost, key, item) of a computed item; ``payload`` what its computation returned.
_Ready = tuple[float, Any, int]


class LazyOrder:
    """``items``: (lower bound of its cost, unique key, item number); ``compute(item)`` returns its
    (cost, payload), or None for an item that is not in the order at all."""

    def __init__(self, items: list[tuple[float, Hashable, int]],
                 compute: Callable[[int], tuple[float, Any] | None],
                 refine: Callable[[int], float] | None = None):
        self._waiting = sorted(items, key=lambda t: (t[0], t[1]))
        self._next = 0
        #: The items waiting again under their refined bound (a heap of (bound, key, item)); the
        #: sorted ``_waiting`` from ``_next`` holds the others.
        self._again: list[_Ready] = []
        self._refine = refine
        self._ready: list[_Ready] = []
        self._payload: dict[int, Any] = {}
        self._compute = compute
        #: The items given out so far, in order: (cost, item).
        self.out: list[tuple[float, int]] = []

    def payload(self, item: int) -> Any:
        return self._payload[item]

    def get(self, k: int, fails: Callable[[float], bool] | None = None,
            drop: Callable[[int, float], bool] | None = None) -> tuple[float, int] | None:
        """The ``k``-th item in order as (cost, item); None when there is none, or (``fails``
        given, a test monotone in the cost: once true, true for every larger cost) when the
        ``k``-th item is proven to fail it. ``drop(item, bound)``: an item at the front of the
        waiting items for which it is true leaves the order without being computed (the caller
        would skip it wherever it came)."""
        while len(self.out) <= k:
            waiting = self._waiting[self._next] if self._next < len(self._waiting) else None
            again = self._again[0] if self._again else None
            refined = again is not None and (waiting is None or (again[0], again[1]) < (waiting[0], waiting[1]))
            if refined:
                waiting = again
            ready = self._ready[0] if self._ready else None
            if waiting is None and ready is None:
                return None
            if waiting is None or (ready is not None and (ready[0], ready[1]) < (waiting[0], waiting[1])):
                heapq.heappop(self._ready)
                self.out.append((ready[0], ready[2]))  # type: ignore[index]
                continue
            bound, key, item = waiting
            if drop is not None and drop(item, bound):
                self._take(refined)
                continue
            if fails is not None and fails(bound):
                # Every waiting item costs at least ``bound``: the next item fails unless it is
                # the first computed one, which then costs less than every waiting item.
                if ready is None or fails(ready[0]):
                    return None
                heapq.heappop(self._ready)
                self.out.append((ready[0], ready[2]))
                continue
            self._take(refined)
            if not refined and self._refine is not None:
                tighter = self._refine(item)
                if tighter > bound:  # waits again (NaN, or no tighter: computed now)
                    heapq.heappush(self._again, (tighter, key, item))
                    continue
            got = self._compute(item)
            if got is not None:
                self._payload[item] = got[1]
                heapq.heappush(self._ready, (got[0], key, item))
        return self.out[k]

    def _take(self, refined: bool) -> None:
        """The front waiting item leaves the waiting items (from the refined ones where ``refined``)."""
        if refined:
            heapq.heappop(self._again)
        else:
            self._next += 1
