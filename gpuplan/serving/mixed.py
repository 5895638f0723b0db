"""Offline (maximum-load) throughput of one replica under its engine's scheduler.

Two schedules (``scheduling`` of :mod:`gpuplan.serving.engine`):

* ``mixed`` (in-flight batching with chunked prefill: TensorRT-LLM, vLLM V1): in the steady state
  ``B`` sequences decode while new prompts are prefilled in the same steps. With ``n = output - 1``
  decode steps per request, ``r = B / n`` requests finish, and start, per step, so a step carries
  ``B`` decode tokens and ``r * prompt`` prefill tokens (trtllm-bench sizes ``max_num_tokens`` as
  ``B * (1 + ISL/OSL)`` for exactly this step, bench/build/tuning.py). The step streams the
  weights once for both; output tokens/s ``= r * output / t_step``.
* ``prefill_first`` (prefills pause the decode batch): ``lam = B / (n * t0 + B * s_pf)``
  (:func:`gpuplan.serving.capacity.offline_tokens_per_s`).

The batch ``B`` is the smallest of: the sequences the cache holds (whole-length reservation, or
paged on-demand allocation that fills the cache at the mean length over a sequence's life plus
half a block, physics/kv_cache.py ``held_tokens``), the
engine's ``max_batch``, and the step budget ``max_step_tokens / (1 + prompt / n)``.
"""

from __future__ import annotations

import math

from gpuplan.physics.kv_cache import mean_cached_tokens
from gpuplan.serving.model import Replica


def engine_max_sequences(replica: Replica, prompt: int, output: int) -> int:
    """Sequences of ``prompt + output`` tokens the replica's engine keeps in its cache at once
    (:meth:`~gpuplan.serving.model.Replica.admitted_sequences`)."""
    return replica.admitted_sequences(prompt, output)


def offline_batch(replica: Replica, prompt: int, output: int) -> int:
    """The offline batch: cache capacity, capped by the engine's batch and step-token limits."""
    batch = engine_max_sequences(replica, prompt, output)
    eng = replica.engine
    if eng is None or batch < 1:
        return batch
    cap = eng.batch_cap(replica.layout.pp)
    if cap is not None:
        batch = min(batch, cap * replica.layout.dp)
    n = max(output - 1, 1)
    if eng.features.scheduling == "mixed":
        per_step = eng.features.max_step_tokens / (1.0 + prompt / n)
        batch = min(batch, max(1, math.floor(per_step)))
    return batch


def mixed_offline_tokens_per_s(replica: Replica, prompt: int, output: int, batch: int) -> float:
    """Output tokens/s of ``batch`` sequences in steady-state mixed steps (module docstring)."""
    n = max(output - 1, 0)
    if n == 0 or batch < 1:
        return 0.0
    micro = min(replica.layout.pp, batch)
    requests = batch / n
    ctx = mean_cached_tokens(prompt, output, replica.arch.sliding_window)
    # EXPERIMENT: prefill arrives in steps filled to the engine's token budget (chunked prefill, or
    # several whole prompts), not as a uniform share of every step: a share phi = r P / c of the
    # steps carries c = budget - B prompt tokens, the rest decode only.
    eng = replica.engine
    b = batch / micro
    pf = requests / micro * prompt
    budget = eng.features.max_step_tokens if eng is not None else pf + b
    c = max(min(budget - b, pf * 1e9), 1.0)
    phi = min(1.0, pf / c)
    full = replica.step(b, ctx, phi and (pf / phi) / prompt, prompt).total_s
    step = phi * full + (1 - phi) * replica.step(b, ctx).total_s if phi < 1 else full
    return requests * output / step
