"""The findings of a phase plan: the gates a CI job fails on (infeasible, over budget or power,
unpriced parts, one server), anchored to the profile field that causes them, and the training
plan's calibration notes."""

from __future__ import annotations

import re

from gpuplan.core.contract import Finding, ServingPlan, TrainingOption, TrainingPlan
from gpuplan.core.numbers import num
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import Workload


def gates(phase: str, plan: TrainingPlan | ServingPlan, workload: Workload) -> list[Finding]:
    """The checks a CI job gates on; each anchored to the profile field that causes it."""
    out: list[Finding] = []
    anchor = {"training": "training", "serving": "serving"}[phase]
    if not plan.feasible:
        why = infeasible_headline(phase, plan, workload)
        field = _infeasible_field(phase, workload, plan.infeasible)
        out.append(Finding(severity="error", code=f"{phase}-infeasible", message=why, phase=phase, field=field))  # type: ignore[arg-type]
        return out
    c = workload.constraints
    if c.budget_usd is not None and plan.capex_usd is None:
        out.append(Finding(severity="error", code=f"{phase}-over-budget", phase=phase,  # type: ignore[arg-type]
                           message=f"{phase} capex is unpriced: the ${c.budget_usd:,.0f} budget cannot be checked",
                           field="constraints.budget_usd"))
    elif c.budget_usd is not None and plan.capex_usd is not None and plan.capex_usd > c.budget_usd:
        out.append(Finding(severity="error", code=f"{phase}-over-budget", phase=phase,  # type: ignore[arg-type]
                           message=f"{phase} capex ${plan.capex_usd:,.0f}{_split(plan)} exceeds the budget "
                                   f"${c.budget_usd:,.0f}",
                           field="constraints.budget_usd"))
    if isinstance(plan, TrainingPlan):
        out += _training_budget(plan, workload)
    if c.power_limit_kw is not None and plan.power_kw > c.power_limit_kw:
        out.append(Finding(severity="error", code=f"{phase}-over-power", phase=phase,  # type: ignore[arg-type]
                           message=f"{phase} draws {plan.power_kw:,.0f} kW, above the {c.power_limit_kw:,.0f} kW limit",
                           field="constraints.power_limit_kw"))
    if isinstance(plan, ServingPlan) and plan.nodes == 1 and plan.spare_replicas > 0:
        out.append(Finding(severity="warning", code="serving-single-server", phase="serving",  # type: ignore[arg-type]
                           message=f"all {plan.replicas} replicas share one server: the {plan.spare_replicas} spare "
                                   f"replica{'s cover' if plan.spare_replicas != 1 else ' covers'} a GPU failure, "
                                   "not a server failure; a second server "
                                   "removes the single point of failure",
                           field="serving.spare_replicas"))
    if plan.bom is not None and plan.bom.unpriced_parts:
        out.append(Finding(severity="warning", code=f"{phase}-unpriced", phase=phase,  # type: ignore[arg-type]
                           message=f"{phase} BOM has parts without a catalog price (not in capex): "
                                   + ", ".join(plan.bom.unpriced_parts), field=anchor))
    return out


#: An infeasible phase's gate names each GPU type's own reason up to this many; beyond, it counts
#: them (the plan's ``infeasible`` list and the report's "why" give every one).
LISTED_GPU_REASONS = 2
_PER_GPU = re.compile(r"^[^\s:]+: ")


def infeasible_headline(phase: str, plan: TrainingPlan | ServingPlan, workload: Workload) -> str:
    """The one line an infeasible phase's gate says (the finding, stderr, SARIF, a PR comment): what
    the planner found of every GPU at once, then each GPU type's own reason when there are at most
    ``LISTED_GPU_REASONS`` of them, else their count and, for training, the GPU that comes nearest.
    Printing the whole per-GPU list there repeated the report's "why" (twenty-odd GPU types) three
    times: in the reasons, in the findings and on stderr."""
    per_gpu = [w for w in plan.infeasible if _PER_GPU.match(w)]
    general = [w for w in plan.infeasible if not _PER_GPU.match(w)]
    if len(per_gpu) <= LISTED_GPU_REASONS:
        return "; ".join(general + per_gpu) or f"no allowed GPU meets the {phase} targets"
    head = general or [f"no allowed GPU meets the {phase} target"]
    nearest = nearest_miss(plan) if isinstance(plan, TrainingPlan) else None
    if nearest is not None and not general:
        head = [f"{head[0]} (nearest: {nearest.gpu}, {num(nearest.wall_clock_days)} days on "
                f"{nearest.gpus:,} GPUs)"]
    return "; ".join(head) + (f"; the reason of each of the {len(per_gpu)} GPU types is in the report's 'why' "
                               "and the plan's infeasible list")


def nearest_miss(plan: TrainingPlan) -> TrainingOption | None:
    """The infeasible training plan's option that comes nearest its target: the fewest wall-clock
    days among the alternatives that miss it (the gate's line and the deadline's closest fix)."""
    misses = [a for a in plan.alternatives if not a.meets_target]
    return min(misses, key=lambda a: a.wall_clock_days) if misses else None


def _split(plan: TrainingPlan | ServingPlan) -> str:
    """" (servers $X + the rest of the bill $Y)": the planners fit the servers to a budget, and when
    no plan with cheaper servers meets the targets the rest of the bill can push it over."""
    servers = plan.bom.capex_by_category_usd.get("server", 0.0) if plan.bom is not None else 0.0
    if not 0 < servers < (plan.capex_usd or 0.0):
        return ""
    return f" (servers ${servers:,.0f} + the rest of the bill ${plan.capex_usd - servers:,.0f})"  # type: ignore[operator]


def _training_budget(plan: TrainingPlan, workload: Workload) -> list[Finding]:
    """``[training] budget_usd`` against the whole cost once the bill is designed: the layout
    search prices servers (capex) or GPU-hours (cloud), and the rest of the bill (network,
    storage, racks, power, cooling) can push capex over."""
    spec = workload.training
    if spec is None or spec.budget_usd is None:
        return []
    cloud = workload.constraints.pricing == "cloud"
    cost = plan.run_cost_usd if cloud else plan.capex_usd
    if cost is None or cost <= spec.budget_usd:
        return []
    split = "" if cloud else _split(plan)
    return [Finding(severity="error", code="training-over-budget", phase="training", field="training.budget_usd",
                    message=f"training {'run cost' if cloud else 'capex'} ${cost:,.0f}{split} exceeds the "
                            f"${spec.budget_usd:,.0f} training budget: the layout search fits the servers to the "
                            f"budget, the rest of the bill designed for them does not fit beside them")]


def training_notes(plan: TrainingPlan, catalog: Catalog, *, moe: bool) -> list[Finding]:
    """Notes when no published training run backs the plan's GPU, precision or model kind, and a
    warning when its memory is within ``memory_tight_fraction`` of the GPU's capacity."""
    from gpuplan.hardware.intervals import residual_table, validated_gpus, validated_moe, validated_precisions
    from gpuplan.hardware.training_calibration import calibration
    from gpuplan.training.planner import unvalidated_note

    cal = calibration(catalog)
    if not plan.feasible or plan.gpu is None:
        return []
    out = []
    table = residual_table(catalog)
    validated = validated_gpus(table, "training")
    if plan.gpu not in validated:
        out.append(Finding(severity="note", code="training-unvalidated-gpu", phase="training", field="training",
                           message=unvalidated_note(plan.gpu, validated)))
    mem = plan.memory
    if mem is not None and mem.headroom_gib < cal.memory_tight_fraction * mem.capacity_gib:
        out.append(Finding(severity="warning", code="training-memory-tight", phase="training", field="training",
                           message=f"memory: {mem.total_gib:.1f} of {mem.capacity_gib:.1f} GiB per GPU, "
                                   f"{mem.headroom_gib:.1f} GiB ({mem.headroom_gib / mem.capacity_gib:.1%}) of "
                                   f"headroom: allocator fragmentation can exceed the modelled allowance; the next "
                                   f"best layouts list their headroom"))
    regimes, covered, precisions = [], [], validated_precisions(table, "training")
    if plan.precision not in precisions:
        regimes.append(f"{plan.precision} training")
        covered.append(f"their precisions: {', '.join(precisions) or 'none'}")
    if moe and not validated_moe(table, "training"):
        regimes.append("a mixture-of-experts model")
        covered.append(f"their models: {'dense only' if validated else 'none'}")
    if regimes:
        out.append(Finding(severity="note", code="training-unvalidated-regime", phase="training",
                           field="training.precision" if plan.precision not in precisions else "model",
                           message=f"calibration: no published run of {' or of '.join(regimes)} is among the "
                                   f"validation cases ({'; '.join(covered)}): its step time is an extrapolation"))
    return out


def _infeasible_field(phase: str, workload: Workload, why: list[str]) -> str:
    """The profile field an infeasible phase is anchored to: a constraint the planner's reasons
    name (power limit, budget), else the target that cannot be met."""
    text = " ".join(why)
    c = workload.constraints
    if c.power_limit_kw is not None and "power limit" in text:
        return "constraints.power_limit_kw"
    if phase == "training" and workload.training is not None:
        t = workload.training
        if t.budget_usd is None and c.budget_usd is not None and "budget" in text:
            return "constraints.budget_usd"
        return ("training.gpus" if t.gpus is not None else "training.budget_usd" if t.budget_usd is not None
                else "training.deadline_days")
    if c.budget_usd is not None and "budget" in text:
        return "constraints.budget_usd"
    if "TPOT target" in text:
        return "serving.tpot_ms"
    if "does not fit any allowed GPU" in text:
        return "model"
    return "serving.ttft_ms"
