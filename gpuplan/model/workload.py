"""The resolved workload every planner reads: typed, complete, each applied default an
:class:`Assumption` (built by :mod:`gpuplan.model.profile_resolve`)."""

from __future__ import annotations

from gpuplan.core.records import dataclass, field

from gpuplan.model.arch import Architecture


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
    #: Power cap per GPU in watts (``[training] gpu_power_cap_w``); None = the board's rating.
    gpu_power_cap_w: float | None = None
    #: ``[training] pipeline_split``; None = the planner's.
    pipeline_split: str | None = None


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
    #: "auto" | "never" | "always": whether disaggregated prefill/decode pools may be planned.
    disaggregation: str = "auto"


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
