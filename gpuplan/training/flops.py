"""Training FLOPs: model FLOPs per token, recompute FLOPs, and the total for a token budget.

Narayanan et al. 2021 (arXiv:2104.04473) appendix: with full recompute an iteration of B
sequences costs 96 B s L h^2 (1 + s/(6h) + V/(16 L h)); without it (model FLOPs)
72 B s L h^2 (1 + s/(6h) + V/(12 L h)). Per token that is

    3 x [2 x (matmul weights) + L x 4 s h]        (forward + backward = 3 forward passes)

which generalises directly (Megatron-LM ``num_floating_point_operations``): the matmul weights
are the *active* ones (GQA's smaller K/V projections, SwiGLU's three matrices, MoE's routed
``active_experts`` plus shared experts and the router, MLA's low-rank projections, the LM head),
and the attention-core term is 2 s a (d_qk + d_v) per layer (QK^T and AV), which is 4 s h for
multi-head attention. Megatron's convention counts the full s x s score matrix (``s/h``, not
``s/(2h)`` for the causal half); Megatron-LM 2021-2022, BLOOM and FSDP stacks (torchtitan,
llm-foundry) publish TFLOP/s with it. Megatron-Core / NeMo count the causal half: the model
TFLOP/s of a plan or case follow its framework's ``flop_convention`` (training.toml).
"""

from __future__ import annotations

from gpuplan.model.arch import Architecture


def attention_dims(arch: Architecture) -> tuple[int, int]:
    """(d_qk, d_v): per-head width of queries/keys and of values (MLA adds the RoPE part)."""
    d_qk = arch.head_dim + (arch.rope_head_dim if arch.is_mla else 0)
    d_v = arch.v_head_dim or arch.head_dim
    return d_qk, d_v


def attended_keys(arch: Architecture, seq: int) -> int:
    """Keys each query attends to in the model-FLOP count: the sequence, or a sliding window."""
    return min(seq, arch.sliding_window) if arch.sliding_window else seq


def attention_core_flops_per_token(arch: Architecture, seq: int) -> float:
    """Forward FLOPs of QK^T and AV for one token in one layer: 2 s a (d_qk + d_v) (= 4 s h MHA)."""
    d_qk, d_v = attention_dims(arch)
    return 2.0 * attended_keys(arch, seq) * arch.heads * (d_qk + d_v)


def lm_head_matmul_params(arch: Architecture) -> int:
    """Weights of the output projection (the tied embedding when embeddings are tied)."""
    return arch.vocab * arch.hidden


def transformer_matmul_params(arch: Architecture) -> int:
    """Active matmul weights of the transformer blocks (no LM head, no embedding lookup)."""
    return arch.active_matmul_params - lm_head_matmul_params(arch)


def mtp_matmul_params(arch: Architecture) -> int:
    """Matmul weights per token of one multi-token-prediction module: a transformer block of the
    last layer's kind, the 2h x h projection of [h; embedding] and the output head again
    (DeepSeek-V3, arXiv:2412.19437 section 2.2; Megatron-Bridge flop_utils counts the same)."""
    mlp = arch.moe_mlp_active_params if arch.is_moe else arch.dense_mlp_params
    return arch.attention_params_per_layer + mlp + 2 * arch.hidden * arch.hidden + lm_head_matmul_params(arch)


def forward_flops_per_token(arch: Architecture, seq: int) -> float:
    """Forward FLOPs per token: 2 x active matmul weights + attention core, LM head included,
    and the multi-token-prediction modules the model trains with."""
    layers = arch.layers + arch.mtp_layers
    return (2.0 * (arch.active_matmul_params + arch.mtp_layers * mtp_matmul_params(arch))
            + layers * attention_core_flops_per_token(arch, seq))


def model_flops_per_token(arch: Architecture, seq: int, causal: bool = False) -> float:
    """Model FLOPs per trained token (forward + backward, no recompute): 3 x forward.

    Equals 72 L h^2 (1 + s/(6h) + V/(12 L h)) for a GPT model (Narayanan 2021, appendix): the
    full score matrix. ``causal`` counts only the causal half of a full-sequence score matrix,
    the convention of Megatron-Core / NeMo (Megatron-Bridge training/utils/flop_utils.py:
    ``seq_len / 2`` in the attention term); a sliding window is counted whole either way.
    """
    total = 3.0 * forward_flops_per_token(arch, seq)
    if causal and attended_keys(arch, seq) >= seq:
        total -= 1.5 * (arch.layers + arch.mtp_layers) * attention_core_flops_per_token(arch, seq)
    return total


def recompute_flops_per_token(arch: Architecture, seq: int, recompute: str) -> float:
    """Extra forward FLOPs per token spent recomputing activations in the backward pass.

    full: the forward of every transformer layer again (not the LM head), giving Narayanan's
    96 x (1 + s/(6h) + V/(16 L h)); selective: the attention core only (Korthikanti et al.
    2022, arXiv:2205.05198, section 5); none: 0.
    """
    if recompute == "full":
        return 2.0 * transformer_matmul_params(arch) + arch.layers * attention_core_flops_per_token(arch, seq)
    if recompute == "selective":
        return arch.layers * attention_core_flops_per_token(arch, seq)
    return 0.0


def hardware_flops_per_token(arch: Architecture, seq: int, recompute: str, fraction: float = 1.0) -> float:
    """FLOPs the hardware executes per token in Megatron's accounting (model + recompute);
    ``fraction`` of the layers is recomputed (Megatron-LM --recompute-num-layers)."""
    return model_flops_per_token(arch, seq) + fraction * recompute_flops_per_token(arch, seq, recompute)


def training_flops(arch: Architecture, tokens: float, seq: int, causal: bool = False) -> float:
    """Total model FLOPs of training on ``tokens`` tokens at sequence length ``seq`` (``causal``:
    see :func:`model_flops_per_token`)."""
    return tokens * model_flops_per_token(arch, seq, causal)
