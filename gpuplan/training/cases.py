"""Predict the figures of training validation cases (``gpuplan validate``).

A case's ``[case.run]`` table is validated by :class:`RunSpec`; fields it leaves out are the
planner's to choose: the layout fields are searched with the given ones fixed (and with what the
case's ``framework`` runs), a missing sequence length or global batch takes the profile default
``gpuplan recommend`` would use, a missing GPU count is planned for the profile's default
deadline on the catalog's reference network.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuplan.model.case import CaseInput, NotModelled
from gpuplan.hardware.loader import Catalog
from gpuplan.core.errors import InputError, field_path
from gpuplan.physics.network import network_for
from gpuplan.model.profile_schema import PowerCapW
from gpuplan.model.profile import DEFAULT_DEADLINE_DAYS, DEFAULT_SEQUENCE_LENGTH, default_batch_tokens
from gpuplan.hardware.training_calibration import calibration
from gpuplan.training.flops import training_flops
from gpuplan.training.memory import GIB
from gpuplan.training.planner import batch_sequences
from gpuplan.training.search import Evaluator, Fixed, Target, search
from gpuplan.training.stages import layout_layers, rank_layers
from gpuplan.training.timing import Job

_PosInt = Annotated[int, Field(ge=1, strict=True)]

#: Figures this model predicts; anything else raises NotModelled.
FIGURES = frozenset({"model_tflops_per_gpu", "hardware_tflops_per_gpu", "iteration_time_s", "gpu_hours",
                     "wall_clock_days", "total_flops", "model_state_gib", "activation_gib"})


class RunSpec(BaseModel):
    """``[case.run]`` of a training case (shared/validation/README.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    framework: Literal["megatron-lm", "megatron-deepspeed", "megatron-core", "fsdp"] | None = None
    gpu: str | None = None
    gpus: Annotated[int, Field(ge=1, le=1_048_576, strict=True)] | None = None
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    sequence_length: Annotated[int, Field(ge=1, le=2_097_152, strict=True)] | None = None
    global_batch_sequences: _PosInt | None = None
    global_batch_tokens: Annotated[float, Field(gt=0, le=1e10, allow_inf_nan=False)] | None = None
    tokens: Annotated[float, Field(gt=0, le=1e16, allow_inf_nan=False)] | None = None
    tp: _PosInt | None = None
    pp: _PosInt | None = None
    cp: _PosInt | None = None
    ep: _PosInt | None = None
    vp: _PosInt | None = None
    micro_batch: _PosInt | None = None
    recompute: Literal["none", "selective", "full"] | None = None
    sequence_parallel: bool | None = None
    zero: Annotated[int, Field(ge=0, le=3, strict=True)] | None = None
    #: The MoE token dispatcher the run used, where its source names it (moe.py).
    moe_dispatcher: Literal["alltoall", "flex"] | None = None
    #: A power cap per GPU in watts, where the source states one (Llama 2's 350 W runs); the
    #: bounds of the profile's ``[training] gpu_power_cap_w``.
    gpu_power_cap_w: PowerCapW | None = None
    #: How the layers are split over the pipeline stages, where the source states it
    #: (stages.rank_layers: ``account-embedding-loss``, or a Megatron-Core layout string).
    pipeline_split: str | None = None


def parse_run(case: CaseInput) -> RunSpec:
    try:
        return RunSpec.model_validate(case.run)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(err["msg"], file=case.file, field=field_path([f"case[{case.id}].run", *err["loc"]])) from None


def check_split(layers: int, pp: int | None, vp: int | None, split: str, file: str, field: str) -> None:
    """InputError unless ``split`` (stages.rank_layers) applies to ``layers`` on the given PP and VP."""
    if pp is None:
        raise InputError("a pipeline_split needs pp", file=file, field=field)
    try:
        rank_layers(layers, pp, split, vp or 1)
        if "|" in split and (vp or 1) != layout_layers(split, pp)[1]:
            raise ValueError(f"the layout has {layout_layers(split, pp)[1]} virtual stages per rank, vp is {vp or 1}")
    except ValueError as exc:
        raise InputError(str(exc), file=file, field=field) from None


def _folds(run: RunSpec) -> bool:
    """Whether the run's EP can only come from TP x DP x CP (MoE parallel folding): a run that
    gives GPUs, TP, PP, CP and EP with EP not dividing DP x CP (Megatron-Core, expert TP 1)."""
    if None in (run.gpus, run.tp, run.ep) or run.tp == 1 or run.ep == 1:
        return False
    model_parallel = run.tp * (run.pp or 1) * (run.cp or 1)
    if run.gpus % model_parallel:
        return False
    dp_cp = run.gpus // model_parallel * (run.cp or 1)
    return dp_cp % run.ep != 0 and (dp_cp * run.tp) % run.ep == 0


def predict(case: CaseInput, catalog: Catalog) -> dict[str, float]:
    unknown = [f for f in case.figures if f not in FIGURES]
    if unknown:
        raise NotModelled(f"the training model does not predict {', '.join(unknown)}")
    if case.arch is None:
        raise NotModelled("a training case needs a model")
    run = parse_run(case)
    where = f"case[{case.id}].run"
    arch = case.arch
    cal = calibration(catalog)
    fw = cal.framework(run.framework)
    if run.precision == "fp8" and not fw.fp8:
        raise InputError(f"{run.framework} has no FP8 training recipe", file=case.file, field=f"{where}.precision")
    # A field left out is the planner's to choose: the profile defaults recommend would use.
    seq = run.sequence_length if run.sequence_length is not None else DEFAULT_SEQUENCE_LENGTH
    out: dict[str, float] = {}
    if "total_flops" in case.figures:
        if run.tokens is None:
            raise InputError("total_flops needs tokens", file=case.file, field=f"{where}.tokens")
        out["total_flops"] = training_flops(arch, run.tokens, seq, fw.flop_convention == "causal")
    rest = [f for f in case.figures if f != "total_flops"]
    if not rest:
        return out
    if run.gpu is None:
        raise InputError(f"{', '.join(rest)} need a gpu", file=case.file, field=f"{where}.gpu")
    gpu = catalog.gpu(run.gpu, file=case.file, field_path=f"{where}.gpu")
    if run.global_batch_sequences is not None:
        batch = run.global_batch_sequences
    elif run.global_batch_tokens is not None:
        batch = batch_sequences(run.global_batch_tokens, seq)
    else:
        batch = batch_sequences(default_batch_tokens(float(arch.total_params)), seq)
    if run.tokens is None and any(f in rest for f in ("gpu_hours", "wall_clock_days")):
        raise InputError("gpu_hours and wall_clock_days need tokens", file=case.file, field=f"{where}.tokens")
    tokens = run.tokens if run.tokens is not None else float(batch * seq)
    if run.pipeline_split is not None:
        check_split(arch.layers, run.pp, run.vp, run.pipeline_split, case.file, f"{where}.pipeline_split")
    job = Job(arch=arch, seq=seq, batch=batch, precision=run.precision, tokens=tokens, framework=run.framework,
              moe_dispatcher=run.moe_dispatcher, gpu_power_cap_w=run.gpu_power_cap_w, pipeline_split=run.pipeline_split)
    ev = Evaluator(job, gpu, network_for(gpu, catalog), cal)
    fixed = Fixed(tp=run.tp, pp=run.pp, cp=run.cp, ep=run.ep, vp=run.vp, micro_batch=run.micro_batch,
                  recompute=run.recompute, sequence_parallel=run.sequence_parallel, zero=run.zero,
                  fold_experts=_folds(run))
    if run.gpus is not None:
        target = Target(kind="gpus", gpus=run.gpus, whole_nodes=False)
    else:
        target = Target(kind="deadline", deadline_days=DEFAULT_DEADLINE_DAYS)
    found = search(ev, fixed, target, top=1)
    if not found.best and found.min_memory < float("inf"):
        # A published run did fit on this GPU: when gpuplan's memory model (runtime overhead and
        # fragmentation included) puts every layout of the case over the GPU, predict the run at
        # the leanest layout rather than call it unmodelled (docs/validation.md).
        ev.capacity = found.min_memory * (1 + 1e-9)
        found = search(ev, fixed, target, top=1)
    if not found.best:
        need = f"; the best layout needs {found.min_memory / GIB:.1f} GiB per GPU" if found.min_memory < float("inf") else ""
        raise NotModelled(f"no layout of this case fits or runs on {gpu.id}{need}")
    best = found.best[0]
    values = {
        "model_tflops_per_gpu": best.model_tflops_per_gpu,
        "hardware_tflops_per_gpu": best.hardware_tflops_per_gpu,
        "iteration_time_s": best.step_time,
        "gpu_hours": best.gpu_hours,
        "wall_clock_days": best.wall_days,
        "model_state_gib": best.memory.model_states / GIB,
        "activation_gib": best.memory.activations / GIB,
    }
    out.update({f: values[f] for f in rest})
    return out
