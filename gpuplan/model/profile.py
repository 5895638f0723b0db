"""The workload profile (TOML): schema, loading and resolution into a :class:`Workload`.

The schema is the boundary: after :func:`load_workload` every value is typed, in range and
complete, and each default that was applied is listed in ``Workload.assumptions``.
Field reference with units and defaults: ``docs/profile.md``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError, model_validator

from gpuplan.model.arch import Architecture, ArchitectureSpec, derive_from_params, resolve
from gpuplan.core.cost_contract import TCO_FIELDS, TcoConstraints
from gpuplan.core.errors import InputError
from gpuplan.core.io import contained_path, parse_toml, pydantic_error, read_text
from gpuplan.core.types import STRICT, Id, SiCount
from gpuplan.model.demand import DemandSection

class WorkloadCatalog(Protocol):
    """What resolving a profile reads from the catalog (``hardware.loader.Catalog``): model presets
    and GPU ids. Declared here so that the model layer does not import the hardware layer."""

    gpus: Mapping[str, Any]

    def gpu(self, name: str, *, file: str | None = None, field_path: str | None = None) -> Any: ...

    def lookup(self, kind: str, name: str, *, file: str | None = None, field_path: str | None = None) -> Any: ...


TrainPrecision = Literal["bf16", "fp16", "fp8"]
ServePrecision = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp4"]
KvPrecision = Literal["bf16", "fp16", "fp8", "int8"]

# Limits: a value outside is a typo (docs/profile.md, "Limits"); counts and money take SI suffixes ("Numbers").
Tokens = Annotated[float, Field(ge=1e6, le=1e16, allow_inf_nan=False, strict=True), SiCount]
SeqLen = Annotated[int, Field(ge=128, le=2_097_152, strict=True)]
Qps = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False, strict=True)]
Millis = Annotated[float, Field(gt=0, le=3.6e6, allow_inf_nan=False, strict=True)]
Usd = Annotated[float, Field(gt=0, le=1e12, allow_inf_nan=False, strict=True), SiCount]


class ModelSection(ArchitectureSpec):
    """``[model]``: a preset, a Hugging Face config, an architecture, or a parameter count."""

    name: str | None = Field(default=None, max_length=100)
    preset: Id | None = None
    hf_config: str | None = Field(default=None, max_length=4096)
    params: Annotated[float, Field(ge=5e8, le=1e14, allow_inf_nan=False, strict=True), SiCount] | None = None

    @model_validator(mode="after")
    def _one_way(self) -> "ModelSection":
        arch = bool(self.arch_fields())
        ways = [n for n, on in (("preset", self.preset), ("hf_config", self.hf_config),
                                ("params", self.params is not None), ("architecture fields", arch)) if on]
        if not ways:
            raise ValueError("give one of preset, hf_config, params or an architecture (layers, hidden, heads)")
        if len(ways) > 1:
            raise ValueError(f"give only one of preset, hf_config, params or architecture fields (got {', '.join(ways)})")
        return self


class ConstraintsSection(TcoConstraints):
    """``[constraints]``: which hardware may be used, what it may cost and what owning it costs
    (the cost-of-ownership keys, gpuplan/core/cost_contract.py). ``[training.constraints]``
    and ``[serving.constraints]`` override it field by field for one phase."""

    model_config = STRICT
    allow_vendors: list[Literal["nvidia", "amd", "intel"]] | None = None
    allow_gpus: list[str] | None = None
    exclude_gpus: list[str] = []
    pricing: Literal["capex", "cloud"] = "capex"
    budget_usd: Usd | None = None
    power_limit_kw: Annotated[float, Field(gt=0, le=1e7, allow_inf_nan=False, strict=True)] | None = None
    #: Fraction of the GPU's usable memory every recommended layout leaves free (both phases).
    memory_headroom: Annotated[float, Field(ge=0, le=0.5, allow_inf_nan=False, strict=True)] = 0.05


class TrainingSection(BaseModel):
    """``[training]``: a long batch job to finish by a deadline, on a GPU count, or within a budget."""

    model_config = STRICT
    tokens: Tokens
    sequence_length: SeqLen | None = None
    precision: TrainPrecision = "bf16"
    global_batch_tokens: Annotated[float, Field(ge=1e3, le=1e10, allow_inf_nan=False, strict=True), SiCount] | None = None
    deadline_days: Annotated[float, Field(gt=0, le=3650, allow_inf_nan=False, strict=True)] | None = None
    gpus: Annotated[int, Field(ge=1, le=1_048_576, strict=True)] | None = None
    budget_usd: Usd | None = None
    #: The training software (catalog/calibration/training.toml [frameworks.*]); left out: the
    #: catalog's default_framework (megatron-core).
    framework: Literal["megatron-core", "megatron-lm", "megatron-deepspeed", "fsdp"] | None = None
    constraints: ConstraintsSection | None = None

    @model_validator(mode="after")
    def _one_target(self) -> "TrainingSection":
        given = [n for n in ("deadline_days", "gpus", "budget_usd") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give only one of deadline_days, gpus, budget_usd (got {', '.join(given)})")
        return self


class ServingSection(BaseModel):
    """``[serving]``: sustained peak request rate under latency targets."""

    model_config = STRICT
    #: The sizing load; may be left out when ``demand.hourly_qps`` gives it (its peak).
    qps: Qps | None = None
    prompt_tokens: Annotated[int, Field(ge=1, le=2_097_152, strict=True)] | None = None
    output_tokens: Annotated[int, Field(ge=1, le=1_048_576, strict=True)] | None = None
    context_length: SeqLen | None = None
    precision: ServePrecision = "bf16"
    kv_precision: KvPrecision | None = None
    ttft_ms: Millis | None = None
    tpot_ms: Millis | None = None
    latency_percentile: Literal["p50", "p90", "p99", "mean"] = "p99"
    spare_replicas: Annotated[int, Field(ge=0, le=1000, strict=True)] = 1
    #: The serving software (its documented kernels and scheduler by release: gpuplan/serving/engine.py).
    engine: Literal["vllm", "sglang", "trtllm"] | None = None
    engine_version: str | None = Field(default=None, min_length=1, max_length=32, pattern=r"^[0-9][0-9A-Za-z.+_-]*$")
    #: Peak QPS over the latency-limited capacity of the non-spare replicas (burst margin).
    max_load_fraction: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False, strict=True)] = 0.85
    #: Seconds a new replica may take to load its weights over the front-end network.
    replica_start_s: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False, strict=True)] = 60.0
    constraints: ConstraintsSection | None = None
    #: Fewest replicas the autoscaler keeps (default 2: one failure leaves one serving).
    min_replicas: Annotated[int, Field(ge=1, le=100_000, strict=True)] | None = None
    demand: DemandSection | None = None

    @model_validator(mode="after")
    def _lengths(self) -> "ServingSection":
        if self.qps is None and self.demand is None:
            raise ValueError("give qps or [serving.demand] hourly_qps (its peak is the sizing load)")
        if self.qps is not None and self.demand is not None and self.qps < self.demand.peak:
            raise ValueError(f"qps ({self.qps:g}) is below the peak of demand.hourly_qps ({self.demand.peak:g}); "
                             "leave qps out or give at least the peak")
        if self.context_length and self.prompt_tokens and self.output_tokens:
            if self.prompt_tokens + self.output_tokens > self.context_length:
                raise ValueError(f"prompt_tokens + output_tokens ({self.prompt_tokens + self.output_tokens}) "
                                 f"exceeds context_length ({self.context_length})")
        return self


class Profile(BaseModel):
    model_config = STRICT
    name: str | None = Field(default=None, max_length=100)
    model: ModelSection
    training: TrainingSection | None = None
    serving: ServingSection | None = None
    constraints: ConstraintsSection = ConstraintsSection()

    @model_validator(mode="after")
    def _some_phase(self) -> "Profile":
        if self.training is None and self.serving is None:
            raise ValueError("a profile needs a [training] or a [serving] table (or both)")
        return self


@dataclass(frozen=True)
class Assumption:
    """A default the planner applied, shown in every rendering of the plan."""

    field: str
    value: str
    reason: str


@dataclass(frozen=True)
class TrainingSpec:
    tokens: float
    sequence_length: int
    precision: str
    global_batch_tokens: float
    deadline_days: float | None
    gpus: int | None
    budget_usd: float | None
    framework: str | None = None


@dataclass(frozen=True)
class ServingSpec:
    qps: float
    prompt_tokens: int
    output_tokens: int
    context_length: int
    precision: str
    kv_precision: str
    ttft_ms: float
    tpot_ms: float
    latency_percentile: str
    spare_replicas: int
    engine: str = "vllm"
    #: None: the newest release the catalog describes.
    engine_version: str | None = None
    max_load_fraction: float = 0.85
    replica_start_s: float = 60.0
    #: 24 hourly request rates (None: constant at ``qps``), yearly growth, autoscaler floor.
    hourly_qps: tuple[float, ...] | None = None
    growth_per_year: float = 0.0
    min_replicas: int | None = None


@dataclass(frozen=True)
class Constraints:
    allow_gpus: tuple[str, ...]
    pricing: str
    budget_usd: float | None
    power_limit_kw: float | None
    memory_headroom: float = 0.05
    tco: tuple[tuple[str, float], ...] = ()  #: cost-of-ownership keys given (gpuplan/fabric/tco.py)


@dataclass(frozen=True)
class ClusterNetwork:
    """A proposed cluster's scale-out network (``gpuplan check --against``): training time is
    computed on it instead of the fabric the planner would design. None fields: the planner's."""

    fabric: str | None = None
    nic_gbit_per_gpu: float | None = None
    oversubscription: float = 1.0


@dataclass(frozen=True)
class Workload:
    """A validated, complete workload: what every planner reads."""

    name: str
    model_name: str
    arch: Architecture
    training: TrainingSpec | None
    serving: ServingSpec | None
    constraints: Constraints
    assumptions: tuple[Assumption, ...]
    source: str
    input_sha256: str
    field_lines: dict[str, int] = field(default_factory=dict, compare=False)
    #: Files the profile reads besides itself (an hf_config): outputs may never overwrite them.
    input_files: tuple[str, ...] = field(default=(), compare=False)
    #: Set by ``check``: the proposed cluster's network, which training time is computed on.
    cluster_network: ClusterNetwork | None = None
    #: ``[training.constraints]`` / ``[serving.constraints]`` merged over ``constraints``.
    phase_constraints: tuple[tuple[str, Constraints], ...] = ()

    def for_phase(self, phase: str) -> "Workload":
        """This workload as one phase's planner sees it: that phase's constraints."""
        from dataclasses import replace

        own = dict(self.phase_constraints).get(phase)
        return self if own is None or own == self.constraints else replace(self, constraints=own)


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


def field_lines(text: str) -> dict[str, int]:
    """Map ``table.key`` to the 1-based line where it is written (for SARIF/annotations)."""
    out: dict[str, int] = {}
    table = ""
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("[") and not line.startswith("[["):
            table = line.split("#")[0].strip().strip("[] ").strip()
            out.setdefault(table, no)
        elif "=" in line and not line.startswith("#"):
            key = line.split("=", 1)[0].strip().strip('"')
            out.setdefault(f"{table}.{key}" if table else key, no)
    return out


def default_profile_text() -> tuple[str, str]:
    """The built-in default profile (a copy of examples/default.toml) and the name it is reported under."""
    path = Path(__file__).with_name("default_profile.toml")
    return path.read_text(encoding="utf-8"), "<built-in default: default-llama-3.1-70b>"


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any], name: str) -> None:
    """Set dotted fields (``serving.qps``) of parsed profile ``data`` in place, before validation,
    so that an override is checked exactly as the same value written in the file."""
    for path, value in overrides.items():
        parts = path.split(".")
        table = data
        for i, part in enumerate(parts[:-1]):
            nxt = table.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise InputError("expected a table", file=name, field=".".join(parts[: i + 1]))
            table = nxt
        table[parts[-1]] = value


def load_profile_text(text: str, name: str, catalog: WorkloadCatalog,
                      overrides: Mapping[str, Any] | None = None, *, allow_outside_paths: bool = False) -> Workload:
    """Parse, validate and resolve a profile given as text; ``overrides`` set dotted fields first
    (``allow_outside_paths``: docs/security.md)."""
    data = parse_toml(text, name)
    if overrides:
        apply_overrides(data, overrides, name)
        text += "".join(f"\n# override {k} = {v!r}" for k, v in sorted(overrides.items()))
    known = {"": list(Profile.model_fields), "model": list(ModelSection.model_fields),
             "training": list(TrainingSection.model_fields), "serving": list(ServingSection.model_fields),
             "serving.demand": list(DemandSection.model_fields),
             "constraints": list(ConstraintsSection.model_fields)}
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error(exc, file=name, known_fields=known, unit_hints=True) from None
    digest = hashlib.sha256(text.encode()).hexdigest()
    workload = resolve_profile(profile, name, catalog, digest, allow_outside_paths=allow_outside_paths)
    object.__setattr__(workload, "field_lines", field_lines(text))
    return workload


def load_workload(path: str | Path, catalog: WorkloadCatalog) -> Workload:
    return load_profile_text(read_text(path), str(path), catalog)


def resolve_profile(profile: Profile, name: str, catalog: WorkloadCatalog, digest: str, *,
                    allow_outside_paths: bool = False) -> Workload:
    """Apply defaults and resolve the model; every default becomes an :class:`Assumption`."""
    notes: list[Assumption] = []
    hf = (contained_path(profile.model.hf_config, name, field="model.hf_config", allow_outside=allow_outside_paths)
          if profile.model.hf_config else None)  # relative to the profile, inside its tree (docs/security.md)
    arch, model_name = _resolve_model(profile.model, hf, name, catalog, notes)
    params = float(arch.total_params)

    training = None
    if profile.training:
        t = profile.training
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
        training = TrainingSpec(tokens=t.tokens, sequence_length=seq, precision=t.precision,
                                global_batch_tokens=gbt, deadline_days=deadline, gpus=t.gpus,
                                budget_usd=t.budget_usd, framework=t.framework)

    serving = None
    if profile.serving:
        s = profile.serving
        qps = s.qps if s.qps is not None else s.demand.peak  # type: ignore[union-attr]
        if s.demand is None:
            notes.append(Assumption("serving.demand", f"constant {qps:g} requests/s",
                                    "no [serving.demand] hourly_qps: the peak is assumed all day"))
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
        serving = ServingSpec(qps=qps, prompt_tokens=prompt, output_tokens=output, context_length=context,
                              precision=s.precision, kv_precision=kv, ttft_ms=ttft, tpot_ms=tpot,
                              latency_percentile=s.latency_percentile, spare_replicas=s.spare_replicas,
                              engine=s.engine or "vllm", engine_version=s.engine_version,
                              max_load_fraction=s.max_load_fraction, replica_start_s=s.replica_start_s,
                              hourly_qps=tuple(s.demand.hourly_qps) if s.demand else None,
                              growth_per_year=s.demand.growth_per_year if s.demand else 0.0,
                              min_replicas=s.min_replicas)

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
    return Workload(name=profile.name or Path(name).stem, model_name=model_name, arch=arch, training=training,
                    serving=serving, constraints=constraints, assumptions=tuple(notes), source=name,
                    input_sha256=digest, phase_constraints=tuple(phase_constraints),
                    input_files=(str(hf),) if hf else ())


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
    for fld, value in vars(arch).items():
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
