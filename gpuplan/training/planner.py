"""The training planner: for each allowed GPU, the layout and count that meet the target; rank.

Targets (``[training]`` of the profile): ``deadline_days`` -> the cheapest whole-node GPU count
and layout that finishes in time; ``gpus`` -> the fastest layout on exactly that many GPUs;
``budget_usd`` -> the fastest plan whose cost fits. Cost follows ``constraints.pricing``:
capex = nodes x node_price_usd, cloud = GPU-hours x cloud_usd_per_gpu_hour. A GPU without a
price for the chosen pricing is still planned but ranks after every priced one.
"""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass

from gpuplan.core.contract import TrainingLayoutOption, TrainingOption, TrainingPlan
from gpuplan.fabric.demand import TrafficDemand
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.hardware.training_calibration import TrainingCalibration, calibration
from gpuplan.model.profile import Assumption, Workload
from gpuplan.physics.collectives import Network
from gpuplan.training.candidates import (
    Candidate, Memo, Miss, batch_of, meets_somewhere, meets_with, memoized, no_plan, option_of, plan_gpu, rank,
)
from gpuplan.training.flops import training_flops
from gpuplan.training.groups import deadline_cost_floor
from gpuplan.training.framework import summary
from gpuplan.training.memory import GIB
from gpuplan.training.plan_record import (  # noqa: F401  (bound_of re-exported)
    bound_of, breakdown_record, empty_plan, layout_record, meets_target, memory_record, search_layout,
)
from gpuplan.training.reasons import miss_text, plan_reasons, unvalidated_note  # noqa: F401  (re-exported)
from gpuplan.training.roofline import training_roofline
from gpuplan.training.search import Evaluation, Evaluator, Fixed, Target, cost_usd, group_limit, search
from gpuplan.training.sizing import search_network, sizing_notes
from gpuplan.training.stages import batch_sequences  # noqa: F401  (re-exported)
from gpuplan.training.job import capped_gpu
from gpuplan.training.layout import Layout
from gpuplan.training.timing import Job
from gpuplan.training.traffic import traffic_demand

#: Alternatives listed in the plan (best option of each other GPU type).
MAX_ALTERNATIVES = 8
#: Runner-up layouts reported on the recommended GPU.
TOP_LAYOUTS = 3


@dataclass(frozen=True)
class TrainingResult:
    plan: TrainingPlan
    demand: TrafficDemand | None
    chosen_gpu: Gpu | None
    #: The GPU types that meet the target, best first (the plan's "next best" line reads them).
    ranked: tuple[Candidate, ...] = ()


def assumptions(workload: Workload, catalog: Catalog) -> list[Assumption]:
    """The training model's standing assumptions, for the plan's assumptions block."""
    cal = calibration(catalog)
    w, g, o = cal.state_bytes
    out = [
        Assumption("training.state_convention", cal.state_convention,
                   f"model states {w} + {g} + {o} = {w + g + o} B/param before ZeRO sharding "
                   f"(16-bit weights, {'fp32' if g == 4 else '16-bit'} gradients, fp32 Adam master/m/v)"),
        Assumption("training.goodput", f"{cal.fixed_downtime_fraction:.0%} downtime + interruptions",
                   f"{cal.interruptions_per_gpu_hour:g} interruptions per GPU-hour (Llama 3), "
                   f"{cal.restart_hours * 60:g}-min restarts, Young/Daly checkpoints"),
        Assumption("training.mfu", "dense BF16 peak",
                   "MFU and HFU are measured against the dense 16-bit tensor peak, FP8 runs included"),
    ]
    if workload.training is not None:
        spec = workload.training
        batch = batch_sequences(spec.global_batch_tokens, spec.sequence_length)
        if batch * spec.sequence_length != spec.global_batch_tokens:
            out.append(Assumption("training.global_batch_sequences", str(batch),
                                  f"{spec.global_batch_tokens:g} tokens / {spec.sequence_length} rounded to a "
                                  f"power of two"))
        name = spec.framework or cal.default_framework
        fw = cal.framework(name)
        why = "given" if spec.framework else "not given; what a team runs today"
        out.append(Assumption("training.framework", name, f"{why}: {summary(name, fw)}"))
        out.append(Assumption("training.attention_kernel", fw.attention,
                              f"the {name} attention kernel ("
                              + {"flash": "FlashAttention", "flash2": "FlashAttention-2"}.get(fw.attention, "fused softmax, scores in memory")
                              + ")"))
        if spec.gpu_power_cap_w is not None:
            k = cal.power_cap_clock_exponent
            out.append(Assumption("training.gpu_power_cap_w", f"{spec.gpu_power_cap_w:g} W",
                                  f"set by the profile: below a GPU's rating its GEMMs run at (cap / rating)^(1/{k:g}) "
                                  f"of full speed, its memory-bound kernels slow only below "
                                  f"{cal.hbm_stream_power_fraction:.0%} of the rating, and its servers draw the "
                                  f"capped power; at or above the rating, no effect"))
    return out


def _causal(job: Job, cal: TrainingCalibration) -> bool:
    """Whether the model FLOPs of ``job`` count the causal half of attention (its framework's
    flop_convention)."""
    return cal.framework(job.framework).flop_convention == "causal"


def job_of(workload: Workload, batch: int | None = None) -> Job:
    """The job of ``[training]``; ``batch`` (sequences) replaces the power-of-two batch (a plan
    on a fixed GPU count may use the batch nearest the requested one that its DP divides)."""
    spec = workload.training
    assert spec is not None
    batch = batch or batch_sequences(spec.global_batch_tokens, spec.sequence_length)
    return Job(arch=workload.arch, seq=spec.sequence_length, batch=batch, precision=spec.precision,
               tokens=spec.tokens, framework=spec.framework, gpu_power_cap_w=spec.gpu_power_cap_w,
               pipeline_split=spec.pipeline_split)


def target_of(workload: Workload) -> Target:
    spec = workload.training
    assert spec is not None
    c = workload.constraints
    if spec.gpus is not None:
        return Target(kind="gpus", gpus=spec.gpus, pricing=c.pricing, whole_nodes=False)
    if spec.budget_usd is not None:
        return Target(kind="budget", budget_usd=spec.budget_usd, pricing=c.pricing, power_limit_kw=c.power_limit_kw)
    return Target(kind="deadline", deadline_days=spec.deadline_days, pricing=c.pricing,
                  power_limit_kw=c.power_limit_kw)


def supports(gpu: Gpu, precision: str) -> bool:
    """Whether the GPU has tensor-core math for the training precision."""
    if precision == "fp8":
        return gpu.fp8_dense_tflops is not None
    if precision == "bf16":
        return gpu.bf16_dense_tflops is not None
    return True
def plan_training(workload: Workload, catalog: Catalog, memo: Memo | None = None,
                  layouts: bool = True, top: int | None = None, ceiling: float | None = None) -> TrainingResult:
    """Plan the ``[training]`` phase of ``workload`` over its allowed GPUs. ``memo`` (a dict the
    caller owns) lets repeated calls of one planning run reuse each GPU's search. ``layouts=False``
    leaves ``layout_alternatives`` empty (one search less: a caller comparing several plans asks
    :func:`layout_alternatives` for the one it keeps).

    ``top``: only the best ``top`` GPU types that meet the target are needed (a sweep's summary:
    the plan and the runners-up the capex re-rank prices). The plan and its first ``top - 1``
    alternatives are those of the full plan; the GPU types that cannot rank among them are not
    searched (:func:`_search_order`), and ``alternatives`` and ``infeasible`` stop there.
    ``ceiling`` (with ``top``, under a deadline): nor is a GPU type whose plan costs more."""
    memo = {} if memo is None else memo
    cal = calibration(catalog)
    if workload.training is None:
        return TrainingResult(plan=empty_plan("bf16", ["the profile has no [training] table"]), demand=None,
                              chosen_gpu=None)
    job = job_of(workload)
    target = target_of(workload)
    cands: list[Candidate] = []
    misses: list[Candidate] = []
    infeasible: list[str] = []
    limit = group_limit(len(workload.constraints.allow_gpus))  # the work of a plan is bounded, not per type
    c = workload.constraints
    # The full plan shows its best GPU type and MAX_ALTERNATIVES more: under a deadline (no budget
    # or power cap, which judge the best plan's exact cost and count) a GPU type that meets the
    # deadline at a cost beyond the shown ones changes no byte of the plan, so it is not searched
    # to the end (_beyond_shown); cheapest floor first, so that the shown ones are found first.
    prune = top is None and target.kind == "deadline" and c.budget_usd is None and c.power_limit_kw is None
    proofs: list[Layout] = []  # the layouts that proved GPU types beyond the shown (_beyond_shown)
    for gid, ev, floor in _search_order(workload, catalog, job, target, limit, SHOWN if prune else top, exact=not prune):
        if ev is None:
            infeasible.append(f"{gid}: no {job.precision} tensor cores")
            continue
        if top is not None and (floor == math.inf or _outranked(floor, cands, target, top, ceiling)):
            continue
        key = ("gpu", job, gid, target, catalog.sha256, c.budget_usd, c.power_limit_kw, c.memory_headroom,
               workload.cluster_network, limit)
        cutoff = _cutoff(cands, target, top, ceiling)
        if cutoff is None and top is not None and target.kind == "deadline":
            cutoff = math.inf  # a GPU type that misses the deadline is no alternative: no miss to explain
        shown = _cutoff(cands, target, SHOWN) if prune and key not in memo else None
        if shown is not None:
            found = _beyond_shown(memo, key, ev, floor, shown, target, workload, catalog, limit,
                                  tuple(c.best.layout for c in cands[:1]), proofs)
            if found is None:
                continue
            cand, miss = found
        elif key in memo or cutoff is None:
            cand, miss = memoized(memo, key, lambda: plan_gpu(ev, target, workload, catalog, limit))
        else:  # only a plan that can rank among the top is wanted: search up to the top-th cost
            cand, miss = plan_gpu(ev, target, workload, catalog, limit, cutoff=cutoff)
            if cand is None and miss is None:
                continue
            memo[key] = (cand, miss)
        if cand is not None and cand.meets:
            cands.append(cand)
            if top is not None or prune:
                cands.sort(key=lambda c: rank(c, target))
        else:
            if cand is not None:
                misses.append(cand)
            infeasible.append(f"{gid}: {miss_text(miss, target) if miss else ''}")
    cands.sort(key=lambda c: rank(c, target))
    misses.sort(key=lambda c: (c.best.wall_days, c.gpu.id))
    if prune:  # searched cheapest floor first, listed by id as without pruning
        infeasible.sort(key=lambda line: line.split(": ", 1)[0])
    if not cands:
        plan = empty_plan(job.precision, ["no allowed GPU meets the target; see infeasible"], infeasible,
                           [option_of(c, batch_of(c, job)) for c in misses[:MAX_ALTERNATIVES]], job,
                           _causal(job, cal))
        return TrainingResult(plan=plan, demand=None, chosen_gpu=None)
    chosen = cands[0]
    alternatives = [option_of(c, batch_of(c, job)) for c in cands[1:]] + [option_of(c, batch_of(c, job)) for c in misses]
    if top is not None:
        alternatives = [option_of(c, batch_of(c, job)) for c in cands[1:top]]
    plan = _plan(chosen.job or job, chosen.gpu, chosen.best, target, workload, catalog, cal,
                 alternatives[:MAX_ALTERNATIVES], infeasible, ranked=cands)
    if layouts:
        plan = plan.model_copy(update={"layout_alternatives": layout_alternatives(workload, catalog, plan, memo)})
    return TrainingResult(plan=plan, demand=traffic_demand(chosen.gpu, chosen.best, catalog), chosen_gpu=chosen.gpu,
                          ranked=tuple(cands))


#: GPU types a full plan shows: the best and MAX_ALTERNATIVES runners-up.
SHOWN = MAX_ALTERNATIVES + 1


def _beyond_shown(memo: Memo, key: tuple[object, ...], ev: Evaluator, floor: float | None, shown: float,
                  target: Target, workload: Workload, catalog: Catalog,
                  limit: int, layouts: tuple[Layout, ...] = (),
                  proofs: list[Layout] | None = None) -> tuple[Candidate | None, Miss | None] | None:
    """One GPU type's (candidate, miss) once ``SHOWN`` GPU types meet the deadline, the last
    costing ``shown``; None when it meets the deadline only at a higher cost (it would rank after
    every shown one: nothing of the plan depends on it). Its floor (None: unpriced, ranked after
    every priced plan) above ``shown`` skips the search; else a search within ``shown`` finds its
    best plan when there is one (search's ``cutoff``). Without one, the shape of ``layouts`` (the best
    plan found) at its largest DP on this GPU type (:func:`meets_with`, one fit) or a short probe
    prove that it meets the deadline somewhere (:func:`meets_somewhere`), else the full search says
    why it misses. Before the probe, the layouts that proved earlier types (``proofs``: a probe's
    fastest plan, which the probe appends) are tried as that shape is (one fit each; any fitted
    shape of the space that meets the deadline is the same proof): on the default profile the A100
    PCIe's proves both A100 SXMs.
    ``floor`` is the weaker floor the GPU types were ordered by: the exact one
    (:func:`~gpuplan.training.groups.deadline_cost_floor`) is not computed, as it computed stage
    times for as long as the cutoff search, whose bounds skip the same plans, takes when it finds
    none. A GPU type that no search finds any plan on is not searched
    (:func:`~gpuplan.training.candidates.no_plan`)."""
    if no_plan(ev, target):
        return memoized(memo, key, lambda: plan_gpu(ev, target, workload, catalog, limit))
    if floor is not None and not floor > shown:
        cand, miss = plan_gpu(ev, target, workload, catalog, limit, cutoff=shown)
        if cand is not None:
            memo[key] = (cand, miss)
            return cand, miss
    if (meets_with(ev, target, limit, layouts + tuple(proofs or ()))
            or meets_somewhere(ev, target, limit, proofs)):
        return None
    return memoized(memo, key, lambda: plan_gpu(ev, target, workload, catalog, limit))


def _search_order(workload: Workload, catalog: Catalog, job: Job, target: Target, limit: int,
                  top: int | None, exact: bool = True) -> list[tuple[str, Evaluator | None, float | None]]:
    """The allowed GPU types in the order they are searched, each with its Evaluator (None: no
    tensor cores for the precision) and, when only the ``top`` best are needed under a deadline, a
    floor of the cost of any plan on it (:func:`~gpuplan.training.groups.deadline_cost_floor`;
    None: unpriced), cheapest floor first, so that the best are found first and the rest are
    skipped. Otherwise by id, the floor 0. ``exact=False`` (the full plan, which searches every
    type and only orders them): the weaker floor that computes no stage time; the order changes
    no result (the plan keeps the best ``top`` whatever the order: :func:`_beyond_shown`)."""
    out: list[tuple[str, Evaluator | None, float | None]] = []
    cal = calibration(catalog)
    c = workload.constraints
    for gid in sorted(c.allow_gpus):
        gpu = capped_gpu(catalog.gpus[gid], job.gpu_power_cap_w)
        if not supports(gpu, job.precision):
            out.append((gid, None, 0.0))
            continue
        ev = Evaluator(job, gpu, search_network(workload, gpu, catalog), cal, headroom=c.memory_headroom)
        floor = 0.0
        if top is not None and target.kind == "deadline":  # inf: no plan, nothing to rank
            floor = math.inf if no_plan(ev, target) else deadline_cost_floor(ev, Fixed(), target, limit, exact)
        out.append((gid, ev, floor))
    if top is not None and target.kind == "deadline":
        out.sort(key=lambda g: (g[2] is None, g[2] or 0.0, g[0]))
    return out


def _cutoff(cands: list[Candidate], target: Target, top: int | None, ceiling: float | None = None) -> float | None:
    """The cost a GPU type's plan must not exceed to rank among the ``top`` best of ``cands``
    (ranked), and not above ``ceiling`` (None: any may). A priced plan ranks by its cost before
    anything else, an unpriced one after every priced one (:func:`~gpuplan.training.candidates.rank`);
    equal costs rank on."""
    if top is None or target.kind != "deadline":
        return None
    kth = cands[top - 1].cost if len(cands) >= top else None
    if ceiling is None:
        return kth
    return ceiling if kth is None else min(kth, ceiling)


def _outranked(floor: float | None, cands: list[Candidate], target: Target, top: int,
               ceiling: float | None = None) -> bool:
    """Whether a GPU type whose plans cost at least ``floor`` (None: unpriced) cannot rank among the
    ``top`` best of ``cands`` within ``ceiling`` (:func:`_cutoff`)."""
    cutoff = _cutoff(cands, target, top, ceiling)
    return cutoff is not None and (floor is None or floor > cutoff)


def layout_alternatives(workload: Workload, catalog: Catalog, plan: TrainingPlan,
                        memo: Memo | None = None) -> list[TrainingLayoutOption]:
    """The next ``TOP_LAYOUTS`` layouts on the plan's GPU, ranked as the search ranks (one more
    search, on the reference network as the first one)."""
    if plan.gpu is None or plan.layout is None or workload.training is None:
        return []
    memo = {} if memo is None else memo
    batch = plan.layout.global_batch_sequences
    job, target, gpu = job_of(workload, batch), target_of(workload), catalog.gpus[plan.gpu]
    headroom = workload.constraints.memory_headroom
    ev = Evaluator(job, gpu, search_network(workload, gpu, catalog), calibration(catalog), headroom=headroom)
    found = memoized(memo, ("top", job, gpu.id, target, catalog.sha256, workload.cluster_network, headroom),
                  lambda: search(ev, Fixed(), target, top=TOP_LAYOUTS + 1))
    chosen = search_layout(plan.layout)
    others = [e for e in found.best if e.layout != chosen][:TOP_LAYOUTS]
    return [TrainingLayoutOption(layout=layout_record(e, job.batch), gpus=e.gpus, step_time_s=e.step_time, mfu=e.mfu,
                                 wall_clock_days=e.wall_days, breakdown=breakdown_record(e),
                                 memory_headroom_gib=e.memory.headroom / GIB) for e in others]


def _plan(job: Job, gpu: Gpu, e: Evaluation, target: Target, workload: Workload, catalog: Catalog,
          cal: TrainingCalibration, alternatives: list[TrainingOption], infeasible: list[str],
          ranked: list[Candidate] | None = None) -> TrainingPlan:
    nodes = gpu.servers_for(e.gpus)
    capex = nodes * gpu.node_price_usd if gpu.node_price_usd else None
    cloud_rate = gpu.billed_gpus(e.gpus) * gpu.cloud_usd_per_gpu_hour if gpu.cloud_usd_per_gpu_hour else None
    run_cost = cost_usd(gpu, e.gpus, e.gpu_hours, target.pricing)
    bound, _ = bound_of(e)
    meets = meets_target(e, target, run_cost)
    reasons = plan_reasons(job, gpu, e, target, catalog, cal, run_cost, ranked or [])
    reasons[1:1] = sizing_notes(job, e, workload)
    return TrainingPlan(
        feasible=meets, gpu=gpu.id, gpus=e.gpus, nodes=nodes, layout=layout_record(e, job.batch), precision=job.precision,
        step_time_s=e.step_time, mfu=e.mfu, hfu=e.hfu, model_tflops_per_gpu=e.model_tflops_per_gpu,
        tokens_per_s=job.tokens_per_step / e.step_time,
        total_flops=training_flops(job.arch, job.tokens, job.seq, _causal(job, cal)),
        steady_state_days=e.steady_days, goodput=e.good.fraction, wall_clock_days=e.wall_days,
        gpu_hours=e.gpu_hours, breakdown=breakdown_record(e), memory=memory_record(e), bound=bound,
        roofline=training_roofline(job.arch, gpu, job.precision, seq=job.seq, micro_batch=e.layout.micro_batch,
                                   tp=e.layout.tp, cp=e.layout.cp),
        interconnect=None,
        topology=None, bom=None, capex_usd=capex, power_kw=nodes * gpu.node_power_kw,
        cloud_usd_per_hour=cloud_rate, run_cost_usd=run_cost, alternatives=alternatives, reasons=reasons,
        infeasible=infeasible)


def with_network(result: TrainingResult, workload: Workload, catalog: Catalog, network: Network) -> TrainingResult:
    """Re-evaluate the chosen layout on ``network`` (another NIC speed or an oversubscribed
    fabric); step time, days, GPU-hours and costs follow."""
    plan, gpu = result.plan, result.chosen_gpu
    if gpu is None or plan.layout is None or workload.training is None:
        return result
    cal = calibration(catalog)
    job = job_of(workload, plan.layout.global_batch_sequences)
    e = Evaluator(job, gpu, network, cal, headroom=workload.constraints.memory_headroom).evaluate(
        search_layout(plan.layout))
    if not math.isfinite(e.step_time):
        reason = (f"the given network has no scale-out tier, yet {', '.join(result.demand.cross_node_groups)} "
                  f"cross the {gpu.scaleup_domain}-GPU scale-up domain" if result.demand else
                  "the given network cannot carry this layout's traffic")
        bad = plan.model_copy(update={"feasible": False, "reasons": [*plan.reasons, reason]})
        return TrainingResult(plan=bad, demand=result.demand, chosen_gpu=gpu, ranked=result.ranked)
    target = target_of(workload)
    new = _plan(job, gpu, e, target, workload, catalog, cal, list(plan.alternatives), list(plan.infeasible),
                ranked=list(result.ranked))
    new = new.model_copy(update={"layout_alternatives": plan.layout_alternatives})
    return TrainingResult(plan=new, demand=traffic_demand(gpu, e, catalog), chosen_gpu=gpu, ranked=result.ranked)
