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

from gpuplan.core.memo import memo
from gpuplan.model.arch import Architecture
from gpuplan.hardware.engine_vendors import vendor_refusal
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.model.profile import Workload
from gpuplan.serving.capacity import Demand, ReplicaCapacity, Workpoint
from gpuplan.serving.step_floor import ceiling_rate_bound, tight_rate_bound
from gpuplan.hardware.serving_calibration import ServingConstants, serving_constants
from gpuplan.serving.engine import Engine, resolve_engine
from gpuplan.serving.frontier import layout_frontier
from gpuplan.fabric.tco import CostBasis, cost_basis
from gpuplan.serving.fleet import fleet_cost, fleet_objective, usd_per_million_tokens
from gpuplan.serving.links import Links, links_for
from gpuplan.core.contract import ServingPlan
from gpuplan.serving.model import Layout, Replica, build_replica, gpu_rates
from gpuplan.serving.traffic import serving_demand
from gpuplan.serving.options import (  # noqa: F401
    Miss, Option, ServingResult, _layout_name, by_rank, representative, sized_option)

_Ceiling = tuple[ReplicaCapacity, Workpoint | None, str]
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


#: The replicas of each GPU (one per candidate layout) by what they are built from, each with its
#: capacity and ceiling (its best workpoint within every limit) by demand: none of it depends on
#: the QPS, the spare replicas or the pricing, so the runners-up a plan re-plans, the fleet
#: strategies and every point of a QPS sweep build and size each replica once. The catalog is
#: keyed by identity and held in the entry, so its id is not reused while the entry lives.
#: Bounded: cleared when full.
_REPLICAS: dict[tuple[object, ...], tuple[Catalog, list[tuple[Replica, dict[Demand, _Ceiling]]]]] = memo()
_REPLICAS_MAX = 512
_CEILINGS_MAX = 256


def _replicas(gpu: Gpu, workload: Workload, k: ServingConstants,
              catalog: Catalog) -> list[tuple[Replica, dict[Demand, _Ceiling]]]:
    s, c = workload.serving, workload.constraints
    assert s is not None
    key = (id(catalog), gpu.id, id(k), workload.arch, s.precision, s.kv_precision, s.engine, s.engine_version,
           s.context_length, c.memory_headroom)
    hit = _REPLICAS.get(key)
    if hit is None:
        links = links_for(gpu, catalog, k.collective_launch_us, k.all_reduce.algorithm)
        built = []
        engine = _engine(k, s.engine, s.engine_version)
        rates = None  # the GPU's own rates and engine, the same for every layout (gpu_rates)
        for lay in candidate_layouts(workload.arch, links):
            if rates is None:
                rates = gpu_rates(gpu, workload.arch, s.precision, k, engine, s.context_length)
            built.append((build_replica(gpu, workload.arch, lay, s.precision, s.kv_precision, k, catalog, links,
                                        engine=engine, context_tokens=s.context_length,
                                        memory_headroom=c.memory_headroom, rates=rates), {}))
        if len(_REPLICAS) >= _REPLICAS_MAX:
            _REPLICAS.clear()
        hit = _REPLICAS[key] = (catalog, built)
    return hit[1]


#: The serving engine by (constants, name, version), the constants keyed by identity and held:
#: every GPU of a plan resolves the same one.
_ENGINES: dict[tuple[int, str | None, str | None], tuple[ServingConstants, Engine]] = memo()


def _engine(k: ServingConstants, name: str | None, version: str | None) -> Engine:
    """:func:`~gpuplan.serving.engine.resolve_engine`, memoised in :data:`_ENGINES`."""
    key = (id(k), name, version)
    hit = _ENGINES.get(key)
    if hit is None:
        if len(_ENGINES) >= 64:
            _ENGINES.clear()
        hit = _ENGINES[key] = (k, resolve_engine(k, name, version))
    return hit[1]


def _ceiling(replica: Replica, demand: Demand, sized: dict[Demand, _Ceiling] | None = None) -> _Ceiling:
    """The replica's capacity for ``demand``, its ceiling and the limit that sets it (memoised in
    ``sized``, the replica's entry of :data:`_REPLICAS`)."""
    hit = None if sized is None else sized.get(demand)
    if hit is None:
        cap = ReplicaCapacity(replica, demand)
        hit = (cap, *cap.best())
        if sized is not None:
            if len(sized) >= _CEILINGS_MAX:
                sized.clear()
            sized[demand] = hit
    return hit


def evaluate(replica: Replica, demand: Demand, qps: float, spare: int, pricing: str, cost: CostBasis,
             budget_usd: float | None = None, power_limit_kw: float | None = None,
             max_load: float = 1.0, sized: dict[Demand, _Ceiling] | None = None) -> Option:
    """Size a fleet of ``replica`` for ``qps`` requests/s (targets from ``demand``): enough
    active replicas that the peak is at most ``max_load`` of their latency-limited capacity. The
    operating point at that load (a bisection) is found when the option's ``op`` is first read."""
    cap, ceiling, limit = _ceiling(replica, demand, sized)
    if ceiling is None:
        return Option(replica.gpu, replica, cap, None, limit, Miss("limit"))
    active = _active_replicas(qps, ceiling.rate, max_load)
    replicas = active + spare
    fleet = fleet_cost(replica.gpu, replicas, replica.layout.gpus, pricing, cost)
    tokens_per_s = qps * demand.output_tokens
    miss = None
    if budget_usd is not None and fleet.capex_usd is None:  # fail closed: an unpriced fleet cannot pass a budget
        miss = Miss("unpriced", budget_usd)
    elif budget_usd is not None and fleet.capex_usd is not None and fleet.capex_usd > budget_usd:
        miss = Miss("budget", budget_usd)
    elif power_limit_kw is not None and fleet.power_kw > power_limit_kw:
        miss = Miss("power", power_limit_kw)
    return sized_option(replica.gpu, replica, cap, ceiling, limit, miss, active, replicas, fleet,
                        usd_per_million_tokens(fleet.usd_per_hour, tokens_per_s), qps / active)


def _gpu_options(gpu: Gpu, workload: Workload, demand: Demand, k: ServingConstants,
                 catalog: Catalog, lean: bool = False) -> tuple[list[Option], list[Replica]]:
    """Every layout of ``gpu`` sized for the workload, ranked (:func:`by_rank`).

    ``lean``: only the GPU's best option is read (:func:`representative`, when one meets the
    targets): a layout's fleet costs at least one active replica and the spares
    (:func:`fleet_cost` grows with the replicas), so the layouts are sized in the order of that
    floor and those whose floor is above the cost of a sized layout that meets the targets are
    not sized (they would rank after it), nor those whose fleet costs more at the active replicas
    that a bound of their ceiling's rate needs (:func:`~gpuplan.serving.step_floor.ceiling_rate_bound`);
    the list holds the sized ones, in that order."""
    s = workload.serving
    assert s is not None
    c = workload.constraints
    entries = _replicas(gpu, workload, k, catalog)
    replicas = [rep for rep, _ in entries]
    cost = cost_basis(c.tco, catalog)

    def size(rep: Replica, sized: dict[Demand, _Ceiling]) -> Option:
        return evaluate(rep, demand, s.qps, s.spare_replicas, c.pricing, cost, c.budget_usd, c.power_limit_kw,
                        s.max_load_fraction, sized)

    floors = [fleet_objective(rep.gpu, 1 + s.spare_replicas, rep.layout.gpus, c.pricing)
              for rep in replicas] if lean else []
    if not lean or any(f is None for f in floors):  # unpriced: no floor to rank by
        return by_rank([size(rep, sized) for rep, sized in entries]), replicas
    options: list[Option] = []
    # The cost and then the GPUs of the best sized option that meets the targets (Option.rank_first).
    least: tuple[float, int] = (math.inf, 0)
    for floor, i in sorted((f, i) for i, f in enumerate(floors)):
        if floor > least[0]:  # type: ignore[operator]
            break
        rep, sized = entries[i]
        if least[0] < math.inf and demand not in sized:
            # Unsized yet: its active replicas are at least those a bound of its ceiling's rate needs.
            # The cheap bound first; the tighter one (its floor with the GEMMs' rooflines) only
            # for the layouts that one lets through.
            if any(_over_least(s.qps, _rate_bound(rep, demand, tight), s.max_load_fraction, s.spare_replicas, rep,
                               c.pricing, least) for tight in (False, True)):
                continue
        o = size(rep, sized)
        options.append(o)
        if o.meets and o.objective is not None and o.rank_first()[2:] < least:
            least = o.rank_first()[2:]
    return by_rank(options), replicas


#: The bounds of a layout's ceiling rate by (replica, demand, tight): they do not depend on the QPS,
#: and a layout the lean sizing leaves unsized is bounded again at every point of a QPS sweep. The
#: replica is keyed by identity and held in the entry. Bounded: cleared when full.
_BOUNDS: dict[tuple[int, Demand, bool], tuple[Replica, float]] = memo()


def _rate_bound(rep: Replica, demand: Demand, tight: bool) -> float:
    """:func:`~gpuplan.serving.step_floor.tight_rate_bound` (``tight``) or
    :func:`~gpuplan.serving.step_floor.ceiling_rate_bound` of ``rep``, memoised in :data:`_BOUNDS`."""
    key = (id(rep), demand, tight)
    hit = _BOUNDS.get(key)
    if hit is None:
        if len(_BOUNDS) >= _REPLICAS_MAX * 4:
            _BOUNDS.clear()
        hit = _BOUNDS[key] = (rep, (tight_rate_bound if tight else ceiling_rate_bound)(rep, demand))
    return hit[1]


def _over_least(qps: float, rate: float, max_load: float, spares: int, rep: Replica, pricing: str,
                least: tuple[float, int]) -> bool:
    """Whether the fleet of ``rep`` at the active replicas a bound ``rate`` of its ceiling's rate
    needs ranks after ``least`` (cost, then GPUs: the rank of an option that meets the targets), so
    that its option would too: a fleet of more replicas costs no less and has more GPUs (the lean
    sizing). A layout that ties on both is sized (its workpoint breaks the tie)."""
    active = _active_replicas(qps, rate, max_load)
    replicas = active + spares
    objective = fleet_objective(rep.gpu, replicas, rep.layout.gpus, pricing)
    return (objective, replicas * rep.layout.gpus) > least  # type: ignore[operator]


def _active_replicas(qps: float, rate: float, max_load: float) -> int:
    """The active replicas :func:`evaluate` sizes at ``rate`` requests/s each; never more at a higher
    rate, so those at a bound of the ceiling's rate are at most the option's (the lean sizing)."""
    return max(1, math.ceil(qps / (rate * max_load) - 1e-9))


def engine_gpus(workload: Workload, catalog: Catalog) -> tuple[list[str], dict[str, str]]:
    """The allowed GPUs the serving engine runs on, and why each other allowed GPU is left out
    (:mod:`gpuplan.hardware.engine_vendors`: the rule ``gpuplan deploy`` applies)."""
    s = workload.serving
    assert s is not None
    kept, excluded = [], {}
    for gid in workload.constraints.allow_gpus:
        refusal = vendor_refusal(s.engine, catalog.gpus[gid].vendor)
        if refusal is None:
            kept.append(gid)
        else:
            excluded[gid] = refusal
    return kept, excluded


def plan_disaggregated(workload: Workload, catalog: Catalog, *, by_gpus: bool = False,
                       worth_below: float | None = None):
    """The cheapest disaggregated prefill/decode fleet of each placement over the allowed GPUs
    (:mod:`gpuplan.serving.disagg_search`), cheapest first; empty when none meets the targets.
    ``worth_below``: see :func:`~gpuplan.serving.disagg_search.search`."""
    from gpuplan.serving.disagg_search import search

    s = workload.serving
    assert s is not None
    k = serving_constants(catalog)
    demand = _demand(workload)
    sized = [e for gid in engine_gpus(workload, catalog)[0] for e in _replicas(catalog.gpus[gid], workload, k, catalog)]
    # The aggregated plan sized these replicas for the same demand: their prefill steps are known.
    known = [c[demand][0].prefill_latency_s if demand in c else None for _, c in sized]
    return search([r for r, _ in sized], demand, s.qps, s.spare_replicas, s.max_load_fraction,
                  workload.constraints.pricing, cost_basis(workload.constraints.tco, catalog), by_gpus=by_gpus, worth_below=worth_below, latencies=known)


def plan_serving(workload: Workload, catalog: Catalog, top: int | None = None, frontier: bool = True) -> ServingResult:
    """Plan the serving phase of ``workload`` over its allowed GPUs.

    ``top``: only the best ``top`` GPU types are needed (a sweep's summary: the plan and the
    runners-up the capex re-rank prices); ``alternatives`` stop after the ``top - 1``-th that meets
    the targets with a capex, and the disaggregation comparison and the frontier are left out.
    ``frontier=False``: the plan's ``frontier`` is left empty (a runner-up the capex re-rank prices
    and drops unless it wins, or the serving plan a fleet strategy reads; :func:`with_frontier`
    adds it to the one kept)."""
    s = workload.serving
    if s is None:
        raise ValueError("the workload has no [serving] table")
    k = serving_constants(catalog)
    demand = _demand(workload)
    per_gpu: dict[str, tuple[list[Option], list[Replica]]] = {}
    allowed, excluded = engine_gpus(workload, catalog)
    for gid in allowed:  # each GPU's best option is what ranks it
        per_gpu[gid] = _gpu_options(catalog.gpus[gid], workload, demand, k, catalog, lean=True)
    best = {gid: representative(opts) for gid, (opts, _) in per_gpu.items() if opts}
    meeting = sorted((o for o in best.values() if o.meets), key=lambda o: (o.objective is None, o.objective or 0.0,
                                                                         o.gpus, o.gpu.id))
    if not meeting:
        return _infeasible(workload, per_gpu, demand, excluded)
    chosen = meeting[0]
    others = [o for gid, o in sorted(best.items()) if gid != chosen.gpu.id]
    others.sort(key=lambda o: (not o.meets, o.objective is None, o.objective or 0.0, o.gpus, o.gpu.id))
    if top is not None:
        return _top_plan(chosen, workload, meeting, best, _leading(others, top - 1))
    alternatives = [_option_out(o, chosen, workload) for o in others]
    for gid, (opts, _) in per_gpu.items():
        if not opts:
            alternatives.append(_unfit_out(gid, "no TP/PP layout is possible for this model"))
    alternatives += [_unfit_out(gid, why, "engine") for gid, why in sorted(excluded.items())]
    plan = _plan_out(chosen, workload, meeting, best, None, alternatives)
    # The frontier lists every layout of the chosen GPU, in rank order: all of them sized.
    points = _frontier(_gpu_options(chosen.gpu, workload, demand, k, catalog)[0]) if frontier else []
    engine_line = chosen.replica.engine.summary() if chosen.replica.engine else None
    plan = plan.model_copy(update={"frontier": points,
                                   "reasons": plan.reasons + ([engine_line] if engine_line else [])})
    return _result(plan, chosen, workload)


def _frontier(options: list[Option]) -> list:
    """The throughput-latency frontier of every layout of one GPU (its options)."""
    return [p for o in options for p in layout_frontier(o.capacity, _layout_name(o.replica.layout))]


def with_frontier(plan: ServingPlan, workload: Workload, catalog: Catalog) -> ServingPlan:
    """``plan`` (of :func:`plan_serving` with ``frontier=False`` for ``workload``) with the frontier
    that ``plan_serving`` would have given it: its GPU's options, sized as before (the replicas and
    their capacities are memoised, :data:`_REPLICAS`)."""
    if plan.gpu is None:
        return plan
    options, _ = _gpu_options(catalog.gpus[plan.gpu], workload, _demand(workload), serving_constants(catalog), catalog)
    return plan.model_copy(update={"frontier": _frontier(options)})


def _result(plan: ServingPlan, chosen: Option, workload: Workload) -> ServingResult:
    s = workload.serving
    assert s is not None and chosen.fleet is not None
    traffic = serving_demand(chosen.replica, chosen.active, chosen.replicas, chosen.fleet.nodes, s.qps,
                             s.prompt_tokens, s.output_tokens, s.replica_start_s)
    return ServingResult(plan=plan, demand=traffic, chosen_gpu=chosen.gpu)


def _leading(others: list[Option], count: int) -> list[Option]:
    """The ranked ``others`` up to the ``count``-th that meets the targets with a capex (the
    runners-up the capex re-rank of planning/compose.py prices)."""
    out: list[Option] = []
    for o in others:
        if sum(1 for x in out if x.meets and x.fleet is not None and x.fleet.capex_usd is not None) >= count:
            break
        out.append(o)
    return out


def _top_plan(chosen: Option, workload: Workload, meeting: list[Option], best: dict[str, Option],
              others: list[Option]) -> ServingResult:
    """The plan of :func:`plan_serving` with ``top``: the chosen option, the leading alternatives."""
    plan = _plan_out(chosen, workload, meeting, best, None, [_option_out(o, chosen, workload) for o in others])
    return _result(plan, chosen, workload)

