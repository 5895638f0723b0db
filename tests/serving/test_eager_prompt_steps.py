"""TensorRT-LLM's PyTorch executor graphs decode-only steps alone: a step that carries a prompt
launches its ops from Python (docs/serving-model.md, "Eager prompt-carrying steps")."""

from __future__ import annotations

import pytest

from gpuplan.ci.validate import packaged_files, validate_files
from gpuplan.serving.engine import eager_ops_per_step, resolve_engine

QWEN3_30B = "trtllm-po-qwen3-30b-a3b-b200-fp4-tp1-1000-1000"


def test_op_count_by_hand_from_the_modeling_code():
    # Qwen3-30B-A3B, 48 MoE layers, NVFP4 (modeling_qwen3_moe.py): per layer two add+RMSNorms, QKV,
    # QK-norm+RoPE, attention, output projection, residual (10 less the dense MLP's 3), the router
    # GEMM, top-k and the fused expert op (3), and fp4_quantize before QKV, output and the experts (3).
    assert eager_ops_per_step(0, 48, 0, quantised=True) == 48 * (7 + 3 + 3) == 624
    # Llama-3.3-70B, 80 dense layers: 10 ops, 14 with a quantise op before each of its 4 GEMMs.
    assert eager_ops_per_step(80, 0, 0, quantised=False) == 800
    assert eager_ops_per_step(80, 0, 0, quantised=True) == 1120
    # A shared expert adds a dense MLP (3) and, quantised, its two GEMMs' quantise ops.
    assert eager_ops_per_step(0, 1, 1, quantised=True) == 13 + 3 + 2


def test_eager_time_scales_with_the_host_clock(k):
    eng = resolve_engine(k, "trtllm")
    # 624 ops x 30 us at the 3.1 GHz reference: 18.7 ms; on the DGX B200's 4.0 GHz Xeon: 14.5 ms.
    assert eng.eager_s(624, None) == pytest.approx(0.01872, rel=1e-6)
    assert eng.eager_s(624, 4.0) == pytest.approx(0.01872 * 3.1 / 4.0, rel=1e-6)
    # Engines that replay graphs for every step, and the 2023 C++ runtime, pay none.
    assert resolve_engine(k, "vllm").eager_s(624, None) == 0.0
    assert resolve_engine(k, "sglang").eager_s(624, None) == 0.0
    assert resolve_engine(k, "trtllm", "0.6.1").eager_s(624, None) == 0.0


def test_the_frontier_qwen3_30b_row_passes(catalog):
    """TensorRT-LLM perf-overview (commit 00f37686), Qwen3-30B-A3B, B200 TP1 FP4, 1000/1000:
    25,828 output tokens/s. Every step with a prompt: 14.5 ms of launches over the per-sequence host
    time; before, the row was predicted 38,632 (+49.6 %)."""
    path = packaged_files(("serving",))["<packaged>/frontier/serving.toml"]
    rep = validate_files([path], catalog, kinds=("serving",))
    fig = next(f for c in rep.cases if c.id == QWEN3_30B for f in c.figures)
    assert fig.measured == 25828
    assert fig.passed
    assert fig.predicted == pytest.approx(25828 * 1.206, rel=0.01)


def test_only_steps_with_a_prompt_pay_the_launches(catalog, k):
    """The frontier replica: 624 ops x 30 us x 3.1 / 4.0 GHz = 14.5 ms on each step with a prompt;
    a decode-only step replays the graph and is as before."""
    from dataclasses import replace

    from gpuplan.model.arch import ArchitectureSpec, resolve
    from gpuplan.serving.model import Layout, build_replica

    arch = resolve(ArchitectureSpec.model_validate(dict(
        layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, gated_mlp=True, vocab=151936,
        experts=128, active_experts=8, expert_ffn=768, ffn=6144)))[0]
    eng = resolve_engine(k, "trtllm")
    graphed = replace(eng, features=eng.features.model_copy(update={"graphs_decode_only": False}))
    gpu = catalog.gpu("b200-sxm-180gb")
    eager = build_replica(gpu, arch, Layout(), "fp4", "fp8", k, catalog, engine=eng)
    plain = build_replica(gpu, arch, Layout(), "fp4", "fp8", k, catalog, engine=graphed)
    assert eager.eager_prompt_s == pytest.approx(624 * 30e-6 * 3.1 / 4.0, rel=1e-6)
    assert plain.eager_prompt_s == 0.0
    assert eager.step(1542, 1500).total_s == plain.step(1542, 1500).total_s
    # A mixed step of 1,542 decodes and one 1,000-token prompt: host 49.5 ms (1,543 x 29.3 us x
    # 3.1/4.0 = 35.0 ms, plus 14.5) outlasts the GPU step, which it did not before.
    mixed, before = eager.step(1542, 1500, 1, 1000).total_s, plain.step(1542, 1500, 1, 1000).total_s
    assert mixed == pytest.approx(1543 * 29.3e-6 * 3.1 / 4.0 + 624 * 30e-6 * 3.1 / 4.0, rel=1e-6)
    assert mixed > before
