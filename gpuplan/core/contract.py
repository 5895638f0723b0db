"""The plan: the one result model every renderer reads (table, JSON, Markdown, tfvars, CI formats).

Keys are snake_case with the unit in the name. The JSON Schema (``gpuplan schema``) is generated
from these classes; any breaking change bumps :data:`SCHEMA_VERSION` (docs/json.md).
"""


from typing import Literal

from gpuplan.core.contract_base import RoofFigure, _Out  # noqa: F401  (re-exported)
from gpuplan.core.records import dataclass
from gpuplan.core.contract_fabric import Bom, BomItem, ClosParameters, Interconnect, Topology  # noqa: F401
from gpuplan.core.contract_fleet import Autoscaling, Fleet, FleetStrategy, Risk  # noqa: F401  (re-exported)
from gpuplan.core.contract_serving import (  # noqa: F401  (re-exported)
    DisaggregatedPool, DisaggregationComparison, FrontierPoint, Roofline, ServingDeploy, ServingLayout, ServingOption,
    ServingPlan,
)
from gpuplan.core.contract_training import (  # noqa: F401  (re-exported)
    MemoryBreakdown, RooflinePoint, TrainingBreakdown, TrainingLayout, TrainingLayoutOption, TrainingOption,
    TrainingPlan, TrainingRoofline,
)
from gpuplan.core.cost_contract import PlanTco, StorageSizing, Tco  # noqa: F401  (re-exported)

SCHEMA_VERSION = "2.3"


@dataclass(frozen=True, kw_only=True)
class AssumptionOut(_Out):
    field: str
    value: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class Finding(_Out):
    """Something a CI gate or a reader should see; anchored to a profile field when possible."""

    severity: Literal["error", "warning", "note"]
    code: str
    message: str
    phase: Literal["training", "serving", "profile"]
    field: str | None = None


@dataclass(frozen=True, kw_only=True)
class ModelSummary(_Out):
    name: str
    total_params: int
    active_params: int
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    experts: int
    kv_bytes_per_token_bf16: int
    #: Hugging Face repository of a catalog preset (from its config source), for engine launches.
    hf_repo: str | None = None


@dataclass(frozen=True, kw_only=True)
class Plan(_Out):
    schema_version: str
    gpuplan_version: str
    #: The catalog's version; "VERSION + overlay" / "+ N overlays" when overlays were laid over it.
    catalog_version: str
    catalog_sha256: str
    input_sha256: str
    profile: str
    workload: str
    model: ModelSummary
    pricing: Literal["capex", "cloud"]
    assumptions: list[AssumptionOut]
    training: TrainingPlan | None
    serving: ServingPlan | None
    findings: list[Finding]
    #: Cost of ownership of both phases together (None when neither phase has one).
    tco: PlanTco | None = None
    #: Both phases: separate fleets or one shared fleet (docs/fleet-model.md).
    fleet: Fleet | None = None
