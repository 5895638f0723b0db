"""A GEMM's time against measured kernels: aiconfigurator's TensorRT-LLM 1.3.0rc20 GEMM tables
(ai-dynamo/aiconfigurator, systems/data/<gpu>/gemm/trtllm/1.3.0rc20/gemm_perf.parquet, commit
095f58a; fp8 less the measured dynamic-quantise kernels of quantize/trtllm/1.3.0rc20), the shape
Llama 3.1 70B's output projection at TP 1 (n = k = 8192). benchmarks/fit_gemm.py fits the knee to
17,082 such latencies."""

from __future__ import annotations

import pytest

from gpuplan.serving.engine import KERNELS_PER_LAYER
from gpuplan.serving.model import gemm_time_s
from gpuplan.serving.weights import compute_path


@pytest.mark.parametrize("gpu, precision, m, measured_us", [
    ("h200-sxm-141gb", "fp8", 64, 22.6),    # memory-bound: the weight stream and the launch share
    ("h100-sxm-80gb", "fp8", 128, 32.1),    # half-way to the ridge
    ("b200-sxm-180gb", "fp8", 256, 19.8),   # at the ridge: math 11.8 us, stream 12.3 us
    ("b200-sxm-180gb", "bf16", 256, 33.9),  # at the ridge: 23.2 us each
    ("b200-sxm-180gb", "fp8", 1024, 51.6),  # compute-bound
])
def test_gemm_time_reproduces_a_measured_kernel(catalog, k, gpu, precision, m, measured_us):
    """Math at the catalog's rate, stream at its bandwidth (8192^2 weights, 16-bit activations in
    and out), their smooth maximum plus one kernel's share of the per-layer latency. The additive
    knee used before gave 26.9 us at the B200 fp8 ridge (+36 %) and 49.4 us in bf16 (+46 %)."""
    g = catalog.gpu(gpu)
    path = compute_path(g, precision)
    rate = g.peak_tflops(path.math) * 1e12 * g.matmul_efficiency(path.math) * k.gemm_efficiency_vs_mamf
    bandwidth = g.mem_bw_tb_per_s * 1e12 * g.efficiency.mem_bw
    n = kk = 8192
    weight_bytes = {"fp8": 1.0, "bf16": 2.0}[precision]
    math_s = 2 * m * n * kk / rate
    stream_s = (n * kk * weight_bytes + (m * kk + m * n) * k.activation_bytes) / bandwidth
    t = gemm_time_s(math_s, stream_s, k.gemm_knee_exponent) + k.layer_latency_us / KERNELS_PER_LAYER * 1e-6
    assert t * 1e6 == pytest.approx(measured_us, rel=0.10)

