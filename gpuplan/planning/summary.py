"""Each phase's plan as far as a sweep summarises it (planning/sweep.py): the recommended GPU, its
count, time or latency, cost and power, exactly as :func:`~gpuplan.planning.compose.plan_workload`
gives them, and nothing a summary does not read.

The full plan ranks every allowed GPU type, prices the best ``RERANK_WITH_NETWORK`` of them (by
server cost) with their own network and recommends the cheapest total. A summary needs only that
winner, so the phase planners rank only the best few GPU types (``top``), and under a training
deadline priced by capex they stop earlier still: once the best plan's total with its network is
known, a runner-up whose servers alone cost more cannot win (every total is its servers plus
more), so the training search is cut off at that total (``ceiling``). Left out: the other
alternatives, the next best layouts, the closest fix of an infeasible phase, autoscaling,
deployment, the fleet strategies, intervals and findings.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from gpuplan.core.contract import ServingPlan, TrainingPlan
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import Workload
from gpuplan.planning.compose import RERANK_WITH_NETWORK, _attach_network, _meets, _plan_phase, _plan_training


def plan_summary(workload: Workload, catalog: Catalog, phases: tuple[str, ...] = ("training", "serving")
                 ) -> tuple[TrainingPlan | None, ServingPlan | None]:
    from gpuplan.serving.planner import plan_serving

    training = serving = None
    if workload.training is not None and "training" in phases:
        training = _training(workload.for_phase("training"), catalog)
    if workload.serving is not None and "serving" in phases:
        serving = _plan_phase("serving", partial(plan_serving, top=RERANK_WITH_NETWORK),
                              workload.for_phase("serving"), catalog)
    return training, serving


def _training(workload: Workload, catalog: Catalog) -> TrainingPlan:
    """The training plan's winner: :func:`~gpuplan.planning.compose._plan_phase`'s capex re-rank,
    with the runners-up searched only up to the best total found."""
    from gpuplan.training.planner import plan_training

    spec = workload.training
    assert spec is not None
    if spec.deadline_days is None or spec.gpus is not None or spec.budget_usd is not None \
            or workload.constraints.pricing != "capex":
        return _plan_training(workload, catalog, top=RERANK_WITH_NETWORK)
    memo: dict[tuple[object, ...], object] = {}
    best = _attach_network("training", plan_training(workload, catalog, memo, layouts=False, top=1), workload,
                           catalog)
    if not best.feasible or best.capex_usd is None:
        return best
    ranked = plan_training(workload, catalog, memo, layouts=False, top=RERANK_WITH_NETWORK, ceiling=best.capex_usd)
    priced = [best]
    for alt in [a for a in ranked.plan.alternatives if a.meets_target and a.cost_usd is not None][
            :RERANK_WITH_NETWORK - 1]:
        if alt.cost_usd > min(p.capex_usd for p in priced):
            break  # its servers alone cost more than a total found; so do the next ones'
        only = replace(workload, constraints=replace(workload.constraints, allow_gpus=(alt.gpu,)))
        plan = _attach_network("training", plan_training(only, catalog, memo, layouts=False, top=1), only, catalog)
        if plan.feasible and plan.capex_usd is not None and _meets("training", plan, workload):
            priced.append(plan)
    return min(priced, key=lambda p: (p.capex_usd, p.gpu))
