"""Compose the phase planners, the fabric and the BOM into one :class:`~gpuplan.core.contract.Plan`.

Data flow: workload -> training / serving planner (layout, GPU count, traffic demand) ->
fabric (interconnect + topology; a slower or oversubscribed network is fed back into the training
step time) -> BOM (capex, power) -> plan. Renderers read the plan and nothing else.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from gpuplan.core.units import GIB
from gpuplan.core.version import __version__
from gpuplan.hardware.loader import Catalog
from gpuplan.core.contract import (
    SCHEMA_VERSION,
    AssumptionOut,
    Finding,
    ModelSummary,
    Plan,
    ServingOption,
    ServingPlan,
    TrainingOption,
    TrainingPlan,
)
from gpuplan.model.profile import Workload
from gpuplan.planning.closest_fix import with_fix
from gpuplan.planning.deploy_inputs import hf_repo, with_deploy
from gpuplan.planning.findings import gates, training_notes


def plan_workload(workload: Workload, catalog: Catalog, *, phases: tuple[str, ...] = ("training", "serving"),
                  intervals: bool = True) -> Plan:
    findings: list[Finding] = []
    notes = list(workload.assumptions)
    training = serving = None
    if workload.training is not None and "training" in phases:
        from gpuplan.training.planner import assumptions as training_assumptions

        training = with_fix("training", workload, catalog, _plan_training)
        findings += gates("training", training, workload.for_phase("training"))
        findings += training_notes(training, catalog, moe=workload.arch.is_moe)
        notes += training_assumptions(workload, catalog)
    if workload.serving is not None and "serving" in phases:
        serving = with_fix("serving", workload, catalog, _plan_serving)
        findings += gates("serving", serving, workload.for_phase("serving"))
        from gpuplan.planning.demand_cost import demand_assumption

        demand_note = demand_assumption(serving, workload, catalog)
        notes += [demand_note] if demand_note is not None else []
    training = _idle(training, catalog, workload.for_phase("training"))
    serving = _idle(serving, catalog, workload.for_phase("serving"))
    fleet = _plan_fleet(workload, catalog, training, serving)
    arch = workload.arch
    model = ModelSummary(name=workload.model_name, total_params=arch.total_params, active_params=arch.active_params,
                         layers=arch.layers, hidden=arch.hidden, heads=arch.heads, kv_heads=arch.kv_heads,
                         experts=arch.experts, kv_bytes_per_token_bf16=arch.kv_elements_per_token() * 2,
                         hf_repo=hf_repo(workload.model_name, catalog))
    from gpuplan.fabric.tco import plan_tco

    whole = plan_tco(training.tco if training is not None else None, serving.tco if serving is not None else None)
    plan = Plan(schema_version=SCHEMA_VERSION, gpuplan_version=__version__, catalog_version=catalog.label,
                catalog_sha256=catalog.sha256, input_sha256=workload.input_sha256, profile=workload.source,
                workload=workload.name, model=model, pricing=workload.constraints.pricing,  # type: ignore[arg-type]
                assumptions=[AssumptionOut(field=a.field, value=a.value, reason=a.reason) for a in notes],
                training=training, serving=serving, findings=findings, tco=whole, fleet=fleet)
    if not intervals:
        return plan
    from gpuplan.planning.intervals import with_intervals

    return with_intervals(plan, workload, catalog)


def _idle(plan: Any, catalog: Catalog, workload: Workload) -> Any:
    """``gpus_idle``: GPUs bought (whole servers) or rented (whole instances) beyond the plan's."""
    if plan is None or not plan.feasible or plan.gpu is None:
        return plan
    split = getattr(plan, "disaggregation", None)
    if split is not None and split.chosen:  # two pools, maybe two GPU types: counted when sized
        return plan
    gpu = catalog.gpus[plan.gpu]
    paid = gpu.billed_gpus(plan.gpus) if workload.constraints.pricing == "cloud" else plan.nodes * gpu.gpus_per_node
    return plan.model_copy(update={"gpus_idle": max(0, paid - plan.gpus)})


def _attach_network(phase: str, result: Any, workload: Workload, catalog: Catalog) -> Any:
    """Design the fabric for a phase result, feed it back (training), and price it."""
    from gpuplan.fabric.bom import build_bom
    from gpuplan.fabric.interconnect import design_fabric
    from gpuplan.fabric.sizing import SizingError

    plan = result.plan
    gpu = result.chosen_gpu
    if not plan.feasible or gpu is None or result.demand is None:
        return plan
    cluster = workload.cluster_network if phase == "training" else None  # check: the cluster's own network
    try:
        if cluster is not None and (cluster.fabric or cluster.nic_gbit_per_gpu is not None):
            from gpuplan.fabric.given import given_scaleout

            given = given_scaleout(result.demand, gpu, catalog, cluster.fabric, cluster.nic_gbit_per_gpu)
            fabric = design_fabric(result.demand, gpu, catalog, scaleout=given,
                                   oversubscription=cluster.oversubscription)
        else:
            fabric = design_fabric(result.demand, gpu, catalog)
    except SizingError as exc:  # a plan whose cluster no modelled fabric reaches is infeasible, not bad input
        why = f"{gpu.id}: {plan.gpus:,} GPUs: {exc}; four-tier fabrics are not modelled"
        return plan.model_copy(update={"feasible": False, "infeasible": [why, *plan.infeasible]})
    interconnect, topology = fabric.interconnect, fabric.topology
    if phase == "training" and interconnect.scaleout_fabric is not None:
        from gpuplan.physics.network import network_for
        from gpuplan.training.planner import with_network

        tech = catalog.fabrics[cluster.fabric if cluster and cluster.fabric else interconnect.scaleout_fabric]
        gbit = (cluster.nic_gbit_per_gpu if cluster and cluster.nic_gbit_per_gpu is not None
                else interconnect.nic_gbit_per_gpu)
        over = cluster.oversubscription if cluster else topology.oversubscription
        network = network_for(gpu, catalog, tech, gbit_per_gpu=gbit, oversubscription=over,
                              hops=topology.max_switch_hops or None)
        result = with_network(result, workload, catalog, network)
        plan = result.plan
    given = workload.constraints.tco
    try:  # the storage and front-end networks are sized from catalog switches too
        bom = build_bom(phase, gpu, plan.gpus, fabric, catalog,
                        storage=_storage_need(phase, plan, workload, catalog), pue=dict(given).get("pue"))
    except SizingError as exc:
        why = f"{gpu.id}: {plan.gpus:,} GPUs: storage or front-end network: {exc}"
        return plan.model_copy(update={"feasible": False, "infeasible": [why, *plan.infeasible]})
    update: dict[str, Any] = {"interconnect": interconnect, "topology": topology, "bom": bom,
                              "power_kw": bom.power_kw,
                              # without a server price the priced lines are not a capex: say unpriced
                              "capex_usd": None if gpu.id in bom.unpriced_parts else bom.capex_usd}
    if gpu.id not in bom.unpriced_parts:
        from gpuplan.fabric.tco import phase_tco

        update["tco"] = phase_tco(bom, gpu, plan.gpus, given, catalog,
                                  run_gpu_hours=getattr(plan, "gpu_hours", None) if phase == "training" else None,
                                  output_tokens_per_s=getattr(plan, "output_tokens_per_s", None)
                                  if phase == "serving" else None)
    return plan.model_copy(update=update)


def _storage_need(phase: str, plan: Any, workload: Workload, catalog: Catalog) -> Any:
    """What the phase's shared storage must hold (gpuplan.fabric.storage)."""
    from gpuplan.fabric.storage import StorageNeed

    params = float(workload.arch.total_params)
    if phase == "training" and workload.training is not None:
        from gpuplan.training.goodput import goodput

        interval = goodput(plan.gpus, catalog.table("training")).checkpoint_interval_hours
        return StorageNeed("training", params, tokens=workload.training.tokens, checkpoint_interval_hours=interval)
    weights = float(plan.weights_gib_per_gpu) * int(plan.gpus_per_replica or 1) * GIB
    return StorageNeed("serving", params, weights_bytes=weights)


#: Under capex pricing the phase planner ranks GPUs by server price; its best plan and the next
#: cheapest alternatives are then priced with their own network (which differs a lot between
#: SKUs: NVLink-72 racks, on-die Ethernet, 800G NICs) and re-ranked on the total.
RERANK_WITH_NETWORK = 4


def _plan_training(workload: Workload, catalog: Catalog, top: int | None = None) -> TrainingPlan:
    from functools import partial

    from gpuplan.training.planner import layout_alternatives, plan_training

    # One memo for this run: the capex re-ranking plans the runners-up again without re-searching;
    # the next best layouts are searched once, for the plan that wins.
    memo: dict[tuple[object, ...], object] = {}
    planner = partial(plan_training, memo=memo, layouts=False, top=top)
    plan = _fit_training_budget(_plan_phase("training", planner, workload, catalog), planner, workload, catalog)
    if top is not None:
        return plan
    return plan.model_copy(update={"layout_alternatives": layout_alternatives(workload, catalog, plan, memo)})


#: Re-plans with a tighter server budget when the rest of the bill pushes a phase's budget over.
MAX_BUDGET_PASSES = 3


def _fit_training_budget(plan: TrainingPlan, planner: Callable[[Workload, Catalog], Any], workload: Workload,
                         catalog: Catalog) -> TrainingPlan:
    """``[training] budget_usd`` fitted by :func:`_fit_budget`."""
    spec = workload.training
    if spec is None or spec.budget_usd is None:
        return plan
    return _fit_budget("training", plan, spec.budget_usd,
                       lambda b: _plan_phase("training", planner, replace(workload, training=replace(spec, budget_usd=b)),
                                             catalog), workload)


def _fit_budget(phase: str, plan: Any, budget: float, replan: Callable[[float], Any], workload: Workload) -> Any:
    """Under capex, a phase planner fits its servers to the budget; the bill designed afterwards
    adds the network, storage, management, racks, power and cooling. When the whole bill is over,
    plan again (``replan(servers budget)``) with the servers' budget cut to their share of it, until
    the bill fits (or give up and let the over-budget finding say so). Without this a serving plan
    read "the only priced GPU type that meets the targets" ($492k of servers in a $500k budget) and
    "over budget" ($667k bill) at once."""
    if workload.constraints.pricing != "capex":
        return plan
    servers_budget = budget
    for _ in range(MAX_BUDGET_PASSES):
        if not plan.feasible or plan.capex_usd is None or plan.bom is None or plan.capex_usd <= budget:
            break
        servers = plan.bom.capex_by_category_usd.get("server", 0.0)
        if not 0 < servers < plan.capex_usd:
            break
        servers_budget *= servers / plan.capex_usd
        again = replan(servers_budget)
        if not again.feasible or again.capex_usd is None:
            break
        plan = again
    if servers_budget < budget and plan.feasible and plan.capex_usd is not None and plan.capex_usd <= budget:
        note = (f"budget: servers fitted to ${servers_budget:,.0f} so that the whole bill "
                f"(${plan.capex_usd:,.0f}) stays within the ${budget:,.0f} {phase} budget")
        plan = plan.model_copy(update={"reasons": [*plan.reasons, note]})
    return plan


def _plan_serving(workload: Workload, catalog: Catalog, *, shown: bool = True) -> ServingPlan:
    """The serving plan; ``shown=False``: a plan read only for its fleet and demand curve (the fleet
    strategies' serving on the training GPU), without the frontier and deploy inputs nobody reads."""
    from functools import partial

    from gpuplan.fabric.tco import cost_basis
    from gpuplan.serving.autoscale import autoscaling
    from gpuplan.serving.planner import plan_serving, with_frontier

    from gpuplan.planning.demand_cost import with_demand_cost
    from gpuplan.planning.disagg_choice import with_disaggregation

    # The runners-up the capex re-rank prices are planned without their frontier (thrown away
    # unless one wins; then it is added to the winner).
    lean = partial(plan_serving, frontier=False)
    planner = plan_serving if shown else lean
    finish = with_frontier if shown else None
    best = _plan_phase("serving", planner, workload, catalog, rival=lean, finish=finish)
    c = workload.constraints
    if c.budget_usd is not None:
        best = _fit_budget("serving", best, c.budget_usd, lambda b: _plan_phase(
            "serving", planner, replace(workload, constraints=replace(c, budget_usd=b)), catalog, rival=lean,
            finish=finish), workload)
    plan: ServingPlan = with_disaggregation(best, workload, catalog)
    assert workload.serving is not None
    plan = plan.model_copy(update={"autoscaling": autoscaling(plan, workload.serving, catalog,
                                                              workload.constraints.pricing,
                                                              cost_basis(workload.constraints.tco, catalog))})
    plan = with_demand_cost(plan, workload, catalog)
    return with_deploy(plan, workload, catalog) if shown else plan


def _plan_fleet(workload: Workload, catalog: Catalog, training: TrainingPlan | None,
                serving: ServingPlan | None) -> Any:
    """Separate fleets or one shared fleet (planning/fleet.py), when both phases are planned."""
    from gpuplan.planning.fleet import plan_fleet

    def serve_on(gpu: str) -> ServingPlan:
        base = workload.for_phase("serving")
        only = replace(base, constraints=replace(base.constraints, allow_gpus=(gpu,)))
        return _plan_serving(only, catalog, shown=False)

    return plan_fleet(workload, catalog, training, serving, serve_on)


def _plan_phase(phase: str, planner: Callable[[Workload, Catalog], Any], workload: Workload, catalog: Catalog,
                rival: Callable[[Workload, Catalog], Any] | None = None,
                finish: Callable[[Any, Workload, Catalog], Any] | None = None) -> Any:
    """The phase's plan, re-ranked on capex with each runner-up's network. ``rival`` plans a
    runner-up (``planner`` when None) and ``finish(plan, workload, catalog)`` completes the one that
    wins (what ``rival`` leaves out and ``planner`` gives)."""
    best = _attach_network(phase, planner(workload, catalog), workload, catalog)
    if workload.constraints.pricing != "capex" or not best.feasible or best.capex_usd is None:
        return best
    rivals = [a for a in best.alternatives if a.meets_target and a.cost_usd is not None][:RERANK_WITH_NETWORK - 1]
    priced: list[Any] = [best]
    only_of: dict[str, Workload] = {}
    for alt in rivals:
        only = replace(workload, constraints=replace(workload.constraints, allow_gpus=(alt.gpu,)))
        plan = _attach_network(phase, (rival or planner)(only, catalog), only, catalog)
        if plan.feasible and plan.capex_usd is not None and _meets(phase, plan, workload):
            priced.append(plan)
            only_of[plan.gpu] = only
    winner = min(priced, key=lambda p: (p.capex_usd, p.gpu))
    if winner is not best and finish is not None:
        done = finish(winner, only_of[winner.gpu], catalog)
        priced = [done if p is winner else p for p in priced]
        winner = done
    totals = {p.gpu: p for p in priced}
    options = [_option(phase, p) for p in priced if p is not winner]
    options += [a for a in best.alternatives if a.gpu not in totals]
    reasons = list(winner.reasons)
    if winner is not best and phase == "serving":
        reasons, options = _reworded(winner, best, priced, options)
    # Those priced with their network rank first: a servers-only capex is no total to rank them by.
    options.sort(key=lambda o: (not o.meets_target, o.cost_usd is None, not o.network_included, o.cost_usd or 0.0,
                                o.gpu))
    common = set.intersection(*(set(_unpriced(p)) for p in priced))
    compared = ", ".join(f"{p.gpu} ${p.capex_usd:,.0f}"
                         + (f" (without unpriced {', '.join(x for x in _unpriced(p) if x not in common)})"
                            if set(_unpriced(p)) - common else "")
                         for p in sorted(priced, key=lambda p: (p.capex_usd, p.gpu)))
    if common:
        compared += f"; every total leaves out the unpriced {', '.join(sorted(common))}"
    note = (f"ranked on capex with each option's own network (its whole bill: servers, network, storage, "
            f"management, racks, power, cooling): {compared}"
            + ("" if winner is best else f"; {winner.gpu} overtakes {best.gpu} once the network is priced"))
    return winner.model_copy(update={"alternatives": options, "reasons": [*reasons, note]})


def _reworded(winner: Any, best: Any, priced: list[Any], options: list[Any]) -> tuple[list[str], list[Any]]:
    """A serving winner that overtook ``best`` once the networks were priced was re-planned on its
    GPU type alone: its cost line ("the only priced GPU type") and the other options' ratios to
    "the chosen" ``best`` are said again against the winner, on the same bases (capex with the
    network; server capex for the options priced without theirs)."""
    from gpuplan.serving.report import ONLY_PRICED, network_ranked, versus_chosen

    ranked = [(p.gpu, p.capex_usd) for p in sorted(priced, key=lambda p: (p.capex_usd, p.gpu))]
    reasons = [network_ranked(ranked) if r.startswith(ONLY_PRICED) else r for r in winner.reasons]
    servers = winner.bom.capex_by_category_usd.get("server", 0.0) if winner.bom is not None else 0.0
    stale = f"the chosen {best.gpu}"
    out = []
    for o in options:
        if o.reason and o.reason.endswith(stale) and o.cost_usd and not o.network_included and servers > 0:
            o = o.model_copy(update={"reason": versus_chosen(f"${o.cost_usd:,.0f} server capex", o.cost_usd / servers,
                                                             winner.gpu)})
        out.append(o)
    return reasons, out


def _unpriced(plan: Any) -> list[str]:
    """Parts the plan's capex leaves out: a ranking on such totals may flip once they are priced,
    and the ranking note says which."""
    return list(plan.bom.unpriced_parts) if plan.bom is not None else []


def _meets(phase: str, plan: Any, workload: Workload) -> bool:
    """The phase target still holds once the plan runs on its own network."""
    if phase == "training" and workload.training is not None and workload.training.deadline_days is not None:
        return bool(plan.wall_clock_days <= workload.training.deadline_days * (1 + 1e-9))
    return True


def _option(phase: str, plan: Any) -> TrainingOption | ServingOption:
    if phase == "training":
        return TrainingOption(gpu=plan.gpu, gpus=plan.gpus, nodes=plan.nodes, layout=plan.layout,
                              step_time_s=plan.step_time_s, mfu=plan.mfu, wall_clock_days=plan.wall_clock_days,
                              gpu_hours=plan.gpu_hours, cost_usd=plan.capex_usd, meets_target=True, bound=plan.bound,
                              network_included=True)
    return ServingOption(gpu=plan.gpu, gpus=plan.gpus, replicas=plan.replicas, layout=plan.layout,
                         ttft_ms_p99=plan.ttft_ms_p99, tpot_ms=plan.tpot_ms, max_qps=plan.max_qps,
                         cost_usd=plan.capex_usd, usd_per_million_output_tokens=plan.usd_per_million_output_tokens,
                         meets_target=True, bound=plan.bound, cloud_usd_per_hour=plan.cloud_usd_per_hour,
                         reason="more capex once the network is priced", network_included=True)
