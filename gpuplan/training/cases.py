"""Predict the figures of training validation cases (``gpuplan validate``).

A case's ``[case.run]`` table is validated by :class:`RunSpec`; fields it leaves out are the
planner's to choose: the layout fields are searched with the given ones fixed, a missing GPU
count is planned for the profile's default deadline on the catalog's reference network.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuplan.cases import CaseInput, NotModelled
from gpuplan.catalog.loader import Catalog
from gpuplan.errors import InputError, field_path
from gpuplan.network import network_for
from gpuplan.profile import DEFAULT_DEADLINE_DAYS
from gpuplan.training.calibration import calibration
from gpuplan.training.flops import training_flops
from gpuplan.training.memory import GIB
from gpuplan.training.planner import batch_sequences
from gpuplan.training.search import Evaluator, Fixed, Target, search
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


def parse_run(case: CaseInput) -> RunSpec:
    try:
        return RunSpec.model_validate(case.run)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(err["msg"], file=case.file, field=field_path([f"case[{case.id}].run", *err["loc"]])) from None


def predict(case: CaseInput, catalog: Catalog) -> dict[str, float]:
    unknown = [f for f in case.figures if f not in FIGURES]
    if unknown:
        raise NotModelled(f"the training model does not predict {', '.join(unknown)}")
    if case.arch is None:
        raise NotModelled("a training case needs a model")
    run = parse_run(case)
    where = f"case[{case.id}].run"
    arch = case.arch
    if run.sequence_length is None:
        raise InputError("sequence_length is required", file=case.file, field=f"{where}.sequence_length")
    seq = run.sequence_length
    out: dict[str, float] = {}
    if "total_flops" in case.figures:
        if run.tokens is None:
            raise InputError("total_flops needs tokens", file=case.file, field=f"{where}.tokens")
        out["total_flops"] = training_flops(arch, run.tokens, seq)
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
        raise InputError("give global_batch_sequences or global_batch_tokens", file=case.file,
                         field=f"{where}.global_batch_sequences")
    if run.tokens is None and any(f in rest for f in ("gpu_hours", "wall_clock_days")):
        raise InputError("gpu_hours and wall_clock_days need tokens", file=case.file, field=f"{where}.tokens")
    tokens = run.tokens if run.tokens is not None else float(batch * seq)
    job = Job(arch=arch, seq=seq, batch=batch, precision=run.precision, tokens=tokens)
    cal = calibration(catalog)
    ev = Evaluator(job, gpu, network_for(gpu, catalog), cal)
    fixed = Fixed(tp=run.tp, pp=run.pp, cp=run.cp, ep=run.ep, vp=run.vp, micro_batch=run.micro_batch,
                  recompute=run.recompute, sequence_parallel=run.sequence_parallel, zero=run.zero)
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
