"""``gpuplan check PROFILE --against CLUSTER``: does a proposed cluster carry the workload?

The cluster file (TOML or JSON, docs/ci.md) names one phase, a GPU SKU, a GPU or node count, the
fabric and NIC speed, and optionally a budget and a power limit. The workload is re-planned on
exactly that hardware (training: the planner lays the job out on the cluster's GPU count; serving:
the planner sizes the fleet on the cluster's GPU) and each gate compares one planned figure with one
target. Every gate is anchored to the line that sets its target: a profile field for the workload's
targets, a cluster field for the proposal's properties.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuplan.core.version import __version__
from gpuplan.hardware.loader import Catalog
from gpuplan.core.errors import InputError
from gpuplan.core.io import parse_json, parse_toml, pydantic_error
from gpuplan.core.contract import Plan, ServingPlan, TrainingPlan
from gpuplan.planning.saved import locate, repo_path
from gpuplan.model.profile import ClusterNetwork, Workload, field_lines
from gpuplan.core.types import STRICT, Id

#: Version of the check JSON (its own contract, same versioning rule as the plan).
CHECK_SCHEMA_VERSION = "1.1"

Severity = Literal["error", "warning"]


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


class Gate(_Out):
    """One pass/fail comparison: a planned ``value`` against a ``limit`` from a file."""

    name: str
    phase: Literal["training", "serving"]
    passed: bool
    severity: Severity
    message: str
    value: float | None = None
    limit: float | None = None
    unit: str | None = None
    #: Where the limit is written: the profile or the cluster file, the dotted field and its line.
    file: str | None = None
    field: str | None = None
    line: int | None = None


class CheckResult(_Out):
    schema_version: str
    gpuplan_version: str
    catalog_version: str
    catalog_sha256: str
    profile: str
    input_sha256: str
    cluster_file: str
    cluster_sha256: str
    workload: str
    cluster: ClusterOut
    #: ``--fail-on``: the least severity of a failed gate that fails the check.
    fail_on: Literal["error", "warning"] = "error"
    #: No failed gate at ``fail_on`` severity or worse (exit 0).
    passed: bool
    #: Failed gates by severity.
    errors: int
    warnings: int
    gates: list[Gate]
    #: The workload re-planned on the cluster's hardware (what the gates read).
    plan: Plan | None


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


def _plan(workload: Workload, catalog: Catalog, phase: str) -> Plan:
    """Plan one phase (a seam: tests put a synthetic planner here)."""
    from gpuplan.planning.compose import plan_workload

    return plan_workload(workload, catalog, phases=(phase,))


@dataclasses.dataclass(frozen=True)
class _Anchors:
    profile: str
    profile_lines: Mapping[str, int]
    cluster: str
    cluster_lines: Mapping[str, int]

    def at_profile(self, field: str) -> dict[str, object]:
        return {"file": repo_path(self.profile), "field": field, "line": locate(field, self.profile_lines)}

    def at_cluster(self, *fields: str) -> dict[str, object]:
        field = next((f for f in fields if f in self.cluster_lines), fields[0])
        return {"file": repo_path(self.cluster), "field": field, "line": self.cluster_lines.get(field)}


def _usd(v: float) -> str:
    return f"${v:,.0f}"


def evaluate(workload: Workload, cluster: ClusterOut, plan: Plan, anchors: _Anchors, *,
             gpu_memory_gib: float) -> list[Gate]:
    """The gates of one phase, in a fixed order. Pure: reads the re-plan and the targets."""
    phase = cluster.phase
    result: TrainingPlan | ServingPlan | None = getattr(plan, phase)
    gates: list[Gate] = []

    def gate(name: str, passed: bool, message: str, where: dict[str, object], severity: Severity = "error",
             value: float | None = None, limit: float | None = None, unit: str | None = None) -> None:
        gates.append(Gate(name=name, phase=phase, passed=passed, severity=severity, message=message, value=value,
                          limit=limit, unit=unit, **where))  # type: ignore[arg-type]

    allowed = cluster.gpu in workload.constraints.allow_gpus
    gate("gpu-allowed", allowed,
         f"{cluster.gpu} is {'allowed' if allowed else 'excluded'} by the profile's constraints",
         anchors.at_profile(next((f for f in ("constraints.allow_gpus", "constraints.allow_vendors",
                                              "constraints.exclude_gpus") if f in anchors.profile_lines),
                                 "constraints")))
    size = anchors.at_cluster("gpus", "nodes") if cluster.phase == "training" else anchors.at_cluster("gpu")
    if result is None or not result.feasible:
        # Only the cluster's GPU was tried: its own reasons, under the gate of their real cause.
        reasons = [r.split(": ", 1)[1] if r.startswith(f"{cluster.gpu}: ") else r
                   for r in (result.infeasible if result is not None else [])
                   if not r.startswith("no allowed GPU")] or ["no feasible plan"]
        name, where = _infeasible_gate(" ".join(reasons), anchors, size)
        gate(name, False, f"{cluster.gpus:,} x {cluster.gpu}: {'; '.join(reasons)}", where)
        return gates
    if isinstance(result, TrainingPlan):
        _training_gates(gate, workload, cluster, result, anchors, size)
        free = result.memory.headroom_gib / result.memory.capacity_gib if result.memory else None
    else:
        used = result.weights_gib_per_gpu + result.kv_gib_per_gpu
        gate("fits-memory", used <= gpu_memory_gib,
             f"{result.weights_gib_per_gpu:.1f} GiB weights + {result.kv_gib_per_gpu:.1f} GiB KV cache per GPU of "
             f"{gpu_memory_gib:.1f} GiB usable on {cluster.gpu}", size, value=used, limit=gpu_memory_gib, unit="GiB")
        free = 1.0 - used / gpu_memory_gib if gpu_memory_gib > 0 else None
        _serving_gates(gate, workload, cluster, result, anchors)
    want = workload.constraints.memory_headroom
    if free is not None and want > 0:
        gate("memory-headroom", free >= want - 1e-9,
             f"{free:.1%} of the usable memory free per GPU against the {want:.0%} headroom "
             f"(allocator fragmentation and framework growth need room)",
             anchors.at_profile("constraints.memory_headroom"), severity="warning", value=free, limit=want,
             unit="fraction")
    _network_gate(gate, cluster, result, anchors)
    _cost_gates(gate, workload, cluster, result, anchors)
    return gates


def _infeasible_gate(why: str, anchors: _Anchors, size: dict[str, object]) -> tuple[str, dict[str, object]]:
    """The gate an infeasible re-plan fails, by its cause: memory, a count no layout can use, a
    network that cannot carry the layout, or (else) the phase's targets."""
    if "does not fit" in why:
        return "fits-memory", size
    if "no valid layout" in why or "nearest counts" in why:
        return "layout", size
    if "scale-out" in why or "fabric" in why or "network" in why:
        return "network", anchors.at_cluster("fabric", "nic_gbit_per_gpu")
    return "feasible", size


def _training_gates(gate, workload: Workload, cluster: ClusterOut, t: TrainingPlan, anchors: _Anchors,
                    size: dict[str, object]) -> None:
    mem = t.memory
    if mem is not None:
        gate("fits-memory", mem.headroom_gib >= 0,
             f"{mem.total_gib:.1f} GiB of {mem.capacity_gib:.1f} GiB per GPU with {t.gpus:,} x {t.gpu}",
             size, value=mem.total_gib, limit=mem.capacity_gib, unit="GiB")
    spec = workload.training
    assert spec is not None
    if spec.deadline_days is not None:
        ok = t.wall_clock_days <= spec.deadline_days
        gate("deadline", ok, f"{t.wall_clock_days:.1f} days on {cluster.gpus:,} GPUs{_on_network(cluster, t)} "
             f"{'within' if ok else 'misses'} the {spec.deadline_days:g}-day deadline",
             anchors.at_profile("training.deadline_days"), value=t.wall_clock_days, limit=spec.deadline_days,
             unit="days")
    if spec.budget_usd is not None:
        cost = t.run_cost_usd if workload.constraints.pricing == "cloud" else t.capex_usd
        label = "run cost" if workload.constraints.pricing == "cloud" else "capex"
        if cost is None:
            # fail closed, as recommend does: an unpriced plan cannot pass a budget
            gate("training-budget", False, f"training {label} has no price; cannot check the budget",
                 anchors.at_profile("training.budget_usd"), limit=spec.budget_usd, unit="USD")
        else:
            gate("training-budget", cost <= spec.budget_usd,
                 f"training {label} {_usd(cost)} against the {_usd(spec.budget_usd)} budget",
                 anchors.at_profile("training.budget_usd"), value=cost, limit=spec.budget_usd, unit="USD")


def _serving_gates(gate, workload: Workload, cluster: ClusterOut, s: ServingPlan, anchors: _Anchors) -> None:
    spec = workload.serving
    assert spec is not None
    spare = cluster.gpus - s.gpus
    gate("capacity", cluster.gpus >= s.gpus,
         f"{s.gpus:,} x {s.gpu} needed for {spec.qps:g} req/s ({s.replicas} replicas of {s.gpus_per_replica}, "
         f"{s.spare_replicas} spare); the cluster has {cluster.gpus:,}"
         + (f" ({spare:,} more than needed)" if spare > 0 else ""),
         anchors.at_cluster("gpus", "nodes"), value=cluster.gpus, limit=s.gpus, unit="GPUs")
    # the statistic the planner sized the fleet for: the profile's latency_percentile
    ttft, label = s.ttft_ms_at_percentile, s.latency_percentile
    gate("ttft", ttft <= spec.ttft_ms, f"TTFT {label} {ttft:,.0f} ms against the {spec.ttft_ms:g} ms target",
         anchors.at_profile("serving.ttft_ms"), value=ttft, limit=spec.ttft_ms, unit="ms")
    gate("tpot", s.tpot_ms <= spec.tpot_ms, f"TPOT {s.tpot_ms:.1f} ms against the {spec.tpot_ms:g} ms target",
         anchors.at_profile("serving.tpot_ms"), value=s.tpot_ms, limit=spec.tpot_ms, unit="ms")


def _on_network(cluster: ClusterOut, t: TrainingPlan) -> str:
    """' on the cluster's ethernet-100g at 100 Gb/s per GPU, 4:1' when time used its network."""
    if cluster.nodes <= 1 or t.interconnect is None or t.interconnect.scaleout_fabric is None:
        return ""
    fabric = cluster.fabric or t.interconnect.scaleout_fabric
    gbit = cluster.nic_gbit_per_gpu if cluster.nic_gbit_per_gpu is not None else t.interconnect.nic_gbit_per_gpu
    over = f", {cluster.oversubscription:g}:1" if cluster.oversubscription > 1 else ""
    return f" on the cluster's {fabric} at {gbit:g} Gb/s per GPU{over}"


def _network_gate(gate, cluster: ClusterOut, result: TrainingPlan | ServingPlan, anchors: _Anchors) -> None:
    ic = result.interconnect
    if ic is None:
        return
    # Training time is computed on the cluster's own network (restrict): its fabric is a fact of
    # the figures, not a mismatch; a network too slow to hide communication shows in the days.
    timed = isinstance(result, TrainingPlan)
    if cluster.fabric is not None and ic.scaleout_fabric is not None and cluster.fabric != ic.scaleout_fabric:
        if timed:
            gate("fabric", True, f"the days are computed on the cluster's {cluster.fabric}; the planner would "
                 f"design {ic.scaleout_fabric} for this layout", anchors.at_cluster("fabric"), severity="warning")
        else:
            gate("fabric", False, f"the plan's figures assume {ic.scaleout_fabric}; the cluster uses "
                 f"{cluster.fabric}", anchors.at_cluster("fabric"), severity="warning")
    if cluster.nic_gbit_per_gpu is None or ic.required_gbit_per_gpu <= 0 or cluster.nodes <= 1:
        return
    effective = cluster.nic_gbit_per_gpu / cluster.oversubscription
    over = f" at {cluster.oversubscription:g}:1 oversubscription" if cluster.oversubscription > 1 else ""
    exposed = "; the exposed communication is in the days" if timed and effective < ic.required_gbit_per_gpu else ""
    gate("network", effective >= ic.required_gbit_per_gpu,
         f"{effective:,.0f} Gb/s per GPU{over} against the {ic.required_gbit_per_gpu:,.0f} Gb/s the layout needs "
         f"to keep communication hidden{exposed}", anchors.at_cluster("nic_gbit_per_gpu", "oversubscription"),
         severity="warning" if timed else "error",
         value=effective, limit=ic.required_gbit_per_gpu, unit="Gbit/s per GPU")


def _cost_gates(gate, workload: Workload, cluster: ClusterOut, result: TrainingPlan | ServingPlan,
                anchors: _Anchors) -> None:
    # Serving plans size the fleet themselves; the cluster's cost scales with its own GPU count.
    scale = cluster.gpus / result.gpus if isinstance(result, ServingPlan) and result.gpus else 1.0
    estimate = " (scaled from the planned BOM)" if scale != 1.0 else ""
    capex = None if result.capex_usd is None else result.capex_usd * scale
    unpriced = result.bom.unpriced_parts if result.bom is not None else []
    note = f"; not priced: {', '.join(unpriced)}" if unpriced else ""
    budgets = [(workload.constraints.budget_usd, anchors.at_profile("constraints.budget_usd")),
               (cluster.budget_usd, anchors.at_cluster("budget_usd"))]
    for limit, where in budgets:
        if limit is None:
            continue
        if capex is None:
            gate("budget", False, f"the cluster has no price; cannot check the {_usd(limit)} budget{note}", where,
                 limit=limit, unit="USD")  # fail closed, as recommend does
        else:
            gate("budget", capex <= limit, f"capex {_usd(capex)}{estimate} against the {_usd(limit)} budget{note}",
                 where, value=capex, limit=limit, unit="USD")
    power = result.power_kw * scale
    for limit, where in [(workload.constraints.power_limit_kw, anchors.at_profile("constraints.power_limit_kw")),
                         (cluster.power_limit_kw, anchors.at_cluster("power_limit_kw"))]:
        if limit is not None:
            gate("power", power <= limit, f"{power:,.1f} kW{estimate} against the {limit:,.1f} kW limit", where,
                 value=power, limit=limit, unit="kW")


def run_check(workload: Workload, catalog: Catalog, cluster_text: str, cluster_name: str,
              fail_on: Literal["error", "warning"] = "error") -> CheckResult:
    """Parse the cluster, re-plan the workload on it and evaluate every gate; ``fail_on`` says
    whether a failed warning gate fails the check too (``passed`` and every report follow it)."""
    spec, lines = parse_cluster(cluster_text, cluster_name)
    cluster = resolve_cluster(spec, workload, catalog, cluster_name)
    workload = dataclasses.replace(workload.for_phase(cluster.phase), phase_constraints=())
    restricted = restrict(workload, cluster)
    plan = _plan(restricted, catalog, cluster.phase)
    phase_plan = getattr(plan, cluster.phase)
    if (phase_plan is None or not phase_plan.feasible) and workload.constraints.memory_headroom > 0:
        # Nothing leaves the memory headroom free: the cluster may still run the job with less,
        # which the memory-headroom gate warns about (not a failure to fit).
        tight = dataclasses.replace(restricted, constraints=dataclasses.replace(restricted.constraints,
                                                                                memory_headroom=0.0))
        again = _plan(tight, catalog, cluster.phase)
        if getattr(again, cluster.phase) is not None and getattr(again, cluster.phase).feasible:
            plan = again
    anchors = _Anchors(profile=workload.source, profile_lines=workload.field_lines, cluster=cluster_name,
                       cluster_lines=lines)
    gates = evaluate(workload, cluster, plan, anchors, gpu_memory_gib=catalog.gpus[cluster.gpu].memory_usable_gib)
    errors = sum(1 for g in gates if not g.passed and g.severity == "error")
    warnings = sum(1 for g in gates if not g.passed and g.severity == "warning")
    return CheckResult(schema_version=CHECK_SCHEMA_VERSION, gpuplan_version=__version__,
                       catalog_version=catalog.version, catalog_sha256=catalog.sha256, profile=workload.source,
                       input_sha256=workload.input_sha256, cluster_file=cluster_name,
                       cluster_sha256=hashlib.sha256(cluster_text.encode()).hexdigest(), workload=workload.name,
                       cluster=cluster, fail_on=fail_on, passed=errors == 0 and (fail_on == "error" or warnings == 0),
                       errors=errors, warnings=warnings, gates=gates, plan=plan)


def failed(result: CheckResult, fail_on: str) -> bool:
    """Whether the check fails at ``fail_on`` (error: failed error gates; warning: any failed gate)."""
    return result.errors > 0 or (fail_on == "warning" and result.warnings > 0)


def fails_check(gate: Gate, fail_on: str) -> bool:
    """Whether this failed gate fails the check at ``fail_on`` (a failure in JUnit, not a note)."""
    return not gate.passed and (gate.severity == "error" or fail_on == "warning")
