"""The plan's fleet answer: autoscaling bounds of the serving fleet and the fleet strategies for a
profile with both phases (docs/fleet-model.md). Data only, re-exported by :mod:`contract`."""


from typing import Literal

from gpuplan.core.contract_base import _Out
from gpuplan.core.records import dataclass, field


@dataclass(frozen=True, kw_only=True)
class Autoscaling(_Out):
    """Autoscaler bounds from the daily demand curve (docs/fleet-model.md, "Autoscaling"): what a
    Kubernetes HPA's minReplicas, maxReplicas and target are set to."""

    min_replicas: int
    max_replicas: int
    #: Load per replica (over ``qps_per_replica``) the autoscaler targets: the rest is headroom.
    target_load_fraction: float
    #: Seconds for a new replica to serve: server start + weights read over the front end.
    scale_up_s: float
    #: Requests/s the steepest hourly ramp adds while one replica starts, and that share of load.
    ramp_headroom_qps: float
    headroom_fraction: float
    #: Replicas the curve needs in each hour 0-23 (spares included).
    hourly_replicas: list[int]
    replica_hours_per_day: float
    #: Replica-hours a fleet at max_replicas all day runs, and the share autoscaling saves.
    peak_replica_hours_per_day: float
    saving_fraction: float
    #: The saving in $ per year: capex pricing, the energy of the parked replicas; cloud, rent.
    saving_usd_per_year: float | None = None
    #: "constant" without a [serving.demand] curve: the bounds follow from the one qps.
    demand: Literal["hourly", "constant"] = "hourly"
    growth_per_year: float = 0.0
    #: max_replicas after one year of ``growth_per_year``.
    max_replicas_next_year: int | None = None
    #: Cloud pricing: replicas rented always-on (reserved) vs by the hour (on-demand), $ per year.
    reserved_replicas: int | None = None
    on_demand_replica_hours_per_day: float | None = None
    reserved_usd_per_year: float | None = None
    on_demand_usd_per_year: float | None = None
    cloud_usd_per_year: float | None = None
    reasons: list[str] = field(default_factory=list)

    def span(self) -> str:
        """'min-max' replicas, or the one count where the bounds meet (constant demand)."""
        return f"{self.min_replicas}" if self.min_replicas == self.max_replicas else \
            f"{self.min_replicas}-{self.max_replicas}"


@dataclass(frozen=True, kw_only=True)
class Risk(_Out):
    """A risk of a fleet strategy (the recommended one's also appear among the plan's findings)."""

    severity: Literal["error", "warning", "note"]
    code: str
    message: str


@dataclass(frozen=True, kw_only=True)
class FleetStrategy(_Out):
    """One way to own the GPUs for both phases (docs/fleet-model.md)."""

    name: Literal["separate", "time-sliced", "converged"]
    feasible: bool
    gpu: str | None
    gpus: int
    capex_usd: float | None
    #: Capex over the plan's TCO horizon (horizon_years) + energy, per year; under
    #: cloud pricing, a year's rent.
    cost_usd_per_year: float | None
    energy_usd_per_year: float | None
    #: Busy GPU-hours (training + serving replicas) over owned GPU-hours, over one year.
    utilization: float
    training_days: float
    serving_slo_met: bool
    #: GPU-hours a day left idle that fine-tuning or RL could borrow, and utilisation if they do.
    lendable_gpu_hours_per_day: float = 0.0
    utilization_if_lent: float | None = None
    #: Converged: GPUs with no serving work once training is done (peak serving included).
    idle_gpus_after_training: int = 0
    #: Hand-overs between serving and training per day (time-sliced).
    switches_per_day: int = 0
    reasons: list[str] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Fleet(_Out):
    strategies: list[FleetStrategy]
    recommended: str | None
    reasons: list[str]
