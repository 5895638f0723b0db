"""Predict the figures of serving validation cases (``[case.run]`` schema below).

Run fields (``../shared/validation/README.md``): ``gpu``, ``gpus``, ``tp``, ``pp``, ``ep``,
``precision``, ``kv_precision``, ``batch`` or ``scenario = "offline"``, ``prompt_tokens``,
``output_tokens``. ``gpus`` may be a multiple of the replica size (independent replicas).

Figures: ``decode_tokens_per_s`` (one sequence, at ``batch``; the offline batch without one),
``tpot_ms``, ``ttft_ms`` (the prefill of the batch's prompts, no queueing),
``output_tokens_per_s`` and ``output_tokens_per_s_per_gpu`` (a static ``batch`` run to
completion, or the offline maximum when no batch is given).
Percentile figures need an arrival process that a case does not describe: not modelled.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuplan.cases import CaseInput, NotModelled
from gpuplan.catalog.loader import Catalog
from gpuplan.errors import InputError
from gpuplan.io import pydantic_error
from gpuplan.serving.constants import serving_constants
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.fixed import evaluate_fixed
from gpuplan.serving.model import Layout

Count = Annotated[int, Field(ge=1, le=1_048_576, strict=True)]
FIGURES = ("decode_tokens_per_s", "tpot_ms", "ttft_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu")


class ServingRun(BaseModel):
    """``[case.run]`` of a serving case."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    engine: Literal["vllm", "sglang", "trtllm", "fastertransformer", "gpt-fast"] | None = None
    engine_version: str | None = Field(default=None, min_length=1, max_length=32, pattern=r"^[0-9A-Za-z.+_-]+$")
    gpu: str = Field(min_length=1, max_length=64)
    gpus: Count | None = None
    tp: Count = 1
    pp: Count = 1
    ep: Count = 1
    precision: Literal["bf16", "fp16", "fp8", "int8", "int4", "fp4"] = "bf16"
    kv_precision: Literal["bf16", "fp16", "fp8", "int8"] | None = None
    batch: Annotated[int, Field(ge=1, le=1_000_000, strict=True)] | None = None
    scenario: Literal["offline"] | None = None
    prompt_tokens: Annotated[int, Field(ge=1, le=2_097_152, strict=True)]
    output_tokens: Annotated[int, Field(ge=1, le=1_048_576, strict=True)]

    @model_validator(mode="after")
    def _one_mode(self) -> "ServingRun":
        if self.batch is not None and self.scenario is not None:
            raise ValueError("give batch or scenario, not both")
        return self


def _run(case: CaseInput) -> ServingRun:
    try:
        return ServingRun.model_validate(case.run)
    except ValidationError as exc:
        raise pydantic_error(exc, file=case.file, prefix=f"case[{case.id}].run",
                             known_fields={f"case[{case.id}].run": list(ServingRun.model_fields)}) from None


def predict(case: CaseInput, catalog: Catalog) -> dict[str, float]:
    """Predict each figure of ``case`` with the shared catalog factors."""
    if case.arch is None:
        raise NotModelled("a serving case needs a model")
    unknown = [f for f in case.figures if f not in FIGURES]
    if unknown:
        raise NotModelled(f"figure(s) not modelled for serving cases: {', '.join(unknown)} "
                          f"(modelled: {', '.join(FIGURES)})")
    run = _run(case)
    where = f"case[{case.id}].run"
    gpu = catalog.gpu(run.gpu, file=case.file, field_path=f"{where}.gpu")
    layout = Layout(tp=run.tp, pp=run.pp, ep=run.ep)
    problem = layout.check(case.arch)
    if problem:
        raise InputError(problem, file=case.file, field=where)
    size = layout.gpus
    gpus = run.gpus if run.gpus is not None else size
    if gpus % size:
        raise InputError(f"gpus ({gpus}) is not a multiple of the replica size tp*dp*pp = {size}",
                         file=case.file, field=f"{where}.gpus")
    replicas = gpus // size
    engine = resolve_engine(serving_constants(catalog), run.engine, run.engine_version)
    latency_figs = {"decode_tokens_per_s", "tpot_ms", "ttft_ms"} & set(case.figures)
    # A batch applies to every figure; "offline" likewise. With neither, latency figures are
    # batch-1 figures (README: decode_tokens_per_s is batch-1 decode) and throughput is offline.
    latency_batch = run.batch if run.batch is not None or run.scenario == "offline" else 1
    out: dict[str, float] = {}
    if latency_figs:
        lat = evaluate_fixed(case.arch, gpu, layout, run.precision, run.prompt_tokens, run.output_tokens, catalog,
                             kv_precision=run.kv_precision, batch=latency_batch, engine=engine)
        out.update(decode_tokens_per_s=lat.decode_tokens_per_s, tpot_ms=lat.tpot_ms, ttft_ms=lat.ttft_ms)
    if set(case.figures) - latency_figs:
        thr = evaluate_fixed(case.arch, gpu, layout, run.precision, run.prompt_tokens, run.output_tokens, catalog,
                             kv_precision=run.kv_precision, batch=run.batch, engine=engine)
        if run.batch is None and not thr.fits:
            raise InputError(f"the model does not fit {gpu.id} at tp {run.tp}, pp {run.pp} with "
                             f"{run.prompt_tokens + run.output_tokens}-token sequences", file=case.file, field=where)
        out["output_tokens_per_s"] = thr.output_tokens_per_s * replicas
        out["output_tokens_per_s_per_gpu"] = thr.output_tokens_per_s * replicas / gpus
    return {f: out[f] for f in case.figures}
