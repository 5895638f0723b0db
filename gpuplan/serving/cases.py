"""Predict the figures of serving validation cases (``[case.run]`` schema below).

Run fields (``../shared/validation/README.md``): ``gpu``, ``gpus``, ``tp``, ``pp``, ``ep`` (the
layout is searched as ``recommend`` searches it when ``tp`` is left out, and ``ep`` when an MoE case
leaves it out: best per-GPU throughput, or lowest latency for latency-only cases), ``engine``,
``engine_version`` (:mod:`gpuplan.serving.engine`; left out = current vLLM),
``precision``, ``kv_precision``, ``batch`` or ``scenario = "offline"``, ``prompt_tokens``,
``output_tokens``, for an offline run the ``requests`` it sent where the source states them (the
engine never holds more sequences than the run has requests), and ``context_tokens``, the engine's
maximum model length where the run set one (the model's ``max_context_tokens`` otherwise).
``gpus`` may be a multiple of the replica size (independent replicas).

Figures: ``decode_tokens_per_s`` (one sequence, at ``batch``; the offline batch without one),
``tpot_ms``, ``ttft_ms`` (the prefill of the batch's prompts, no queueing),
``output_tokens_per_s`` and ``output_tokens_per_s_per_gpu`` (a static ``batch`` run to
completion, or the offline maximum when no batch is given).
Percentile figures need an arrival process that a case does not describe: not modelled.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuplan.model.case import CaseInput, NotModelled
from gpuplan.hardware.loader import Catalog
from gpuplan.core.errors import InputError
from gpuplan.core.io import pydantic_error
from gpuplan.hardware.schema import Gpu
from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.serving.engine import Engine, resolve_engine
from gpuplan.serving.links import links_for
from gpuplan.serving.fixed import evaluate_fixed
from gpuplan.serving.model import Layout
from gpuplan.serving.planner import candidate_layouts

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
    #: Requests an offline run sent (benchmark ``--num-prompts``): the batch never exceeds them.
    requests: Count | None = None
    #: The engine's maximum model length where the run set it (vLLM ``--max-model-len``); else the
    #: model's ``max_context_tokens``. Some releases pick their scheduler by it (engine.on_context).
    context_tokens: Count | None = None
    prompt_tokens: Annotated[int, Field(ge=1, le=2_097_152, strict=True)]
    output_tokens: Annotated[int, Field(ge=1, le=1_048_576, strict=True)]

    @model_validator(mode="after")
    def _one_mode(self) -> "ServingRun":
        if self.batch is not None and self.scenario is not None:
            raise ValueError("give batch or scenario, not both")
        if self.requests is not None and self.batch is not None:
            raise ValueError("requests describes an offline run: give it with scenario = \"offline\", not with batch")
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
    k = serving_constants(catalog)
    engine = resolve_engine(k, run.engine, run.engine_version)
    layouts = _layouts(case, run, gpu, catalog)
    if len(layouts) == 1:
        out = _figures(case, run, gpu, layouts[0], engine, catalog, where)
        return {f: out[f] for f in case.figures}
    # The layout is the planner's to choose (README: searched when tp is not given): the best
    # per-GPU throughput when a throughput figure is asked, else the lowest latency.
    best: tuple[float, dict[str, float]] | None = None
    for lay in layouts:
        try:
            out = _figures(case, run, gpu, lay, engine, catalog, where)
        except InputError:
            continue
        score = _score(out, case.figures)
        if best is None or score < best[0]:
            best = (score, {f: out[f] for f in case.figures})
    if best is None:
        raise InputError(f"no layout of {run.gpus or 'any number of'} {gpu.id} GPUs holds the model with "
                         f"{run.prompt_tokens + run.output_tokens}-token sequences", file=case.file, field=where)
    return best[1]


def _layouts(case: CaseInput, run: ServingRun, gpu: Gpu, catalog: Catalog) -> list[Layout]:
    """The given layout, or the planner's candidates that match the given fields and divide ``gpus``.

    Searched when ``tp`` is not given, and ``ep`` when an MoE case gives none."""
    given = run.model_fields_set
    arch = case.arch
    assert arch is not None
    if "tp" in given and ("ep" in given or not arch.is_moe):
        return [Layout(tp=run.tp, pp=run.pp, ep=run.ep)]
    k = serving_constants(catalog)
    links = links_for(gpu, catalog, k.collective_launch_us, k.all_reduce.algorithm)
    out = []
    for lay in candidate_layouts(arch, links):
        if any(f in given and getattr(lay, f) != getattr(run, f) for f in ("tp", "pp", "ep")):
            continue
        if run.gpus is not None and (lay.gpus > run.gpus or run.gpus % lay.gpus):
            continue
        out.append(lay)
    if "tp" in given and not out:
        return [Layout(tp=run.tp, pp=run.pp, ep=run.ep)]
    return out or [Layout(tp=run.tp, pp=run.pp, ep=run.ep)]


def _score(out: dict[str, float], figures: tuple[str, ...]) -> float:
    """Lower is better: minus the throughput per GPU when a throughput figure is asked, else the
    latency figure asked."""
    if {"output_tokens_per_s", "output_tokens_per_s_per_gpu"} & set(figures):
        return -out["output_tokens_per_s_per_gpu"]
    if "ttft_ms" in figures and not {"tpot_ms", "decode_tokens_per_s"} & set(figures):
        return out["ttft_ms"]
    return out["tpot_ms"]


def _figures(case: CaseInput, run: ServingRun, gpu: Gpu, layout: Layout, engine: Engine, catalog: Catalog,
             where: str) -> dict[str, float]:
    """Every figure of ``case`` at one layout (``gpus`` / layout.gpus independent replicas)."""
    assert case.arch is not None
    problem = layout.check(case.arch)
    if problem:
        raise InputError(problem, file=case.file, field=where)
    size = layout.gpus
    gpus = run.gpus if run.gpus is not None else size
    if gpus % size:
        raise InputError(f"gpus ({gpus}) is not a multiple of the replica size tp*dp*pp = {size}",
                         file=case.file, field=f"{where}.gpus")
    replicas = gpus // size
    latency_figs = {"decode_tokens_per_s", "tpot_ms", "ttft_ms"} & set(case.figures)
    # A batch applies to every figure; "offline" likewise. With neither, latency figures are
    # batch-1 figures (README: decode_tokens_per_s is batch-1 decode) and throughput is offline.
    latency_batch = run.batch if run.batch is not None or run.scenario == "offline" else 1
    requests = None if run.requests is None else max(1, run.requests // replicas)
    context = run.context_tokens or case.arch.max_context_tokens or None
    out: dict[str, float] = {}
    if latency_figs:
        lat = evaluate_fixed(case.arch, gpu, layout, run.precision, run.prompt_tokens, run.output_tokens, catalog,
                             kv_precision=run.kv_precision, batch=latency_batch, engine=engine, requests=requests,
                             context_tokens=context)
        out.update(decode_tokens_per_s=lat.decode_tokens_per_s, tpot_ms=lat.tpot_ms, ttft_ms=lat.ttft_ms)
    if set(case.figures) - latency_figs:
        thr = evaluate_fixed(case.arch, gpu, layout, run.precision, run.prompt_tokens, run.output_tokens, catalog,
                             kv_precision=run.kv_precision, batch=run.batch, engine=engine, requests=requests,
                             context_tokens=context)
        if run.batch is None and not thr.fits:
            raise InputError(f"the model does not fit {gpu.id} at tp {layout.tp}, pp {layout.pp} with "
                             f"{run.prompt_tokens + run.output_tokens}-token sequences", file=case.file, field=where)
        out["output_tokens_per_s"] = thr.output_tokens_per_s * replicas
        out["output_tokens_per_s_per_gpu"] = thr.output_tokens_per_s * replicas / gpus
    return out
