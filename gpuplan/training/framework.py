"""The training software a run uses, as a documented feature set (``[training] framework``).

Each framework (``catalog/calibration/training.toml``, ``[frameworks.*]``, with its source) says
which attention kernel it runs (FlashAttention, or the score matrix in memory), whether it has
interleaved pipelines, sequence parallelism, a distributed optimizer (ZeRO-1), FP8 recipes and
fully sharded data parallelism, how much of the tensor-parallel and expert-parallel
communication it hides behind compute, and its recompute policy. The features do two things:

* constrain the layout search (:func:`constrain`): a field the framework cannot run is fixed to
  what it does run (no interleaving -> VP 1; no distributed optimizer -> ZeRO 0; FSDP -> ZeRO 3
  without a pipeline), unless the run gives the field itself;
* shape the timing (``timing.layer_cost``): the attention kernel, the hidden share of TP and EP
  communication.

Left out, the framework is ``default_framework`` (megatron-core: what a team runs today), and the
plan's assumptions say so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from gpuplan.training.search import Fixed

FrameworkName = Literal["megatron-core", "megatron-lm", "megatron-deepspeed", "fsdp"]
FRAMEWORKS: tuple[str, ...] = ("megatron-core", "megatron-lm", "megatron-deepspeed", "fsdp")


class Framework(BaseModel):
    """One framework's features (a ``[frameworks.<name>]`` table of training.toml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: "flash" (no score matrix in HBM) or "materialized" (fused softmax over s x s scores).
    attention: Literal["flash", "materialized"]
    #: Interleaved 1F1B (virtual pipeline stages) is available.
    interleaved_pp: bool
    #: Pipeline parallelism is available at all (FSDP stacks shard instead).
    pipeline: bool = True
    #: Sequence parallelism is available (left to the search) or off unless the run sets it.
    sequence_parallel: bool
    #: ZeRO stages the framework runs: the search picks among them when the run gives none.
    zero_stages: tuple[int, ...] = Field(min_length=1)
    #: FP8 training recipes exist (Transformer Engine).
    fp8: bool
    #: Fraction of the tensor-parallel collectives hidden behind the GEMMs they feed
    #: (Transformer Engine userbuffers all-gather/reduce-scatter overlap); 0 = exposed.
    tp_comm_overlap: float = Field(ge=0, le=1)
    #: Expert-parallel all-to-all overlapped with another micro-batch's compute: the share of
    #: a layer's compute it can hide behind (dispatch/compute overlap); 0 = exposed.
    ep_comm_overlap: float = Field(ge=0, le=1)
    #: Recompute policy when the run gives none: "searched" (none/selective/full as memory
    #: needs) or "full" (every layer checkpointed, DeepSpeed's default).
    recompute: Literal["searched", "full"] = "searched"
    #: How the framework's published model TFLOP/s count attention: the full s x s score
    #: matrix, or its causal half (gpuplan/training/flops.py).
    flop_convention: Literal["full", "causal"] = "full"
    source: str = Field(min_length=1)


def constrain(fw: Framework, fixed: "Fixed") -> "Fixed":
    """``fixed`` with the layout fields the framework cannot vary set to what it runs.

    Fields the run gives are kept (a published run is what it is)."""
    changes: dict[str, object] = {}
    if not fw.interleaved_pp and fixed.vp is None:
        changes["vp"] = 1
    if not fw.pipeline and fixed.pp is None:
        changes["pp"] = 1
    if not fw.sequence_parallel and fixed.sequence_parallel is None:
        changes["sequence_parallel"] = False
    if len(fw.zero_stages) == 1 and fixed.zero is None:
        changes["zero"] = fw.zero_stages[0]
    if fw.recompute == "full" and fixed.recompute is None:
        changes["recompute"] = "full"
    return replace(fixed, **changes) if changes else fixed


def summary(name: str, fw: Framework) -> str:
    """One line for the plan's assumptions: what the framework does."""
    feats = ["FlashAttention" if fw.attention == "flash" else "score matrix in memory"]
    if fw.interleaved_pp:
        feats.append("interleaved PP")
    if not fw.pipeline:
        feats.append("no pipeline")
    if fw.sequence_parallel:
        feats.append("SP")
    feats.append("ZeRO " + "/".join(str(z) for z in fw.zero_stages))
    if fw.tp_comm_overlap:
        feats.append(f"TP comm {fw.tp_comm_overlap:.0%} overlapped")
    if fw.ep_comm_overlap:
        feats.append("EP all-to-all overlapped with compute")
    if fw.fp8:
        feats.append("FP8 recipes")
    if fw.recompute == "full":
        feats.append("full recompute")
    feats.append(f"model FLOPs count the {'causal half of the' if fw.flop_convention == 'causal' else 'full'} "
                 "attention score matrix")
    return f"{name}: " + ", ".join(feats)
