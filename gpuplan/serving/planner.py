"""Size a serving fleet on every allowed GPU and recommend the cheapest that meets the targets.

For each GPU and replica layout (TP inside the scale-up domain or server, PP across servers, EP
over the TP group for MoE) the replica's highest sustainable rate within the TTFT (at the
profile's percentile), TPOT, KV-capacity and utilisation limits is found
(:mod:`gpuplan.serving.capacity`). The fleet is ``ceil(QPS / rate) + spare_replicas`` replicas.
Each GPU keeps its cheapest layout; the cheapest GPU (capex or cloud $/h, per
``constraints.pricing``) is recommended, with the reasons and the alternatives.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace

from gpuplan.model.arch import Architecture
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.model.profile import Workload
from gpuplan.serving import disagg
from gpuplan.serving.capacity import Demand, ReplicaCapacity, Workpoint
from gpuplan.hardware.serving_calibration import ServingConstants, serving_constants
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.frontier import layout_frontier
from gpuplan.serving.fleet import fleet_cost, usd_per_million_tokens
from gpuplan.serving.links import Links, links_for
from gpuplan.serving.model import Layout, Replica, build_replica
from gpuplan.serving.traffic import serving_demand
from gpuplan.serving.options import Miss, Option, ServingResult, _layout_name, representative  # noqa: F401
from gpuplan.serving.report import _infeasible, _option_out, _plan_out, _unfit_out

#: Tensor- and pipeline-parallel degrees searched (powers of two; TP must divide the heads).
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
PP_CHOICES = (1, 2, 4, 8, 16)


def candidate_layouts(arch: Architecture, links: Links) -> list[Layout]:
    """TP up to the scale-up domain or server (dividing the heads); PP only at the largest such TP,
    across servers only where the server has a scale-out NIC; EP = TP as a variant for MoE."""
    local = links.local_domain
    tps = [t for t in TP_CHOICES if t <= local and arch.heads % t == 0]
    out: list[Layout] = [Layout(tp=t) for t in tps]
    if tps:
        top = tps[-1]
        for pp in PP_CHOICES[1:]:
            if pp > arch.layers or (top * pp > local and not links.has_scaleout):
                continue
            out.append(Layout(tp=top, pp=pp))
    if arch.is_moe:
        out += [Layout(tp=lay.tp, pp=lay.pp, ep=lay.tp) for lay in list(out)
                if lay.tp > 1 and lay.tp <= arch.experts]
    return [lay for lay in out if lay.check(arch) is None]


def _demand(workload: Workload) -> Demand:
    s = workload.serving
    assert s is not None
    return Demand(prompt_tokens=s.prompt_tokens, output_tokens=s.output_tokens, ttft_s=s.ttft_ms / 1e3,
                  tpot_s=s.tpot_ms / 1e3, percentile=s.latency_percentile, context_tokens=s.context_length)


#: Each replica's capacity and ceiling (its best workpoint within every limit) by the replica and the
#: demand: neither depends on the QPS, so a sweep over QPS (or a plan repeated by the fleet
#: strategies) sizes each replica once. Bounded: cleared when full.
#: The GPU (a catalog entry, unhashable) is keyed by identity; the cached capacity holds the replica,
#: so that GPU stays alive and its id is not reused while the entry exists.
_CEILINGS: dict[tuple[object, ...], tuple[ReplicaCapacity, Workpoint | None, str]] = {}
_CEILINGS_MAX = 4096
_REPLICA_FIELDS = tuple(f.name for f in fields(Replica) if f.name != "gpu")


def _ceiling(replica: Replica, demand: Demand) -> tuple[ReplicaCapacity, Workpoint | None, str]:
    key = (id(replica.gpu), demand, *(getattr(replica, n) for n in _REPLICA_FIELDS))
    hit = _CEILINGS.get(key)
    if hit is None:
        cap = ReplicaCapacity(replica, demand)
        hit = (cap, *cap.best())
        if len(_CEILINGS) >= _CEILINGS_MAX:
            _CEILINGS.clear()
        _CEILINGS[key] = hit
    return hit


def evaluate(replica: Replica, demand: Demand, qps: float, spare: int, pricing: str, k: ServingConstants,
             budget_usd: float | None = None, power_limit_kw: float | None = None,
             max_load: float = 1.0) -> Option:
    """Size a fleet of ``replica`` for ``qps`` requests/s (targets from ``demand``): enough
    active replicas that the peak is at most ``max_load`` of their latency-limited capacity."""
    cap, ceiling, limit = _ceiling(replica, demand)
    if ceiling is None:
        return Option(replica.gpu, replica, cap, None, limit, Miss("limit"))
    active = max(1, math.ceil(qps / (ceiling.rate * max_load) - 1e-9))
    replicas = active + spare
    fleet = fleet_cost(replica.gpu, replicas, replica.layout.gpus, pricing, k.cost)
    op = cap.at_rate(qps / active, ceiling)
    tokens_per_s = qps * demand.output_tokens
    miss = None
    if budget_usd is not None and fleet.capex_usd is None:  # fail closed: an unpriced fleet cannot pass a budget
        miss = Miss("unpriced", budget_usd)
    elif budget_usd is not None and fleet.capex_usd is not None and fleet.capex_usd > budget_usd:
        miss = Miss("budget", budget_usd)
    elif power_limit_kw is not None and fleet.power_kw > power_limit_kw:
        miss = Miss("power", power_limit_kw)
    return Option(replica.gpu, replica, cap, ceiling, limit, miss, active, replicas, fleet, op,
                  usd_per_million_tokens(fleet.usd_per_hour, tokens_per_s))


def _gpu_options(gpu: Gpu, workload: Workload, demand: Demand, k: ServingConstants,
                 catalog: Catalog) -> tuple[list[Option], list[Replica]]:
    s = workload.serving
    assert s is not None
    c = workload.constraints
    links = links_for(gpu, catalog, k.collective_launch_us)
    options, replicas = [], []
    for lay in candidate_layouts(workload.arch, links):
        rep = build_replica(gpu, workload.arch, lay, s.precision, s.kv_precision, k, catalog, links,
                            engine=resolve_engine(k, s.engine, s.engine_version))
        rep = replace(rep, memory_headroom=c.memory_headroom)
        replicas.append(rep)
        options.append(evaluate(rep, demand, s.qps, s.spare_replicas, c.pricing, k, c.budget_usd, c.power_limit_kw,
                                s.max_load_fraction))
    options.sort(key=lambda o: o.rank())
    return options, replicas



def plan_serving(workload: Workload, catalog: Catalog) -> ServingResult:
    """Plan the serving phase of ``workload`` over its allowed GPUs."""
    s = workload.serving
    if s is None:
        raise ValueError("the workload has no [serving] table")
    k = serving_constants(catalog)
    demand = _demand(workload)
    per_gpu: dict[str, tuple[list[Option], list[Replica]]] = {}
    for gid in workload.constraints.allow_gpus:
        per_gpu[gid] = _gpu_options(catalog.gpus[gid], workload, demand, k, catalog)
    best = {gid: representative(opts) for gid, (opts, _) in per_gpu.items() if opts}
    meeting = sorted((o for o in best.values() if o.meets), key=lambda o: (o.objective is None, o.objective or 0.0,
                                                                         o.gpus, o.gpu.id))
    if not meeting:
        return _infeasible(workload, per_gpu, demand)
    chosen = meeting[0]
    others = [o for gid, o in sorted(best.items()) if gid != chosen.gpu.id]
    others.sort(key=lambda o: (not o.meets, o.objective is None, o.objective or 0.0, o.gpus, o.gpu.id))
    alternatives = [_option_out(o, chosen, workload) for o in others]
    for gid, (opts, _) in per_gpu.items():
        if not opts:
            alternatives.append(_unfit_out(gid, "no TP/PP layout is possible for this model"))
    replicas_for_disagg = per_gpu[chosen.gpu.id][1]
    comparison = disagg.compare(replicas_for_disagg, demand, s.qps, chosen.active * chosen.replica.layout.gpus)
    plan = _plan_out(chosen, workload, meeting, best, comparison, alternatives)
    points = [p for o in per_gpu[chosen.gpu.id][0] for p in layout_frontier(o.capacity, _layout_name(o.replica.layout))]
    engine_line = chosen.replica.engine.summary() if chosen.replica.engine else None
    plan = plan.model_copy(update={"frontier": points,
                                   "reasons": plan.reasons + ([engine_line] if engine_line else [])})
    assert chosen.fleet is not None
    traffic = serving_demand(chosen.replica, chosen.active, chosen.replicas, chosen.fleet.nodes, s.qps,
                             s.prompt_tokens, s.output_tokens, s.replica_start_s)
    return ServingResult(plan=plan, demand=traffic, chosen_gpu=chosen.gpu)

