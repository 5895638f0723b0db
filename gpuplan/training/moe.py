"""MoE layers as they execute: token permutation and the host time of the expert loop.

Besides the expert GEMMs and the all-to-all (``timing.layer_cost``), a dropless MoE layer of
Megatron-Core (``--moe-token-dispatcher-type alltoall``) spends:

* **token permutation**: the routed copies of each token are gathered before the dispatch
  and scattered back (and weighted) after the combine, forward and backward: memory-bound
  traffic of ``tokens x (1 + k) x hidden`` elements each way (``moe_utils.permute`` /
  ``unpermute``);
* **host time per local expert**: the number of tokens each expert receives is only known on
  the device, so the dispatcher copies it to the host and synchronises every layer
  (``MoEAlltoAllTokenDispatcher``: ``tokens_per_expert.cpu()``). From there the GPU waits for
  the CPU to launch the expert loop: per local expert the FC1 and FC2 GEMMs and the activation
  forward, their dgrad, wgrad and activation backward, and with FP8 the quantisation of every
  GEMM input (two kernels per input with per-tensor scaling: amax, then cast; one with the
  MXFP8 block scaling of Blackwell, fused in the cast). Each launch costs ``moe_launch_us`` of
  host time, exposed. This is why models with many small experts per GPU reach a fraction of
  the MFU of dense models of the same active size, and why more experts per GPU (less EP)
  costs time per micro-batch whatever its size (NeMo 25.11 tables: Qwen3-30B-A3B on 8 B200
  reaches 214 model TFLOP/s, DeepSeek-V3 at EP 8 on B200 557, at EP 32 on GB200 1003).

Not modelled here: router load imbalance (the NeMo benchmarks force-balance the routing) and
the overlap of the all-to-all with another micro-batch's compute (a framework feature,
``ep_comm_overlap``).
"""

from __future__ import annotations

from gpuplan.model.arch import Architecture
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.training.layout import Layout


def local_experts(arch: Architecture, layout: Layout) -> int:
    """Routed experts held by one GPU (EP splits them)."""
    return max(1, arch.experts // max(1, layout.ep))


def launches_per_expert(cal: TrainingCalibration, precision: str, block_scaled_fp8: bool) -> tuple[float, float]:
    """(forward, backward) kernel launches the host issues per local expert per micro-batch."""
    fwd, bwd = float(cal.moe_launches_per_expert_fwd), float(cal.moe_launches_per_expert_bwd)
    if precision == "fp8":
        per_cast = 1.0 if block_scaled_fp8 else 2.0       # MXFP8 cast, or amax + cast
        fwd += 2 * per_cast                              # FC1 and FC2 inputs
        bwd += 2 * per_cast                              # the output gradients of FC2 and FC1
    return fwd, bwd


def host_seconds(arch: Architecture, layout: Layout, cal: TrainingCalibration, precision: str,
                 block_scaled_fp8: bool) -> tuple[float, float]:
    """(forward, backward) exposed host seconds of one MoE layer for one micro-batch."""
    n = local_experts(arch, layout) * cal.moe_launch_us * 1e-6
    fwd, bwd = launches_per_expert(cal, precision, block_scaled_fp8)
    return n * fwd, n * bwd


def permute_bytes(arch: Architecture, tokens: float, cal: TrainingCalibration) -> float:
    """HBM bytes of the forward token permutation and unpermutation of one micro-batch's
    ``tokens`` (read each token once and write its k routed copies, and back); the backward
    moves the same bytes."""
    return 2.0 * cal.activation_bytes * tokens * arch.hidden * (1 + arch.active_experts)
