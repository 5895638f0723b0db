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

Where the host time sits depends on the dispatcher and the schedule:

* the all-to-all dispatcher synchronises the host in each MoE layer's forward, before the
  all-to-all (``cuda_sync_point = "before_ep_alltoall"``: its split sizes must be on the host),
  so the launches of the forward expert loop that follow run in series with the GPU. The
  backward, launched by autograd with no synchronisation, runs ahead of the GPU; except under
  the EP all-to-all overlap (``overlap_moe_expert_parallel_comm``, a "combined 1F1B" that
  interleaves one micro-batch's forward with another's backward layer by layer), where the
  backward's expert loop is launched after the same synchronisation and is in series too.
  Evidence: NeMo 25.09 ran the same Qwen3-30B-A3B layouts with token dropping (static shapes,
  no synchronisation) at 2x the throughput of the 25.11 dropless rows on H100 and B200
  (Megatron-Bridge docs/performance-summary-archive.md: 10494 vs 5275 and 18066 vs 9299
  tokens/s/GPU);
* the flex dispatcher (DeepEP, HybridEP) fuses the global permutation into its dispatch kernels
  (no top-k copies before the dispatch, and the combine weights and sums the copies in its
  kernel), but the received copies still leave HybridEP's registered buffer through one permute
  kernel that sorts them by local expert and pads them for the MXFP8 GEMM, and go back the same
  way before the combine (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, 2025-11,
  section 2.5: the buffer-to-tensor copy, 10-20% of the communication time, fused with the
  permute and the padding). The 25.11 GB200 Qwen3-30B-A3B row with HybridEP matches the 25.09
  token-drop row (23766 vs 23723 tokens/s/GPU): the host synchronisation is what it saves.

Not modelled here: router load imbalance (the NeMo benchmarks force-balance the routing).
"""

from __future__ import annotations

from gpuplan.model.arch import Architecture
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.hardware.training_frameworks import Framework
from gpuplan.training.layout import Layout


def local_experts(arch: Architecture, layout: Layout) -> int:
    """Routed experts held by one GPU (EP splits them)."""
    return max(1, arch.experts // max(1, layout.ep))


def launches_per_expert(cal: TrainingCalibration, precision: str, block_scaled_fp8: bool) -> tuple[float, float]:
    """(forward, backward) kernel launches the host issues per local expert per micro-batch."""
    fwd, bwd = float(cal.moe_launches_per_expert_fwd), float(cal.moe_launches_per_expert_bwd)
    if precision == "fp8":
        per_cast = 1.0 if block_scaled_fp8 else 3.0       # MXFP8 cast, or amax, scale, cast
        fwd += 2 * per_cast                              # FC1 and FC2 inputs
        bwd += 2 * per_cast                              # the output gradients of FC2 and FC1
    return fwd, bwd


def dispatcher(named: str | None, fw: Framework, domain: int, gpus_per_node: int) -> str:
    """The MoE token dispatcher that runs: the one a run names, else the framework's
    ("flex-rack-scale": flex where the scale-up domain spans more than one server)."""
    if named is not None:
        return named
    if fw.moe_dispatcher == "flex-rack-scale":
        return "flex" if domain > gpus_per_node else "alltoall"
    return fw.moe_dispatcher


def host_seconds(arch: Architecture, layout: Layout, cal: TrainingCalibration, precision: str,
                 block_scaled_fp8: bool, loop_gpu: tuple[float, float] = (0.0, 0.0),
                 paired: bool = False) -> tuple[float, float]:
    """(forward, backward) exposed host seconds of one MoE layer for one micro-batch.

    After the dispatcher's synchronisation the host launches the expert loop while the GPU runs
    it: the loop takes the longer of the two, so what the host adds is its launch time beyond
    the GPU time of the loop's GEMMs (``loop_gpu``): large experts hide their launches, many
    small ones do not."""
    n = local_experts(arch, layout) * cal.moe_launch_us * 1e-6
    fwd, bwd = launches_per_expert(cal, precision, block_scaled_fp8)
    if paired:
        return n * fwd, n * bwd
    return max(0.0, n * fwd - loop_gpu[0]), max(0.0, n * bwd - loop_gpu[1])


def movement_bytes(arch: Architecture, tokens: float, local: int, cal: TrainingCalibration,
                   precision: str, block_scaled_fp8: bool, dispatch: str = "alltoall") -> float:
    """HBM bytes, one direction (the backward moves as many), of what a dropless MoE layer
    does to its ``tokens`` besides the GEMMs and the all-to-all, each a memory-bound kernel
    (Megatron-Core MoEAlltoAllTokenDispatcher with moe_permute_fusion, Transformer Engine
    GroupedLinear):

    * permutation: gather the k routed copies of each token (read and write k x h);
    * with more than one local expert, the received copies are sorted by expert after the
      dispatch and back before the combine (``sort_chunks_by_idxs``: read and write each time);
    * unpermutation: read the k copies, weight them, write one token (k + 1);
    * with the flex dispatcher only the copy of the received tokens out of its buffer into the
      experts' sorted input and back (read and write k x h each way; see the module docstring);
    * FP8: the expert GEMM inputs (k x h into FC1, k x expert FFN into FC2) are quantized by
      their own kernels (the grouped GEMM's split quantize, not fused into a norm as in the
      dense layers): read 2 B, write a row-wise and a column-wise 1 B copy, and with per-tensor
      current scaling (no block scaling) read once more for the amax: ``fp8_cast_bytes``.
    """
    h, k, a = arch.hidden, arch.active_experts, cal.activation_bytes
    if dispatch == "alltoall":
        copies = 2.0 * k + (4.0 * k if local > 1 else 0.0) + (k + 1.0)
    else:
        # Flex: the received copies are read and written once into the experts' sorted, padded
        # input, and once back into the combine buffer.
        copies = 4.0 * k
    total = a * tokens * h * copies
    if precision == "fp8":
        per_elem = cal.fp8_cast_bytes + (0.0 if block_scaled_fp8 else a)
        total += per_elem * tokens * k * (h + arch.expert_ffn)
    return total
