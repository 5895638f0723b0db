"""Throughput-latency frontier of each layout on the chosen GPU.

A replica's steady state at concurrency ``C`` (:mod:`gpuplan.serving.capacity`) gives output
tokens/s per GPU (``lam(C) * output / gpus per replica``) and tokens/s per user (``1 / TPOT``).
Raising ``C`` trades the second for the first; the frontier lists that trade for every layout the
search evaluated, from ``C = 1`` to the KV capacity on a doubling grid (aiconfigurator's Pareto
plot of tokens/s/GPU against tokens/s/user, computed analytically here).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpuplan.core.contract import FrontierPoint

if TYPE_CHECKING:
    from gpuplan.serving.capacity import ReplicaCapacity

#: Concurrency points per layout at most (a doubling grid from 1 to the KV capacity).
MAX_POINTS = 16


def _grid(top: int) -> list[float]:
    out, c = [], 1.0
    while c < top and len(out) < MAX_POINTS - 1:
        out.append(c)
        c *= 2
    out.append(float(top))
    return out


def layout_frontier(capacity: ReplicaCapacity, name: str) -> list[FrontierPoint]:
    """Points of one layout; concurrencies where the replica cannot run (prefill saturated) are left out."""
    if capacity.max_sequences < 1 or capacity.demand.decode_steps < 1:
        return []
    gpus = capacity.replica.layout.gpus
    out = []
    for c in _grid(capacity.max_sequences):
        wp, meets = capacity.sketch(c)
        if not (math.isfinite(wp.tpot_s) and wp.tpot_s > 0 and math.isfinite(wp.ttft_mean_s)):
            continue
        out.append(FrontierPoint(layout=name, gpus_per_replica=gpus, concurrency=c,
                                 tokens_per_s_per_gpu=wp.rate * capacity.demand.output_tokens / gpus,
                                 tokens_per_s_per_user=1.0 / wp.tpot_s, ttft_ms_mean=wp.ttft_mean_s * 1e3,
                                 meets_targets=meets))
    return out
