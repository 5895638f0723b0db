"""A serving fleet's cost per token and cost of ownership from the load its demand curve carries
(docs/fleet-model.md, "Cost on the demand curve"; docs/bom.md, "Cost of ownership").

The fleet is sized for the peak hour but carries the curve's mean. With ``[serving.demand]
hourly_qps`` (and no ``[constraints] utilization``, which always wins), the serving plan's
``usd_per_million_output_tokens`` and its TCO are priced on :func:`gpuplan.serving.autoscale.demand_load`:
capex over the horizon whatever the load, energy from every hour at the power its replicas draw
(parked ones at ``idle_power_fraction``), tokens from the curve (``sum_h q[h] x output tokens x
3,600 x 365.25``). Both read the same load and basis, so the gap between them stays the rest of
the bill and support. Cloud pricing: the autoscaler's yearly rent (reserved + on demand) over the
same tokens.
"""

from __future__ import annotations

from typing import Any

from gpuplan.core.contract import ServingPlan
from gpuplan.hardware.loader import Catalog
from gpuplan.model.workload import Assumption, Workload


def _load(plan: ServingPlan, workload: Workload, catalog: Catalog) -> Any:
    from gpuplan.serving.autoscale import demand_load

    spec = workload.serving
    if spec is None or spec.hourly_qps is None or plan.autoscaling is None or not plan.feasible:
        return None
    return demand_load(plan.autoscaling, plan, spec, catalog)


def with_demand_cost(plan: ServingPlan, workload: Workload, catalog: Catalog) -> ServingPlan:
    """``plan`` with its $ per million output tokens and TCO on its demand curve (unchanged
    without a curve, or when ``[constraints] utilization`` is given)."""
    from gpuplan.fabric.tco import cost_basis, phase_tco, servers_usd_per_million_tokens

    given = workload.constraints.tco
    load = None if "utilization" in dict(given) else _load(plan, workload, catalog)
    if load is None or plan.gpu is None:
        return plan
    update: dict[str, Any] = {}
    tokens_per_year = load.tokens_per_year(plan.output_tokens_per_s)
    a = plan.autoscaling
    if plan.usd_per_million_output_tokens is not None and plan.bom is not None and tokens_per_year > 0:
        if workload.constraints.pricing == "cloud":
            if a is not None and a.cloud_usd_per_year is not None:
                update["usd_per_million_output_tokens"] = a.cloud_usd_per_year / tokens_per_year * 1e6
        else:  # the servers' lines of the bill: the fleet the planner priced
            servers = [i for i in plan.bom.items if i.category == "server" and i.tier is None]
            capex = sum(i.total_price_usd or 0.0 for i in servers)
            power_kw = sum(i.total_power_w or 0.0 for i in servers) / 1000
            basis = cost_basis(given, catalog)
            pue = basis.phase_pue(plan.bom, catalog.gpus[plan.gpu], plan.nodes)
            update["usd_per_million_output_tokens"] = servers_usd_per_million_tokens(
                capex, power_kw, pue, plan.output_tokens_per_s, basis, load)
    if "usd_per_million_output_tokens" in update:  # the figure the alternatives' column compares
        update["usd_per_million_output_tokens_at_target"] = plan.usd_per_million_output_tokens
    if plan.tco is not None and plan.bom is not None:
        update["tco"] = phase_tco(plan.bom, catalog.gpus[plan.gpu], plan.gpus, given, catalog,
                                  output_tokens_per_s=plan.output_tokens_per_s, load=load)
    return plan.model_copy(update=update)


def demand_assumption(plan: ServingPlan | None, workload: Workload, catalog: Catalog) -> Assumption | None:
    """The plan's assumption line for the serving fleet's utilisation on its demand curve."""
    if plan is None:
        return None
    load = _load(plan, workload, catalog)
    if load is None:
        return None
    given = dict(workload.constraints.tco)
    if "utilization" in given:
        return Assumption("constraints.utilization", f"{given['utilization']:g}",
                          f"given; the serving fleet's cost reads it, not its daily demand curve's "
                          f"{load.utilization:.2f}")
    return Assumption("constraints.utilization", f"{load.utilization:.2f} (serving)", load.note or "")
