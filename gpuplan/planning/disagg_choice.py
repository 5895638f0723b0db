"""Aggregated or disaggregated serving: the choice, made on whole costs (``[serving] disaggregation``).

The serving planner's aggregated plan arrives priced with its own network (planning/compose.py).
The cheapest disaggregated fleet (gpuplan/serving/disagg_search.py) is then weighed against it:

* ``never``: not searched;
* ``auto``: chosen when it meets the targets for less: under capex pricing, its servers alone
  must cost less than the aggregated plan's whole bill before its own fabric and BOM are built,
  and the whole bill must still cost less; under cloud pricing, the $/h of its instances; with
  nothing priced, fewer GPUs. Otherwise it is reported as the alternative considered, with its cost;
* ``always``: chosen whenever one meets the targets (and the budget and power limits).

A chosen fleet gets the fabric both pools need (the KV transfer is part of the demand) and a BOM
holding both pools' servers, NICs and switches.
"""

from __future__ import annotations

import math
from typing import Any

from gpuplan.core.contract import ServingPlan
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import Workload


def with_disaggregation(plan: ServingPlan, workload: Workload, catalog: Catalog) -> ServingPlan:
    """``plan`` (aggregated) or the disaggregated plan that replaces it, with the comparison."""
    from gpuplan.serving.disagg_plan import aggregated_reason, comparison, cost_words, summary
    from gpuplan.serving.planner import _demand, plan_disaggregated

    spec = workload.serving
    if spec is None or spec.disaggregation == "never" or spec.output_tokens <= 1:
        return plan
    pricing = workload.constraints.pricing
    mode = spec.disaggregation
    agg = _cost(plan, pricing)
    by_gpus = plan.feasible and agg is None
    # Under ``auto`` a fleet whose servers cost at least the aggregated plan is only reported, and
    # only the cheapest such (nothing is built when nothing is priced): the search may skip the rest.
    worth_below = None if mode != "auto" or not plan.feasible else -math.inf if agg is None else agg
    finalists = plan_disaggregated(workload, catalog, by_gpus=by_gpus, worth_below=worth_below)
    if not finalists:
        note = "Disaggregated prefill/decode: no prefill and decode layout pair meets the targets."
        return plan.model_copy(update={"reasons": [*plan.reasons, note]}) if plan.feasible else plan
    demand = _demand(workload)
    against = (f"{plan.gpus:,} GPUs aggregated (nothing priced)" if by_gpus else
               f"{cost_words(plan.capex_usd, plan.cloud_usd_per_hour, pricing)} for the aggregated "
               f"{plan.gpus:,} x {plan.gpu}{_carrying(plan)}" if plan.feasible else "no aggregated plan meets the targets")

    def record(fleet: Any, recommended: bool, chosen: bool, why: str, built: ServingPlan | None) -> Any:
        capex = built.capex_usd if built is not None else fleet.fleet.capex_usd
        cloud = built.cloud_usd_per_hour if built is not None else fleet.fleet.cloud_usd_per_hour
        return comparison(fleet, demand, plan, mode=mode, recommended=recommended, chosen=chosen, reason=why,
                          capex=capex, cloud=cloud, network_included=built is not None and built.bom is not None,
                          nodes=built.nodes if built is not None else None)

    def total(p: ServingPlan) -> float:
        cost = float(p.gpus) if by_gpus else p.capex_usd if pricing == "capex" else p.cloud_usd_per_hour
        return cost if cost is not None else float("inf")

    built, skipped = [], []
    for fleet in finalists:
        servers = float(fleet.gpus) if by_gpus else fleet.fleet.objective
        if mode == "auto" and plan.feasible and (servers is None or agg is None or servers >= agg):
            skipped.append((fleet, "for its servers alone" if pricing == "capex" and not by_gpus else ""))
            continue
        p = _network(fleet, workload, catalog, plan, demand, record)
        if p is None:
            skipped.append((fleet, "(its network cannot be built from catalog switches)"))
        elif not _within_limits(p, workload):
            skipped.append((fleet, "(over the budget or power limit)"))
        else:
            built.append((total(p), p.gpus, fleet, p))
    if not built:
        fleet, how = skipped[0]
        why = (f"{summary(fleet)}: {cost_words(fleet.fleet.capex_usd, fleet.fleet.cloud_usd_per_hour, pricing)}"
               f"{' ' + how if how else ''} against {against}: stay aggregated")
        return _considered(plan, record(fleet, False, False, why, None))
    cost, _, fleet, chosen = min(built, key=lambda t: (t[0], t[1]))
    cheaper = not plan.feasible or (agg is not None and cost < agg)
    words = cost_words(chosen.capex_usd, chosen.cloud_usd_per_hour, pricing)
    if mode == "auto" and not cheaper:
        why = f"{summary(fleet)}: {words} with its network against {against}: stay aggregated"
        return _considered(plan, record(fleet, False, False, why, chosen))
    why = (f"{summary(fleet)}: {words} against {against}"
           + (": meets the targets for less" if cheaper else ": chosen because the profile asks for it"))
    final = record(fleet, cheaper, True, why, chosen)
    alternatives = list(chosen.alternatives)
    if plan.feasible and alternatives:  # the aggregated plan, first: its reason follows the final record
        alternatives[0] = alternatives[0].model_copy(update={"reason": aggregated_reason(plan, final, pricing)})
    return chosen.model_copy(update={"disaggregation": final, "alternatives": alternatives,
                                     "reasons": [*chosen.reasons, f"Chosen over aggregated serving: {why}."]})


def _carrying(plan: ServingPlan) -> str:
    """`` (N carrying the load)``: the aggregated GPUs the comparison's ``aggregated_gpus`` counts."""
    active = (plan.replicas - plan.spare_replicas) * plan.gpus_per_replica
    return f" ({active:,} carrying the load)" if active != plan.gpus else ""


def _cost(plan: ServingPlan, pricing: str) -> float | None:
    if not plan.feasible:
        return None
    return plan.capex_usd if pricing == "capex" else plan.cloud_usd_per_hour


def _considered(plan: ServingPlan, rec: Any) -> ServingPlan:
    if not plan.feasible:
        return plan
    line = f"Disaggregated prefill/decode considered: {rec.reason}."
    return plan.model_copy(update={"disaggregation": rec, "reasons": [*plan.reasons, line]})


def _within_limits(plan: ServingPlan, workload: Workload) -> bool:
    c = workload.constraints
    if c.budget_usd is not None and (plan.capex_usd is None or plan.capex_usd > c.budget_usd):
        return False
    return c.power_limit_kw is None or plan.power_kw <= c.power_limit_kw


def _network(fleet: Any, workload: Workload, catalog: Catalog, base: ServingPlan, demand: Any,
             record: Any) -> ServingPlan | None:
    """The disaggregated plan with its fabric, BOM and cost of ownership; None when no catalog
    switch reaches it."""
    from gpuplan.fabric.bom import build_bom
    from gpuplan.fabric.interconnect import design_fabric
    from gpuplan.fabric.sizing import SizingError
    from gpuplan.fabric.storage import StorageNeed
    from gpuplan.fabric.tco import phase_tco
    from gpuplan.serving.disagg_plan import as_serving_plan, fleet_traffic

    spec = workload.serving
    assert spec is not None
    draft = record(fleet, False, True, "", None)
    plan = as_serving_plan(fleet, base, workload, demand, draft)
    traffic, servers = fleet_traffic(fleet, spec)
    gpu = fleet.decode.replica.gpu
    weights = fleet.decode.replica.resident_weight_bytes * fleet.decode.replica.layout.gpus
    try:
        fabric = design_fabric(traffic, gpu, catalog)
        interconnect, topology = fabric.interconnect, fabric.topology
        bom = build_bom("serving", gpu, traffic.gpus, fabric, catalog,
                        storage=StorageNeed("serving", float(workload.arch.total_params), weights_bytes=weights),
                        pue=dict(workload.constraints.tco).get("pue"), servers=servers if len(servers) > 1 else ())
    except SizingError:
        return None
    unpriced = any(g.id in bom.unpriced_parts for g, _ in servers)
    update: dict[str, Any] = {"interconnect": interconnect, "topology": topology, "bom": bom,
                              "power_kw": bom.power_kw, "capex_usd": None if unpriced else bom.capex_usd,
                              "nodes": sum(n for _, n in servers)}
    if not unpriced:
        update["tco"] = phase_tco(bom, gpu, plan.gpus, workload.constraints.tco, catalog,
                                  output_tokens_per_s=plan.output_tokens_per_s)
    return plan.model_copy(update=update)
