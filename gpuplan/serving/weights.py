"""Weights of a served model: bytes by part at each precision, and how a GPU multiplies them.

Split out of :mod:`gpuplan.serving.model` (which re-exports these names); the rules and their
sources are in docs/serving-model.md.
"""

from __future__ import annotations

from gpuplan.core.records import dataclass

from gpuplan.core.units import DTYPE_BITS
from gpuplan.model.arch import Architecture
from gpuplan.hardware.schema import Gpu
from gpuplan.hardware.serving_calibration import ServingConstants

#: Bits per stored weight of each serving precision (format definitions).


# -- compute dtype -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ComputePath:
    """How weights of one precision are multiplied on one GPU."""

    precision: str
    #: dtype of the tensor-core math.
    math: str
    #: False when the GPU lacks the format's math and the weights are dequantised (weight-only).
    native: bool
    note: str = ""


def sixteen_bit(gpu: Gpu) -> str:
    """The GPU's 16-bit math: bf16 where it has bf16 tensor cores, else fp16 (T4, V100)."""
    return "bf16" if gpu.bf16_dense_tflops else "fp16"


def compute_path(gpu: Gpu, precision: str) -> ComputePath:
    """Math dtype for weights stored at ``precision`` on ``gpu``.

    bf16/fp16: 16-bit math (fp16 where bf16 is missing). int8/int4: weight-only quantisation,
    16-bit math (AWQ/GPTQ/Marlin kernels dequantise in registers). fp8: fp8 math where the GPU
    has it, else weight-only fp8 with 16-bit math. fp4: fp4 math where supported, else
    dequantised to fp8 math, else to 16-bit math; weight bytes stay 4-bit plus scales.
    """
    base = sixteen_bit(gpu)
    if precision in ("bf16", "fp16"):
        math_dtype = "fp16" if precision == "fp16" or base == "fp16" else "bf16"
        note = "" if math_dtype == precision else f"{gpu.id} has no bf16 tensor cores: fp16 math"
        return ComputePath(precision, math_dtype, True, note)
    if precision in ("int8", "int4"):
        return ComputePath(precision, base, True, f"{precision} weight-only: {base} math")
    if precision == "fp8":
        if gpu.fp8_dense_tflops:
            return ComputePath(precision, "fp8", True)
        return ComputePath(precision, base, False,
                           f"{gpu.id} has no fp8 tensor cores: fp8 weights served weight-only, {base} math")
    if precision == "fp4":
        if gpu.fp4_dense_tflops:
            return ComputePath(precision, "fp4", True)
        fallback = "fp8" if gpu.fp8_dense_tflops else base
        return ComputePath(precision, fallback, False,
                           f"{gpu.id} has no fp4 tensor cores: fp4 weights dequantised to {fallback} math")
    raise ValueError(f"unknown precision {precision!r}")


def weight_stream_factor(path: ComputePath, k: ServingConstants) -> float:
    """Bandwidth share a GEMM keeps when it dequantises its weights in the loop (weight-only int8/
    int4, fp8 without fp8 math, fp4 without fp4 math); 1 when the format is multiplied natively."""
    weight_only = path.precision in ("int8", "int4") or (path.precision in ("fp8", "fp4") and not path.native)
    return k.weight_only_factor(path.precision) if weight_only else 1.0


def default_kv_precision(precision: str) -> str:
    """KV dtype when none is given: follows the weights (bf16/fp16/fp8), fp8 for fp4, else bf16.

    Same rule as the profile (gpuplan/model/profile.py)."""
    if precision in ("bf16", "fp16", "fp8"):
        return precision
    return "fp8" if precision == "fp4" else "bf16"


# -- weights -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WeightBytes:
    """Bytes of the whole model by part, at a serving precision."""

    attention: float     # all layers' attention projections (quantised)
    dense_mlp: float     # MLPs of the dense layers (quantised)
    expert: float        # one routed expert of one layer (quantised)
    shared: float        # shared experts of one MoE layer (quantised)
    router: float        # all routers (16-bit)
    norms: float         # all norms (16-bit)
    embedding: float     # 16-bit
    lm_head: float       # 16-bit; 0 when tied to the embedding
    moe_layers: int
    experts: int

    @property
    def layer_parts(self) -> float:
        """Everything that scales with the layer count."""
        return (self.attention + self.dense_mlp + self.moe_layers * (self.experts * self.expert + self.shared)
                + self.router + self.norms)

    @property
    def total(self) -> float:
        return self.layer_parts + self.embedding + self.lm_head


def weight_bytes(arch: Architecture, precision: str, k: ServingConstants) -> WeightBytes:
    """Weight bytes by part: linear layers at ``bits + scale bits``, the rest in 16 bit.

    Quantisation recipes (TensorRT Model Optimizer, vLLM fp8/AWQ/GPTQ, NVFP4 checkpoints) quantise
    the linear layers of the transformer blocks and keep embeddings, LM head, norms and routers in
    16 bit.
    """
    q = (DTYPE_BITS[precision] + k.scale_bits(precision)) / 8
    half = 2.0
    head = 0 if arch.tied_embeddings else arch.vocab * arch.hidden
    return WeightBytes(
        attention=arch.layers * arch.attention_params_per_layer * q,
        dense_mlp=arch.dense_layer_count * arch.dense_mlp_params * q,
        expert=arch.expert_params * q if arch.is_moe else 0.0,
        shared=arch.shared_experts * arch.expert_params * q if arch.is_moe else 0.0,
        router=arch.moe_layers * arch.hidden * arch.experts * half,
        norms=(2 * arch.layers + 1) * arch.hidden * half,
        embedding=arch.vocab * arch.hidden * half,
        lm_head=head * half,
        moe_layers=arch.moe_layers,
        experts=arch.experts,
    )
