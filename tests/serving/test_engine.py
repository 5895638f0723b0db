"""The serving engine as an input: each release feature is a mechanism, pinned to a published number.

Published figures (TensorRT-LLM docs/source/performance.md v0.6.1 and perf-overview.md at commit
00f37686; the DGX/Qwen3 rows are the ones in shared/validation and its frontier) are reproduced
with the engine the source names; the same run under the other value of the feature misses.
"""

from __future__ import annotations

import pytest

from gpuplan.model.case import CaseInput
from gpuplan.core.errors import InputError
from gpuplan.serving.cases import predict
from gpuplan.serving.engine import parse_version, resolve_engine
from gpuplan.serving.fixed import evaluate_fixed
from gpuplan.serving.model import Layout, build_replica
from gpuplan.serving.moe import moe_launch_s, moe_module_s
from gpuplan.serving.shapes import expected_experts_touched

QWEN3_235B = dict(layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128, gated_mlp=True, vocab=151936,
                  experts=128, active_experts=8, expert_ffn=1536, ffn=12288)


def _arch(fields):
    from gpuplan.model.arch import ArchitectureSpec, resolve

    return resolve(ArchitectureSpec.model_validate(fields))[0]


def _case(arch, run, figures):
    return CaseInput(id="t", file="cases.toml", arch=arch, run=run, figures=tuple(figures))


# -- resolution -------------------------------------------------------------------------------------
def test_versions_take_the_latest_release_not_after_them(k):
    assert parse_version("0.6.1") == (0, 6, 1) and parse_version("1.0rc2") == (1, 0)
    assert resolve_engine(k, "trtllm", "0.6.1").features.gqa_kv_reads == "per_query_head"
    assert resolve_engine(k, "trtllm", "0.7.1").features.gqa_kv_reads == "per_group"
    assert resolve_engine(k, "vllm", "0.4.2").features.scheduling == "prefill_first"
    assert resolve_engine(k, "vllm", "0.8.5").features.scheduling == "mixed"
    # Left out: current vLLM, flagged as a default.
    default = resolve_engine(k)
    assert default.name == "vllm" and default.defaulted and default.features.scheduling == "mixed"
    with pytest.raises(ValueError):
        resolve_engine(k, "ollama")


def test_every_release_names_its_source(k):
    assert all(r.source for r in k.engines.release)
    for name in ("vllm", "sglang", "trtllm", "fastertransformer", "gpt-fast"):
        assert any(r.engine == name for r in k.engines.release)


def test_unknown_engine_in_a_case_is_an_input_error(catalog, preset):
    run = {"gpu": "h100-sxm-80gb", "engine": "tgi", "prompt_tokens": 128, "output_tokens": 128, "batch": 1}
    with pytest.raises(InputError, match="engine"):
        predict(_case(preset("llama-3.1-8b"), run, ("tpot_ms",)), catalog)


# -- GQA decode attention ---------------------------------------------------------------------------
def test_pre_xqa_decode_reads_each_kv_head_per_query_head(catalog, preset, k):
    """TRT-LLM v0.6.1, Llama-2-70B FP8 on 2 H100, static batch 1024, 128/128: 2,657 tok/s/GPU
    (performance.md). Masked MHA reads every KV head once per query head (8x for 64/8 heads);
    with XQA-style grouped reads the same run would come out well above the measurement."""
    arch = preset("llama-2-70b")
    run = {"gpu": "h100-sxm-80gb", "gpus": 2, "tp": 2, "precision": "fp8", "batch": 1024,
           "prompt_tokens": 128, "output_tokens": 128, "engine": "trtllm", "engine_version": "0.6.1"}
    old = predict(_case(arch, run, ("output_tokens_per_s_per_gpu",)), catalog)["output_tokens_per_s_per_gpu"]
    assert old == pytest.approx(2657, rel=0.10)
    grouped = predict(_case(arch, dict(run, engine_version="0.7.0"), ("output_tokens_per_s_per_gpu",)),
                      catalog)["output_tokens_per_s_per_gpu"]
    assert grouped > 2657 * 1.10
    rep_old = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=2), "fp8", "fp8", k, catalog,
                            engine=resolve_engine(k, "trtllm", "0.6.1"))
    rep_new = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=2), "fp8", "fp8", k, catalog,
                            engine=resolve_engine(k, "trtllm", "0.7.0"))
    assert rep_old.decode_step(64, 1000).kv_bytes == pytest.approx(8 * rep_new.decode_step(64, 1000).kv_bytes)


def test_gpt_fast_decode_attends_over_its_whole_static_cache(catalog, preset, k):
    """gpt-fast (model.py) keeps a static cache of prompt + max_new_tokens and runs each decode
    step's attention over all of it through a mask. Llama-2-7B, 5-token prompt, 200 new tokens
    (the README's batch-1 run, 104.9 tokens/s on A100): every step reads 205 tokens x 32 layers x
    2 x 4,096 x 2 B = 107.5 MB of cache, where the filled part averages 104.5 tokens (54.8 MB)."""
    arch = preset("llama-2-7b")
    gpu = catalog.gpu("a100-sxm-80gb")
    fast = build_replica(gpu, arch, Layout(), "bf16", "bf16", k, catalog, engine=resolve_engine(k, "gpt-fast"))
    trt = build_replica(gpu, arch, Layout(), "bf16", "bf16", k, catalog, engine=resolve_engine(k, "trtllm"))
    assert fast.decode_context(5, 200) == 205
    assert trt.decode_context(5, 200) == 104.5
    assert fast.decode_step(1, fast.decode_context(5, 200)).kv_bytes == pytest.approx(107.5e6, rel=0.001)
    r = evaluate_fixed(arch, gpu, Layout(), "bf16", 5, 200, catalog, batch=1, engine=resolve_engine(k, "gpt-fast"))
    assert r.decode_tokens_per_s == pytest.approx(104.9, rel=0.06)


# -- mixed batching ---------------------------------------------------------------------------------
def test_mixed_steps_reproduce_offline_throughput(catalog, preset, k):
    """TRT-LLM perf-overview, Llama 3.1 8B FP8 on one H100, 1000/1000 offline: 15,220 tok/s. In-flight
    batching puts the prompts of the requests that start beside the decode tokens of each step;
    pausing decode for every prefill (a prefill-first engine) comes out lower."""
    arch = preset("llama-3.1-8b")
    mixed = evaluate_fixed(arch, catalog.gpu("h100-sxm-80gb"), Layout(), "fp8", 1000, 1000, catalog,
                           engine=resolve_engine(k, "trtllm"))
    assert mixed.output_tokens_per_s == pytest.approx(15220, rel=0.10)
    from gpuplan.serving.capacity import offline_tokens_per_s
    from gpuplan.serving.mixed import mixed_offline_tokens_per_s

    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(), "fp8", "fp8", k, catalog,
                        engine=resolve_engine(k, "trtllm"))
    paused, _ = offline_tokens_per_s(rep, 1000, 1000, mixed.batch)
    assert paused < mixed_offline_tokens_per_s(rep, 1000, 1000, mixed.batch) == pytest.approx(mixed.output_tokens_per_s)


def test_long_outputs_do_not_drift_low(catalog, preset, k):
    """Same table, 20000/2000 (1,351 tok/s) and 1000/2000 (13,899 tok/s): the KV read at the growing
    context and the cache-limited batch keep long outputs within 15 %."""
    arch = preset("llama-3.1-8b")
    for prompt, output, measured in ((20000, 2000, 1351), (1000, 2000, 13899)):
        r = evaluate_fixed(arch, catalog.gpu("h100-sxm-80gb"), Layout(), "fp8", prompt, output, catalog,
                           engine=resolve_engine(k, "trtllm"))
        assert r.output_tokens_per_s == pytest.approx(measured, rel=0.15)


def test_batch_limits_of_the_engine(catalog, preset, k):
    """trtllm-bench caps the batch at 4096 (bench/build/tuning.py); vLLM V1's LLM class at 1024."""
    from gpuplan.serving.mixed import offline_batch

    arch = preset("llama-3.1-8b")
    gpu = catalog.gpu("h200-sxm-141gb")
    trt = build_replica(gpu, arch, Layout(), "fp8", "fp8", k, catalog, engine=resolve_engine(k, "trtllm"))
    vllm = build_replica(gpu, arch, Layout(), "fp8", "fp8", k, catalog, engine=resolve_engine(k, "vllm"))
    assert offline_batch(trt, 128, 128) <= 4096 and offline_batch(vllm, 128, 128) <= 1024
    # Paged on-demand admission holds sequences at their mean length: more of them than reserving.
    assert offline_batch(vllm, 128, 4096) > trt.max_sequences(128 + 4096)


# -- MoE ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, gpu, precision, ep, tokens, measured_us", [
    # aiconfigurator moe_perf (TensorRT-LLM 1.3.0rc10 CUTLASS fused MoE, balanced routing):
    ((2048, 768, 8, 128), "b200-sxm-180gb", "fp4", 1, 3072, 380.6),   # Qwen3-30B-A3B, one B200
    ((4096, 1536, 8, 128), "b200-sxm-180gb", "fp4", 8, 4096, 161.3),  # Qwen3-235B-A22B, EP8
])
def test_moe_module_reproduces_measured_fused_moe_latency(catalog, k, shape, gpu, precision, ep, tokens, measured_us):
    """One MoE layer: expert weights touched / bandwidth + expert FLOPs / rate (catalog efficiencies,
    no overlap) + the module's launch chain, per-copy, per-token and per-expert costs."""
    from gpuplan.serving.weights import compute_path

    hidden, ffn, active, experts = shape
    arch = _arch(dict(layers=1, hidden=hidden, heads=16, gated_mlp=True, experts=experts,
                      active_experts=active, expert_ffn=ffn, ffn=ffn))
    g = catalog.gpu(gpu)
    path = compute_path(g, precision)
    rate = g.peak_tflops(path.math) * 1e12 * g.matmul_efficiency(path.math) * k.gemm_efficiency_vs_mamf
    bandwidth = g.mem_bw_tb_per_s * 1e12 * g.efficiency.mem_bw
    bytes_per_weight = {"fp4": 0.5625, "fp8": 1.0}[precision]
    weights_s = expected_experts_touched(experts, active, tokens) / ep * 3 * hidden * ffn * bytes_per_weight / bandwidth
    math_s = 6 * hidden * ffn * tokens * active / ep / rate
    layer_s = (weights_s + math_s + moe_module_s(arch, k.moe, tokens, ep, 1, path.math == "fp4")
               + k.moe.layer_latency_us * 1e-6)
    assert layer_s * 1e6 == pytest.approx(measured_us, rel=0.2)
    # The launch chain replaces a dense MLP's three kernels of the per-layer latency.
    assert moe_launch_s(arch, k.moe, 3.0) == pytest.approx((k.moe.layer_latency_us - 9.0) * 1e-6)


def test_moe_costs_reproduce_qwen3_235b(catalog):
    """TRT-LLM perf-overview, Qwen3-235B-A22B FP8 on 8 H200, 1000/1000 offline: 23,789 tok/s."""
    run = {"gpu": "h200-sxm-141gb", "gpus": 8, "tp": 8, "precision": "fp8", "scenario": "offline",
           "prompt_tokens": 1000, "output_tokens": 1000, "engine": "trtllm"}
    out = predict(_case(_arch(QWEN3_235B), run, ("output_tokens_per_s",)), catalog)
    assert out["output_tokens_per_s"] == pytest.approx(23789, rel=0.15)


# -- the harness searches the layout -------------------------------------------------------------------
def test_a_case_without_tp_searches_the_layout(catalog, preset):
    """Llama 3.1 70B FP8 on 2 H100, 1000/1000 offline (perf-overview: 4,205 tok/s at TP2): left to the
    planner, the search tries TP1 x 2 replicas and TP2 and keeps the best per GPU."""
    arch = preset("llama-3.1-70b")
    run = {"gpu": "h100-sxm-80gb", "gpus": 2, "precision": "fp8", "scenario": "offline",
           "prompt_tokens": 1000, "output_tokens": 1000, "engine": "trtllm"}
    searched = predict(_case(arch, run, ("output_tokens_per_s",)), catalog)["output_tokens_per_s"]
    tp2 = predict(_case(arch, dict(run, tp=2), ("output_tokens_per_s",)), catalog)["output_tokens_per_s"]
    assert searched >= tp2 * (1 - 1e-9)
    assert searched == pytest.approx(4205, rel=0.15)


# -- all-reduce ---------------------------------------------------------------------------------------
def test_custom_all_reduce_hands_large_messages_to_nccl(catalog, preset, k):
    """TRT-LLM perf-overview, Llama 3.1 405B FP8 on 8 H100, 20000/2000 offline: 345 tok/s. The
    engine's custom all-reduce is peer-to-peer (2(n-1)/n bytes per GPU); crediting it with NVLS
    switch reduction made the 8-way TP rows 13-23 % fast. Since the GEMM knee was fitted to measured
    kernels (benchmarks/fit_gemm.py) the row is 24 % fast: its GEMMs at ~1,000 rows already run at
    the sustained rate, so the gap is outside them (the all-reduce, attention at 20k context)."""
    arch = preset("llama-3.1-405b")
    run = {"gpu": "h100-sxm-80gb", "gpus": 8, "tp": 8, "precision": "fp8", "scenario": "offline",
           "prompt_tokens": 20000, "output_tokens": 2000, "engine": "trtllm"}
    out = predict(_case(arch, run, ("output_tokens_per_s",)), catalog)
    assert out["output_tokens_per_s"] == pytest.approx(345, rel=0.25)
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=8), "fp8", "fp8", k, catalog,
                        engine=resolve_engine(k, "trtllm"))
    size = 400 * arch.hidden * 2
    assert rep.links.all_reduce_s(size, 8, custom=True) == pytest.approx(rep.links.all_reduce_s(size, 8))
    assert 79e-6 < rep.links.all_reduce_s(size, 8, custom=True) < 122e-6
    one = arch.hidden * 2
    assert rep.links.all_reduce_s(one, 8, custom=True) < rep.links.all_reduce_s(one, 8) / 3


def test_vllm_on_rocm_ran_rccl_until_its_custom_kernel_was_ported(k):
    """vLLM 0.6.x logs 'Disabled the custom all-reduce kernel because it is not supported on AMD
    GPUs' (config.py, seen with 0.6.3 and 0.6.6 on MI300X) and runs RCCL; on NVIDIA the same release
    runs its custom kernel; pull request #14125 (2025-03) enabled the kernel on MI300-class GPUs."""
    old = resolve_engine(k, "vllm", "0.6.2")
    assert not old.custom_all_reduce("amd") and old.custom_all_reduce("nvidia")
    assert "RCCL on AMD GPUs" in old.summary()
    assert resolve_engine(k, "vllm").custom_all_reduce("amd")


def test_vllm_v1_picks_its_batch_limits_by_device(catalog, preset, k):
    """vLLM V1's LLM-class defaults (engine/arg_utils.py, vllm-project/vllm#16158 and #17885):
    max_num_seqs 1,024 and max_num_batched_tokens 16,384 on GPUs of 70 GiB or more (H100, MI300X),
    256 and 8,192 on smaller GPUs and on A100. Releases before V1 use 256 on every GPU."""
    from gpuplan.serving.engine import on_gpu
    from gpuplan.serving.mixed import offline_batch

    v1 = resolve_engine(k, "vllm", "0.9.0")
    limits = {g: (on_gpu(v1, g, catalog.gpu(g).memory_usable_gib).features.max_batch,
                  on_gpu(v1, g, catalog.gpu(g).memory_usable_gib).features.max_step_tokens)
              for g in ("h100-sxm-80gb", "mi300x-oam-192gb", "a100-sxm-80gb", "l40s-pcie-48gb")}
    assert limits == {"h100-sxm-80gb": (1024, 16384), "mi300x-oam-192gb": (1024, 16384),
                      "a100-sxm-80gb": (256, 8192), "l40s-pcie-48gb": (256, 8192)}
    v0 = resolve_engine(k, "vllm", "0.6.0")
    assert on_gpu(v0, "h100-sxm-80gb", 79.1).features.max_batch == 256
    # Llama 3.1 8B, 128/128 on one A100 80GB: the cache holds thousands of sequences, V1 runs 256.
    rep = build_replica(catalog.gpu("a100-sxm-80gb"), preset("llama-3.1-8b"), Layout(), "bf16", "bf16", k, catalog,
                        engine=v1)
    assert rep.admitted_sequences(128, 128) > 1024 and offline_batch(rep, 128, 128) == 256


# -- host time per scheduled sequence ------------------------------------------------------------------
QWEN3_30B = dict(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, gated_mlp=True, vocab=151936,
                 experts=128, active_experts=8, expert_ffn=768, ffn=6144)


def test_host_time_per_sequence_matches_the_published_grace_step(catalog, k):
    """TensorRT-LLM PR #10273: 45 ms of host time per step at 1,536 sequences on one GB200 rank."""
    eng = resolve_engine(k, "trtllm")
    assert eng.host_s(1536, catalog.gpu("gb200-nvl72").host_cpu_max_ghz) == pytest.approx(0.045, rel=0.01)
    # The 2023 TensorRT backend (C++ executor) is not given a per-request Python cost.
    assert resolve_engine(k, "trtllm", "0.6.1").host_s(1536, None) == 0.0


def test_small_moe_on_one_gpu_is_bound_by_the_host(catalog):
    """TRT-LLM perf-overview, Qwen3-30B-A3B FP4 on one GPU, 128/128 offline (4,000+ sequences in
    flight): B200 39,827 tok/s, GB200 24,107. The GPU step alone made B200 2.3x and GB200 3.9x fast;
    with the host time of every scheduled sequence (hidden under the GPU step by the overlap
    scheduler) B200 lands within 15 % and the slower Grace host makes GB200 the slower system."""
    run = {"gpus": 1, "tp": 1, "precision": "fp4", "scenario": "offline", "prompt_tokens": 128,
           "output_tokens": 128, "engine": "trtllm"}
    arch = _arch(QWEN3_30B)
    b200 = predict(_case(arch, dict(run, gpu="b200-sxm-180gb"), ("output_tokens_per_s",)), catalog)
    gb200 = predict(_case(arch, dict(run, gpu="gb200-nvl72"), ("output_tokens_per_s",)), catalog)
    assert b200["output_tokens_per_s"] == pytest.approx(39827, rel=0.15)
    assert gb200["output_tokens_per_s"] < b200["output_tokens_per_s"]
    # Long-context rows keep ~140 sequences: GPU-bound, unchanged (20000/2000: 2,944 tok/s on B200).
    long = predict(_case(arch, dict(run, gpu="b200-sxm-180gb", prompt_tokens=20000, output_tokens=2000),
                         ("output_tokens_per_s",)), catalog)
    assert long["output_tokens_per_s"] == pytest.approx(2944, rel=0.1)
