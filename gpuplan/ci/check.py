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
from typing import Literal

from gpuplan.ci.cluster import ClusterOut, ClusterSpec, parse_cluster, resolve_cluster, restrict  # noqa: F401
from gpuplan.ci.gates import Gate, Severity, _Anchors, evaluate  # noqa: F401  (re-exported)
from gpuplan.ci.gates import _Out
from gpuplan.core.contract import Plan
from gpuplan.core.version import __version__
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import Workload

#: Version of the check JSON (its own contract, same versioning rule as the plan).
CHECK_SCHEMA_VERSION = "2.0"


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

def _plan(workload: Workload, catalog: Catalog, phase: str) -> Plan:
    """Plan one phase (a seam: tests put a synthetic planner here)."""
    from gpuplan.planning.compose import plan_workload

    return plan_workload(workload, catalog, phases=(phase,))

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
                       catalog_version=catalog.label, catalog_sha256=catalog.sha256, profile=workload.source,
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
