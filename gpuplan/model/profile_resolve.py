"""A validated profile resolved into a :class:`~gpuplan.model.workload.Workload`, in named steps:
the model, the training phase, the serving phase, the constraints. Every default applied becomes an
:class:`~gpuplan.model.workload.Assumption` (docs/profile.md lists each with its reason)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from gpuplan.core.cost_contract import TCO_FIELDS
from gpuplan.core.errors import InputError
from gpuplan.core.io import contained_path
from gpuplan.model.arch import Architecture, ArchitectureSpec, derive_from_params, resolve
from gpuplan.model.profile_schema import (
    ConstraintsSection, ModelSection, Profile, ServingSection, TrainingSection, WorkloadCatalog,
)
from gpuplan.model.workload import Assumption, Constraints, ServingSpec, TrainingSpec, Workload

#: A resolved architecture (preset, hf_config or architecture fields) above this is refused, as
#: ``model.params`` above it is (docs/profile.md, "Limits").
MAX_PARAMS = 1e14
#: Largest value of any one architecture size (layers, hidden, heads, experts, vocab, ...): far
#: beyond any published model, small enough that no planner search over it can run long.
MAX_DIMENSION = 1 << 20
#: sliding_window may legitimately exceed MAX_DIMENSION (long-context configs); it is capped here.
MAX_SLIDING_WINDOW = 1 << 31

# Defaults applied when a field is left out (docs/profile.md lists each with its reason).
DEFAULT_DEADLINE_DAYS = 90.0
DEFAULT_SEQUENCE_LENGTH = 4096
DEFAULT_TTFT_MS = 2000.0
DEFAULT_TPOT_MS = 50.0

#: The Architecture's field names, in order (what :func:`_check_magnitude` checks).
_ARCH_FIELDS = tuple(f.name for f in dataclasses.fields(Architecture))


def default_batch_tokens(params: float) -> float:
    """Global batch in tokens by model size, after the published runs: GPT-3 (0.5M-3.2M tokens),
    Llama 2 (4M), Llama 3 405B (16M); rounded to a power of two in sequences later."""
    if params < 3e9:
        return 1.0 * 2**20
    if params < 20e9:
        return 2.0 * 2**20
    if params < 100e9:
        return 4.0 * 2**20
    return 16.0 * 2**20


def resolve_profile(profile: Profile, name: str, catalog: WorkloadCatalog, digest: str, *,
                    allow_outside_paths: bool = False) -> Workload:
    """Apply defaults and resolve the model; every default becomes an :class:`Assumption`.

    The steps run in this order, which is also the order of the assumptions in every rendering."""
    notes: list[Assumption] = []
    hf = (contained_path(profile.model.hf_config, name, field="model.hf_config", allow_outside=allow_outside_paths)
          if profile.model.hf_config else None)  # relative to the profile, inside its tree (docs/security.md)
    arch, model_name = _resolve_model(profile.model, hf, name, catalog, notes)
    training = _resolve_training(profile.training, float(arch.total_params), name, catalog, notes) \
        if profile.training else None
    serving = _resolve_serving(profile.serving, name, notes) if profile.serving else None
    constraints, phase_constraints = _resolve_constraints(profile, name, catalog, notes)
    return Workload(name=profile.name or Path(name).stem, model_name=model_name, arch=arch, training=training,
                    serving=serving, constraints=constraints, assumptions=tuple(notes), source=name,
                    input_sha256=digest, phase_constraints=tuple(phase_constraints),
                    input_files=(str(hf),) if hf else ())


def _resolve_training(t: TrainingSection, params: float, name: str, catalog: WorkloadCatalog,
                      notes: list[Assumption]) -> TrainingSpec:
    """``[training]``: sequence length, global batch and deadline defaults; the framework's FP8 recipe."""
    seq = t.sequence_length
    if seq is None:
        seq = DEFAULT_SEQUENCE_LENGTH
        notes.append(Assumption("training.sequence_length", str(seq), "not given; common pretraining length"))
    gbt = t.global_batch_tokens
    if gbt is None:
        gbt = default_batch_tokens(params)
        notes.append(Assumption("training.global_batch_tokens", f"{gbt:.0f}",
                                "not given; by model size after GPT-3, Llama 2 and Llama 3 runs"))
    if gbt < seq:
        raise InputError(f"global_batch_tokens ({gbt:g}) is smaller than one sequence ({seq})",
                         file=name, field="training.global_batch_tokens")
    fw = catalog.table("training").framework(t.framework)
    if t.precision == "fp8" and not fw.fp8:
        raise InputError(f"framework {t.framework} has no FP8 training recipe",
                         file=name, field="training.precision")
    deadline = t.deadline_days
    if t.deadline_days is None and t.gpus is None and t.budget_usd is None:
        deadline = DEFAULT_DEADLINE_DAYS
        notes.append(Assumption("training.deadline_days", f"{DEFAULT_DEADLINE_DAYS:g}",
                                "no deadline, GPU count or budget given"))
    return TrainingSpec(tokens=t.tokens, sequence_length=seq, precision=t.precision,
                        global_batch_tokens=gbt, deadline_days=deadline, gpus=t.gpus,
                        budget_usd=t.budget_usd, framework=t.framework, gpu_power_cap_w=t.gpu_power_cap_w,
                        pipeline_split=t.pipeline_split)


def _resolve_serving(s: ServingSection, name: str, notes: list[Assumption]) -> ServingSpec:
    """``[serving]``: the sizing load, the request shape, precisions, latency targets and engine."""
    qps = s.qps if s.qps is not None else s.demand.peak  # type: ignore[union-attr]
    if s.demand is None:
        notes.append(Assumption("serving.demand", f"constant {qps:g} requests/s",
                                "no [serving.demand] hourly_qps: the peak is assumed all day"))
    context, prompt, output = _request_shape(s, name, notes)
    kv = s.kv_precision
    if kv is None:
        kv = s.precision if s.precision in ("bf16", "fp16", "fp8") else "fp8" if s.precision == "fp4" else "bf16"
        notes.append(Assumption("serving.kv_precision", kv, "not given; follows the weight precision"))
    ttft = s.ttft_ms
    if ttft is None:
        ttft = DEFAULT_TTFT_MS
        notes.append(Assumption("serving.ttft_ms", f"{ttft:g}", f"not given; interactive default ({s.latency_percentile})"))
    tpot = s.tpot_ms
    if tpot is None:
        tpot = DEFAULT_TPOT_MS
        notes.append(Assumption("serving.tpot_ms", f"{tpot:g}", "not given; 20 tokens/s per user"))
    _note_serving_defaults(s, notes)
    return ServingSpec(qps=qps, prompt_tokens=prompt, output_tokens=output, context_length=context,
                       precision=s.precision, kv_precision=kv, ttft_ms=ttft, tpot_ms=tpot,
                       latency_percentile=s.latency_percentile, spare_replicas=s.spare_replicas,
                       engine=s.engine or "vllm", engine_version=s.engine_version,
                       max_load_fraction=s.max_load_fraction, replica_start_s=s.replica_start_s,
                       hourly_qps=tuple(s.demand.hourly_qps) if s.demand else None,
                       growth_per_year=s.demand.growth_per_year if s.demand else 0.0,
                       min_replicas=s.min_replicas, disaggregation=s.disaggregation)


def _request_shape(s: ServingSection, name: str, notes: list[Assumption]) -> tuple[int, int, int]:
    """Context length, prompt and output tokens: defaults for those left out, then their sum checked."""
    context = s.context_length
    prompt = s.prompt_tokens
    output = s.output_tokens
    if context is None:
        context = 8192 if (prompt or 0) + (output or 0) <= 8192 else 1 << ((prompt or 0) + (output or 0) - 1).bit_length()
        notes.append(Assumption("serving.context_length", str(context), "not given"))
    if prompt is None:
        prompt = min(1024, context // 2)
        notes.append(Assumption("serving.prompt_tokens", str(prompt), "not given; chat-style mean"))
    if output is None:
        output = min(256, max(1, context - prompt))
        notes.append(Assumption("serving.output_tokens", str(output), "not given; chat-style mean"))
    if prompt + output > context:
        raise InputError(f"prompt_tokens + output_tokens ({prompt + output}) exceeds context_length ({context})",
                         file=name, field="serving.context_length")
    return context, prompt, output


def _note_serving_defaults(s: ServingSection, notes: list[Assumption]) -> None:
    """Schema defaults of ``[serving]`` the profile left as they are, each noted as an assumption."""
    if "spare_replicas" not in s.model_fields_set:
        notes.append(Assumption("serving.spare_replicas", str(s.spare_replicas), "N+1 availability headroom"))
    if s.engine is None:
        notes.append(Assumption("serving.engine", "vllm", "not given; current vLLM release (V1 engine: "
                                "chunked prefill mixed into decode steps, GQA-aware decode attention)"))
    elif s.engine_version is None:
        notes.append(Assumption("serving.engine_version", "current", f"not given; newest {s.engine} release described"))
    if "max_load_fraction" not in s.model_fields_set:
        notes.append(Assumption("serving.max_load_fraction", f"{s.max_load_fraction:g}",
                                "peak QPS over the latency-limited capacity of the non-spare replicas: "
                                "room for a burst above the peak (the spares cover failures)"))
    if "replica_start_s" not in s.model_fields_set:
        notes.append(Assumption("serving.replica_start_s", f"{s.replica_start_s:g}",
                                "a new replica loads its weights within this time: sizes the front-end network"))


def _resolve_constraints(profile: Profile, name: str, catalog: WorkloadCatalog, notes: list[Assumption],
                         ) -> tuple[Constraints, list[tuple[str, Constraints]]]:
    """``[constraints]`` and each phase's ``[<phase>.constraints]`` merged over it field by field."""
    c = profile.constraints
    constraints = _constraints(c, catalog, name, "constraints")
    if "pricing" not in c.model_fields_set:
        notes.append(Assumption("constraints.pricing", c.pricing, "cost objective: purchase price (capex)"))
    if "memory_headroom" not in c.model_fields_set:
        notes.append(Assumption("constraints.memory_headroom", f"{c.memory_headroom:g}",
                                "fraction of usable GPU memory every recommended layout leaves free (allocator "
                                "fragmentation, framework growth)"))
    phase_constraints = []
    for phase, section in (("training", profile.training), ("serving", profile.serving)):
        own = section.constraints if section is not None else None
        if own is not None:  # field by field over [constraints]
            merged = ConstraintsSection.model_validate({**c.model_dump(exclude_unset=True),
                                                        **own.model_dump(exclude_unset=True)})
            phase_constraints.append((phase, _constraints(merged, catalog, name, f"{phase}.constraints")))
    return constraints, phase_constraints


def _resolve_model(m: ModelSection, hf: Path | None, name: str, catalog: WorkloadCatalog,
                   notes: list[Assumption]) -> tuple[Architecture, str]:
    where, where_field = name, "model"  # where an absurd size is reported
    if m.preset:
        preset = catalog.lookup("model", m.preset, file=name, field_path="model.preset")
        spec = ArchitectureSpec.model_validate(preset.arch_fields())
        label = m.name or preset.id
    elif hf is not None:
        from gpuplan.model.hf_config import read_hf_config

        spec = read_hf_config(hf)
        where, where_field = str(hf), "config"
        label = m.name or hf.parent.name or hf.stem
    elif m.params is not None:
        arch = derive_from_params(m.params)
        notes.append(Assumption("model.architecture",
                                f"{arch.layers} layers, hidden {arch.hidden}, {arch.heads} heads ({arch.kv_heads} KV), "
                                f"ffn {arch.ffn} SwiGLU, vocab {arch.vocab}",
                                f"derived from params = {m.params:g} with hidden = 128 x layers (Llama-3 proportions)"))
        return arch, m.name or f"{m.params / 1e9:g}B dense"
    else:
        spec = ArchitectureSpec.model_validate(m.arch_fields())
        label = m.name or "custom"
    try:
        arch, applied = resolve(spec)
    except ValueError as exc:
        raise InputError(str(exc), file=name, field="model") from None
    _check_magnitude(arch, where, where_field)
    for fld, value, reason in applied:
        notes.append(Assumption(f"model.{fld}", str(value), reason))
    return arch, label


def _check_magnitude(arch: Architecture, name: str, field: str = "model") -> None:
    """Refuse absurd sizes from a preset, an hf_config or architecture fields (typos, hostile input)."""
    for fld in _ARCH_FIELDS:  # the fields alone: the instance dict also keeps cached values and the hash
        value = getattr(arch, fld)
        limit = MAX_SLIDING_WINDOW if fld == "sliding_window" else MAX_DIMENSION
        if isinstance(value, int) and not isinstance(value, bool) and value > limit:
            raise InputError(f"{fld} = {_count(value)} is larger than the limit of {limit:,}; not a plausible model",
                             file=name, field=field)
    total = arch.total_params
    if total > MAX_PARAMS:
        raise InputError(f"the architecture has {_count(total)} parameters, more than the limit of 1e{round(math.log10(MAX_PARAMS))}",
                         file=name, field=field)


def _count(n: int) -> str:
    """An integer for a message, without converting a huge one to float or to 4,000 digits."""
    return f"{n:,}" if n < 10**12 else f"about 1e{int((n.bit_length() - 1) * 0.30103)}"


def _constraints(c: ConstraintsSection, catalog: WorkloadCatalog, name: str, where: str) -> Constraints:
    tco = tuple((k, float(getattr(c, k))) for k in TCO_FIELDS if getattr(c, k) is not None)
    return Constraints(allow_gpus=tuple(_allowed_gpus(c, catalog, name, where)), pricing=c.pricing,
                       budget_usd=c.budget_usd, power_limit_kw=c.power_limit_kw, memory_headroom=c.memory_headroom,
                       tco=tco)


def _allowed_gpus(c: ConstraintsSection, catalog: WorkloadCatalog, name: str, where: str = "constraints") -> list[str]:
    if c.allow_gpus is not None:
        if not c.allow_gpus:
            raise InputError("allow_gpus is empty; list GPU ids or leave it out", file=name, field=f"{where}.allow_gpus")
        ids = [catalog.gpu(g, file=name, field_path=f"{where}.allow_gpus[{i}]").id for i, g in enumerate(c.allow_gpus)]
    else:
        ids = sorted(catalog.gpus)
    excluded = {catalog.gpu(g, file=name, field_path=f"{where}.exclude_gpus[{i}]").id for i, g in enumerate(c.exclude_gpus)}
    vendors = set(c.allow_vendors) if c.allow_vendors is not None else None
    out = [g for g in dict.fromkeys(ids) if g not in excluded and (vendors is None or catalog.gpus[g].vendor in vendors)]
    if not out:
        raise InputError("no GPU is left after allow_gpus, exclude_gpus and allow_vendors", file=name, field=where)
    return out
