"""Disaggregated prefill and decode pools, compared analytically with aggregated serving.

DistServe (Zhong et al., OSDI 2024) and Splitwise (Patel et al., ISCA 2024) run prompts and
decode steps on separate GPU pools and ship each request's KV cache from one to the other:

* prefill pool: a replica is an M/G/1 server of service ``t_pf / pp``; its highest rate keeps
  ``W_q + t_pf + t_kv <= TTFT target`` (``t_kv``: the prompt's KV cache over the fabric, every GPU
  of the replica sending its shard in parallel) and ``rho <= max_utilisation``;
* decode pool: no prefill interrupts the steps, so ``TPOT = t0(C)`` and ``lam = C / (n * t0(C))``
  (Little's law), C up to the full-length KV capacity;
* each pool needs ``ceil(QPS / rate)`` replicas; the fabric carries ``QPS * prompt * KV bytes``.

The split is recommended when it needs fewer GPUs than the aggregated fleet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuplan.physics.kv_cache import kv_bytes_per_token, mean_cached_tokens
from gpuplan.core.contract import DisaggregationComparison
from gpuplan.physics.queueing import wait_s
from gpuplan.serving.capacity import Demand
from gpuplan.serving.model import Replica


@dataclass(frozen=True)
class Pool:
    replica: Replica
    rate: float
    replicas: int

    @property
    def gpus(self) -> int:
        return self.replicas * self.replica.layout.gpus


def kv_transfer_s(replica: Replica, prompt: int) -> float:
    """Seconds to ship one prompt's KV cache out of a prefill replica (all its GPUs in parallel)."""
    links = replica.links
    tier = links.network.scaleout or links.pcie
    size = prompt * kv_bytes_per_token(replica.arch, replica.kv_dtype)
    return size / (tier.bandwidth_bytes_per_s * replica.layout.gpus) + tier.latency_s


def prefill_rate(replica: Replica, demand: Demand) -> float:
    """Highest request rate of a prefill-only replica within the TTFT target (0 if none, and 0
    when the weights leave no room for one prompt's KV cache: the layout does not fit)."""
    if replica.max_sequences(demand.prompt_tokens) < 1:
        return 0.0
    latency = replica.prefill_step(1, demand.prompt_tokens).total_s
    service = latency / replica.layout.pp
    fixed = latency + kv_transfer_s(replica, demand.prompt_tokens)
    k = replica.k.queueing

    def ttft(lam: float) -> float:
        return wait_s(lam, service, demand.percentile, k.prefill_service_scv) + fixed

    if fixed > demand.ttft_s:
        return 0.0
    hi = k.max_utilisation / service
    if ttft(hi) <= demand.ttft_s:
        return hi
    return _largest_within(ttft, demand.ttft_s, 0.0, hi, steps=50)


def decode_rate(replica: Replica, demand: Demand) -> float:
    """Highest request rate of a decode-only replica within the TPOT target and KV capacity."""
    n = demand.decode_steps
    if n == 0:
        return math.inf
    cap = replica.max_sequences(demand.prompt_tokens + demand.output_tokens)
    if cap < 1:
        return 0.0
    ctx = mean_cached_tokens(demand.prompt_tokens, demand.output_tokens, replica.arch.sliding_window)

    def t0(c: float) -> float:
        micro = min(replica.layout.pp, max(c, 1.0))
        return replica.decode_step(max(c, 1.0) / micro, ctx).total_s

    if t0(1.0) > demand.tpot_s:
        return 0.0
    hi = float(cap)
    if t0(hi) > demand.tpot_s:
        hi = _largest_within(t0, demand.tpot_s, 1.0, hi, steps=40)
    return hi / (n * t0(hi))


def _largest_within(f: Callable[[float], float], target: float, lo: float, hi: float, *, steps: int) -> float:
    """Bisection for the largest x in [lo, hi] with f(x) <= target, f increasing and f(lo) <= target."""
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo


def best_pool(replicas: list[Replica], rate_of, qps: float) -> Pool | None:
    pools = []
    for rep in replicas:
        rate = rate_of(rep)
        if rate <= 0:
            continue
        count = 0 if math.isinf(rate) else math.ceil(qps / rate - 1e-9)
        pools.append(Pool(rep, rate, count))
    if not pools:
        return None
    return min(pools, key=lambda p: (p.gpus, p.replica.layout.gpus, p.replica.layout.tp))


def compare(replicas: list[Replica], demand: Demand, qps: float,
            aggregated_gpus: int) -> DisaggregationComparison | None:
    """Size both pools over the candidate replicas of one GPU; None when a pool cannot meet its target."""
    if not replicas:
        return None
    pre = best_pool(replicas, lambda r: prefill_rate(r, demand), qps)
    dec = best_pool(replicas, lambda r: decode_rate(r, demand), qps)
    kv_gbit = qps * demand.prompt_tokens * kv_bytes_per_token(replicas[0].arch, replicas[0].kv_dtype) * 8 / 1e9
    if pre is None or dec is None:
        missing = "prefill" if pre is None else "decode"
        return DisaggregationComparison(
            prefill_gpus=pre.gpus if pre else 0, decode_gpus=dec.gpus if dec else 0, total_gpus=0,
            aggregated_gpus=aggregated_gpus, kv_transfer_gbit_per_s=kv_gbit, recommended=False,
            reason=f"no {missing} pool layout meets its target on this GPU")
    total = pre.gpus + dec.gpus
    recommended = total < aggregated_gpus
    pl, dl = pre.replica.layout, dec.replica.layout
    detail = (f"prefill {pre.replicas} x TP{pl.tp}" + (f"xPP{pl.pp}" if pl.pp > 1 else "")
              + f" ({pre.rate:.2f} req/s each) + decode {dec.replicas} x TP{dl.tp}"
              + (f"xPP{dl.pp}" if dl.pp > 1 else "") + f" ({dec.rate:.2f} req/s each) = {total} GPUs"
              + f" against {aggregated_gpus} aggregated (without spares); KV transfer {kv_gbit:.1f} Gbit/s")
    verdict = "fewer GPUs: worth evaluating" if recommended else "no fewer GPUs: stay aggregated"
    return DisaggregationComparison(prefill_gpus=pre.gpus, decode_gpus=dec.gpus, total_gpus=total,
                                    aggregated_gpus=aggregated_gpus, kv_transfer_gbit_per_s=kv_gbit,
                                    recommended=recommended, reason=f"{detail}: {verdict}")
