"""The per-replica model: compute paths, weights, MoE streaming, decode and prefill steps."""

from __future__ import annotations

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
    arch = preset("llama-3.1-8b")
    bf16 = weight_bytes(arch, "bf16", k)
    assert bf16.total == pytest.approx(2 * arch.total_params, rel=1e-9)
    fp8 = weight_bytes(arch, "fp8", k)
    # linear layers at 1 byte, embedding and LM head (2 x 525M params) stay 16-bit
    embed = 2 * arch.vocab * arch.hidden * 2
    assert fp8.total == pytest.approx((arch.total_params - 2 * arch.vocab * arch.hidden) + embed, rel=1e-3)
    int4 = weight_bytes(arch, "int4", k)
    fp4 = weight_bytes(arch, "fp4", k)
    linear = arch.layers * (arch.attention_params_per_layer + arch.dense_mlp_params)
    assert int4.attention + int4.dense_mlp == pytest.approx(linear * (4 + 0.25) / 8, rel=1e-9)
    assert fp4.attention + fp4.dense_mlp == pytest.approx(linear * (4 + 0.5) / 8, rel=1e-9)


def test_expected_experts_touched():
    assert expected_experts_touched(8, 2, 1) == pytest.approx(2.0)
    assert expected_experts_touched(256, 8, 1) == pytest.approx(8.0)
    assert expected_experts_touched(256, 8, 10_000) == pytest.approx(256.0)
    assert expected_experts_touched(256, 8, 32) == pytest.approx(256 * (1 - (1 - 8 / 256) ** 32))
    assert expected_experts_touched(0, 0, 100) == 0.0


def test_moe_decode_streams_more_experts_as_batch_grows(catalog, preset, k):
    arch = preset("mixtral-8x7b")
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=2), "bf16", "bf16", k, catalog)
    w1 = rep.decode_step(1, 1000).weight_bytes
    w64 = rep.decode_step(64, 1000).weight_bytes
    wb = weight_bytes(arch, "bf16", k)
    assert w1 < w64
    assert w64 == pytest.approx(rep.fixed_stream_bytes + arch.moe_layers * 8 * wb.expert / 2, rel=0.01)
    assert w1 == pytest.approx(rep.fixed_stream_bytes + arch.moe_layers * 2 * wb.expert / 2, rel=1e-6)


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
    arch = preset("llama-3.1-70b")
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=8), "bf16", "bf16", k, catalog)
    c1, c8 = rep.decode_step(1, 100).comm_s, rep.decode_step(8, 100).comm_s
    assert c1 > 0 and c8 / c1 < 1.1      # 8x the bytes, about the same time
    # 2 all-reduces per layer; the default engine (current vLLM) runs custom all-reduce kernels,
    # which launch faster than NCCL's
    per_call = rep.links.all_reduce_s(arch.hidden * 2, 8, in_network=False) + rep.engine.all_reduce_extra_us * 1e-6
    assert rep.engine.all_reduce_extra_us < 0
    assert c1 == pytest.approx(2 * arch.layers * per_call, rel=1e-9)


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
    assert tp4.resident_weight_bytes == pytest.approx(arch.total_params * 2 / 4, rel=0.01)
    free = (h100.memory_usable_gib - k.runtime_overhead_gib) * 2**30 - tp4.resident_weight_bytes
    assert tp4.kv_budget_bytes == pytest.approx(free * k.kv_memory_fraction)
    assert tp4.max_sequences(4096) == int(tp4.kv_budget_bytes // (4096 * 327_680 / 4))


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
    bw = a100.mem_bw_tb_per_s * 1e12 * a100.efficiency.mem_bw
    other = int4.fixed_stream_bytes - int4.quantised_stream_bytes + step.activation_bytes
    expected = (int4.quantised_stream_bytes / k.weight_only_bandwidth_factor.int4 + other) / bw
    assert step.gemm_memory_s == pytest.approx(expected, rel=1e-9)
    # int4 still beats bf16 at batch 1, by less than the 3.6x byte ratio
    bf16 = build_replica(a100, arch, Layout(), "bf16", "bf16", k, catalog).decode_step(1, 100)
    assert 1.5 < bf16.total_s / step.total_s < 3.6
