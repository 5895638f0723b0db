"""Roofline arithmetic, and the batch-1 decode bound (weights / bandwidth) against the serving model."""

from __future__ import annotations

import math

import pytest

from gpuplan.physics.roofline import (
    achieved_tflops,
    arithmetic_intensity,
    attainable_flops,
    bound,
    memory_bound_tokens_per_s,
    overlapped_time_s,
    ridge_point,
    serial_time_s,
)


@pytest.mark.parametrize("gpu, ridge", [
    # NVIDIA H100 SXM datasheet: 989.4 TFLOP/s dense BF16 / 3.35 TB/s HBM3 = 295.3 FLOP/B
    ("h100-sxm-80gb", 295.3),
    # NVIDIA A100 SXM datasheet: 312 TFLOP/s dense BF16 / 2.039 TB/s HBM2e = 153.0 FLOP/B
    ("a100-sxm-80gb", 153.0),
])
def test_ridge_point_from_the_datasheets(catalog, gpu, ridge):
    g = catalog.gpu(gpu)
    assert ridge_point(g.bf16_dense_tflops * 1e12, g.mem_bw_tb_per_s * 1e12) == pytest.approx(ridge, abs=0.05)


def test_attainable_is_the_lower_of_the_two_roofs():
    peak, bw = 1000e12, 2e12
    assert attainable_flops(100, peak, bw) == 200e12      # memory roof
    assert attainable_flops(1000, peak, bw) == 1000e12    # compute roof
    assert attainable_flops(500, peak, bw) == 1000e12     # at the ridge both meet
    assert bound(499.9, 500) == "memory"
    assert bound(500, 500) == "compute"


def test_times_and_intensity():
    assert arithmetic_intensity(10.0, 0.0) == math.inf
    assert overlapped_time_s(2e12, 1e9, 1e12, 1e12) == 2.0
    assert serial_time_s(2e12, 1e12, 1e12, 1e12) == 3.0


def test_batch1_decode_bound_llama2_7b_a100(catalog):
    """gpt-fast's bound: 13.5 GB of bf16 weights over 2.039 TB/s is at most ~151 tokens/s."""
    from gpuplan.model.arch import ArchitectureSpec, resolve
    from gpuplan.hardware.serving_calibration import serving_constants
    from gpuplan.serving.model import Layout, build_replica

    arch = resolve(ArchitectureSpec.model_validate(catalog.models["llama-2-7b"].arch_fields()))[0]
    gpu = catalog.gpu("a100-sxm-80gb")
    weights = arch.total_params * 2
    bound_tps = memory_bound_tokens_per_s(weights, gpu.mem_bw_tb_per_s * 1e12)
    assert bound_tps == pytest.approx(151.3, rel=0.01)
    replica = build_replica(gpu, arch, Layout(), "bf16", "bf16", serving_constants(catalog), catalog)
    modelled = 1 / replica.decode_step(1, 105).total_s
    # Below the datasheet bound (MBU < 1, fixed latencies), above 60 % of it.
    assert 0.6 * bound_tps < modelled < bound_tps
    # A step streams every weight but the embedding table (looked up, one row per token):
    # 6,738,415,616 - 32,000 x 4,096 = 6,607,343,616 parameters x 2 bytes = 13,214,687,232 B, which
    # takes at least 13.2147 GB / 2.039 TB/s = 6.48 ms at the datasheet bandwidth.
    step = replica.decode_step(1, 105)
    assert step.weight_bytes == 13_214_687_232
    assert step.gemm_memory_s > 6.48e-3


def test_achieved_point_of_a_decode_step_sits_below_the_memory_roof(catalog):
    """Hand calculation: 2e12 FLOPs in 0.5 s is 4 TFLOP/s. A modelled batch-1 decode step of
    Llama-2-7B on A100 is memory-bound, and its achieved throughput lies under the memory roof
    (AI x bandwidth) by about the catalog's memory-bandwidth efficiency, never above it."""
    from gpuplan.model.arch import ArchitectureSpec, resolve
    from gpuplan.hardware.serving_calibration import serving_constants
    from gpuplan.serving.model import Layout, build_replica

    assert achieved_tflops(2e12, 0.5) == 4.0
    assert achieved_tflops(1e12, 0.0) is None
    arch = resolve(ArchitectureSpec.model_validate(catalog.models["llama-2-7b"].arch_fields()))[0]
    gpu = catalog.gpu("a100-sxm-80gb")
    step = build_replica(gpu, arch, Layout(), "bf16", "bf16", serving_constants(catalog), catalog).decode_step(1, 105)
    ai = arithmetic_intensity(step.flops, step.bytes)
    assert bound(ai, ridge_point(gpu.bf16_dense_tflops * 1e12, gpu.mem_bw_tb_per_s * 1e12)) == "memory"
    roof = attainable_flops(ai, gpu.bf16_dense_tflops * 1e12, gpu.mem_bw_tb_per_s * 1e12) / 1e12
    got = achieved_tflops(step.flops, step.total_s)
    assert 0.5 * gpu.efficiency.mem_bw * roof < got < gpu.efficiency.mem_bw * roof


def test_memory_bound_needs_positive_bytes():
    with pytest.raises(ValueError):
        memory_bound_tokens_per_s(0, 1e12)
    with pytest.raises(ValueError):
        ridge_point(1e12, 0)
