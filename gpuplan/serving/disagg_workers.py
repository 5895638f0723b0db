"""Each replica's disaggregated workers, memoised across the disaggregation searches
(serving/disagg_search.py): its prefill worker, its decode worker and the bounds of the decode
worker's rate, and the prefill rates by link; none depends on the QPS."""

from __future__ import annotations

import itertools

from gpuplan.core.memo import memo
from gpuplan.serving.capacity import Demand
from gpuplan.serving.disagg import DecodeWorker, PrefillWorker, decode_rate_bound, decode_worker, prefill_worker
from gpuplan.serving.model import Replica

#: Each replica's two workers and its prefill rates by link, per demand: neither depends on the QPS,
#: so a sweep (or the fleet strategies planning serving again) sizes them once. The replica is keyed
#: by identity and held in the entry (its fourth item), so its id is not reused while the entry lives.
#: An entry is ``[number, prefill worker, decode worker, replica, bound of the decode worker's rate,
#: tight bound of it, the prompt's prefill time where known]``; each worker is :data:`UNSIZED`
#: until a search needs it (the decode worker is a bisection over the batch, the prefill worker a
#: prefill step where its time is not known), the tight bound (decode_tight_rate_bound) None.
WORKERS: dict[tuple[object, ...], list] = memo()
#: Prefill rates by (the worker's number in WORKERS, extra seconds): a plain key, since hashing the
#: replica's catalog records again for every link a search tries cost more than the lookup saved.
RATES: dict[tuple[int, float], float] = memo()
#: Numbers are never reused (not even after the memos are emptied mid-search).
_NUMBERS = itertools.count()
MEMO_MAX = 8192
UNSIZED = object()


def workers_of(r: Replica, demand: Demand, latency: float | None = None) -> list:
    """The replica's entry: its number (the key of its prefill rates in RATES), its prefill
    worker (:func:`prefill_of` makes it; ``latency``: its prompt's prefill time where known) and its
    decode worker (:func:`decode_of` sizes it). Keyed by the replica's identity: the planner's replicas are built
    once per GPU and workload shape (serving/planner.py), and the entry holds the replica, so its
    id is not reused while the entry lives (hashing its catalog records cost more than a worker)."""
    key = (id(r), demand)
    hit = WORKERS.get(key)
    if hit is None:
        if len(WORKERS) >= MEMO_MAX:
            WORKERS.clear()
            RATES.clear()
        hit = WORKERS[key] = [next(_NUMBERS), UNSIZED, UNSIZED, r, decode_rate_bound(r, demand), None, latency]
    elif hit[1] is UNSIZED and hit[6] is None:
        hit[6] = latency
    return hit


def prefill_of(entry: list, demand: Demand) -> PrefillWorker | None:
    """The prefill worker of a :func:`workers_of` entry, made when first asked for."""
    if entry[1] is UNSIZED:
        entry[1] = prefill_worker(entry[3], demand, entry[6])
    return entry[1]


def decode_of(entry: list, demand: Demand) -> DecodeWorker | None:
    """The decode worker of a :func:`workers_of` entry, sized when first asked for."""
    if entry[2] is UNSIZED:
        entry[2] = decode_worker(entry[3], demand)
    return entry[2]
