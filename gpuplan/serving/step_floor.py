"""A lower bound of a replica's decode step (:func:`gpuplan.serving.step.replica_step`) from four
constants, for the searches that only ask whether a step exceeds the TPOT target.

A step of ``b`` decode sequences (per micro-batch) and ``tokens >= b`` tokens through the GEMMs
lasts at least ``F + b K + max(S, tokens G)``:

* ``F``, the per-step fixed latency (``Replica._per_step``): the step only adds to it (the host's
  launch time and per-request work, each added where positive);
* ``b K``, the decode attention's KV read, ``b / dp x context x KV bytes per token x read factor``
  over the attention bandwidth (its roofline takes the larger of that and its math, and the decode
  op's latency and any prefill attention only add);
* the GEMMs: each group's smooth roofline is at least the larger of its stream and its math
  (``hi (1 + (lo / hi)^k)^(1/k) >= hi``), so the GEMMs take at least the whole step's stream,
  whose weights part is ``S`` (the fixed weights at the weight stream factor; touched experts
  only add), and at least the dense layers' math, ``tokens / dp`` tokens at ``G`` seconds each;
* the collectives are not negative.

A budget-filled mixed step (serving/mixed.py) is a ``share`` of steps carrying ``piece`` prompt
tokens and the rest decoding alone, ``share x piece`` = the prompt tokens ``p`` that arrive per step;
since ``max`` is convex, the mean of the two bounds is at least ``F + b K + max(S, (b + p) G)``.
A caller compares with a margin of 1e-9 for the round-off of the step's own sums.
"""

from __future__ import annotations

from typing import Any


def floor_terms(replica: Any, mean_context: float) -> tuple[float, float, float, float]:
    """``(F, S, K, G)`` of the module docstring for ``replica`` (a
    :class:`~gpuplan.serving.model.Replica`) at ``mean_context`` cached tokens per sequence."""
    r = replica
    window = r.arch.sliding_window
    ctx = (window if window < mean_context else mean_context) if window else mean_context
    fixed, _, read_factor = r._per_step[:3]
    quantised = r.quantised_stream_bytes
    stream = (r.fixed_stream_bytes - quantised + quantised / r.weight_stream_factor) / r.bandwidth
    dp = r.layout.dp
    return (fixed, stream, ctx * r.kv_bytes_per_token * read_factor / (dp * r.attention_bandwidth),
            r.gemm_flops_per_token / (dp * r.matmul_flops_per_s))


def step_floor(terms: tuple[float, float, float, float], batch: float, tokens: float) -> float:
    """``F + b K + max(S, tokens G)``: at most the step of ``batch`` decode sequences with ``tokens``
    tokens through the GEMMs (module docstring), before round-off."""
    fixed, stream, kv, gemm = terms
    math_s = tokens * gemm
    return fixed + batch * kv + (stream if stream > math_s else math_s)
