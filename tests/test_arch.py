"""Parameter counts pinned to published model sizes."""

from __future__ import annotations

import pytest

from gpuplan.model.arch import ArchitectureSpec, derive_from_params, resolve


def arch(**kw):
    return resolve(ArchitectureSpec(**kw))[0]


def test_gpt3_175b_parameter_count():
    # Brown et al. 2020, Table 2.1: 175.0B parameters (96 layers, d_model 12288, 96 heads).
    a = arch(layers=96, hidden=12288, heads=96, vocab=50257, tied_embeddings=True)
    assert a.total_params == pytest.approx(174.6e9, rel=0.005)


def test_megatron_eq2_for_the_1t_model():
    # Narayanan et al. 2021 Table 1: 128 layers, hidden 25600 -> 1008B parameters (eq. 2).
    a = arch(layers=128, hidden=25600, heads=160, vocab=51200)
    eq2 = 12 * 128 * 25600**2 * (1 + 13 / (12 * 25600) + (51200 + 2048) / (12 * 128 * 25600))
    assert a.total_params == pytest.approx(eq2, rel=0.01)
    assert a.total_params == pytest.approx(1008e9, rel=0.01)


def test_llama2_7b_gated_mlp():
    # Touvron et al. 2023: 6.74B parameters (32 layers, 4096 hidden, ffn 11008 SwiGLU, vocab 32000).
    a = arch(layers=32, hidden=4096, heads=32, ffn=11008, gated_mlp=True, vocab=32000)
    assert a.total_params == pytest.approx(6.738e9, rel=0.002)
    assert a.kv_elements_per_token() * 2 == 524_288  # bytes per token in bf16


def test_deepseek_v3_total_and_active():
    # DeepSeek-AI 2024 (arXiv:2412.19437): 671B total, 37B activated per token.
    a = arch(layers=61, hidden=7168, heads=128, head_dim=128, v_head_dim=128, ffn=18432, gated_mlp=True,
             vocab=129280, experts=256, active_experts=8, expert_ffn=2048, shared_experts=1, dense_layers=3,
             kv_lora_rank=512, rope_head_dim=64, q_lora_rank=1536)
    assert a.total_params == pytest.approx(671e9, rel=0.01)
    assert a.active_params == pytest.approx(37.5e9, rel=0.03)
    assert a.kv_elements_per_token() == 61 * (512 + 64)


def test_defaults_are_reported():
    _, applied = resolve(ArchitectureSpec(layers=2, hidden=256, heads=4))
    assert {f for f, _, _ in applied} == {"head_dim", "kv_heads", "ffn", "gated_mlp", "vocab", "tied_embeddings"}


@pytest.mark.parametrize("params", [1e9, 7e9, 70e9, 405e9, 2e12])
def test_derived_architecture_hits_the_size(params):
    a = derive_from_params(params)
    assert a.total_params == pytest.approx(params, rel=0.03)
    assert a.heads % a.kv_heads == 0
    assert 64 <= a.hidden / a.layers <= 160


@pytest.mark.parametrize("kw,msg", [
    ({"layers": 2, "hidden": 256, "heads": 4, "kv_heads": 3}, "must divide"),
    ({"layers": 2, "hidden": 256, "heads": 4, "experts": 8}, "needs active_experts"),
    ({"layers": 2, "hidden": 250, "heads": 4}, "must divide hidden"),
    ({"layers": 2, "hidden": 256, "heads": 4, "kv_lora_rank": 64}, "both kv_lora_rank"),
])
def test_inconsistent_architectures(kw, msg):
    with pytest.raises(ValueError, match=msg):
        resolve(ArchitectureSpec(**kw))
