"""Costs of a mixture-of-experts layer beyond its expert weights and FLOPs.

A step whose MoE module sees ``T`` tokens routes ``T * k`` token copies to the experts (``k`` =
active experts); a GPU holding ``E / ep`` of the experts multiplies ``T k / ep`` of them. The
expert weights it streams (``E (1 - (1 - k/E)^T) / ep`` experts touched, serving/shapes.py) and
the expert FLOPs are counted with the other GEMMs; this module adds what the fused MoE module
costs on top (``catalog/calibration/serving.toml`` ``[moe]``, fitted to TensorRT-LLM's measured
CUTLASS fused-MoE latencies on H100, H200 and B200):

* a launch chain per MoE layer (router top-k, sort of the copies by expert, expand, the two
  grouped GEMMs with the gated activation between, finalize), in place of a dense MLP's three
  kernels;
* per routed copy and hidden element: gathering the copy into expert order, the grouped GEMMs'
  row tiles, the weighted scatter back. The measured cost per element is the same on H100, H200
  and B200: SM-bound index work, not HBM traffic. At few tokens per expert this is what a
  grouped GEMM loses against one large GEMM;
* per token and hidden element: the router input, the activation quantise, the output;
* per expert the step touches on the GPU: each group of the grouped GEMM ends in a partial wave
  of tiles and refills its pipeline (more for block-scaled FP4, whose scale factors are laid out
  per group).
"""

from __future__ import annotations

from gpuplan.model.arch import Architecture
from gpuplan.hardware.serving_calibration import Moe
from gpuplan.serving.shapes import expected_experts_touched

#: Kernels of a dense MLP (gate/up GEMM, activation, down GEMM): the share of the per-layer fixed
#: latency an MoE layer replaces with its own launch chain.
DENSE_MLP_KERNELS = 3


def moe_module_s(arch: Architecture, k: Moe, tokens: float, ep: int, dp: int, block_scaled: bool) -> float:
    """Seconds the MoE modules of one step add on one GPU, all MoE layers, launch chain excluded.

    ``tokens``: tokens of the replica's step; ``ep``: GPUs the experts are spread over (1 when
    tensor parallelism splits every expert instead, and each GPU sees every copy); ``dp``:
    attention data-parallel groups (a GPU routes only its group's tokens)."""
    if not arch.is_moe or tokens <= 0:
        return 0.0
    copies = tokens * arch.active_experts / ep
    experts = expected_experts_touched(arch.experts, arch.active_experts, tokens) / ep
    per_expert_us = k.expert_us + (k.expert_block_scaled_us if block_scaled else 0.0)
    per_layer = ((copies * k.copy_ps_per_element + tokens / dp * k.token_ps_per_element) * arch.hidden * 1e-12
                 + experts * per_expert_us * 1e-6)
    return arch.moe_layers * per_layer


def moe_launch_s(arch: Architecture, k: Moe, per_kernel_us: float) -> float:
    """Fixed latency the MoE layers add to a step: their launch chain less a dense MLP's kernels."""
    if not arch.is_moe:
        return 0.0
    return arch.moe_layers * max(0.0, k.layer_latency_us - DENSE_MLP_KERNELS * per_kernel_us) * 1e-6
