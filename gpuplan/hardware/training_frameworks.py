"""Schema of a training framework's feature set (``[frameworks.*]`` of
``catalog/calibration/training.toml``); what the features do is gpuplan/training/framework.py."""


from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuplan.hardware.record import Record

FrameworkName = Literal["megatron-core", "megatron-lm", "megatron-deepspeed", "fsdp"]
FRAMEWORKS: tuple[str, ...] = ("megatron-core", "megatron-lm", "megatron-deepspeed", "fsdp")


class Framework(Record):
    """One framework's features (a ``[frameworks.<name>]`` table of training.toml)."""

    #: "flash" (no score matrix in HBM; the GPU's native flash kernel: cuDNN / FlashAttention-3
    #: on Hopper and later), "flash2" (FlashAttention-2 on every GPU: PyTorch SDPA, flash-attn 2)
    #: or "materialized" (fused softmax over s x s scores).
    attention: Literal["flash", "flash2", "materialized"]
    #: Interleaved 1F1B (virtual pipeline stages) is available.
    interleaved_pp: bool
    #: Pipeline parallelism is available at all (FSDP stacks shard instead).
    pipeline: bool = True
    #: Context parallelism (ring attention over the sequence) is available; else CP 1.
    context_parallel: bool = True
    #: Sequence parallelism is available (left to the search) or off unless the run sets it.
    sequence_parallel: bool
    #: ZeRO stages the framework runs: the search picks among them when the run gives none.
    zero_stages: Annotated[tuple[int, ...], Field(min_length=1)]
    #: FP8 training recipes exist (Transformer Engine).
    fp8: bool
    #: Fraction of the tensor-parallel collectives hidden behind the GEMMs they feed
    #: (Transformer Engine userbuffers all-gather/reduce-scatter overlap); 0 = exposed.
    tp_comm_overlap: Annotated[float, Field(ge=0, le=1)]
    #: Expert-parallel all-to-all overlapped with another micro-batch's compute: the share of
    #: a layer's compute it can hide behind (dispatch/compute overlap); 0 = exposed.
    ep_comm_overlap: Annotated[float, Field(ge=0, le=1)]
    #: The data-parallel gradient reduction runs under the backward pass (bucketed, as
    #: gradients become ready) and the parameter all-gather under the forward; False: after
    #: the pipeline flush, exposed.
    dp_comm_overlap: bool = True
    #: With interleaved stages, the steady-state pipeline sends run under the compute of the
    #: next chunk; only those of the warm-up and the flush stay exposed. False: every send.
    pp_comm_overlap: bool = False
    #: Gradients are reduced in fp32 (a 32-bit main-gradient buffer); False: in the 16-bit
    #: training dtype.
    grad_reduce_fp32: bool = True
    #: Which MoE token dispatcher the framework runs (gpuplan/training/moe.py): "alltoall"
    #: (the permute + NCCL all-to-all dispatcher: dropless, it copies the token counts to the
    #: host and synchronises every MoE layer), "flex" (DeepEP / HybridEP: permutation fused
    #: into the dispatch kernels, no exposed host synchronisation), or "flex-rack-scale" (flex
    #: where the scale-up domain spans more than one server, as on NVL72 racks; else all-to-all).
    moe_dispatcher: Literal["alltoall", "flex", "flex-rack-scale"] = "alltoall"
    #: Hierarchical MoE dispatch (DeepEP, HybridEP): a token crosses the scale-out tier once per
    #: destination domain, then is forwarded over scale-up (groupcomm.group_all_to_all).
    ep_hierarchical_dispatch: bool = False
    #: Recompute policy when the run gives none: "searched" (none/selective/full as memory
    #: needs) or "full" (every layer checkpointed, DeepSpeed's default).
    recompute: Literal["searched", "full"] = "searched"
    #: How the framework's published model TFLOP/s count attention: the full s x s score
    #: matrix, or its causal half (gpuplan/training/flops.py).
    flop_convention: Literal["full", "causal"] = "full"
    source: Annotated[str, Field(min_length=1)]
