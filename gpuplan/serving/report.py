"""The serving plan as the contract states it: layouts, rooflines, reasons, alternatives and the
"nothing meets the targets" plan, built from the options serving/planner.py sized."""

from __future__ import annotations

import math

from gpuplan.hardware.schema import Gpu
from gpuplan.core.numbers import num
from gpuplan.core.contract import Roofline, ServingLayout, ServingOption, ServingPlan
from gpuplan.model.profile import Workload
from gpuplan.physics.roofline import achieved_tflops, arithmetic_intensity, bound, ridge_point
from gpuplan.serving.capacity import Demand, ReplicaCapacity
from gpuplan.serving.model import GIB, Replica
from gpuplan.serving.step import StepTime
from gpuplan.serving.options import LIMIT_WORDS, Option, ServingResult, _layout_name, representative


def decode_bound_words(step: StepTime, concurrency: float, step_s: float, ai: float, ridge: float) -> str:
    """The reason naming the largest term of the modelled decode step (StepTime.dominant: each kernel
    counted whole on the side its roofline puts it), the times that make it the largest, and the
    roofline's intensity of the whole step against the peak ridge."""
    bound = "compute-bound" if step.gemm_compute_bound else "memory-bound"
    terms = [f"GEMMs {step.gemm_s * 1e3:.1f} ms, {bound} (math {step.gemm_math_s * 1e3:.1f} ms, "
             f"{step.weight_bytes / 1e9:.2f} GB of weights {step.gemm_memory_s * 1e3:.1f} ms)",
             f"attention {step.attention_s * 1e3:.1f} ms on {step.kv_bytes / 1e9:.2f} GB of KV cache"]
    if step.comm_s > 0:
        terms.append(f"communication {step.comm_s * 1e3:.1f} ms")
    terms.append(f"fixed {step.fixed_s * 1e3:.1f} ms")
    return (f"Decode is bound by {step.dominant()}: a step at the target load (mean concurrency {concurrency:.1f}) "
            f"takes {step_s * 1e3:.1f} ms per GPU: {'; '.join(terms)}; whole-step {ai:.0f} FLOP/B against a "
            f"{ridge:.0f} FLOP/B peak ridge.")


# -- output ---------------------------------------------------------------------------------------
def _roofline(opt: Option) -> Roofline:
    rep = opt.replica
    assert opt.op is not None
    peak = rep.gpu.peak_tflops(rep.path.math) or rep.gpu.fp16_dense_tflops
    ridge = ridge_point(peak * 1e12, rep.gpu.mem_bw_tb_per_s * 1e12)
    pf = opt.capacity.prefill_step
    dec = opt.op.step
    pf_ai = arithmetic_intensity(pf.flops, pf.bytes)
    dec_ai = arithmetic_intensity(dec.flops, dec.bytes)
    return Roofline(peak_tflops=peak, mem_bw_tb_per_s=rep.gpu.mem_bw_tb_per_s, ridge_flops_per_byte=ridge,
                    prefill_flops_per_byte=pf_ai, decode_flops_per_byte=dec_ai,
                    prefill_bound=bound(pf_ai, ridge), decode_bound=bound(dec_ai, ridge),
                    prefill_achieved_tflops=achieved_tflops(pf.flops, pf.total_s),
                    decode_achieved_tflops=achieved_tflops(dec.flops, dec.total_s))


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


def versus_chosen(cost_words: str, ratio: float, chosen: str) -> str:
    """An alternative's reason: it meets the targets at this cost, ``ratio`` times the chosen GPU's."""
    return f"meets the targets at {cost_words}, {ratio:.2f}x the chosen {chosen}"


#: How the cost line of a plan's reasons starts when one GPU type alone was priced (a re-plan on
#: one GPU type: planning/compose.py rewords it once the types are ranked with their networks).
ONLY_PRICED = "The only priced GPU type that meets the targets"


def network_ranked(ranked: list[tuple[str, float]]) -> str:
    """The cost line when the winner was ranked on capex with each option's own network: ``ranked``
    is (GPU, capex) cheapest first, the winner first."""
    line = f"Cheapest of {len(ranked)} GPU types priced with their network: ${ranked[0][1]:,.0f} capex"
    if len(ranked) > 1:
        line += f"; next {ranked[1][0]} at ${ranked[1][1]:,.0f} capex ({ranked[1][1] / ranked[0][1]:.2f}x)"
    return line + "."


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
            bound=opt.limit, cloud_usd_per_hour=None, reason=failure_text(opt))
    f = opt.fleet
    assert f is not None
    if not opt.meets:
        reason = failure_text(opt)
    elif opt.objective is None:
        reason = f"meets the targets; no {'cloud rate' if pricing == 'cloud' else 'server price'} in the catalog"
    elif chosen.objective:
        reason = versus_chosen(_cost_words(opt, pricing), opt.objective / chosen.objective, chosen.gpu.id)
    else:
        reason = f"meets the targets at {_cost_words(opt, pricing)}"
    return ServingOption(
        gpu=opt.gpu.id, gpus=opt.gpus, replicas=opt.replicas, layout=_layout_out(opt),
        ttft_ms_p99=opt.op.ttft_p99_s * 1e3, tpot_ms=opt.op.tpot_s * 1e3,
        max_qps=_max_qps(opt.ceiling.rate, opt.replicas, workload.serving.spare_replicas),  # type: ignore[union-attr]
        cost_usd=f.capex_usd, usd_per_million_output_tokens=opt.usd_per_mtok, meets_target=opt.meets,
        bound=opt.op.step.dominant(), cloud_usd_per_hour=f.cloud_usd_per_hour, reason=reason)


def failure_text(opt: Option) -> str | None:
    """Why ``opt`` misses the targets, in words (None when it meets them)."""
    miss, f = opt.miss, opt.fleet
    if miss is None:
        return None
    if miss.kind == "unpriced":
        return f"no server price in the catalog: the ${miss.limit:,.0f} budget cannot be checked"
    if miss.kind == "budget" and f is not None and f.capex_usd is not None:
        return f"capex ${f.capex_usd:,.0f} exceeds the budget ${miss.limit:,.0f}"
    if miss.kind == "power" and f is not None:
        return f"{f.power_kw:,.1f} kW exceeds the power limit {miss.limit:,.1f} kW"
    return _limit_text(opt.capacity, opt.limit)


def _limit_text(cap: ReplicaCapacity, limit: str) -> str:
    """The replica limit that no workpoint of ``cap`` meets, with the figures that break it."""
    rep, demand = cap.replica, cap.demand
    where = _layout_name(rep.layout)
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


def _ms(seconds: float) -> str:
    """Seconds as milliseconds for a sentence: 3 significant figures below 1 ms, whole ms above."""
    ms = seconds * 1e3
    if not math.isfinite(ms) or ms >= 1e7:
        return f"{ms:.3g}"
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def _finite_ms(seconds: float) -> float:
    """Milliseconds for the plan; 0 where a time is not finite (the reason says why)."""
    return seconds * 1e3 if math.isfinite(seconds) else 0.0


def _unfit_out(gid: str, why: str, bound: str = "layout") -> ServingOption:
    return ServingOption(gpu=gid, gpus=0, replicas=0, layout=ServingLayout(tp=1, pp=1, ep=1, concurrency=0,
                                                                           disaggregated=False),
                         ttft_ms_p99=0.0, tpot_ms=0.0, max_qps=0.0, cost_usd=None,
                         usd_per_million_output_tokens=None, meets_target=False, bound=bound, reason=why)


def _reasons(chosen: Option, workload: Workload, meeting: list[Option],
             best: dict[str, Option], comparison) -> list[str]:
    s = workload.serving
    assert s is not None and chosen.op is not None and chosen.ceiling is not None and chosen.fleet is not None
    op, ceil_wp, rep, cap = chosen.op, chosen.ceiling, chosen.replica, chosen.capacity
    lay = rep.layout
    pricing = workload.constraints.pricing
    pct = s.latency_percentile
    out = [
        f"{chosen.gpu.id}: {chosen.replicas:,} replica{'s' if chosen.replicas != 1 else ''}"
        f"{f' ({chosen.active:,} + {s.spare_replicas:,} spare)' if s.spare_replicas else ''} of "
        f"{_layout_name(lay)} = {chosen.gpus:,} GPUs on {chosen.fleet.nodes:,} server{'s' if chosen.fleet.nodes != 1 else ''} carry {f'{s.qps:,.0f}' if s.qps == round(s.qps) else f'{s.qps:g}'} QPS with "
        f"TTFT {pct} {num(op.ttft_target_stat_s * 1e3)} ms <= {s.ttft_ms:g} ms and TPOT {num(op.tpot_s * 1e3)} ms "
        f"<= {s.tpot_ms:g} ms.",
    ]
    priced = [o for o in meeting if o.objective is not None]
    if chosen.objective is not None:
        line = (f"Cheapest of {len(priced)} priced GPU types that meet the targets" if len(priced) != 1 else
                ONLY_PRICED) + f": {_cost_words(chosen, pricing)}"
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
    ridge = ridge_point(peak * 1e12, rep.gpu.mem_bw_tb_per_s * 1e12)
    out.append(decode_bound_words(step, op.concurrency, op.step_s, dec_ai, ridge))
    limit = chosen.limit
    limit_words = LIMIT_WORDS.get(limit, limit)
    if limit == "kv":
        limit_words = (f"KV-cache capacity ({cap.max_sequences} sequences of "
                       f"{s.prompt_tokens + s.output_tokens} tokens fit per replica)")
    batch = f" (the layout's batch of {math.ceil(op.concurrency - 1e-9)})" if cap.demand.decode_steps else ""
    kv_words = "" if limit == "kv" else f", within a KV capacity of {cap.max_sequences} sequences"
    out.append(f"Each replica sustains at most {ceil_wp.rate:.2f} req/s (latency-limited concurrency "
               f"{ceil_wp.concurrency:.1f}), limited by {limit_words}; at the target load it runs {op.rate:.2f} req/s "
               f"at a mean concurrency of {op.concurrency:.1f}{batch}{kv_words}.")
    pf_bound = "compute-bound" if cap.prefill_step.gemm_s - cap.prefill_step.gemm_memory_s > \
        cap.prefill_step.gemm_memory_s else "weight-streaming-bound"
    # TTFT = prefill at the operating point (``prefill_ms``: its chunks share steps with the decode)
    # + the queue's wait + the decode step in flight (t0 at a percentile, t0 / 2 on average).
    in_flight = op.step_s / 2 if pct == "mean" else op.step_s
    wait = op.ttft_target_stat_s - op.prefill_latency_s - in_flight
    alone = cap.prefill_latency_s
    idle = f" ({alone * 1e3:.0f} ms on an idle replica)" if round(alone * 1e3) != round(op.prefill_latency_s * 1e3) else ""
    out.append(f"Prefill of {s.prompt_tokens} tokens takes {op.prefill_latency_s * 1e3:.0f} ms at the target load"
               f"{idle}, {pf_bound}; queueing for prefill at utilisation {op.rho:.2f} adds {max(wait, 0.0) * 1e3:.0f} ms "
               f"{'on average' if pct == 'mean' else 'at ' + pct} and the decode step in flight {num(in_flight * 1e3)} ms: "
               f"TTFT {pct} {num(op.ttft_target_stat_s * 1e3)} ms.")
    if rep.path.note:
        out.append(rep.path.note + ".")
    if comparison is not None:
        out.append(f"Disaggregated prefill/decode: {comparison.reason}.")
    cheaper_failing = [o for gid, o in sorted(best.items()) if not o.meets and gid != chosen.gpu.id
                       and _cheaper_unit(o.gpu, chosen.gpu, pricing)]
    for o in cheaper_failing[:4]:
        out.append(f"Cheaper {o.gpu.id} does not qualify: {failure_text(o)}.")
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
        engine=rep.engine.name if rep.engine else s.engine, engine_version=s.engine_version,
        engine_release=rep.engine.features.since if rep.engine else None,
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
                demand: Demand, excluded: dict[str, str] | None = None) -> ServingResult:
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
        problems.append(f"{gid}: {failure_text(rep)}")
        alternatives.append(_option_out(rep, rep, workload))
        for o in opts:
            if o.capacity.max_sequences >= 1 and o.capacity.fits_context:
                pf = o.capacity.prefill_latency_s
                if fastest_prefill is None or pf < fastest_prefill[0]:
                    fastest_prefill = (pf, f"{gid} {_layout_name(o.replica.layout)}")
                st = o.capacity.at(1e-6).step_s
                if fastest_step is None or st < fastest_step[0]:
                    fastest_step = (st, f"{gid} {_layout_name(o.replica.layout)}")
    for gid, why in sorted((excluded or {}).items()):
        problems.append(f"{gid}: {why}")
        alternatives.append(_unfit_out(gid, why, "engine"))
    if not per_gpu and excluded:
        engine = workload.serving.engine if workload.serving else ""
        summary = [f"no allowed GPU runs the {engine} engine: {sorted(set(excluded.values()))[0]}"]
    else:
        summary = ["no allowed GPU meets the serving targets"]
    if fastest_prefill and fastest_prefill[0] > demand.ttft_s:
        summary.append(f"the TTFT target {s.ttft_ms:g} ms is below the prefill time of every GPU "
                       f"(fastest: {fastest_prefill[1]} at {_ms(fastest_prefill[0])} ms)")
    if fastest_step and fastest_step[0] > demand.tpot_s and demand.decode_steps:
        summary.append(f"the TPOT target {s.tpot_ms:g} ms is below the batch-1 decode step of every GPU "
                       f"(fastest: {fastest_step[1]} at {_ms(fastest_step[0])} ms)")
    if fastest_prefill is None and per_gpu:
        summary.append("the model does not fit any allowed GPU at any TP/PP layout")
    plan = ServingPlan(
        feasible=False, gpu=None, gpus=0, nodes=0, replicas=0, spare_replicas=s.spare_replicas, gpus_per_replica=0,
        layout=None, precision=s.precision, kv_precision=s.kv_precision, compute_dtype=None,
        engine=s.engine, engine_version=s.engine_version,
        weights_gib_per_gpu=0.0, kv_bytes_per_token_per_gpu=0.0, kv_gib_per_gpu=0.0, max_sequences_per_replica=0,
        ttft_ms_mean=0.0, ttft_ms_p99=0.0, latency_percentile=s.latency_percentile, ttft_ms_at_percentile=0.0,
        tpot_ms=0.0, e2e_ms_mean=0.0, prefill_ms=0.0, qps_per_replica=0.0,
        max_qps=0.0, output_tokens_per_s=0.0, utilization=0.0, bound="infeasible", roofline=None,
        disaggregation=None, interconnect=None, topology=None, bom=None, capex_usd=None, power_kw=0.0,
        cloud_usd_per_hour=None, usd_per_million_output_tokens=None, alternatives=alternatives,
        reasons=["; ".join(summary) + "."], infeasible=summary + problems,
    )
    return ServingResult(plan=plan, demand=None, chosen_gpu=None)
