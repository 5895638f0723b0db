"""Costs of a mixture-of-experts layer beyond its expert weights and FLOPs.

A step of ``T`` tokens routes ``T * k`` token copies to the experts (``k`` = active experts).
Expert ``e`` multiplies the ``m_e`` tokens it received, so each expert's GEMM has ``m_e`` rows:

* **tile padding**: tensor-core GEMMs compute whole row tiles (Hopper's ``wgmma`` and
  Blackwell's ``tcgen05.mma`` work on 64-row tiles; CUTLASS grouped GEMMs pad each group's rows to
  the tile). With ``m = T * k / E_touched`` tokens per touched expert the math covers
  ``ceil(m / 64) * 64`` rows: efficiency ``m / ceil(m / 64) / 64`` (0.25 at 16 tokens per expert,
  1 from 64 on). aiconfigurator models the same op from measured grouped-GEMM timings, keyed by
  tokens per expert (sdk/perf_database MoE tables).
* **routing and permute**: the router's top-k, the sort of token copies by expert, the
  expansion of each token's hidden state to its ``k`` copies before the first expert GEMM and the
  weighted sum of the ``k`` outputs after the second (TensorRT-LLM ``expandInputRows`` /
  ``finalizeMoeRouting``, vLLM ``moe_align_block_size`` / ``moe_sum``): ``4 * k * hidden``
  activation elements of DRAM traffic per token per MoE layer (written and read on each side),
  and three kernels more per MoE layer in the fixed cost.
"""

from __future__ import annotations

import math

from gpuplan.model.arch import Architecture
from gpuplan.serving.shapes import expected_experts_touched

#: Rows of one tensor-core tile (Hopper wgmma / Blackwell tcgen05 M = 64).
TILE_ROWS = 64
#: Kernels an MoE layer adds to a dense layer's: top-k routing, permute (sort + expand), finalize.
MOE_EXTRA_KERNELS = 3
#: Activation elements per token copy moved by permute and finalize (expand write + read,
#: finalize read + write of the hidden state).
PERMUTE_ELEMENTS_PER_COPY = 4


def tile_efficiency(experts: int, active: int, tokens: float) -> float:
    """Useful share of the rows the expert GEMMs compute for ``tokens`` routed tokens."""
    if experts <= 0 or tokens <= 0:
        return 1.0
    touched = expected_experts_touched(experts, active, tokens)
    per_expert = tokens * active / max(touched, 1e-9)
    return per_expert / (math.ceil(per_expert / TILE_ROWS) * TILE_ROWS)


def permute_elements_per_token(arch: Architecture) -> float:
    """Activation elements one token moves through routing and permute, all MoE layers."""
    if not arch.is_moe:
        return 0.0
    return arch.moe_layers * PERMUTE_ELEMENTS_PER_COPY * arch.active_experts * arch.hidden


def extra_kernels(arch: Architecture) -> int:
    """Kernels the MoE layers add to one step."""
    return arch.moe_layers * MOE_EXTRA_KERNELS if arch.is_moe else 0
