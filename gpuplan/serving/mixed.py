"""Offline (maximum-load) throughput of one replica under its engine's scheduler.

Two schedules (``scheduling`` of :mod:`gpuplan.serving.engine`):

* ``mixed`` (in-flight batching with chunked prefill: TensorRT-LLM, vLLM V1): in the steady state
  ``B`` sequences decode while new prompts are prefilled in the same steps. With ``n = output - 1``
  decode steps per request, ``r = B / n`` requests finish, and start, per step, so ``r * prompt``
  prefill tokens arrive per step (trtllm-bench sizes ``max_num_tokens`` as at least
  ``B * (1 + ISL/OSL)`` for them, bench/build/tuning.py). They enter in steps filled up to the
  budget (:func:`budget_share`): a share of the steps carries a prompt, or a chunk of the room
  the decode tokens leave, beside the ``B`` decode tokens and streams the weights once for both;
  the rest stream the weights for the decode tokens alone. Output tokens/s
  ``= r * output / t_mean``, ``t_mean`` the mean step (:func:`budget_filled_step`).
* ``prefill_first`` (prefills pause the decode batch): ``lam = B / (n * t0 + B * s_pf)``
  (:func:`gpuplan.serving.capacity.offline_tokens_per_s`).

The batch ``B`` is the smallest of: the sequences the cache holds (whole-length reservation, or
paged on-demand allocation that fills the cache at the mean length over a sequence's life plus
half a block, physics/kv_cache.py ``held_tokens``), the
engine's ``max_batch``, and the step budget ``max_step_tokens / (1 + prompt / n)``.
"""

from __future__ import annotations

import math

from gpuplan.serving.model import Replica, StepTime
from gpuplan.serving.step import replica_step

_new = tuple.__new__


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


def budget_share(decode_tokens: float, prompt_tokens: float, prompt: int, budget: float) -> tuple[float, float]:
    """Share of the steps that carry prompt tokens, and the prompt tokens each of them carries.

    An engine takes prompt tokens into a step up to its token budget (TensorRT-LLM
    ``max_num_tokens``, which trtllm-bench sets to at least 2,048, bench/build/tuning.py; vLLM
    ``max_num_batched_tokens``; SGLang ``chunked_prefill_size``): a prompt enters whole, or in
    chunks of the room the ``decode_tokens`` leave (``budget - decode_tokens``), rather than
    spread over every step. With ``prompt_tokens`` arriving per step on average, a step that takes
    prompt tokens carries one prompt, or the tokens of the prompts that arrive per step when more
    than one does, at most the room: ``piece = min(room, max(prompt, prompt_tokens))``. A share
    ``prompt_tokens / piece`` of the steps carries ``piece`` prompt tokens, the rest decode alone.
    When the room cannot take more than the tokens that arrive per step (a budget at or below the
    batch included), every step carries its share: ``(1, prompt_tokens)``."""
    if prompt_tokens <= 0.0:
        return 0.0, 0.0
    room = budget - decode_tokens
    piece = min(room, max(float(prompt), prompt_tokens))
    if piece <= prompt_tokens:
        return 1.0, prompt_tokens
    return prompt_tokens / piece, piece


def blend(share: float, a: StepTime, b: StepTime) -> StepTime:
    """The mean of ``share`` steps like ``a`` and ``1 - share`` like ``b``, field by field
    (``share * x + rest * y`` of each of the eleven fields, in order). Written out field by field:
    a capacity search blends ~1,300 steps a plan, and the comprehension over ``zip`` cost ~14k
    instructions a blend against ~4k (benchmarks/README.md, issue 21)."""
    rest = 1.0 - share
    a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10 = b
    return _new(StepTime, (share * a0 + rest * b0, share * a1 + rest * b1, share * a2 + rest * b2,
                           share * a3 + rest * b3, share * a4 + rest * b4, share * a5 + rest * b5,
                           share * a6 + rest * b6, share * a7 + rest * b7, share * a8 + rest * b8,
                           share * a9 + rest * b9, share * a10 + rest * b10))


def budget_filled_step(replica: Replica, batch: float, mean_context: float, requests: float,
                       prompt: int) -> tuple[StepTime, StepTime | None]:
    """The mean step of ``batch`` decode sequences when ``requests`` prompts of ``prompt`` tokens
    start per step and enter in steps filled up to the engine's token budget (:func:`budget_share`),
    and the step of the mix that carries prompt tokens (None when none start). Without an engine
    every step carries its share, as before."""
    eng = replica.engine
    pf = requests * prompt
    if eng is None or pf <= 0.0:
        return replica_step(replica, batch, mean_context, requests, prompt), None
    share, piece = budget_share(batch, pf, prompt, replica.step_budget)
    a = replica_step(replica, batch, mean_context, piece / prompt, prompt)
    if share >= 1.0:
        return a, a
    return blend(share, a, replica_step(replica, batch, mean_context)), a


def mixed_offline_tokens_per_s(replica: Replica, prompt: int, output: int, batch: int) -> float:
    """Output tokens/s of ``batch`` sequences in steady-state mixed steps (module docstring)."""
    n = max(output - 1, 0)
    if n == 0 or batch < 1:
        return 0.0
    micro = min(replica.layout.pp, batch)
    requests = batch / n
    ctx = replica.decode_context(prompt, output)
    step = budget_filled_step(replica, batch / micro, ctx, requests / micro, prompt)[0].total_s
    return requests * output / step
