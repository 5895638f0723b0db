"""A sized disaggregated fleet (:mod:`gpuplan.serving.disagg_search`) as the plan states it: its
operating point, the comparison with the aggregated plan, the serving plan when it is chosen, and
the traffic its pools put on the fabric."""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass

from gpuplan.core.contract import (
    DisaggregatedPool,
    DisaggregationComparison,
    Roofline,
    ServingLayout,
    ServingOption,
    ServingPlan,
)
from gpuplan.core.memo import memo
from gpuplan.core.numbers import num
from gpuplan.core.units import GIB
from gpuplan.fabric.demand import TrafficDemand
from gpuplan.hardware.schema import Gpu
from gpuplan.model.workload import ServingSpec, Workload
from gpuplan.physics.roofline import achieved_tflops, arithmetic_intensity, bound, ridge_point
from gpuplan.serving.capacity import Demand
from gpuplan.serving.disagg_fleet import DisaggFleet
from gpuplan.serving.fleet import FleetCost, usd_per_million_tokens
from gpuplan.serving.options import _layout_name
from gpuplan.serving.traffic import serving_demand


@dataclass(frozen=True)
class Operating:
    """The fleet at the target QPS: TTFT statistics, TPOT and the decode concurrency per worker."""

    transfer_s: float
    ttft_mean_s: float
    ttft_p99_s: float
    ttft_stat_s: float
    tpot_s: float
    concurrency: float
    prefill_in_flight: float


#: Operating points by (the fleet's identity, demand), each entry holding its fleet (so its id is not
#: reused while it lives): the chosen fleet's is asked for by its draft record, its plan and its
#: final record (planning/disagg_choice.py), and the decode pool's point is a 50-step bisection.
_OPERATING: dict[tuple[int, Demand], tuple[DisaggFleet, Operating]] = memo()
_OPERATING_MAX = 256


def operating(f: DisaggFleet, demand: Demand) -> Operating:
    """Each pool carries ``QPS / active workers``; TTFT = wait + prefill + KV transfer + the decode
    step in flight (a whole step at a percentile, half on average)."""
    hit = _OPERATING.get((id(f), demand))
    if hit is None:
        if len(_OPERATING) >= _OPERATING_MAX:
            _OPERATING.clear()
        hit = _OPERATING[(id(f), demand)] = (f, _operating(f, demand))
    return hit[1]


def _operating(f: DisaggFleet, demand: Demand) -> Operating:
    t_kv = f.link.seconds(f.kv_bytes)
    lam_p = f.qps / f.prefill_workers
    conc, tpot = f.decode.point(f.qps / f.decode_workers, demand.decode_steps)

    def ttft(stat: str) -> float:
        return f.prefill.ttft_s(lam_p, demand, t_kv + (tpot / 2 if stat == "mean" else tpot), stat)

    mean = ttft("mean")
    return Operating(t_kv, mean, ttft("p99"), ttft(demand.percentile), tpot, conc,
                     lam_p * (mean - t_kv - tpot / 2))


# -- words ------------------------------------------------------------------------------------------
def link_words(f: DisaggFleet) -> str:
    gbit = f.link.bytes_per_s * 8 / 1e9
    if f.link.kind == "scale-out":
        return f"the scale-out NICs ({gbit:,.0f} Gb/s between a prefill and a decode worker)"
    gpu = f.prefill.replica.gpu
    where = f"one {gpu.scaleup_tech} domain" if f.link.kind == "scale-up" else "one server over PCIe"
    return f"{where} ({gbit:,.0f} Gb/s between a prefill and a decode worker)"


def _worker(w_gpu: Gpu, layout_name: str) -> str:
    return f"{w_gpu.id} {layout_name}"


def summary(f: DisaggFleet) -> str:
    """``n x xPyD``: the workers, the spares and the GPUs, in one phrase."""
    pre, dec = f.prefill.replica, f.decode.replica
    spare = (f"{f.spare} spare group{'s' if f.spare != 1 else ''}" if f.in_domain else
             f"{f.spare} spare prefill + {f.spare} spare decode worker{'s' if f.spare != 1 else ''}")
    return (f"{f.groups} x {f.x}P{f.y}D: {f.prefill_workers} prefill {_worker(pre.gpu, _layout_name(pre.layout))} + "
            f"{f.decode_workers} decode {_worker(dec.gpu, _layout_name(dec.layout))}"
            + (f" + {spare}" if f.spare else "") + f" = {f.gpus:,} GPUs")


def cost_words(capex: float | None, cloud: float | None, pricing: str) -> str:
    if pricing == "cloud":
        return f"${cloud:,.2f}/h" if cloud is not None else "unpriced"
    return f"${capex:,.0f} capex" if capex is not None else "unpriced"


# -- the comparison ---------------------------------------------------------------------------------
def _pools(f: DisaggFleet, op: Operating) -> list[DisaggregatedPool]:
    pre, dec = f.prefill.replica, f.decode.replica

    def own(fleet: FleetCost | None) -> dict[str, object]:
        if fleet is None:
            return {}
        return {"nodes": fleet.nodes, "capex_usd": fleet.capex_usd, "cloud_usd_per_hour": fleet.cloud_usd_per_hour}

    return [
        DisaggregatedPool(role="prefill", gpu=pre.gpu.id,
                          layout=ServingLayout(tp=pre.layout.tp, pp=pre.layout.pp, ep=pre.layout.ep,
                                               concurrency=max(1, math.ceil(op.prefill_in_flight - 1e-9)),
                                               disaggregated=True),
                          gpus_per_worker=pre.layout.gpus, workers=f.prefill_workers, spare_workers=f.spare_prefill,
                          gpus=f.prefill_gpus, rate_per_worker=f.prefill_rate,
                          capacity_per_worker=f.prefill_rate * f.prefill.prompt,
                          load_fraction=f.qps / (f.prefill_workers * f.prefill_rate), **own(f.prefill_fleet)),
        DisaggregatedPool(role="decode", gpu=dec.gpu.id,
                          layout=ServingLayout(tp=dec.layout.tp, pp=dec.layout.pp, ep=dec.layout.ep,
                                               concurrency=math.ceil(op.concurrency - 1e-9), disaggregated=True),
                          gpus_per_worker=dec.layout.gpus, workers=f.decode_workers, spare_workers=f.spare_decode,
                          gpus=f.decode_gpus, rate_per_worker=f.decode.rate, capacity_per_worker=f.decode.concurrency,
                          load_fraction=f.qps / (f.decode_workers * f.decode.rate), **own(f.decode_fleet)),
    ]


def comparison(f: DisaggFleet, demand: Demand, agg: ServingPlan, *, mode: str, recommended: bool, chosen: bool,
               reason: str, capex: float | None, cloud: float | None, network_included: bool,
               nodes: int | None = None) -> DisaggregationComparison:
    """The contract record of ``f`` beside the aggregated plan ``agg``."""
    op = operating(f, demand)
    side, idle = f.idle_fraction
    active_agg = (agg.replicas - agg.spare_replicas) * agg.gpus_per_replica if agg.feasible else 0
    pre_active = f.prefill_workers * f.prefill.replica.layout.gpus
    dec_active = f.decode_workers * f.decode.replica.layout.gpus
    return DisaggregationComparison(
        prefill_gpus=pre_active, decode_gpus=dec_active, total_gpus=pre_active + dec_active,
        aggregated_gpus=active_agg, kv_transfer_gbit_per_s=f.qps * f.kv_bytes * 8 / 1e9,
        recommended=recommended, reason=reason, mode=mode, chosen=chosen,  # type: ignore[arg-type]
        placement=f.link.kind, groups=f.groups, prefill_per_group=f.x,  # type: ignore[arg-type]
        decode_per_group=f.y, spare_groups=f.spare, gpus=f.gpus, nodes=nodes if nodes is not None else f.fleet.nodes,
        kv_bytes_per_request=f.kv_bytes, kv_link_gbit_per_s=f.link.bytes_per_s * 8 / 1e9,
        kv_transfer_ms=op.transfer_s * 1e3, ttft_ms_mean=op.ttft_mean_s * 1e3,
        ttft_ms_at_percentile=op.ttft_stat_s * 1e3, tpot_ms=op.tpot_s * 1e3,
        idle_side=side if idle > 0 else None, idle_fraction=idle,  # type: ignore[arg-type]
        capex_usd=capex, cloud_usd_per_hour=cloud, aggregated_capex_usd=agg.capex_usd if agg.feasible else None,
        aggregated_cloud_usd_per_hour=agg.cloud_usd_per_hour if agg.feasible else None,
        network_included=network_included, pools=_pools(f, op))


# -- the plan when it is chosen ---------------------------------------------------------------------
def _roofline(f: DisaggFleet, op: Operating) -> Roofline | None:
    """Both phases on one GPU's roofline (None for two GPU types: each has its own ridge)."""
    pre, dec = f.prefill.replica, f.decode.replica
    if pre.gpu.id != dec.gpu.id:
        return None
    peak = dec.gpu.peak_tflops(dec.path.math) or dec.gpu.fp16_dense_tflops
    ridge = ridge_point(peak * 1e12, dec.gpu.mem_bw_tb_per_s * 1e12)
    pf = pre.prefill_step(1, f.prefill.prompt)
    st = f.decode.step(op.concurrency)
    pf_ai, dec_ai = arithmetic_intensity(pf.flops, pf.bytes), arithmetic_intensity(st.flops, st.bytes)
    return Roofline(peak_tflops=peak, mem_bw_tb_per_s=dec.gpu.mem_bw_tb_per_s, ridge_flops_per_byte=ridge,
                    prefill_flops_per_byte=pf_ai, decode_flops_per_byte=dec_ai, prefill_bound=bound(pf_ai, ridge),
                    decode_bound=bound(dec_ai, ridge), prefill_achieved_tflops=achieved_tflops(pf.flops, pf.total_s),
                    decode_achieved_tflops=achieved_tflops(st.flops, st.total_s))


def idle_gpus(f: DisaggFleet, pricing: str) -> int:
    """GPUs paid for beyond the fleet's: the rest of each pool's last server (or cloud instance)."""
    pre, dec = f.prefill.replica.gpu, f.decode.replica.gpu
    if pricing == "cloud":
        return (pre.billed_gpus(f.prefill_gpus) - f.prefill_gpus) + (dec.billed_gpus(f.decode_gpus) - f.decode_gpus)
    if f.in_domain:
        return f.fleet.nodes * dec.gpus_per_node - f.gpus
    assert f.prefill_fleet is not None and f.decode_fleet is not None
    return (f.prefill_fleet.nodes * pre.gpus_per_node - f.prefill_gpus
            + f.decode_fleet.nodes * dec.gpus_per_node - f.decode_gpus)


def reasons(f: DisaggFleet, spec: ServingSpec, op: Operating, agg: ServingPlan, pricing: str) -> list[str]:
    pre, dec = f.prefill.replica, f.decode.replica
    pct = spec.latency_percentile
    side, idle = f.idle_fraction
    agg_cost = cost_words(agg.capex_usd, agg.cloud_usd_per_hour, pricing)
    vs = (f"the best aggregated plan ({agg.gpus:,} x {agg.gpu}) costs {agg_cost}"
          if agg.feasible else "no aggregated plan meets the targets")
    return [
        f"Disaggregated prefill/decode: {summary(f)} on {f.fleet.nodes:,} server{'s' if f.fleet.nodes != 1 else ''} "
        f"carry {spec.qps:g} QPS with TTFT {pct} {num(op.ttft_stat_s * 1e3)} ms <= {spec.ttft_ms:g} ms and TPOT "
        f"{num(op.tpot_s * 1e3)} ms <= {spec.tpot_ms:g} ms; {vs}.",
        f"Prefill: each {_layout_name(pre.layout)} worker on {pre.gpu.id} takes {f.prefill.latency_s * 1e3:.0f} ms per "
        f"{spec.prompt_tokens}-token prompt and sustains {f.prefill_rate:.2f} req/s "
        f"({f.prefill_rate * spec.prompt_tokens:,.0f} prompt tokens/s) within the TTFT target; "
        f"{f.prefill_workers} carry the load at {spec.qps / (f.prefill_workers * f.prefill_rate):.0%}.",
        f"Decode: each {_layout_name(dec.layout)} worker on {dec.gpu.id} holds up to {f.decode.concurrency:.1f} "
        f"sequences "
        f"at TPOT {f.decode.step_s * 1e3:.1f} ms ({f.decode.rate:.2f} req/s, no prefill interrupting its steps); "
        f"{f.decode_workers} run {op.concurrency:.1f} each at the target QPS.",
        f"KV transfer: {f.kv_bytes / 1e6:,.1f} MB per request over {link_words(f)} in {op.transfer_s * 1e3:.1f} ms, "
        f"counted in TTFT; {spec.qps * f.kv_bytes * 8 / 1e9:,.1f} Gb/s in all"
        + (" stays inside each group's domain." if f.in_domain else " crosses the east-west fabric."),
        f"Rate matching: a {f.x}P{f.y}D group carries min({f.x} x {f.prefill_rate:.2f}, {f.y} x {f.decode.rate:.2f}) = "
        f"{f.group_rate:.2f} req/s; whole workers leave {idle:.0%} of the {side} side's capacity idle.",
    ]


def aggregated_reason(base: ServingPlan, record: DisaggregationComparison, pricing: str) -> str:
    """Why the aggregated plan is the alternative: it costs more, or (``always``) the profile asks
    for disaggregation."""
    if record.recommended:
        return f"aggregated: {cost_words(base.capex_usd, base.cloud_usd_per_hour, pricing)}, more than the " \
               "disaggregated fleet"
    return ("aggregated (the profile asks for disaggregation)" if record.mode == "always"
            else "aggregated: not cheaper than the disaggregated fleet")


def replica_counts(f: DisaggFleet) -> dict[str, int]:
    """A replica is one ``xPyD`` group: spare groups in one domain are spare replicas; the spare
    prefill and decode workers of a scale-out fleet are ``spare_gpus`` (no whole group), so that
    ``replicas x gpus_per_replica + spare_gpus`` is the fleet's GPUs."""
    if f.in_domain:
        return {"replicas": f.groups + f.spare, "spare_replicas": f.spare, "gpus_per_replica": f.group_gpus,
                "spare_gpus": 0}
    spare = f.spare_prefill * f.prefill.replica.layout.gpus + f.spare_decode * f.decode.replica.layout.gpus
    return {"replicas": f.groups, "spare_replicas": 0, "gpus_per_replica": f.group_gpus, "spare_gpus": spare}


def as_serving_plan(f: DisaggFleet, base: ServingPlan, workload: Workload, demand: Demand,
                    record: DisaggregationComparison) -> ServingPlan:
    """The serving plan of fleet ``f``: a replica is one ``xPyD`` group; the per-replica figures
    (memory, layout, concurrency) are the decode worker's; ``base`` (the aggregated plan) becomes
    the first alternative."""
    spec = workload.serving
    assert spec is not None
    pricing = workload.constraints.pricing
    op = operating(f, demand)
    dec = f.decode.replica
    fleet = f.fleet
    max_qps = f.groups * f.group_rate
    alternatives = list(base.alternatives)
    if base.feasible and base.gpu is not None:
        alternatives.insert(0, ServingOption(
            gpu=base.gpu, gpus=base.gpus, replicas=base.replicas, layout=base.layout,  # type: ignore[arg-type]
            ttft_ms_p99=base.ttft_ms_p99, tpot_ms=base.tpot_ms, max_qps=base.max_qps, cost_usd=base.capex_usd,
            usd_per_million_output_tokens=base.usd_per_million_output_tokens, meets_target=True, bound=base.bound,
            cloud_usd_per_hour=base.cloud_usd_per_hour, network_included=base.bom is not None,
            reason=aggregated_reason(base, record, pricing)))
    return base.model_copy(update=dict(
        feasible=True, gpu=dec.gpu.id, gpus=f.gpus, nodes=fleet.nodes, gpus_idle=idle_gpus(f, pricing),
        **replica_counts(f),
        layout=ServingLayout(tp=dec.layout.tp, pp=dec.layout.pp, ep=dec.layout.ep,
                             concurrency=math.ceil(op.concurrency - 1e-9), disaggregated=True),
        compute_dtype=dec.path.math, weights_gib_per_gpu=dec.resident_weight_bytes / GIB,
        kv_bytes_per_token_per_gpu=dec.kv_bytes_per_token_stage, kv_gib_per_gpu=dec.kv_budget_bytes / GIB,
        max_sequences_per_replica=dec.max_sequences(spec.prompt_tokens + spec.output_tokens),
        ttft_ms_mean=op.ttft_mean_s * 1e3, ttft_ms_p99=op.ttft_p99_s * 1e3, ttft_ms_at_percentile=op.ttft_stat_s * 1e3,
        tpot_ms=op.tpot_s * 1e3, e2e_ms_mean=(op.ttft_mean_s + demand.decode_steps * op.tpot_s) * 1e3,
        prefill_ms=f.prefill.latency_s * 1e3, qps_per_replica=f.group_rate, max_qps=max_qps,
        output_tokens_per_s=spec.qps * spec.output_tokens, utilization=spec.qps / max_qps,
        peak_load_fraction=spec.qps / max_qps,
        bound=f.decode.step(op.concurrency).dominant(),
        roofline=_roofline(f, op), disaggregation=record, interconnect=None, topology=None, bom=None, tco=None,
        capex_usd=fleet.capex_usd, power_kw=fleet.power_kw, cloud_usd_per_hour=fleet.cloud_usd_per_hour,
        usd_per_million_output_tokens=usd_per_million_tokens(fleet.usd_per_hour, spec.qps * spec.output_tokens),
        alternatives=alternatives, reasons=reasons(f, spec, op, base, pricing), infeasible=[], closest_fix=None))


# -- the network ------------------------------------------------------------------------------------
def fleet_traffic(f: DisaggFleet, spec: ServingSpec) -> tuple[TrafficDemand, tuple[tuple[Gpu, int], ...]]:
    """What both pools ask of the network, as one demand on the decode GPU's fabric, and the
    servers of each GPU type. Every server's GPUs are endpoints; the KV transfer per GPU is the
    busier side's share: ``QPS x bytes / (active workers x GPUs per worker)``."""
    pre, dec = f.prefill.replica, f.decode.replica
    if f.in_domain:  # both kinds of worker on every server
        p_nodes = d_nodes = total_nodes = f.fleet.nodes
    else:
        assert f.prefill_fleet is not None and f.decode_fleet is not None
        p_nodes, d_nodes = f.prefill_fleet.nodes, f.decode_fleet.nodes
        total_nodes = p_nodes + d_nodes
    parts = [serving_demand(pre, f.prefill_workers, f.prefill_workers + f.spare_prefill, p_nodes, spec.qps,
                            spec.prompt_tokens, 0, spec.replica_start_s),
             serving_demand(dec, f.decode_workers, f.decode_workers + f.spare_decode, d_nodes, spec.qps,
                            0, spec.output_tokens, spec.replica_start_s)]
    if f.in_domain:
        front = parts[0].frontend_gbit_per_node + parts[1].frontend_gbit_per_node
        weights = parts[0].frontend_weight_gbit_per_node + parts[1].frontend_weight_gbit_per_node
    else:
        front = (parts[0].frontend_gbit_per_node * p_nodes + parts[1].frontend_gbit_per_node * d_nodes) / total_nodes
        weights = (parts[0].frontend_weight_gbit_per_node * p_nodes
                   + parts[1].frontend_weight_gbit_per_node * d_nodes) / total_nodes
    kv = 0.0
    if not f.in_domain:
        total = spec.qps * f.kv_bytes * 8 / 1e9
        kv = max(total / (f.prefill_workers * pre.layout.gpus), total / (f.decode_workers * dec.layout.gpus))
    servers: tuple[tuple[Gpu, int], ...] = ((dec.gpu, total_nodes),)
    if pre.gpu.id != dec.gpu.id:
        servers = ((pre.gpu, p_nodes), (dec.gpu, d_nodes))
    slots = sum(g.gpus_per_node * n for g, n in servers)
    demand = TrafficDemand(
        phase="serving", gpu=dec.gpu.id, gpus=slots, gpus_per_node=dec.gpu.gpus_per_node,
        cross_node_groups=tuple(sorted(set(parts[0].cross_node_groups) | set(parts[1].cross_node_groups))),
        scaleout_bytes_per_gpu=max(p.scaleout_bytes_per_gpu for p in parts), window_s=1.0,
        required_gbit_per_gpu=max(p.required_gbit_per_gpu for p in parts),
        rail_aligned=all(p.rail_aligned for p in parts) and (f.in_domain or pre.layout.gpus == dec.layout.gpus),
        frontend_gbit_per_node=front, frontend_weight_gbit_per_node=weights, kv_transfer_gbit_per_gpu=kv)
    return demand, servers
