"""The per-replica model: compute paths, weights, MoE streaming, decode and prefill steps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.serving.model import (
    Layout,
    attention_flops_per_pair,
    build_replica,
    causal_pairs,
    compute_path,
    default_kv_precision,
    expected_experts_touched,
    weight_bytes,
)


def test_compute_paths(catalog):
    t4, a100, h100, b200 = (catalog.gpu(g) for g in ("t4", "a100-sxm-80gb", "h100-sxm-80gb", "b200-sxm-180gb"))
    assert compute_path(t4, "bf16").math == "fp16" and "no bf16" in compute_path(t4, "bf16").note
    assert compute_path(a100, "bf16") .math == "bf16" and compute_path(a100, "bf16").note == ""
    fallback = compute_path(a100, "fp8")
    assert (fallback.math, fallback.native) == ("bf16", False) and "weight-only" in fallback.note
    assert compute_path(t4, "fp8").math == "fp16"
    assert compute_path(h100, "fp8") .math == "fp8" and compute_path(h100, "fp8").native
    assert compute_path(h100, "fp4").math == "fp8" and not compute_path(h100, "fp4").native
    assert compute_path(a100, "fp4").math == "bf16"
    assert compute_path(b200, "fp4").math == "fp4"
    assert compute_path(h100, "int4").math == "bf16" and compute_path(h100, "int8").math == "bf16"


def test_default_kv_precision_follows_the_profile_rule():
    assert [default_kv_precision(p) for p in ("bf16", "fp16", "fp8", "int8", "int4", "fp4")] == \
        ["bf16", "fp16", "fp8", "bf16", "bf16", "fp8"]


def test_weight_bytes_by_precision(preset, k):
    """Llama 3.1 8B (config.json: 32 layers, hidden 4,096, 8 KV heads of 128, SwiGLU 14,336, vocab
    128,256, untied): 8,030,261,248 parameters. Linear layers per block: Q, K, V, O =
    4,096 x (4,096 + 1,024 + 1,024) + 4,096 x 4,096 = 41,943,040, MLP 3 x 4,096 x 14,336 =
    176,160,768; x 32 = 6,979,321,856. The other 1,050,939,392 (embedding and LM head 525,336,576
    each, norms) stay 16-bit in every quantisation recipe."""
    arch = preset("llama-3.1-8b")
    assert arch.total_params == 8_030_261_248
    assert weight_bytes(arch, "bf16", k).total == 16_060_522_496               # x 2 bytes
    # FP8: 6,979,321,856 x 1 + 1,050,939,392 x 2 = 9,081,200,640 B
    assert weight_bytes(arch, "fp8", k).total == 9_081_200_640
    # INT4 AWQ/GPTQ, group 128, fp16 scale + zero: 4 + 32/128 = 4.25 bits -> 3,707,764,736 B
    int4 = weight_bytes(arch, "int4", k)
    assert int4.attention + int4.dense_mlp == 3_707_764_736
    # NVFP4: an FP8 E4M3 scale per 16 values, 4 + 8/16 = 4.5 bits -> 3,925,868,544 B
    fp4 = weight_bytes(arch, "fp4", k)
    assert fp4.attention + fp4.dense_mlp == 3_925_868_544


def test_expected_experts_touched():
    assert expected_experts_touched(8, 2, 1) == pytest.approx(2.0)
    assert expected_experts_touched(256, 8, 1) == pytest.approx(8.0)
    assert expected_experts_touched(256, 8, 10_000) == pytest.approx(256.0)
    # 32 tokens, 8 of 256 experts each: an expert is missed by all with (1 - 8/256)^32 = 0.3621,
    # so 256 x 0.6379 = 163.3 are touched.
    assert expected_experts_touched(256, 8, 32) == pytest.approx(163.3, abs=0.05)
    touched = [expected_experts_touched(256, 8, t) for t in (1, 2, 8, 32, 128, 1024)]
    assert touched == sorted(touched) and touched[-1] <= 256
    assert expected_experts_touched(0, 0, 100) == 0.0


def test_moe_decode_streams_more_experts_as_batch_grows(catalog, preset, k):
    arch = preset("mixtral-8x7b")
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=2), "bf16", "bf16", k, catalog)
    w1 = rep.decode_step(1, 1000).weight_bytes
    w64 = rep.decode_step(64, 1000).weight_bytes
    # Mixtral 8x7B: an expert is 3 x 4,096 x 14,336 = 176,160,768 parameters a layer, 352,321,536 B
    # in bf16, 176,160,768 B per GPU at TP2. One token reads its 2 experts of 8; 64 tokens touch all 8
    # (8 x (1 - (6/8)^64) = 8.0000): 6 experts more x 32 layers x 176,160,768 B = 33,822,867,456 B.
    assert weight_bytes(arch, "bf16", k).expert == 352_321_536
    assert w64 - w1 == pytest.approx(33_822_867_456, rel=1e-6)


def test_decode_step_grows_with_batch_and_context_and_shrinks_with_tp(catalog, preset, k):
    arch = preset("llama-3.1-70b")
    h100 = catalog.gpu("h100-sxm-80gb")
    tp2 = build_replica(h100, arch, Layout(tp=2), "bf16", "bf16", k, catalog)
    tp8 = build_replica(h100, arch, Layout(tp=8), "bf16", "bf16", k, catalog)
    assert tp2.decode_step(64, 1000).total_s > tp2.decode_step(1, 1000).total_s
    assert tp2.decode_step(64, 8000).total_s > tp2.decode_step(64, 1000).total_s
    assert tp8.decode_step(1, 1000).total_s < tp2.decode_step(1, 1000).total_s
    # batch-1 decode is memory-bound: weights dominate
    assert tp2.decode_step(1, 1000).dominant() == "memory bandwidth (weights)"


def test_tp_allreduce_is_latency_dominated_at_small_batch(catalog, preset, k):
    """Decode on 8 H100 at batch 1 and 8: each all-reduce is 8,192 or 65,536 bf16 elements, which
    TensorRT-LLM's one-shot kernel all-reduces in 3.8 and 6.4 us (aiconfigurator
    h100_sxm/comm/trtllm/1.3.0rc10/custom_allreduce_perf.parquet): 8x the bytes, 1.7x the time."""
    arch = preset("llama-3.1-70b")
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=8), "bf16", "bf16", k, catalog)
    c1, c8 = rep.decode_step(1, 100).comm_s, rep.decode_step(8, 100).comm_s
    calls = 2 * arch.layers
    assert c1 / calls == pytest.approx(3.8e-6, rel=0.15)
    assert c8 / calls == pytest.approx(6.4e-6, rel=0.15)
    # Two all-reduces per layer (after attention and after the MLP): half the layers, half the time.
    half = build_replica(catalog.gpu("h100-sxm-80gb"), replace(arch, layers=40), Layout(tp=8), "bf16", "bf16",
                         k, catalog)
    assert half.decode_step(1, 100).comm_s == pytest.approx(c1 / 2, rel=1e-9)
    # The default engine (current vLLM) runs custom all-reduce kernels, faster than NCCL's (16 us) here.
    assert rep.links.all_reduce_s(arch.hidden * 2, 8, custom=True) < rep.links.all_reduce_s(arch.hidden * 2, 8) / 3


def test_prefill_has_the_quadratic_attention_term(catalog, preset, k):
    arch = preset("llama-3.1-8b")
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(), "bf16", "bf16", k, catalog)
    assert causal_pairs(4, 0) == 10
    assert causal_pairs(10, 4) == 10 + 6 * 4
    a8, a32 = rep.prefill_step(1, 8192), rep.prefill_step(1, 32768)
    attn_flops = lambda p: p * (p + 1) / 2 * arch.layers * attention_flops_per_pair(arch, False)
    assert attn_flops(32768) / attn_flops(8192) == pytest.approx(16, rel=1e-3)
    assert a32.attention_s / a8.attention_s == pytest.approx(16, rel=0.01)
    # prefill efficiency rises with tokens per step (weight streaming amortised)
    per_token = [rep.prefill_step(1, p).gemm_s / p for p in (16, 128, 1024, 8192)]
    assert per_token == sorted(per_token, reverse=True)


def test_memory_fit_and_capacity(catalog, preset, k):
    arch = preset("llama-3.1-70b")
    h100 = catalog.gpu("h100-sxm-80gb")
    tp1 = build_replica(h100, arch, Layout(tp=1), "bf16", "bf16", k, catalog)
    tp4 = build_replica(h100, arch, Layout(tp=4), "bf16", "bf16", k, catalog)
    assert tp1.kv_budget_bytes == 0 and tp1.max_sequences(2048) == 0   # 141 GB of weights on 80 GB
    # 70,553,706,496 parameters x 2 bytes / 4 GPUs = 35,276,853,248 B per GPU
    assert tp4.resident_weight_bytes == 35_276_853_248
    # What is left after the weights and the runtime goes to the KV cache, never more than that.
    usable = h100.memory_usable_gib * 2**30
    assert 0 < tp4.kv_budget_bytes <= usable - tp4.resident_weight_bytes - k.runtime_overhead_gib * 2**30
    tp8 = build_replica(h100, arch, Layout(tp=8), "bf16", "bf16", k, catalog)
    assert tp8.kv_budget_bytes > tp4.kv_budget_bytes  # half the weights per GPU, more room
    # GQA: 2 x 80 layers x 8 KV heads x 128 x 2 B = 327,680 B a token, 81,920 on each of 4 GPUs;
    # a 4,096-token sequence takes 335,544,320 B per GPU.
    assert tp4.max_sequences(4096) == int(tp4.kv_budget_bytes // 335_544_320)


def test_layout_checks(preset):
    arch = preset("llama-3.1-8b")
    assert Layout(tp=3).check(arch) is not None
    assert Layout(pp=64).check(arch) is not None
    assert Layout(tp=2, ep=2).check(arch) is not None     # not MoE
    moe = preset("mixtral-8x7b")
    assert Layout(tp=2, ep=2).check(moe) is None
    assert Layout(tp=1, ep=8).gpus == 8 and Layout(tp=1, ep=8).dp == 8


def test_weight_only_formats_stream_below_the_bandwidth_roofline(catalog, preset, k):
    arch = preset("llama-2-7b")
    a100, h100 = catalog.gpu("a100-sxm-80gb"), catalog.gpu("h100-sxm-80gb")
    assert build_replica(h100, arch, Layout(), "fp8", "fp8", k, catalog).weight_stream_factor == 1.0
    assert build_replica(a100, arch, Layout(), "bf16", "bf16", k, catalog).weight_stream_factor == 1.0
    assert build_replica(a100, arch, Layout(), "fp8", "fp8", k, catalog).weight_stream_factor == \
        k.weight_only_bandwidth_factor.fp8
    int4 = build_replica(a100, arch, Layout(), "int4", "bf16", k, catalog)
    step = int4.decode_step(1, 100)
    bf16_rep = build_replica(a100, arch, Layout(), "bf16", "bf16", k, catalog)
    bf16 = bf16_rep.decode_step(1, 100)
    # The int4 step streams fewer bytes, but slower per byte than bf16 does (dequantisation in the loop).
    assert step.weight_bytes < 0.4 * bf16.weight_bytes
    assert step.weight_bytes / step.gemm_memory_s < 0.9 * bf16.weight_bytes / bf16.gemm_memory_s
    # gpt-fast README (Llama-2-7B on A100, batch 1): bf16 104.9 tok/s, int8 155.58, int4 (group 32)
    # 196.80: 1.48x and 1.88x, far below the 2x and 3.6x byte ratios.
    int8 = build_replica(a100, arch, Layout(), "int8", "bf16", k, catalog).decode_step(1, 100)
    assert bf16.total_s / int8.total_s == pytest.approx(155.58 / 104.9, rel=0.15)
    assert bf16.total_s / step.total_s == pytest.approx(196.80 / 104.9, rel=0.15)
