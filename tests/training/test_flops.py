"""Training FLOPs against Narayanan et al. 2021 (appendix) and the GPT-3 paper."""

from __future__ import annotations

import pytest

from gpuplan.training.flops import (
    attention_core_flops_per_token,
    hardware_flops_per_token,
    model_flops_per_token,
    recompute_flops_per_token,
    training_flops,
)
from gpuplan.training.layout import Layout
from tests.training.conftest import GPT_22B, GPT_175B, arch_of


def test_gpt3_175b_training_flops_within_3_percent():
    # Brown et al. 2020, Table D.1: 3.14e23 FLOPs (3,640 PF-days) for 300B tokens.
    gpt3 = arch_of(layers=96, hidden=12288, heads=96, vocab=50257)
    flops = training_flops(gpt3, 300e9, 2048)
    assert flops == pytest.approx(3.14e23, rel=0.03)
    assert flops == pytest.approx(3.229e23, rel=1e-3)  # 6N plus the attention and logit terms


def test_model_flops_match_narayanan_closed_form():
    # 72 B s L h^2 (1 + s/(6h) + V/(12 L h)) per iteration of B sequences of s tokens.
    a = arch_of(**GPT_22B)
    s, L, h, V = 2048, 48, 6144, 51200
    closed = 72 * L * h**2 * (1 + s / (6 * h) + V / (12 * L * h))
    assert model_flops_per_token(a, s) == pytest.approx(closed, rel=1e-9)


def test_full_recompute_matches_narayanan_96_formula():
    # With activation recomputation: 96 B s L h^2 (1 + s/(6h) + V/(16 L h)).
    a = arch_of(**GPT_22B)
    s, L, h, V = 2048, 48, 6144, 51200
    closed = 96 * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))
    assert hardware_flops_per_token(a, s, "full") == pytest.approx(closed, rel=1e-9)
    assert hardware_flops_per_token(a, s, "none") == model_flops_per_token(a, s)
    # Recomputing half the layers costs half the extra: midway between none and all.
    half = hardware_flops_per_token(a, s, "full", 0.5)
    assert half == pytest.approx((hardware_flops_per_token(a, s, "none") + hardware_flops_per_token(a, s, "full")) / 2)


def test_selective_recompute_repeats_only_the_attention_core():
    a = arch_of(**GPT_22B)
    # Korthikanti 2022 section 5: only QK^T and AV again, Megatron's 4 s h per layer (full s x s):
    # 4 x 2,048 x 6,144 = 50,331,648 FLOPs a token a layer, x 48 layers = 2,415,919,104.
    assert attention_core_flops_per_token(a, 2048) == 50_331_648
    assert recompute_flops_per_token(a, 2048, "selective") == 2_415_919_104
    # ... a small part of what full recompute repeats (the whole forward of the blocks): 5.3 % for 22B.
    assert recompute_flops_per_token(a, 2048, "selective") < 0.06 * recompute_flops_per_token(a, 2048, "full")


def test_gqa_shrinks_only_the_kv_projections():
    mha = arch_of(layers=32, hidden=4096, heads=32, ffn=11008, gated_mlp=True, vocab=32000)
    gqa = arch_of(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=11008, gated_mlp=True, vocab=32000)
    saved = 6 * 32 * 2 * 4096 * (32 - 8) * 128  # 3 passes x 2 FLOPs x K and V weights per layer
    assert model_flops_per_token(mha, 4096) - model_flops_per_token(gqa, 4096) == pytest.approx(saved)
    assert attention_core_flops_per_token(mha, 4096) == attention_core_flops_per_token(gqa, 4096)


def test_moe_counts_active_experts_only(preset):
    mixtral = preset("mixtral-8x7b")
    per_token = model_flops_per_token(mixtral, 4096)
    # About 6 x 12.9B active parameters (2 of 8 experts), far below 6 x 46.7B total.
    assert 6 * 12.5e9 < per_token - 32 * 3 * attention_core_flops_per_token(mixtral, 4096) < 6 * 13.5e9
    assert per_token < 0.35 * 6 * mixtral.total_params


def test_mla_attention_uses_rope_and_value_dims(preset):
    v3 = preset("deepseek-v3")
    # 2 s a (d_qk + d_v) with d_qk = 128 + 64 (RoPE part), d_v = 128.
    assert attention_core_flops_per_token(v3, 4096) == 2 * 4096 * 128 * (192 + 128)


def test_sliding_window_caps_attended_keys():
    a = arch_of(layers=4, hidden=1024, heads=8, sliding_window=1024)
    assert attention_core_flops_per_token(a, 8192) == attention_core_flops_per_token(a, 1024)


def test_recompute_is_reported_apart_from_model_flops(evaluator):
    # Narayanan et al. 2021 appendix: with full recomputation an iteration executes
    # 96 B s L h^2 (1 + s/(6h) + V/(16 L h)) FLOPs against 72 B s L h^2 (1 + s/(6h) + V/(12 L h))
    # model FLOPs, so HFU / MFU is their ratio (1.332 for GPT-3 175B at s = 2048, V = 51,200).
    s, L, h, V = 2048, 96, 12288, 51200
    ratio = 96 * (1 + s / (6 * h) + V / (16 * L * h)) / (72 * (1 + s / (6 * h) + V / (12 * L * h)))
    assert ratio == pytest.approx(1.3322, abs=1e-4)
    ev = evaluator(arch_of(**GPT_175B), batch=64)
    base = Layout(tp=8, pp=8, dp=1, micro_batch=1, sequence_parallel=True, zero=0)
    full = ev.evaluate(base._replace(recompute="full"))
    none = ev.evaluate(base._replace(recompute="none"))
    assert full.hfu / full.mfu == pytest.approx(ratio, rel=1e-9)
    assert full.step.recompute > 0 and none.step.recompute == 0 and none.hfu == none.mfu
    # Model FLOPs do not depend on the recompute choice; only the hardware FLOPs and the time do.
    assert full.model_flops_per_step == none.model_flops_per_step
    assert full.hardware_flops_per_step == pytest.approx(ratio * none.hardware_flops_per_step)


#: DeepSeek-V3 as the NeMo performance tables run it (HF config, sources.toml "hf-config-deepseek-v3").
DEEPSEEK_V3 = {"layers": 61, "hidden": 7168, "heads": 128, "vocab": 129280, "ffn": 18432, "gated_mlp": True,
               "experts": 256, "active_experts": 8, "shared_experts": 1, "expert_ffn": 2048, "dense_layers": 3,
               "kv_lora_rank": 512, "rope_head_dim": 64}


def test_multi_token_prediction_adds_the_flops_nemo_counts_for_it():
    """One MTP module (a block, the 2h x h projection, the output head again): NeMo's model FLOPs
    per token of DeepSeek-V3 on GB200 rise from 1003 TFLOP/s / 4018 tokens/s (25.11, 'w/o MTP') to
    1028 / 3955 (26.02, the recipe's mtp_num_layers = 1), x1.041; the 25.11 B200 'w/ MTP' row reads
    557 / 2139, x1.043 (Megatron-Bridge performance-summary archive)."""
    without = arch_of(**DEEPSEEK_V3)
    with_mtp = arch_of(**DEEPSEEK_V3, mtp_layers=1)
    ratio = model_flops_per_token(with_mtp, 4096, causal=True) / model_flops_per_token(without, 4096, causal=True)
    published = (1028 / 3955) / (1003 / 4018)
    assert ratio == pytest.approx(published, rel=0.01)
    assert ratio == pytest.approx((557 / 2139) / (1003 / 4018), rel=0.01)
