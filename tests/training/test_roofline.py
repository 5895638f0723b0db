"""The training roofline point: one layer's forward GEMMs per micro-batch against the ridge."""

from __future__ import annotations

import pytest

from gpuplan.model.arch import ArchitectureSpec, resolve
from gpuplan.training.roofline import layer_gemms, training_roofline


@pytest.fixture(scope="module")
def llama2_7b(catalog):
    arch, _ = resolve(ArchitectureSpec.model_validate(catalog.lookup("model", "llama-2-7b").arch_fields()))
    return arch


def test_layer_gemm_shapes_of_llama_2_7b(llama2_7b):
    # Llama 2 7B: hidden 4096, 32 heads of 128 (MHA), SwiGLU ffn 11008 (Touvron et al. 2023, Table 2 / config)
    assert layer_gemms(llama2_7b, 4096, 1) == [
        (4096, 4096, 12288),        # Q, K, V
        (4096, 4096, 4096),         # output projection
        (4096, 4096, 22016),        # gate + up
        (4096, 11008, 4096),        # down
    ]
    # TP splits the head and ffn dimensions (Megatron column / row parallel)
    assert layer_gemms(llama2_7b, 4096, 4)[2] == (4096, 4096, 5504)


def test_a_square_gemm_has_intensity_n_over_3():
    """2 N^3 FLOPs over 2 x 3 N^2 bytes (bf16 A, B and C once each) = N / 3 FLOP per byte."""
    from gpuplan.physics.roofline import arithmetic_intensity

    n = 6144
    assert arithmetic_intensity(2.0 * n ** 3, 2.0 * 3 * n * n) == pytest.approx(n / 3)


def test_h100_point_sits_right_of_the_ridge(catalog, llama2_7b):
    gpu = catalog.gpu("h100-sxm-80gb")
    rf = training_roofline(llama2_7b, gpu, "bf16", seq=4096, micro_batch=1, tp=1, cp=1)
    assert rf.ridge_flops_per_byte == pytest.approx(295.3, abs=0.05)   # 989.4 TFLOP/s dense BF16 / 3.35 TB/s
    (point,) = rf.points
    # The four GEMMs above at M = 4,096 tokens, 2 M K N FLOPs over 2 (M K + K N + M N) bytes each:
    #   QKV    412,316,860,416 FLOP / 234,881,024 B
    #   out    137,438,953,472      / 100,663,296
    #   gate+up 738,734,374,912     / 394,264,576
    #   down   369,367,187,456      / 213,909,504
    #   total 1,657,857,376,256 FLOP / 943,718,400 B = 1,756.7 FLOP/B, six times the ridge.
    assert point.flops_per_byte == pytest.approx(1756.73, abs=0.01)
    assert point.bound == "compute"


def test_a_tiny_micro_batch_with_wide_tp_turns_memory_bound(catalog, llama2_7b):
    rf = training_roofline(llama2_7b, catalog.gpu("h100-sxm-80gb"), "bf16", seq=128, micro_batch=1, tp=8, cp=1)
    assert rf.points[0].bound == "memory"
