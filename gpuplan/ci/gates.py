"""The gates of ``gpuplan check``: each compares one figure of the re-plan with one target and is
anchored to the line that sets the target (a profile field or a cluster field). Pure: reads the plan."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from gpuplan.ci.cluster import ClusterOut
from gpuplan.core.contract import Plan, ServingPlan, TrainingPlan
from gpuplan.core.numbers import num
from gpuplan.model.profile import Workload
from gpuplan.planning.saved import locate, repo_path

Severity = Literal["error", "warning"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


def _replica_words(s: ServingPlan) -> str:
    """How the plan's GPUs are counted: replicas (``xPyD`` groups when disaggregated) and spares."""
    d = s.disaggregation if s.layout is not None and s.layout.disaggregated else None
    if d is None:
        return f"{s.replicas} replicas of {s.gpus_per_replica}, {s.spare_replicas} spare"
    words = f"{s.replicas} x {d.prefill_per_group}P{d.decode_per_group}D group of {s.gpus_per_replica} GPUs"
    if s.spare_gpus:
        return f"{words} + {s.spare_gpus} GPUs of spare prefill and decode workers"
    return f"{words}, {s.spare_replicas} spare"


def _serving_gates(gate, workload: Workload, cluster: ClusterOut, s: ServingPlan, anchors: _Anchors) -> None:
    spec = workload.serving
    assert spec is not None
    spare = cluster.gpus - s.gpus
    gate("capacity", cluster.gpus >= s.gpus,
         f"{s.gpus:,} x {s.gpu} needed for {spec.qps:g} req/s ({_replica_words(s)}); the cluster has "
         f"{cluster.gpus:,}"
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
    if timed and cluster.fabric is not None and ic.scaleout_fabric == cluster.fabric and cluster.nodes > 1:
        # the days, the bill of materials and the power are all the cluster's network's (compose)
        gate("fabric", True, f"the days, bill of materials and power are computed{_on_network(cluster, result)}",
             anchors.at_cluster("fabric"), severity="warning")
    elif cluster.fabric is not None and ic.scaleout_fabric is not None and cluster.fabric != ic.scaleout_fabric:
        if timed:  # e.g. the cluster's fabric has no switch for its node count (the reasons say which)
            gate("fabric", True, f"the days are computed on the cluster's {cluster.fabric}; the bill of materials "
                 f"and power price {ic.scaleout_fabric}", anchors.at_cluster("fabric"), severity="warning")
        else:
            gate("fabric", False, f"the plan's figures assume {ic.scaleout_fabric}; the cluster uses "
                 f"{cluster.fabric}", anchors.at_cluster("fabric"), severity="warning")
    elif not timed and cluster.fabric is not None and cluster.fabric == ic.scaleout_fabric:
        gate("fabric", True, f"the plan's figures assume {ic.scaleout_fabric}, the cluster's fabric",
             anchors.at_cluster("fabric"), severity="warning")
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
            gate("power", power <= limit, f"{num(power)} kW{estimate} against the {num(limit)} kW limit", where,
                 value=power, limit=limit, unit="kW")
