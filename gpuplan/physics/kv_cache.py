"""KV-cache sizing: bytes per token, per GPU, per sequence, and how many sequences fit.

Formulas (docs/serving-model.md, section "KV cache"):

* MHA / GQA: ``2 * layers * kv_heads * head_dim * bytes`` per token (K and V of every layer).
  On one GPU of a tensor-parallel group the KV heads are split, ``ceil(kv_heads / tp)`` each;
  when TP exceeds the KV heads each GPU keeps a replica of the head it needs (vLLM, TRT-LLM and
  aiconfigurator ``models/base.py`` all size it this way).
* MLA (DeepSeek-V2/V3, arXiv:2405.04434 section 2.1): the cache holds the compressed latent and
  the decoupled RoPE key, ``layers * (kv_lora_rank + rope_head_dim) * bytes`` per token. It has no
  head dimension, so tensor parallelism does not split it: every TP rank holds the whole latent.
* Pipeline parallelism splits layers: a stage holds ``ceil(layers / pp)`` layers' cache.
* Sliding-window attention (Mistral 7B, arXiv:2310.06825) keeps at most ``window`` tokens.

Pure functions of the architecture; no hardware figures here.
"""

from __future__ import annotations

import math

from gpuplan.core.units import DTYPE_BYTES, dtype_bytes  # noqa: F401  (re-exported)
from gpuplan.model.arch import Architecture
from gpuplan.physics.pipeline import layers_per_stage

def kv_bytes_per_token(arch: Architecture, kv_dtype: str) -> float:
    """KV-cache bytes one token adds to the whole model (all layers, all heads)."""
    return arch.kv_elements_per_token() * dtype_bytes(kv_dtype)


def kv_heads_per_gpu(arch: Architecture, tp: int) -> int:
    """KV heads one TP rank holds: ``ceil(kv_heads / tp)``, at least one (replicated past kv_heads)."""
    return max(1, math.ceil(arch.kv_heads / max(tp, 1)))


def kv_bytes_per_token_per_gpu(arch: Architecture, kv_dtype: str, tp: int = 1, pp: int = 1) -> float:
    """KV bytes per token on one GPU of a ``tp`` x ``pp`` replica (the largest stage).

    MLA: ``L_stage * (kv_lora_rank + rope_head_dim) * b`` (not split by TP).
    MHA/GQA: ``2 * L_stage * ceil(kv_heads / tp) * head_dim * b``.
    """
    b = dtype_bytes(kv_dtype)
    layers = layers_per_stage(arch.layers, pp)
    if arch.is_mla:
        return layers * (arch.kv_lora_rank + arch.rope_head_dim) * b
    return 2 * layers * kv_heads_per_gpu(arch, tp) * arch.head_dim * b


def cached_tokens(context: float, sliding_window: int = 0) -> float:
    """Tokens held in the cache for a sequence of ``context`` tokens: ``min(context, window)``."""
    return min(context, sliding_window) if sliding_window else context


def mean_cached_tokens(prompt: int, output: int, sliding_window: int = 0) -> float:
    """Mean cached tokens over the decode steps of one request.

    Decode step ``i`` (``i = 0 .. output-1``) attends over ``prompt + i`` tokens, capped by the
    window: the mean of ``min(prompt + i, window)``. Without a window: ``prompt + (output-1)/2``.
    """
    n = max(output, 1)
    if not sliding_window or prompt + n - 1 <= sliding_window:
        return prompt + (n - 1) / 2
    if prompt >= sliding_window:
        return float(sliding_window)
    below = sliding_window - prompt  # steps i = 0 .. below-1 see prompt + i < window
    total = below * prompt + below * (below - 1) / 2 + (n - below) * sliding_window
    return total / n


def held_tokens(prompt: int, output: int, block_tokens: int, on_demand: bool, sliding_window: int = 0) -> float:
    """Cache tokens one sequence holds, averaged over its life, in a paged KV cache.

    * Reserved admission (TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler; a contiguous cache
      at ``block_tokens = 0``): the blocks of the whole ``prompt + output`` are taken at admission,
      ``ceil((P + O) / b) b``.
    * On-demand paged allocation (vLLM PagedAttention, Kwon et al. 2023 section 4.2; SGLang's
      token pool): blocks are taken as tokens arrive, so a sequence ``i`` steps into its decode
      holds ``P + i`` tokens plus the unused part of its last block. Sequences at every stage of
      their life share the cache, so the batch is limited by the mean
      (:func:`mean_cached_tokens`) plus half a block of waste on average, ``(b - 1) / 2``.
    Sliding windows cap what is held either way (blocks outside the window are freed)."""
    b = max(block_tokens, 1)
    if not on_demand:
        full = prompt + output
        return cached_tokens(math.ceil(full / b) * b, sliding_window)
    return mean_cached_tokens(prompt, output, sliding_window) + (b - 1) / 2


def kv_bytes_per_sequence_per_gpu(arch: Architecture, kv_dtype: str, context: float, tp: int = 1,
                                  pp: int = 1) -> float:
    """KV bytes one sequence of ``context`` tokens occupies on one GPU."""
    return cached_tokens(context, arch.sliding_window) * kv_bytes_per_token_per_gpu(arch, kv_dtype, tp, pp)


def max_sequences(kv_budget_bytes: float, bytes_per_sequence: float) -> int:
    """Concurrent sequences whose full-length cache fits the budget: ``floor(budget / per_seq)``."""
    if bytes_per_sequence <= 0:
        raise ValueError("bytes_per_sequence must be positive")
    return max(0, math.floor(kv_budget_bytes / bytes_per_sequence))
