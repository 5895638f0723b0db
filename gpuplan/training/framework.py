"""The training software a run uses, as a documented feature set (``[training] framework``).

Each framework (``catalog/calibration/training.toml``, ``[frameworks.*]``, with its source) says
which attention kernel it runs (FlashAttention, or the score matrix in memory), whether it has
interleaved pipelines, sequence parallelism, a distributed optimizer (ZeRO-1), FP8 recipes and
fully sharded data parallelism, how much of the tensor-parallel and expert-parallel
communication it hides behind compute, and its recompute policy. The features do two things:

* constrain the layout search (:func:`constrain`): a field the framework cannot run is fixed to
  what it does run (no interleaving -> VP 1; no ring attention -> CP 1; no distributed
  optimizer -> ZeRO 0; FSDP -> ZeRO 3 without a pipeline), unless the run gives the field itself;
* shape the timing (``timing.layer_cost``): the attention kernel, the hidden share of TP and EP
  communication.

Left out, the framework is ``default_framework`` (megatron-core: what a team runs today), and the
plan's assumptions say so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from gpuplan.hardware.training_frameworks import FRAMEWORKS, Framework, FrameworkName

__all__ = ["FRAMEWORKS", "Framework", "FrameworkName", "constrain", "summary"]

F = TypeVar("F")


def constrain(fw: Framework, fixed: F) -> F:
    """``fixed`` (search.Fixed) with the layout fields the framework cannot vary set to what it runs.

    Fields the run gives are kept (a published run is what it is)."""
    changes: dict[str, object] = {}
    if not fw.interleaved_pp and getattr(fixed, "vp") is None:
        changes["vp"] = 1
    if not fw.pipeline and getattr(fixed, "pp") is None:
        changes["pp"] = 1
    if not fw.context_parallel and getattr(fixed, "cp") is None:
        changes["cp"] = 1
    if not fw.sequence_parallel and getattr(fixed, "sequence_parallel") is None:
        changes["sequence_parallel"] = False
    if len(fw.zero_stages) == 1 and getattr(fixed, "zero") is None:
        changes["zero"] = fw.zero_stages[0]
    if fw.recompute == "full" and getattr(fixed, "recompute") is None:
        changes["recompute"] = "full"
    return replace(fixed, **changes) if changes else fixed  # type: ignore[type-var]


def summary(name: str, fw: Framework) -> str:
    """One line for the plan's assumptions: what the framework does."""
    feats = [{"flash": "FlashAttention", "flash2": "FlashAttention-2"}.get(fw.attention, "score matrix in memory")]
    if fw.interleaved_pp:
        feats.append("interleaved PP")
    if not fw.pipeline:
        feats.append("no pipeline")
    if fw.sequence_parallel:
        feats.append("SP")
    if fw.context_parallel:
        feats.append("CP")
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
