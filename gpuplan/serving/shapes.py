"""Shapes of one forward step that do not depend on the GPU: causal attention pairs, attention
FLOPs per (query, key) pair, activation traffic per token, routed experts a step touches.

Split out of :mod:`gpuplan.serving.model` (which re-exports them); formulas and sources in
docs/serving-model.md.
"""

from __future__ import annotations

from gpuplan.model.arch import Architecture


def expected_experts_touched(experts: int, active: int, tokens: float) -> float:
    """Distinct routed experts a step of ``tokens`` tokens touches in one MoE layer.

    With uniform top-k routing each expert is missed by one token with probability ``1 - k/E``,
    so ``E * (1 - (1 - k/E)^tokens)`` experts are touched (active experts at batch 1, all of
    them at large batch; aiconfigurator caps the same read with ``min(E, tokens * k)``).
    """
    if experts <= 0:
        return 0.0
    return experts * (1.0 - (1.0 - active / experts) ** max(tokens, 0.0))


def causal_pairs(prompt: int, window: int = 0) -> float:
    """(query, key) pairs of causal attention over ``prompt`` tokens: ``sum_i min(i, window)``."""
    if not window or prompt <= window:
        return prompt * (prompt + 1) / 2
    return window * (window + 1) / 2 + (prompt - window) * window


def attention_flops_per_pair(arch: Architecture, absorbed: bool) -> float:
    """FLOPs of one (query, key) pair in one layer, all heads: QK^T plus AV.

    MHA/GQA: ``4 * heads * head_dim``. MLA prefill (decompressed K, V): ``2 * heads * (head_dim +
    rope_head_dim + v_head_dim)``. MLA decode with the up-projections absorbed into the query and
    output (DeepSeek-V2 section 2.1.2): ``2 * heads * (2 * kv_lora_rank + rope_head_dim)``.
    """
    if not arch.is_mla:
        return 4.0 * arch.heads * arch.head_dim
    if absorbed:
        return 2.0 * arch.heads * (2 * arch.kv_lora_rank + arch.rope_head_dim)
    v = arch.v_head_dim or arch.head_dim
    return 2.0 * arch.heads * (arch.head_dim + arch.rope_head_dim + v)


def activation_elements_per_token(arch: Architecture, tp: int) -> float:
    """Activation elements one token reads and writes in DRAM per step, all layers, one TP rank.

    GEMM inputs and outputs (QKV in/out, attention out, O-proj in/out, MLP up in/out, gated
    activation in/out, down in/out) and two fused residual-add + norm passes; the tensors that TP
    splits count ``1/tp``. LLM-Viewer (model_analyzer.py) counts the same load_act/store_act.
    A routed-expert block's own traffic is part of the fused MoE module's measured cost
    (serving/moe.py); only its shared experts count here.
    """
    h = arch.hidden
    if arch.is_mla:
        qkv_out = (arch.heads * (arch.head_dim + arch.rope_head_dim)) / tp + arch.kv_lora_rank + arch.rope_head_dim
        attn_out = arch.heads * (arch.v_head_dim or arch.head_dim) / tp
    else:
        qkv_out = (arch.heads + 2 * arch.kv_heads) * arch.head_dim / tp
        attn_out = arch.heads * arch.head_dim / tp
    gate = 2 if arch.gated_mlp else 1

    def mlp(width: float) -> float:
        return h + gate * width / tp + (gate + 1) * width / tp + width / tp + h

    dense = mlp(arch.ffn)
    moe = mlp(arch.shared_experts * arch.expert_ffn) if arch.is_moe and arch.shared_experts else 0.0
    attention = h + qkv_out + 2 * attn_out + h
    norms = 2 * 3 * h
    return (arch.layers * (attention + norms) + arch.dense_layer_count * dense + arch.moe_layers * moe)


def elementwise_elements_per_token(arch: Architecture, tp: int) -> float:
    """Of :func:`activation_elements_per_token`, the elements that kernels other than the GEMMs
    read and write: the attention kernel's output, the two residual-add + norm passes and the gated
    activation (``(gate + 1) x ffn / tp``). The rest are the GEMMs' own operands, which a GEMM
    streams while it multiplies; these are separate kernels, whose traffic adds to the step."""
    h = arch.hidden
    attn_out = arch.heads * (arch.v_head_dim or arch.head_dim) / tp
    gate = 2 if arch.gated_mlp else 1
    dense = (gate + 1) * arch.ffn / tp
    moe = (gate + 1) * arch.shared_experts * arch.expert_ffn / tp if arch.is_moe and arch.shared_experts else 0.0
    return arch.layers * (attn_out + 2 * 3 * h) + arch.dense_layer_count * dense + arch.moe_layers * moe


def gemm_input_elements_per_token(arch: Architecture, tp: int) -> float:
    """Activation elements entering the GEMMs of one token, all layers, one TP rank: QKV and MLP
    inputs (hidden each), the output projection's input and the down projection's input (TP
    splits the last two). An unfused fp8 quantise kernel reads each in 16 bit and writes it in 8."""
    h = arch.hidden
    attn_out = arch.heads * (arch.v_head_dim or arch.head_dim) / tp
    dense = arch.ffn / tp
    moe = (arch.active_experts + arch.shared_experts) * arch.expert_ffn / tp if arch.is_moe else 0.0
    return (arch.layers * (2 * h + attn_out) + arch.dense_layer_count * dense + arch.moe_layers * moe)
