"""KV-cache sizing: bytes per token for MHA, GQA and MLA, TP/PP splits, windows and capacity."""

from __future__ import annotations

import pytest

from gpuplan.model.arch import Architecture
from gpuplan.physics.kv_cache import (
    held_tokens,
    cached_tokens,
    dtype_bytes,
    kv_bytes_per_sequence_per_gpu,
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    kv_heads_per_gpu,
    max_sequences,
    mean_cached_tokens,
)


def _preset(catalog, name: str) -> Architecture:
    from gpuplan.model.arch import ArchitectureSpec, resolve

    return resolve(ArchitectureSpec.model_validate(catalog.models[name].arch_fields()))[0]


def test_opt_13b_is_the_vllm_papers_800_kb_per_token():
    """Kwon et al. 2023 (vLLM, SOSP), section 3: "for the 13B parameter OPT model, the KV cache of a
    single token demands 800 KB of space, calculated as 2 (key and value vectors) x 5120 (hidden
    state size) x 40 (number of layers) x 2 (bytes per FP16)" = 819,200 B."""
    opt13b = Architecture(layers=40, hidden=5120, heads=40, kv_heads=40, head_dim=128, ffn=20480, gated_mlp=False,
                          vocab=50272, tied_embeddings=True)
    assert kv_bytes_per_token(opt13b, "fp16") == 819_200


def test_llama2_7b_mha_bf16(catalog):
    # 2 * 32 layers * 32 heads * 128 * 2 B = 524,288 B = 0.5 MiB a token (the figure vLLM and
    # TensorRT-LLM sizing guides quote for Llama 2 7B in 16-bit).
    arch = _preset(catalog, "llama-2-7b")
    assert kv_bytes_per_token(arch, "bf16") == 524_288


def test_llama31_70b_gqa_bf16(catalog):
    arch = _preset(catalog, "llama-3.1-70b")
    assert kv_bytes_per_token(arch, "bf16") == 327_680  # 2 * 80 * 8 KV heads * 128 * 2 B
    assert kv_bytes_per_token(arch, "fp8") == 163_840


def test_deepseek_v3_mla_bf16(catalog):
    arch = _preset(catalog, "deepseek-v3")
    assert kv_bytes_per_token(arch, "bf16") == 61 * (512 + 64) * 2 == 70_272


def test_gqa_splits_over_tp_until_the_kv_heads_run_out(catalog):
    arch = _preset(catalog, "llama-3.1-70b")
    assert kv_bytes_per_token_per_gpu(arch, "bf16", tp=1) == 327_680
    assert kv_bytes_per_token_per_gpu(arch, "bf16", tp=4) == 81_920
    assert kv_bytes_per_token_per_gpu(arch, "bf16", tp=8) == 40_960
    # 8 KV heads on 16 ranks: each rank keeps a replica of one head, as on 8 ranks.
    assert kv_heads_per_gpu(arch, 16) == 1
    assert kv_bytes_per_token_per_gpu(arch, "bf16", tp=16) == 40_960


def test_mla_is_not_split_by_tp_but_by_pp(catalog):
    arch = _preset(catalog, "deepseek-v3")
    assert kv_bytes_per_token_per_gpu(arch, "bf16", tp=8) == 70_272
    # 61 layers on 2 stages: the larger stage holds 31 layers.
    assert kv_bytes_per_token_per_gpu(arch, "bf16", tp=8, pp=2) == 31 * 576 * 2


def test_sliding_window_caps_the_cache():
    arch = Architecture(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, gated_mlp=True,
                        vocab=32000, tied_embeddings=False, sliding_window=4096)
    per_token = kv_bytes_per_token_per_gpu(arch, "bf16")
    assert per_token == 131_072
    assert cached_tokens(10_000, 4096) == 4096
    assert cached_tokens(1000, 4096) == 1000
    assert cached_tokens(10_000, 0) == 10_000
    assert kv_bytes_per_sequence_per_gpu(arch, "bf16", 32_768) == 4096 * 131_072


@pytest.mark.parametrize("prompt,output,window", [(100, 50, 0), (1000, 1, 0), (3000, 2000, 4096),
                                                  (5000, 100, 4096), (4000, 500, 4096), (10, 10, 15)])
def test_mean_cached_tokens_matches_the_step_average(prompt, output, window):
    steps = [min(prompt + i, window) if window else prompt + i for i in range(output)]
    assert mean_cached_tokens(prompt, output, window) == pytest.approx(sum(steps) / len(steps), rel=1e-12)


def test_max_sequences_is_the_floor_of_budget_over_sequence():
    assert max_sequences(10.5e9, 1e9) == 10
    assert max_sequences(0.5e9, 1e9) == 0
    assert max_sequences(-1.0, 1e9) == 0
    with pytest.raises(ValueError):
        max_sequences(1e9, 0)


def test_dtype_bytes():
    assert [dtype_bytes(d) for d in ("bf16", "fp16", "fp8", "int8", "int4", "fp4")] == [2, 2, 1, 1, 0.5, 0.5]
    with pytest.raises(ValueError):
        dtype_bytes("fp12")


def test_paged_allocation_holds_the_mean_length_plus_half_a_block():
    """vLLM (block 16, on demand): a 1,000 + 1,000 sequence holds on average 1000 + 999/2 tokens
    over its decode, plus 7.5 tokens of its last block; TRT-LLM's reservation (block 32) takes the
    whole 2,000 at admission, rounded to 63 blocks = 2,016 tokens."""
    assert held_tokens(1000, 1000, 16, True) == pytest.approx(1000 + 999 / 2 + 7.5)
    assert held_tokens(1000, 1000, 32, False) == 2016
    assert held_tokens(1000, 1000, 1, True) == pytest.approx(1499.5)     # SGLang: one token per page
    assert held_tokens(1000, 1000, 0, False) == 2000                      # contiguous, reserved
    # A window frees blocks behind it: Mistral's 4,096 tokens cap what a long sequence holds.
    assert held_tokens(8000, 1000, 16, True, 4096) == pytest.approx(4096 + 7.5)
    assert held_tokens(8000, 1000, 16, False, 4096) == 4096
