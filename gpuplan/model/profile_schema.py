"""The workload profile's TOML schema: one pydantic class per table, with the limits of each value
(docs/profile.md). Validation only; :mod:`gpuplan.model.profile_resolve` applies the defaults."""


from collections.abc import Mapping
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpuplan.core.cost_contract import TcoConstraints
from gpuplan.core.types import STRICT, Id, SiCount
from gpuplan.model.arch import ArchitectureSpec
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
#: The named pipeline splits (training/stages.py reads them from here: one list).
PipelineSplit = Literal["balanced", "account-embedding-loss", "account-embedding", "account-loss"]

# Limits: a value outside is a typo (docs/profile.md, "Limits"); counts and money take SI suffixes ("Numbers").
Tokens = Annotated[float, Field(ge=1e6, le=1e16, allow_inf_nan=False, strict=True), SiCount]
SeqLen = Annotated[int, Field(ge=128, le=2_097_152, strict=True)]
Qps = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False, strict=True)]
Millis = Annotated[float, Field(gt=0, le=3.6e6, allow_inf_nan=False, strict=True)]
Usd = Annotated[float, Field(gt=0, le=1e12, allow_inf_nan=False, strict=True), SiCount]
#: A per-GPU power cap in watts (nvidia-smi -pl): NVIDIA boards accept limits from about a
#: quarter of their rating (H100 SXM: 200 of 700 W) up to it; 50-2,000 W spans every catalog GPU.
PowerCapW = Annotated[float, Field(ge=50, le=2000, allow_inf_nan=False, strict=True)]


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

    model_config = ConfigDict(STRICT, defer_build=False)  # built at import, unlike its base
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
    #: Power cap per GPU in watts (gpuplan/physics/power.py): below the GPU's rating its GEMMs
    #: slow down and the plan's power follows the cap; at or above it, no effect.
    gpu_power_cap_w: PowerCapW | None = None
    #: How the layers are split over the pipeline stages (gpuplan/training/stages.py rank_layers):
    #: Megatron-Core's account-for-embedding/loss splits; left out, the planner's (the lighter
    #: end last). The search keeps to the pipeline depths the split applies to.
    pipeline_split: PipelineSplit | None = None
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
    #: Disaggregated prefill/decode pools (gpuplan/serving/disagg.py): "auto" plans them when they
    #: meet the targets for less than the best aggregated fleet, "always" whenever they meet them.
    disaggregation: Literal["auto", "never", "always"] = "auto"
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
