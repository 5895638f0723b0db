"""Disaggregated prefill and decode workers: what one worker of each role sustains within its target.

DistServe (Zhong et al., OSDI 2024) and Splitwise (Patel et al., ISCA 2024) run prompts and decode
steps on separate workers and ship each request's KV cache from the one to the other (Mooncake,
NVIDIA Dynamo with NIXL, vLLM and SGLang PD disaggregation do the same in production):

* a **prefill worker** is an M/G/1 server of service ``s = t_pf / pp`` (one prompt of ``P`` tokens;
  a pipeline accepts one every ``t_pf / pp``). DistServe section 3.1 models it as M/D/1,
  ``TTFT = D + R D^2 / (2 (1 - R D))``; here the wait is the shared queue of
  :mod:`gpuplan.physics.queueing` at the profile's percentile. Its highest rate keeps
  ``W_q(lam) + t_pf + t_kv + r <= TTFT target`` and ``lam s <= max_utilisation``;
* ``t_kv = bytes / B + alpha`` ships the prompt's KV cache, ``bytes = P x KV bytes per token``
  (:func:`gpuplan.physics.kv_cache.kv_bytes_per_token`), over the link between the two workers
  (:class:`KvLink`); the send is asynchronous (layer by layer in Mooncake and NIXL), so it adds to the
  first token's latency, not to the prefill worker's service time; ``r`` is the decode worker's step
  in flight when the cache arrives (its whole step at a percentile, half of it for the mean);
* a **decode worker** runs no prefill: ``TPOT = t0(C)`` and, by Little's law, ``lam = C / (n t0(C))``
  with ``n = output - 1`` decode steps, ``C`` up to the KV capacity of full-length sequences.

Sizing the two pools from these rates, their pairing and their cost is :mod:`gpuplan.serving.disagg_search`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from gpuplan.core.records import cached_property, constructor, dataclass

from gpuplan.physics.kv_cache import kv_bytes_per_token
from gpuplan.physics.queueing import wait_s
from gpuplan.serving.capacity import Demand
from gpuplan.serving.model import Replica, StepTime
from gpuplan.serving.step_floor import decode_limits

#: Bisection steps of the rate and concurrency searches (2^-50 of the bracket).
BISECTIONS = 50


@dataclass(frozen=True)
class KvLink:
    """The path a request's KV cache takes from a prefill worker to a decode worker."""

    #: "scale-out" (the NICs between servers), "scale-up" (NVLink/XGMI inside one domain) or
    #: "pcie" (inside one server without a GPU-to-GPU link).
    kind: str
    #: Bytes/s between one prefill and one decode worker: every GPU of each sends or receives its
    #: shard in parallel, so the slower side's GPUs x their per-GPU rate.
    bytes_per_s: float
    latency_s: float

    def seconds(self, size_bytes: float) -> float:
        return size_bytes / self.bytes_per_s + self.latency_s if size_bytes > 0 else 0.0


#: ``KvLink(...)`` with its fields set at once (:func:`~gpuplan.core.records.constructor`): the
#: disaggregation search pairs hundreds of workers.
_link = constructor(KvLink)


def request_kv_bytes(replica: Replica, prompt: int) -> float:
    """Bytes of one request's KV cache after prefill: ``prompt x KV bytes per token`` (every layer)."""
    return prompt * kv_bytes_per_token(replica.arch, replica.kv_dtype)


def scaleout_link(pre: Replica, dec: Replica) -> KvLink | None:
    """KV over the scale-out NICs (each GPU's reference NIC from the catalog); None when either
    server has none (its workers can only pair inside one server)."""
    a, b = pre.links.network.scaleout, dec.links.network.scaleout
    if a is None or b is None:
        return None
    bw = min(pre.layout.gpus * a.bandwidth_bytes_per_s, dec.layout.gpus * b.bandwidth_bytes_per_s)
    return _link("scale-out", bw, max(a.latency_s, b.latency_s))


def domain_link(pre: Replica, dec: Replica, span: int) -> KvLink | None:
    """KV inside one scale-up domain or server holding ``span`` GPUs (the group of both workers);
    None unless both run on the same GPU type and the group fits the domain or server."""
    # The same catalog record first (the disaggregation search pairs each GPU with its own): no
    # reads of the ids, which are equal whenever the records are one.
    if (pre.gpu is not dec.gpu and pre.gpu.id != dec.gpu.id) or span > pre.links.local_domain:
        return None
    tier = pre.links.tier(span)
    if tier is None:
        return None
    kind = "scale-up" if span <= pre.links.scaleup_domain and pre.links.scaleup_domain > 1 else "pcie"
    return _link(kind, min(pre.layout.gpus, dec.layout.gpus) * tier.bandwidth_bytes_per_s, tier.latency_s)


@dataclass(frozen=True)
class PrefillWorker:
    """One prefill layout: its prompt's latency and service time (the link comes with the pairing)."""

    replica: Replica
    prompt: int
    latency_s: float
    service_s: float

    @cached_property
    def scv(self) -> float:
        """The prefill service's squared coefficient of variation, read once (a rate's bisection
        asks 50 times)."""
        return self.replica.k.queueing.prefill_service_scv

    def ttft_s(self, lam: float, demand: Demand, extra_s: float, stat: str | None = None) -> float:
        """TTFT at ``lam`` requests/s: the wait at ``stat`` (default: the profile's percentile) +
        prefill + ``extra_s`` (KV transfer and the decode step in flight)."""
        wait = wait_s(lam, self.service_s, stat or demand.percentile, self.scv)
        return wait + self.latency_s + extra_s

    def rate(self, demand: Demand, extra_s: float) -> float:
        """Highest request rate within the TTFT target and the utilisation ceiling (0: none)."""
        if self.latency_s + extra_s > demand.ttft_s:
            return 0.0
        hi = self.replica.k.queueing.max_utilisation / self.service_s
        if self.ttft_s(hi, demand, extra_s) <= demand.ttft_s:
            return hi
        lo = 0.0
        for _ in range(BISECTIONS):
            mid = 0.5 * (lo + hi)
            if self.ttft_s(mid, demand, extra_s) <= demand.ttft_s:
                lo = mid
            else:
                hi = mid
        return lo


def prefill_worker(replica: Replica, demand: Demand, latency: float | None = None) -> PrefillWorker | None:
    """The prefill worker of ``replica``; None when the longest prompt's cache does not fit beside
    the weights, or a step is not finite (a replica spanning servers without a fabric).
    ``latency``: the prefill step of one prompt, where already computed (ReplicaCapacity's)."""
    longest = max(demand.prompt_tokens, demand.context_tokens - demand.output_tokens)
    if replica.max_sequences(longest) < 1:
        return None
    if latency is None:
        latency = replica.prefill_step(1, demand.prompt_tokens).total_s
    if not math.isfinite(latency) or latency <= 0:
        return None
    return PrefillWorker(replica, demand.prompt_tokens, latency, latency / replica.layout.pp)


@dataclass(frozen=True)
class DecodeWorker:
    """One decode layout: its ceiling (rate, concurrency, step) within the TPOT target and its KV capacity."""

    replica: Replica
    rate: float
    concurrency: float
    step_s: float
    mean_context: float

    def step(self, concurrency: float) -> StepTime:
        """A decode step at concurrency ``C`` (``pp`` micro-batches in flight, ``C / pp`` each)."""
        c = max(concurrency, 1.0)
        micro = min(self.replica.layout.pp, c)
        return self.replica.decode_step(c / micro, self.mean_context)

    def step_at(self, concurrency: float) -> float:
        """``t0(C)``: the time of :meth:`step`."""
        return _step_s(self.replica.step, self.replica.layout.pp, self.mean_context, concurrency)

    def point(self, lam: float, steps: int) -> tuple[float, float]:
        """(concurrency, TPOT) carrying ``lam`` requests/s: ``C = lam n t0(C)``, by bisection."""
        if lam >= self.rate:
            return self.concurrency, self.step_s
        lo, hi = 0.0, self.concurrency
        for _ in range(BISECTIONS):
            mid = 0.5 * (lo + hi)
            if mid / (steps * self.step_at(mid)) < lam:
                lo = mid
            else:
                hi = mid
        return hi, self.step_at(hi)

    def residual_s(self, stat: str) -> float:
        """The decode step in flight when a cache arrives: half a step on average, a whole one at a percentile."""
        return self.step_s / 2 if stat == "mean" else self.step_s


def _step_s(step: Callable[[float, float], StepTime], pp: int, mean_context: float, concurrency: float) -> float:
    """``t0(C)``, the time of :meth:`DecodeWorker.step` from the replica's ``step`` and PP depth
    (``max``/``min`` as conditionals: :func:`decode_worker` asks ~50 of each worker)."""
    c = 1.0 if 1.0 > concurrency else concurrency
    b = c / (c if c < pp else pp)
    st = step(1.0 if 1.0 > b else b, mean_context)
    return st.gemm_s + st.attention_s + st.comm_s + st.fixed_s


def decode_worker(replica: Replica, demand: Demand) -> DecodeWorker | None:
    """The decode worker of ``replica`` at its highest rate within the TPOT target; None when even
    one sequence misses the target or the longest sequence's cache does not fit."""
    limits = decode_limits(replica, demand)
    if limits is None or replica.max_sequences(max(demand.prompt_tokens + demand.output_tokens,
                                                   demand.context_tokens)) < 1:
        return None
    n, cap, ctx = limits
    decode, pp = replica.step, replica.layout.pp
    step = _step_s(decode, pp, ctx, 1.0)  # each step time is computed once and kept (the bisection's end is one it saw)
    if not math.isfinite(step) or step > demand.tpot_s:
        return None
    lo, hi = 1.0, float(cap)
    top = _step_s(decode, pp, ctx, hi)
    if top > demand.tpot_s:
        for _ in range(BISECTIONS):
            mid = 0.5 * (lo + hi)
            t = _step_s(decode, pp, ctx, mid)
            if t <= demand.tpot_s:
                lo, step = mid, t
            else:
                hi = mid
        hi = lo
    else:
        step = top
    return DecodeWorker(replica, hi / (n * step), hi, step, ctx)


def decode_rate_bound(replica: Replica, demand: Demand) -> float:
    """An upper bound of :func:`decode_worker`'s rate without its bisection (``inf`` for a worker
    that cannot be), for the search's cost bounds (serving/disagg_search.py).

    A decode step of ``C`` sequences lasts at least its fixed latency plus its GEMMs' weight stream
    (``F``: a GEMM group takes at least its stream, and the groups' streams add up to the step's,
    of which the weights) plus its KV-cache read, ``C B`` (``B = ctx x KV bytes per token x read
    factor / (dp x attention bandwidth)``): every other part of the step is not negative. The worker keeps its step within the TPOT target, so
    ``C <= (tpot - F) / B`` and ``C`` at most the cache's capacity; its rate ``C / (n t0(C))`` is at
    most ``C / (n (F + C B))``, which grows with ``C``. Margins of 1e-9 and 1e-6 cover the
    round-off of the step's own sums."""
    limits = decode_limits(replica, demand)
    if limits is None:
        return math.inf
    n, cap, mean = limits
    window = replica.arch.sliding_window
    ctx = (window if window < mean else mean) if window else mean
    fixed, _, read_factor = replica._per_step[:3]
    quantised = replica.quantised_stream_bytes
    fixed += (replica.fixed_stream_bytes - quantised + quantised / replica.weight_stream_factor) / replica.bandwidth
    # A pipeline steps C / pp sequences a micro-batch (one sequence below pp, the bound's C = pp).
    per_sequence = (ctx * replica.kv_bytes_per_token * read_factor
                    / (replica.layout.dp * replica.attention_bandwidth) / replica.layout.pp)
    if not (fixed > 0 or per_sequence > 0):
        return math.inf
    top = float(cap)
    if per_sequence > 0:
        top = min(top, (demand.tpot_s / (1 - 1e-9) - fixed) / per_sequence)
    top = max(top, 1.0)
    return top / (n * (fixed + top * per_sequence) * (1 - 1e-9)) * (1 + 1e-6)
