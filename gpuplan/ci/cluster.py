"""The ``--against`` cluster file of ``gpuplan check``: its schema, parsing (TOML or JSON, with the
line of each field), resolution against the catalog and the profile, and the workload restricted to it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuplan.core.documents import CLUSTER, refuse_other
from gpuplan.core.errors import InputError
from gpuplan.core.io import parse_json, parse_toml, pydantic_error
from gpuplan.core.types import STRICT, Id
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import ClusterNetwork, Workload, field_lines


class ClusterSpec(BaseModel):
    """A proposed cluster, as written in the ``--against`` file."""

    model_config = STRICT
    name: str | None = Field(default=None, max_length=100)
    phase: Literal["training", "serving"] | None = None
    gpu: str = Field(min_length=1, max_length=64)
    gpus: Annotated[int, Field(ge=1, le=1_048_576, strict=True)] | None = None
    nodes: Annotated[int, Field(ge=1, le=131_072, strict=True)] | None = None
    fabric: Id | None = None
    nic_gbit_per_gpu: Annotated[float, Field(ge=0, le=100_000, allow_inf_nan=False)] | None = None
    oversubscription: Annotated[float, Field(ge=1, le=64, allow_inf_nan=False)] = 1.0
    budget_usd: Annotated[float, Field(gt=0, le=1e12, allow_inf_nan=False)] | None = None
    power_limit_kw: Annotated[float, Field(gt=0, le=1e7, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _one_size(self) -> "ClusterSpec":
        if (self.gpus is None) == (self.nodes is None):
            raise ValueError("give exactly one of gpus or nodes")
        return self


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClusterOut(_Out):
    """The cluster as checked: the GPU resolved to its catalog id, both counts filled in."""

    name: str | None
    phase: Literal["training", "serving"]
    gpu: str
    gpus: int
    nodes: int
    fabric: str | None
    nic_gbit_per_gpu: float | None
    oversubscription: float
    budget_usd: float | None
    power_limit_kw: float | None


def _json_lines(text: str) -> dict[str, int]:
    """Line of each top-level ``"key":`` in a JSON cluster file."""
    out: dict[str, int] = {}
    for no, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith('"') and '":' in stripped:
            out.setdefault(stripped[1:stripped.index('":')], no)
    return out


def parse_cluster(text: str, name: str) -> tuple[ClusterSpec, dict[str, int]]:
    """Parse and validate a cluster file (JSON by extension or a leading ``{``, else TOML)."""
    is_json = Path(name).suffix.lower() == ".json" or text.lstrip().startswith("{")
    data = parse_json(text, name) if is_json else parse_toml(text, name)
    if not isinstance(data, dict):
        raise InputError("expected an object of cluster fields", file=name)
    refuse_other(data, name, CLUSTER, toml=not is_json)  # a profile or a plan as --against: not 'model: unknown field'
    try:
        spec = ClusterSpec.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error(exc, file=name, known_fields={"": list(ClusterSpec.model_fields)}) from None
    return spec, (_json_lines(text) if is_json else field_lines(text))


def resolve_cluster(spec: ClusterSpec, workload: Workload, catalog: Catalog, name: str) -> ClusterOut:
    gpu = catalog.gpu(spec.gpu, file=name, field_path="gpu")
    if spec.fabric is not None:
        catalog.lookup("fabric", spec.fabric, file=name, field_path="fabric")
    phases = [p for p in ("training", "serving") if getattr(workload, p) is not None]
    phase = spec.phase
    if phase is None:
        if len(phases) != 1:
            raise InputError("the profile has training and serving; say which one this cluster is for",
                             file=name, field="phase")
        phase = phases[0]  # type: ignore[assignment]
    if phase not in phases:
        raise InputError(f"the profile has no [{phase}] table to check this cluster against", file=name,
                         field="phase")
    gpus = spec.gpus if spec.gpus is not None else spec.nodes * gpu.gpus_per_node  # type: ignore[operator]
    nodes = spec.nodes if spec.nodes is not None else math.ceil(gpus / gpu.gpus_per_node)
    return ClusterOut(name=spec.name, phase=phase, gpu=gpu.id, gpus=gpus, nodes=nodes, fabric=spec.fabric,  # type: ignore[arg-type]
                      nic_gbit_per_gpu=spec.nic_gbit_per_gpu, oversubscription=spec.oversubscription,
                      budget_usd=spec.budget_usd, power_limit_kw=spec.power_limit_kw)


def restrict(workload: Workload, cluster: ClusterOut) -> Workload:
    """The workload as the planner should see it on the cluster: its GPU only and, for training, its
    GPU count (the planner then finds the best layout on exactly those GPUs and reports the days).
    Budget and power limits are left to the gates, so the plan shows the real figures."""
    constraints = dataclasses.replace(workload.constraints, allow_gpus=(cluster.gpu,), budget_usd=None,
                                      power_limit_kw=None)
    training = workload.training
    if cluster.phase == "training" and training is not None:
        training = dataclasses.replace(training, gpus=cluster.gpus, deadline_days=None, budget_usd=None)
    # Time is computed on the cluster's own fabric, NIC speed and oversubscription (issue 15: an
    # Ethernet cluster at 4:1 had been timed on the InfiniBand fabric the planner would design).
    network = ClusterNetwork(fabric=cluster.fabric, nic_gbit_per_gpu=cluster.nic_gbit_per_gpu,
                             oversubscription=cluster.oversubscription)
    return dataclasses.replace(workload, constraints=constraints, training=training, cluster_network=network)
