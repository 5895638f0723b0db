"""Throughput of one replica run offline: a fixed batch to completion (static batching), and the
largest batch its cache holds, continuously refilled (the steady state of
:mod:`gpuplan.serving.capacity` at full load). Split out of :mod:`gpuplan.serving.capacity`,
which re-exports both."""

from __future__ import annotations

from gpuplan.serving.model import Replica
from gpuplan.serving.static_mixed import static_batch_chunked_s


def static_batch_tokens_per_s(replica: Replica, batch: int, prompt: int, output: int) -> float:
    """Output tokens/s of one replica running a fixed batch to completion (static batching).

    ``batch * output / (t_prefill(batch prompts) + (output - 1) * t0(batch))``, the decode step
    taken at the mean cached length ``prompt + (output - 1) / 2``. An engine whose static runs go
    through its chunked-prefill scheduler runs it as gpuplan.serving.static_mixed describes."""
    eng = replica.engine
    if (eng is not None and eng.features.static_batch_scheduled and eng.features.scheduling == "mixed"
            and replica.layout.pp == 1):
        return batch * output / static_batch_chunked_s(replica, batch, prompt, output, eng.features.max_step_tokens)
    mean_ctx = replica.decode_context(prompt, output)
    micro = min(replica.layout.pp, batch)
    t0 = replica.decode_step(batch / micro, mean_ctx).total_s
    total = replica.prefill_s(batch, prompt) + max(output - 1, 0) * t0
    return batch * output / total


def offline_tokens_per_s(replica: Replica, prompt: int, output: int,
                         batch: int | None = None) -> tuple[float, int]:
    """Offline maximum throughput: the largest batch whose full-length cache fits (or ``batch``),
    continuously refilled, prefill amortised over the output (``lam * output`` at that concurrency).

    Returns (output tokens/s, batch)."""
    if batch is None:
        batch = replica.max_sequences(prompt + output)
    if batch < 1:
        return 0.0, 0
    mean_ctx = replica.decode_context(prompt, output)
    micro = min(replica.layout.pp, batch)
    t0 = replica.decode_step(batch / micro, mean_ctx).total_s
    per_request_prefill = replica.prefill_s(batch, prompt) / batch / replica.layout.pp
    n = max(output - 1, 0)
    rate = batch / (n * t0 + batch * per_request_prefill)
    return rate * output, batch
