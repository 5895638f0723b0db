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
from dataclasses import dataclass, replace

from gpuplan.model.arch import Architecture
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.fabric.demand import TrafficDemand
from gpuplan.core.contract import Roofline, ServingLayout, ServingOption, ServingPlan
from gpuplan.model.profile import Workload
from gpuplan.physics.roofline import arithmetic_intensity, bound, ridge_point
from gpuplan.serving import disagg
from gpuplan.serving.capacity import Demand, ReplicaCapacity, Workpoint
from gpuplan.hardware.serving_calibration import ServingConstants, serving_constants
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.frontier import layout_frontier
from gpuplan.serving.fleet import FleetCost, fleet_cost, usd_per_million_tokens
from gpuplan.serving.links import Links, links_for
from gpuplan.serving.model import GIB, Layout, Replica, build_replica
from gpuplan.serving.traffic import serving_demand

#: Tensor- and pipeline-parallel degrees searched (powers of two; TP must divide the heads).
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
PP_CHOICES = (1, 2, 4, 8, 16)
LIMIT_WORDS = {
    "kv": "KV-cache capacity",
    "tpot": "the TPOT target",
    "ttft": "the TTFT target (queueing before prefill)",
    "utilisation": "the utilisation ceiling",
    "network": "a scale-out fabric (the replica spans servers that have none)",
}


@dataclass(frozen=True)
class ServingResult:
    plan: ServingPlan
    demand: TrafficDemand | None
    chosen_gpu: Gpu | None


@dataclass(frozen=True)
class Option:
    """One GPU and layout, sized for the workload."""

    gpu: Gpu
    replica: Replica
    capacity: ReplicaCapacity
    ceiling: Workpoint | None
    limit: str
    failure: str | None
    active: int = 0
    replicas: int = 0
    fleet: FleetCost | None = None
    op: Workpoint | None = None
    usd_per_mtok: float | None = None

    @property
    def meets(self) -> bool:
        return self.failure is None

    @property
    def gpus(self) -> int:
        return self.replicas * self.replica.layout.gpus

    @property
    def objective(self) -> float | None:
        return self.fleet.objective if self.fleet else None

    def rank(self) -> tuple:
        obj = self.objective
        op_tpot = self.op.tpot_s if self.op else math.inf
        return (not self.meets, obj is None, obj if obj is not None else 0.0, self.gpus, op_tpot,
                self.replica.layout.gpus)


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


def _failure_text(cap: ReplicaCapacity, limit: str, demand: Demand) -> str:
    rep = cap.replica
    lay = rep.layout
    where = _layout_name(lay)
    if limit == "kv":
        usable = rep.gpu.memory_usable_gib
        weights = rep.resident_weight_bytes / GIB
        if rep.kv_budget_bytes <= 0:
            return (f"does not fit at {where}: {weights:.1f} GiB of weights per GPU + "
                    f"{rep.k.runtime_overhead_gib:g} GiB runtime exceed {usable:g} GiB")
        full = max(demand.prompt_tokens + demand.output_tokens, demand.context_tokens)
        need = rep.sequence_bytes(full) / GIB
        return (f"no room for one {full}-token sequence at {where}: it needs {need:.2f} GiB of KV cache per "
                f"GPU, {rep.kv_budget_bytes / GIB:.2f} GiB are free")
    if limit == "network":
        return (f"a step time is not finite at {where}: the replica spans servers without a scale-out fabric, "
                f"or a catalog figure is degenerate")
    idle = cap.at(1e-6)
    if limit == "tpot":
        return (f"TPOT target {demand.tpot_s * 1e3:g} ms is below the batch-1 decode step "
                f"{_ms(idle.step_s)} ms at {where}")
    if limit == "ttft":
        return (f"TTFT target {demand.ttft_s * 1e3:g} ms is below the prefill of {demand.prompt_tokens} tokens "
                f"({_ms(cap.prefill_latency_s)} ms + {_ms(idle.step_s)} ms decode step) at {where}")
    return f"misses the {LIMIT_WORDS.get(limit, limit)} at {where}"


def _layout_name(lay: Layout) -> str:
    name = f"TP{lay.tp}"
    if lay.pp > 1:
        name += f"xPP{lay.pp}"
    if lay.ep > 1:
        name += f" EP{lay.ep}"
    return name


def evaluate(replica: Replica, demand: Demand, qps: float, spare: int, pricing: str, k: ServingConstants,
             budget_usd: float | None = None, power_limit_kw: float | None = None,
             max_load: float = 1.0) -> Option:
    """Size a fleet of ``replica`` for ``qps`` requests/s (targets from ``demand``): enough
    active replicas that the peak is at most ``max_load`` of their latency-limited capacity."""
    cap = ReplicaCapacity(replica, demand)
    ceiling, limit = cap.best()
    if ceiling is None:
        return Option(replica.gpu, replica, cap, None, limit, _failure_text(cap, limit, demand))
    active = max(1, math.ceil(qps / (ceiling.rate * max_load) - 1e-9))
    replicas = active + spare
    fleet = fleet_cost(replica.gpu, replicas, replica.layout.gpus, pricing, k.cost)
    op = cap.at_rate(qps / active, ceiling)
    tokens_per_s = qps * demand.output_tokens
    failure = None
    if budget_usd is not None and fleet.capex_usd is None:  # fail closed: an unpriced fleet cannot pass a budget
        failure = f"no server price in the catalog: the ${budget_usd:,.0f} budget cannot be checked"
    elif budget_usd is not None and fleet.capex_usd is not None and fleet.capex_usd > budget_usd:
        failure = f"capex ${fleet.capex_usd:,.0f} exceeds the budget ${budget_usd:,.0f}"
    elif power_limit_kw is not None and fleet.power_kw > power_limit_kw:
        failure = f"{fleet.power_kw:,.1f} kW exceeds the power limit {power_limit_kw:,.1f} kW"
    return Option(replica.gpu, replica, cap, ceiling, limit, failure, active, replicas, fleet, op,
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


def representative(options: list[Option]) -> Option:
    """The option that stands for one GPU: its best when one meets the targets, else its most
    informative failure (a layout that fits and misses a latency target, then one whose cache is
    too small, then the largest layout that does not fit)."""
    if options[0].meets:
        return options[0]
    sized = [o for o in options if o.ceiling is not None]
    if sized:
        return min(sized, key=lambda o: o.rank())
    fitting = [o for o in options if o.replica.kv_budget_bytes > 0]
    if fitting:
        return min(fitting, key=lambda o: (o.limit == "kv", o.capacity.prefill_latency_s, o.replica.layout.gpus))
    return max(options, key=lambda o: (o.replica.layout.gpus, -o.replica.resident_weight_bytes))


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


# -- output ---------------------------------------------------------------------------------------
def _roofline(opt: Option) -> Roofline:
    rep = opt.replica
    assert opt.op is not None
    peak = rep.gpu.peak_tflops(rep.path.math) or rep.gpu.fp16_dense_tflops
    ridge = ridge_point(peak * 1e12, rep.gpu.mem_bw_tbps * 1e12)
    pf = opt.capacity.prefill_step
    dec = opt.op.step
    pf_ai = arithmetic_intensity(pf.flops, pf.bytes)
    dec_ai = arithmetic_intensity(dec.flops, dec.bytes)
    return Roofline(peak_tflops=peak, mem_bw_tbps=rep.gpu.mem_bw_tbps, ridge_flops_per_byte=ridge,
                    prefill_flops_per_byte=pf_ai, decode_flops_per_byte=dec_ai,
                    prefill_bound=bound(pf_ai, ridge), decode_bound=bound(dec_ai, ridge))


def _layout_out(opt: Option) -> ServingLayout:
    lay = opt.replica.layout
    conc = 0
    if opt.op is not None:
        # With one output token there is no decode batch: report requests in flight (Little's law).
        busy = opt.op.concurrency if opt.capacity.demand.decode_steps else opt.op.rate * opt.op.ttft_mean_s
        conc = math.ceil(busy - 1e-9)
    return ServingLayout(tp=lay.tp, pp=lay.pp, ep=lay.ep, concurrency=conc, disaggregated=False)


def _cost_words(opt: Option, pricing: str) -> str:
    f = opt.fleet
    if f is None or f.objective is None:
        return "unpriced"
    if pricing == "cloud":
        return f"${f.objective:,.2f}/h"
    return f"${f.objective:,.0f} server capex"


def _max_qps(rate: float, replicas: int, spare: int) -> float:
    """Requests per second the fleet sustains with its spare replicas held back (N+1: the rate
    still met when one replica fails), so utilisation = QPS / max_qps is the load that matters."""
    return rate * max(1, replicas - spare)


def _option_out(opt: Option, chosen: Option, workload: Workload) -> ServingOption:
    pricing = workload.constraints.pricing
    if opt.ceiling is None or opt.op is None:
        idle = opt.capacity.at(1e-6) if opt.capacity.max_sequences >= 1 else None
        return ServingOption(
            gpu=opt.gpu.id, gpus=0, replicas=0, layout=_layout_out(opt),
            ttft_ms_p99=_finite_ms(idle.ttft_p99_s) if idle else 0.0,
            tpot_ms=_finite_ms(idle.step_s) if idle else 0.0,
            max_qps=0.0, cost_usd=None, usd_per_million_output_tokens=None, meets_target=False,
            bound=opt.limit, cloud_usd_per_hour=None, reason=opt.failure)
    f = opt.fleet
    assert f is not None
    if not opt.meets:
        reason = opt.failure
    elif opt.objective is None:
        reason = f"meets the targets; no {'cloud rate' if pricing == 'cloud' else 'server price'} in the catalog"
    elif chosen.objective:
        reason = (f"meets the targets at {_cost_words(opt, pricing)}, {opt.objective / chosen.objective:.2f}x "
                  f"the chosen {chosen.gpu.id}")
    else:
        reason = f"meets the targets at {_cost_words(opt, pricing)}"
    return ServingOption(
        gpu=opt.gpu.id, gpus=opt.gpus, replicas=opt.replicas, layout=_layout_out(opt),
        ttft_ms_p99=opt.op.ttft_p99_s * 1e3, tpot_ms=opt.op.tpot_s * 1e3,
        max_qps=_max_qps(opt.ceiling.rate, opt.replicas, workload.serving.spare_replicas),  # type: ignore[union-attr]
        cost_usd=f.capex_usd, usd_per_million_output_tokens=opt.usd_per_mtok, meets_target=opt.meets,
        bound=opt.op.step.dominant(), cloud_usd_per_hour=f.cloud_usd_per_hour, reason=reason)


def _ms(seconds: float) -> str:
    """Seconds as milliseconds for a sentence: 3 significant figures below 1 ms, whole ms above."""
    ms = seconds * 1e3
    if not math.isfinite(ms) or ms >= 1e7:
        return f"{ms:.3g}"
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def _finite_ms(seconds: float) -> float:
    """Milliseconds for the plan; 0 where a time is not finite (the reason says why)."""
    return seconds * 1e3 if math.isfinite(seconds) else 0.0


def _unfit_out(gid: str, why: str) -> ServingOption:
    return ServingOption(gpu=gid, gpus=0, replicas=0, layout=ServingLayout(tp=1, pp=1, ep=1, concurrency=0,
                                                                           disaggregated=False),
                         ttft_ms_p99=0.0, tpot_ms=0.0, max_qps=0.0, cost_usd=None,
                         usd_per_million_output_tokens=None, meets_target=False, bound="layout", reason=why)


def _reasons(chosen: Option, workload: Workload, meeting: list[Option],
             best: dict[str, Option], comparison) -> list[str]:
    s = workload.serving
    assert s is not None and chosen.op is not None and chosen.ceiling is not None and chosen.fleet is not None
    op, ceil_wp, rep, cap = chosen.op, chosen.ceiling, chosen.replica, chosen.capacity
    lay = rep.layout
    pricing = workload.constraints.pricing
    pct = s.latency_percentile
    out = [
        f"{chosen.gpu.id}: {chosen.replicas} replicas ({chosen.active} + {s.spare_replicas} spare) of "
        f"{_layout_name(lay)} = {chosen.gpus} GPUs on {chosen.fleet.nodes} server{'s' if chosen.fleet.nodes != 1 else ''} carry {s.qps:g} QPS with "
        f"TTFT {pct} {op.ttft_target_stat_s * 1e3:.0f} ms <= {s.ttft_ms:g} ms and TPOT {op.tpot_s * 1e3:.1f} ms "
        f"<= {s.tpot_ms:g} ms.",
    ]
    priced = [o for o in meeting if o.objective is not None]
    if chosen.objective is not None:
        line = f"Cheapest of {len(priced)} priced GPU types that meet the targets: {_cost_words(chosen, pricing)}"
        if len(priced) > 1:
            nxt = priced[1]
            line += f"; next {nxt.gpu.id} at {_cost_words(nxt, pricing)} ({nxt.objective / chosen.objective:.2f}x)"
        out.append(line + ".")
    else:
        out.append(f"No GPU that meets the targets has a {'cloud rate' if pricing == 'cloud' else 'server price'} "
                   f"in the catalog: ranked by GPU count instead.")
    unpriced = sorted(o.gpu.id for o in meeting if o.objective is None and o is not chosen)
    if unpriced and chosen.objective is not None:
        shown = ", ".join(unpriced[:6]) + (f" and {len(unpriced) - 6} more" if len(unpriced) > 6 else "")
        out.append(f"Also meet the targets but have no {'cloud rate' if pricing == 'cloud' else 'server price'} "
                   f"in the catalog, so are not ranked: {shown}.")
    step = op.step
    dec_ai = arithmetic_intensity(step.flops, step.bytes)
    peak = rep.gpu.peak_tflops(rep.path.math) or rep.gpu.fp16_dense_tflops
    ridge = ridge_point(peak * 1e12, rep.gpu.mem_bw_tbps * 1e12)
    out.append(
        f"Decode is bound by {step.dominant()}: a step at concurrency {op.concurrency:.1f} streams "
        f"{step.weight_bytes / 1e9:.2f} GB of weights and {step.kv_bytes / 1e9:.2f} GB of KV cache per GPU "
        f"({dec_ai:.0f} FLOP/B against a ridge of {ridge:.0f} FLOP/B) in {op.step_s * 1e3:.1f} ms.")
    limit = chosen.limit
    limit_words = LIMIT_WORDS.get(limit, limit)
    if limit == "kv":
        limit_words = (f"KV-cache capacity ({cap.max_sequences} sequences of "
                       f"{s.prompt_tokens + s.output_tokens} tokens fit per replica)")
    out.append(f"Each replica sustains {ceil_wp.rate:.2f} req/s at concurrency {ceil_wp.concurrency:.1f}, limited by "
               f"{limit_words}; at the target load it runs {op.rate:.2f} req/s.")
    pf_bound = "compute-bound" if cap.prefill_step.gemm_s - cap.prefill_step.gemm_memory_s > \
        cap.prefill_step.gemm_memory_s else "weight-streaming-bound"
    wait = op.ttft_target_stat_s - op.prefill_latency_s - op.step_s
    out.append(f"Prefill of {s.prompt_tokens} tokens takes {cap.prefill_latency_s * 1e3:.0f} ms ({pf_bound}); "
               f"queueing at utilisation {op.rho:.2f} adds {max(wait, 0.0) * 1e3:.0f} ms at {pct}.")
    if rep.path.note:
        out.append(rep.path.note + ".")
    if comparison is not None:
        out.append(f"Disaggregated prefill/decode: {comparison.reason}.")
    cheaper_failing = [o for gid, o in sorted(best.items()) if not o.meets and gid != chosen.gpu.id
                       and _cheaper_unit(o.gpu, chosen.gpu, pricing)]
    for o in cheaper_failing[:4]:
        out.append(f"Cheaper {o.gpu.id} does not qualify: {o.failure}.")
    return out


def _cheaper_unit(gpu: Gpu, than: Gpu, pricing: str) -> bool:
    """Whether ``gpu`` costs less per GPU than ``than`` (cloud rate, or server price per GPU)."""
    if pricing == "cloud":
        a, b = gpu.cloud_usd_per_gpu_hour, than.cloud_usd_per_gpu_hour
    else:
        a = gpu.node_price_usd / gpu.gpus_per_node if gpu.node_price_usd else gpu.price_usd
        b = than.node_price_usd / than.gpus_per_node if than.node_price_usd else than.price_usd
    return a is not None and b is not None and a < b


def _plan_out(chosen: Option, workload: Workload, meeting: list[Option], best: dict[str, Option],
              comparison, alternatives: list[ServingOption]) -> ServingPlan:
    s = workload.serving
    assert s is not None and chosen.op is not None and chosen.ceiling is not None and chosen.fleet is not None
    rep, op, f = chosen.replica, chosen.op, chosen.fleet
    max_qps = _max_qps(chosen.ceiling.rate, chosen.replicas, s.spare_replicas)
    return ServingPlan(
        feasible=True, gpu=chosen.gpu.id, gpus=chosen.gpus, nodes=f.nodes, replicas=chosen.replicas,
        spare_replicas=s.spare_replicas, gpus_per_replica=rep.layout.gpus, layout=_layout_out(chosen),
        precision=s.precision, kv_precision=s.kv_precision, compute_dtype=rep.path.math,
        weights_gib_per_gpu=rep.resident_weight_bytes / GIB, kv_bytes_per_token_per_gpu=rep.kv_bytes_per_token_stage,
        kv_gib_per_gpu=rep.kv_budget_bytes / GIB, max_sequences_per_replica=chosen.capacity.max_sequences,
        ttft_ms_mean=op.ttft_mean_s * 1e3, ttft_ms_p99=op.ttft_p99_s * 1e3, latency_percentile=s.latency_percentile,
        ttft_ms_at_percentile=op.ttft_target_stat_s * 1e3, tpot_ms=op.tpot_s * 1e3, e2e_ms_mean=op.e2e_mean_s * 1e3, prefill_ms=op.prefill_latency_s * 1e3,
        qps_per_replica=chosen.ceiling.rate, max_qps=max_qps,
        peak_load_fraction=s.qps / (chosen.active * chosen.ceiling.rate), output_tokens_per_s=s.qps * s.output_tokens,
        utilization=s.qps / max_qps, bound=op.step.dominant(), roofline=_roofline(chosen),
        disaggregation=comparison, interconnect=None, topology=None, bom=None, capex_usd=f.capex_usd,
        power_kw=f.power_kw, cloud_usd_per_hour=f.cloud_usd_per_hour,
        usd_per_million_output_tokens=chosen.usd_per_mtok, alternatives=alternatives,
        reasons=_reasons(chosen, workload, meeting, best, comparison), infeasible=[],
    )


def _infeasible(workload: Workload, per_gpu: dict[str, tuple[list[Option], list[Replica]]],
                demand: Demand) -> ServingResult:
    s = workload.serving
    assert s is not None
    problems: list[str] = []
    alternatives: list[ServingOption] = []
    fastest_prefill: tuple[float, str] | None = None
    fastest_step: tuple[float, str] | None = None
    for gid, (opts, _) in sorted(per_gpu.items()):
        if not opts:
            problems.append(f"{gid}: no TP/PP layout is possible for this model")
            alternatives.append(_unfit_out(gid, "no TP/PP layout is possible for this model"))
            continue
        rep = representative(opts)
        problems.append(f"{gid}: {rep.failure}")
        alternatives.append(_option_out(rep, rep, workload))
        for o in opts:
            if o.capacity.max_sequences >= 1 and o.capacity.fits_context:
                pf = o.capacity.prefill_latency_s
                if fastest_prefill is None or pf < fastest_prefill[0]:
                    fastest_prefill = (pf, f"{gid} {_layout_name(o.replica.layout)}")
                st = o.capacity.at(1e-6).step_s
                if fastest_step is None or st < fastest_step[0]:
                    fastest_step = (st, f"{gid} {_layout_name(o.replica.layout)}")
    summary = ["no allowed GPU meets the serving targets"]
    if fastest_prefill and fastest_prefill[0] > demand.ttft_s:
        summary.append(f"the TTFT target {s.ttft_ms:g} ms is below the prefill time of every GPU "
                       f"(fastest: {fastest_prefill[1]} at {_ms(fastest_prefill[0])} ms)")
    if fastest_step and fastest_step[0] > demand.tpot_s and demand.decode_steps:
        summary.append(f"the TPOT target {s.tpot_ms:g} ms is below the batch-1 decode step of every GPU "
                       f"(fastest: {fastest_step[1]} at {_ms(fastest_step[0])} ms)")
    if fastest_prefill is None:
        summary.append("the model does not fit any allowed GPU at any TP/PP layout")
    plan = ServingPlan(
        feasible=False, gpu=None, gpus=0, nodes=0, replicas=0, spare_replicas=s.spare_replicas, gpus_per_replica=0,
        layout=None, precision=s.precision, kv_precision=s.kv_precision, compute_dtype=None,
        weights_gib_per_gpu=0.0, kv_bytes_per_token_per_gpu=0.0, kv_gib_per_gpu=0.0, max_sequences_per_replica=0,
        ttft_ms_mean=0.0, ttft_ms_p99=0.0, latency_percentile=s.latency_percentile, ttft_ms_at_percentile=0.0,
        tpot_ms=0.0, e2e_ms_mean=0.0, prefill_ms=0.0, qps_per_replica=0.0,
        max_qps=0.0, output_tokens_per_s=0.0, utilization=0.0, bound="infeasible", roofline=None,
        disaggregation=None, interconnect=None, topology=None, bom=None, capex_usd=None, power_kw=0.0,
        cloud_usd_per_hour=None, usd_per_million_output_tokens=None, alternatives=alternatives,
        reasons=["; ".join(summary) + "."], infeasible=summary + problems,
    )
    return ServingResult(plan=plan, demand=None, chosen_gpu=None)
