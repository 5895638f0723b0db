"""Where a training step sits on the chosen GPU's roofline (Williams et al., CACM 2009).

One point: the GEMMs of one transformer layer's forward pass for one micro-batch on one GPU,
with the chosen TP and CP (the shapes :mod:`gpuplan.training.timing` times): QKV and output
projections and the MLP (or, in an MoE layer, one expert at balanced top-k routing). FLOPs are
``2 t k n`` per GEMM; HBM bytes read the two operands and write the result once
(``bytes x (t k + k n + t n)``, 2-byte operands, 1-byte in FP8). The arithmetic intensity is
their ratio, compared with the ridge point ``peak / bandwidth`` of the GPU at the training
precision. Attention's score and softmax kernels (FlashAttention) are left out: they are fused
and their HBM traffic is not that of a plain GEMM.
"""

from __future__ import annotations

from gpuplan.core.units import dtype_bytes
from gpuplan.model.arch import Architecture
from gpuplan.hardware.schema import Gpu
from gpuplan.core.contract import RooflinePoint, TrainingRoofline
from gpuplan.physics.roofline import arithmetic_intensity, bound, ridge_point
from gpuplan.training.flops import attention_dims


def layer_gemms(arch: Architecture, tokens: float, tp: int) -> list[tuple[float, float, float]]:
    """(tokens, k, n) of each forward GEMM of one layer on one GPU (Megatron TP splits)."""
    h, t = arch.hidden, tp
    d_qk, d_v = attention_dims(arch)
    qkv = (arch.heads * d_qk + arch.kv_heads * (d_qk + d_v)) / t
    gemms = [(tokens, h, qkv), (tokens, arch.heads * d_v / t, h)]
    if arch.is_moe:
        per_expert = tokens * arch.active_experts / arch.experts
        ffn, width = arch.expert_ffn, per_expert
    else:
        ffn, width = arch.ffn / t, tokens
    gemms.append((width, h, ffn * (2 if arch.gated_mlp else 1)))
    gemms.append((width, ffn, h))
    return gemms


def training_roofline(arch: Architecture, gpu: Gpu, precision: str, *, seq: int, micro_batch: int, tp: int,
                      cp: int) -> TrainingRoofline | None:
    """The layer-GEMM point of a training layout on ``gpu``; None without a peak for ``precision``."""
    peak = gpu.peak_tflops(precision)
    if not peak:
        return None
    operand_bytes = dtype_bytes(precision)
    tokens = micro_batch * seq / cp
    flops = sum(2.0 * m * k * n for m, k, n in layer_gemms(arch, tokens, tp))
    moved = sum(operand_bytes * (m * k + k * n + m * n) for m, k, n in layer_gemms(arch, tokens, tp))
    ridge = ridge_point(peak * 1e12, gpu.mem_bw_tb_per_s * 1e12)
    ai = arithmetic_intensity(flops, moved)
    label = f"layer GEMMs ({tokens:,.0f} tokens per micro-batch, TP{tp})"
    return TrainingRoofline(peak_tflops=peak, mem_bw_tb_per_s=gpu.mem_bw_tb_per_s, ridge_flops_per_byte=ridge,
                            points=[RooflinePoint(name=label, flops_per_byte=ai, bound=bound(ai, ridge))])
