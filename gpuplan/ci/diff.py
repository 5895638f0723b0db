"""``gpuplan diff BASE NEW``: what changed between two plans (SKU, counts, cost, power, BOM lines).

Both sides are normalised through the JSON contract first (floats at the JSON's precision), so a
saved plan and a fresh plan of the same profile compare equal. The diff reads plan fields only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from gpuplan.core.version import __version__
from gpuplan.core.contract import Bom, Finding, Plan, ServingPlan, TrainingPlan
from gpuplan.planning.saved import as_published

#: Version of the diff JSON (its own contract, same versioning rule as the plan).
DIFF_SCHEMA_VERSION = "1.1"  # 1.1: findings_changed

Scalar = str | int | float | bool | None


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FindingChange(_Out):
    """One finding of the same code and phase in both plans, reworded: its base and new forms."""

    base: Finding
    new: Finding


class Change(_Out):
    field: str
    base: Scalar
    new: Scalar
    #: new - base for numbers, else None.
    delta: float | None
    #: delta / base for numbers with a non-zero base, else None.
    delta_ratio: float | None


class BomChange(_Out):
    category: str
    tier: str | None
    part_id: str
    base_quantity: int
    new_quantity: int
    delta_quantity: int
    base_total_usd: float | None
    new_total_usd: float | None
    #: None when either side has no price (never counted as $0).
    delta_usd: float | None


class PhaseDiff(_Out):
    phase: Literal["training", "serving"]
    status: Literal["added", "removed", "changed", "unchanged"]
    base_gpu: str | None
    new_gpu: str | None
    changes: list[Change]
    bom: list[BomChange]


class DiffResult(_Out):
    schema_version: str
    gpuplan_version: str
    base: str
    new: str
    base_input_sha256: str
    new_input_sha256: str
    changed: bool
    capex_base_usd: float | None
    capex_new_usd: float | None
    capex_delta_usd: float | None
    capex_delta_ratio: float | None
    power_base_kw: float
    power_new_kw: float
    power_delta_kw: float
    phases: list[PhaseDiff]
    findings_added: list[Finding]
    findings_resolved: list[Finding]
    #: Findings whose code and phase stayed while their message (or severity, or field) changed:
    #: listed here once, neither added nor resolved.
    findings_changed: list[FindingChange] = []
    #: Error findings of the new plan (a gate fails in NEW).
    new_errors: int


def normalise(plan: Plan) -> Plan:
    """The plan as its JSON says it (rounded floats), so saved and fresh plans compare equal."""
    return as_published(plan)


def _layout(phase: TrainingPlan | ServingPlan) -> str | None:
    lay = phase.layout
    if lay is None:
        return None
    if isinstance(phase, TrainingPlan):
        return (f"TP{lay.tp} PP{lay.pp} DP{lay.dp} CP{lay.cp} EP{lay.ep} VP{lay.vp} mb{lay.micro_batch}"  # type: ignore[union-attr]
                f" zero{lay.zero} {lay.recompute}")  # type: ignore[union-attr]
    return f"TP{lay.tp} PP{lay.pp} EP{lay.ep} batch{lay.concurrency}" + (" disagg" if lay.disaggregated else "")  # type: ignore[union-attr]


def _facts(phase: TrainingPlan | ServingPlan) -> dict[str, Scalar]:
    """The compared figures of a phase, in display order."""
    ic, topo = phase.interconnect, phase.topology
    out: dict[str, Scalar] = {
        "feasible": phase.feasible, "gpu": phase.gpu, "gpus": phase.gpus, "nodes": phase.nodes,
        "layout": _layout(phase),
        "fabric": ic.scaleout_fabric if ic else None,
        "nic_gbit_per_gpu": ic.nic_gbit_per_gpu if ic else None,
        "topology": topo.kind if topo else None,
        "topology_tiers": topo.tiers if topo else None,
        "switches": (topo.leaf_switches + topo.spine_switches + topo.core_switches) if topo else None,
        "capex_usd": phase.capex_usd, "power_kw": phase.power_kw,
        "racks": phase.bom.racks if phase.bom else None,
        "tco_total_usd": phase.tco.total_usd if phase.tco else None,
        "usd_per_gpu_hour": phase.tco.usd_per_gpu_hour if phase.tco else None,
    }
    if isinstance(phase, TrainingPlan):
        out.update({"wall_clock_days": phase.wall_clock_days, "mfu": phase.mfu, "gpu_hours": phase.gpu_hours,
                    "run_cost_usd": phase.run_cost_usd})
    else:
        out.update({"replicas": phase.replicas, "ttft_ms_p99": phase.ttft_ms_p99, "tpot_ms": phase.tpot_ms,
                    "max_qps": phase.max_qps, "usd_per_million_output_tokens": phase.usd_per_million_output_tokens})
    return out


def _is_number(v: Scalar) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _change(field: str, base: Scalar, new: Scalar) -> Change:
    delta = ratio = None
    if _is_number(base) and _is_number(new):
        delta = float(new) - float(base)  # type: ignore[arg-type]
        ratio = delta / float(base) if base else None  # type: ignore[arg-type]
    return Change(field=field, base=base, new=new, delta=delta, delta_ratio=ratio)


def _bom_lines(bom: Bom | None) -> dict[tuple[str, str, str], tuple[int, float | None]]:
    out: dict[tuple[str, str, str], tuple[int, float | None]] = {}
    for item in bom.items if bom else []:
        key = (item.category, item.tier or "", item.part_id)
        qty, total = out.get(key, (0, 0.0))
        out[key] = (qty + item.quantity,
                    None if total is None or item.total_price_usd is None else total + item.total_price_usd)
    return out


def _bom_changes(base: Bom | None, new: Bom | None) -> list[BomChange]:
    b, n = _bom_lines(base), _bom_lines(new)
    out = []
    for key in sorted(set(b) | set(n)):
        bq, bt = b.get(key, (0, 0.0))
        nq, nt = n.get(key, (0, 0.0))
        if bq == nq and bt == nt:
            continue
        out.append(BomChange(category=key[0], tier=key[1] or None, part_id=key[2], base_quantity=bq,
                             new_quantity=nq, delta_quantity=nq - bq, base_total_usd=bt if bq else None,
                             new_total_usd=nt if nq else None,
                             delta_usd=None if bt is None or nt is None else nt - bt))
    return out


def _phase_diff(name: str, base: TrainingPlan | ServingPlan | None, new: TrainingPlan | ServingPlan | None) -> PhaseDiff | None:
    if base is None and new is None:
        return None
    bf = _facts(base) if base is not None else {}
    nf = _facts(new) if new is not None else {}
    changes = [_change(k, bf.get(k), nf.get(k)) for k in dict.fromkeys([*bf, *nf]) if bf.get(k) != nf.get(k)]
    bom = _bom_changes(base.bom if base else None, new.bom if new else None)
    status = "added" if base is None else "removed" if new is None else "changed" if changes or bom else "unchanged"
    return PhaseDiff(phase=name, status=status, base_gpu=base.gpu if base else None,  # type: ignore[arg-type]
                     new_gpu=new.gpu if new else None, changes=changes, bom=bom)


def _capex(plan: Plan) -> float | None:
    """Capex of every phase of the plan; None (never $0) when a phase is infeasible or unpriced."""
    phases = [p for p in (plan.training, plan.serving) if p is not None]
    if not phases or any(not p.feasible or p.capex_usd is None for p in phases):
        return None
    return sum(p.capex_usd for p in phases if p.capex_usd is not None)


def _power(plan: Plan) -> float:
    return sum(p.power_kw for p in (plan.training, plan.serving) if p is not None)


def _key(f: Finding) -> tuple[str, str, str, str]:
    return (f.severity, f.code, f.phase, f.message)


def _pair_reworded(added: list[Finding], resolved: list[Finding]
                   ) -> tuple[list[Finding], list[Finding], list[FindingChange]]:
    """Pairs each added finding with a resolved one of the same code and phase, in order: the same
    finding reworded (a figure in its message moved), not one gone and another come."""
    pending: dict[tuple[str, str], list[Finding]] = {}
    for f in resolved:
        pending.setdefault((f.code, f.phase), []).append(f)
    pairs, still_added = [], []
    for f in added:
        olds = pending.get((f.code, f.phase))
        if olds:
            pairs.append(FindingChange(base=olds.pop(0), new=f))
        else:
            still_added.append(f)
    paired = {id(c.base) for c in pairs}
    return still_added, [f for f in resolved if id(f) not in paired], pairs


def only_phases(plan: Plan, phases: tuple[str, ...]) -> Plan:
    """The plan cut to ``phases`` (``gpuplan diff --phase`` of a saved plan): the other phase and its
    findings left out, as a profile planned for ``phases`` alone has none; profile findings kept."""
    if {"training", "serving"} <= set(phases):
        return plan
    return plan.model_copy(update={
        "training": plan.training if "training" in phases else None,
        "serving": plan.serving if "serving" in phases else None,
        "findings": [f for f in plan.findings if f.phase in phases or f.phase == "profile"]})


def diff_plans(base: Plan, new: Plan, *, base_name: str, new_name: str,
               phases: tuple[str, ...] = ("training", "serving")) -> DiffResult:
    """What changed from ``base`` to ``new`` in ``phases`` (totals and findings of those phases only)."""
    base, new = only_phases(normalise(base), phases), only_phases(normalise(new), phases)
    phases = [d for d in (_phase_diff("training", base.training, new.training),
                          _phase_diff("serving", base.serving, new.serving)) if d is not None]
    cb, cn = _capex(base), _capex(new)
    delta = None if cb is None or cn is None else cn - cb
    base_keys, new_keys = {_key(f) for f in base.findings}, {_key(f) for f in new.findings}
    added = [f for f in new.findings if _key(f) not in base_keys]
    resolved = [f for f in base.findings if _key(f) not in new_keys]
    added, resolved, reworded = _pair_reworded(added, resolved)
    changed = any(p.status != "unchanged" for p in phases) or bool(added or resolved or reworded)
    return DiffResult(schema_version=DIFF_SCHEMA_VERSION, gpuplan_version=__version__, base=base_name, new=new_name,
                      base_input_sha256=base.input_sha256, new_input_sha256=new.input_sha256, changed=changed,
                      capex_base_usd=cb, capex_new_usd=cn, capex_delta_usd=delta,
                      capex_delta_ratio=delta / cb if delta is not None and cb else None,
                      power_base_kw=_power(base), power_new_kw=_power(new),
                      power_delta_kw=_power(new) - _power(base), phases=phases, findings_added=added,
                      findings_resolved=resolved, findings_changed=reworded,
                      new_errors=sum(1 for f in new.findings if f.severity == "error"))
