"""The training planner: for each allowed GPU, the layout and count that meet the target; rank.

Targets (``[training]`` of the profile): ``deadline_days`` -> the cheapest whole-node GPU count
and layout that finishes in time; ``gpus`` -> the fastest layout on exactly that many GPUs;
``budget_usd`` -> the fastest plan whose cost fits. Cost follows ``constraints.pricing``:
capex = nodes x node_price_usd, cloud = GPU-hours x cloud_usd_per_gpu_hour. A GPU without a
price for the chosen pricing is still planned but ranks after every priced one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.physics.collectives import Network
from gpuplan.fabric.demand import TrafficDemand
from gpuplan.physics.network import default_fabric, network_for
from gpuplan.core.contract import (
    MemoryBreakdown,
    TrainingBreakdown,
    TrainingLayout,
    TrainingLayoutOption,
    TrainingOption,
    TrainingPlan,
)
from gpuplan.model.profile import Assumption, Workload
from gpuplan.hardware.training_calibration import TrainingCalibration, calibration
from gpuplan.training.roofline import training_roofline
from gpuplan.training.flops import training_flops
from gpuplan.training.framework import summary
from gpuplan.training.layout import Group, Layout, groups, layers_per_stage
from gpuplan.training.memory import GIB
from gpuplan.training.search import (
    MAX_GROUPS,
    Evaluation,
    Evaluator,
    Fixed,
    SearchOutcome,
    Target,
    cost_usd,
    min_memory_at,
    min_model_parallel,
    search,
)
from gpuplan.training.sizing import (
    batch_options,
    counts_phrase,
    fixed_count_dps,
    search_network,
    sizing_notes,
    usable_text,
)
from gpuplan.training.stages import batch_sequences  # noqa: F401  (re-exported)
from gpuplan.training.timing import Job

#: Alternatives listed in the plan (best option of each other GPU type).
MAX_ALTERNATIVES = 8
#: Runner-up layouts reported on the recommended GPU.
TOP_LAYOUTS = 3
#: Search results shared by the calls of one planning run (see plan_training).
Memo = dict[tuple[object, ...], object]


@dataclass(frozen=True)
class TrainingResult:
    plan: TrainingPlan
    demand: TrafficDemand | None
    chosen_gpu: Gpu | None
    #: The GPU types that meet the target, best first (the plan's "next best" line reads them).
    ranked: tuple[_Candidate, ...] = ()


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
                              + ("FlashAttention" if fw.attention == "flash" else "fused softmax, scores in memory")
                              + ")"))
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
               tokens=spec.tokens, framework=spec.framework)


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


# -- planning ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Candidate:
    gpu: Gpu
    best: Evaluation
    others: tuple[Evaluation, ...]
    cost: float | None
    meets: bool
    #: Search axes thinned to stay within MAX_GROUPS (SearchOutcome.thinned).
    thinned: tuple[str, ...] = ()
    #: The job searched (its batch differs from the profile's power of two on some fixed counts).
    job: Job | None = None


def plan_training(workload: Workload, catalog: Catalog, memo: Memo | None = None,
                  layouts: bool = True) -> TrainingResult:
    """Plan the ``[training]`` phase of ``workload`` over its allowed GPUs. ``memo`` (a dict the
    caller owns) lets repeated calls of one planning run reuse each GPU's search. ``layouts=False``
    leaves ``layout_alternatives`` empty (one search less: a caller comparing several plans asks
    :func:`layout_alternatives` for the one it keeps)."""
    memo = {} if memo is None else memo
    cal = calibration(catalog)
    if workload.training is None:
        return TrainingResult(plan=_empty_plan("bf16", ["the profile has no [training] table"]), demand=None,
                              chosen_gpu=None)
    job = job_of(workload)
    target = target_of(workload)
    cands: list[_Candidate] = []
    misses: list[_Candidate] = []
    infeasible: list[str] = []
    for gid in sorted(workload.constraints.allow_gpus):
        gpu = catalog.gpus[gid]
        if not supports(gpu, job.precision):
            infeasible.append(f"{gid}: no {job.precision} tensor cores")
            continue
        c = workload.constraints
        ev = Evaluator(job, gpu, search_network(workload, gpu, catalog), cal, headroom=c.memory_headroom)
        key = ("gpu", job, gid, target, catalog.sha256, c.budget_usd, c.power_limit_kw, c.memory_headroom,
               workload.cluster_network)
        cand, why = _memo(memo, key, lambda: _plan_gpu(ev, target, workload, catalog))
        if cand is not None and cand.meets:
            cands.append(cand)
        else:
            if cand is not None:
                misses.append(cand)
            infeasible.append(f"{gid}: {why}")
    cands.sort(key=lambda c: _rank(c, target))
    misses.sort(key=lambda c: (c.best.wall_days, c.gpu.id))
    if not cands:
        plan = _empty_plan(job.precision, ["no allowed GPU meets the target; see infeasible"], infeasible,
                           [_option(c, _batch(c, job)) for c in misses[:MAX_ALTERNATIVES]], job,
                           _causal(job, cal))
        return TrainingResult(plan=plan, demand=None, chosen_gpu=None)
    chosen = cands[0]
    alternatives = [_option(c, _batch(c, job)) for c in cands[1:]] + [_option(c, _batch(c, job)) for c in misses]
    plan = _plan(chosen.job or job, chosen.gpu, chosen.best, target, workload, catalog, cal,
                 alternatives[:MAX_ALTERNATIVES], infeasible, ranked=cands)
    if layouts:
        plan = plan.model_copy(update={"layout_alternatives": layout_alternatives(workload, catalog, plan, memo)})
    return TrainingResult(plan=plan, demand=_demand(chosen.gpu, chosen.best, catalog), chosen_gpu=chosen.gpu,
                          ranked=tuple(cands))


def _batch(c: _Candidate, job: Job) -> int:
    return (c.job or job).batch


R = TypeVar("R")


def _memo(memo: Memo, key: tuple[object, ...], make: Callable[[], R]) -> R:
    """``make()`` once per key of ``memo`` (keys hold everything the search reads)."""
    if key not in memo:
        memo[key] = make()
    return memo[key]  # type: ignore[return-value]


def _plan_gpu(ev: Evaluator, target: Target, workload: Workload,
              catalog: Catalog | None = None) -> tuple[_Candidate | None, str]:
    """Best option of one GPU type for the target, or the closest miss and why it misses."""
    gpu, cap = ev.gpu, workload.constraints.budget_usd
    if target.kind == "budget" and cost_usd(gpu, gpu.gpus_per_node, 1.0, target.pricing) is None:
        return None, f"no {target.pricing} price in the catalog: the ${target.budget_usd:,.0f} budget cannot be checked"
    found = search(ev, Fixed(), target, top=1)
    if not found.best and target.kind == "gpus" and workload.training is not None:
        # No DP of this count divides the power-of-two batch: the batch nearest the requested one
        # that some DP of the count divides (stated in the plan's reasons).
        requested = workload.training.global_batch_tokens / ev.job.seq
        for batch in batch_options(requested, fixed_count_dps(ev, target.gpus or 0)):
            if batch == ev.job.batch:
                continue
            other = Evaluator(replace(ev.job, batch=batch), gpu, ev.hw.net, ev.cal, ev.attention, ev.headroom)
            again = search(other, Fixed(), target, top=1)
            if again.best:
                ev, found = other, again
                break
    if not found.best:
        cand, why = _nearest(ev, target, found)
        return cand, why + (f" (layout space thinned to {MAX_GROUPS:,} groups: {'; '.join(found.thinned)})"
                            if found.thinned else "")
    best = found.best[0]
    cost = cost_usd(gpu, best.gpus, best.gpu_hours, target.pricing)
    cand = _Candidate(gpu, best, tuple(found.best[1:]), cost, True, found.thinned, job=ev.job)
    if cap is not None and cost is None:  # fail closed: an unpriced plan cannot pass a budget
        return replace(cand, meets=False), (f"no {target.pricing} price in the catalog: the ${cap:,.0f} budget "
                                            f"cannot be checked")
    if cap is not None and cost is not None and cost > cap:
        return replace(cand, meets=False), (f"the plan costs ${cost:,.0f}, over the ${cap:,.0f} budget "
                                            f"by {cost / cap - 1:.0%}")
    limit = workload.constraints.power_limit_kw
    power = gpu.servers_for(best.gpus) * gpu.node_power_kw
    if limit is not None and power > limit:
        return replace(cand, meets=False), (f"{best.gpus:,} GPUs draw {power:,.0f} kW, over the "
                                            f"{limit:,.0f} kW power limit by {power / limit - 1:.0%}")
    return cand, ""


def _nearest(ev: Evaluator, target: Target, found: SearchOutcome) -> tuple[_Candidate | None, str]:
    """Explain why nothing met the target, with the closest option when there is one."""
    gpu = ev.gpu
    if found.fastest is None:
        if ev.hw.net.scaleout is None and ev.hw.domain < gpu.gpus_per_node:
            return None, (f"the reference server has no scale-out network and a {ev.hw.domain}-GPU scale-up "
                          f"domain: its GPUs cannot train one model together")
        need = min_model_parallel(ev)
        states = f"; the model states need TP*PP >= {need}" if need and need > 1 else ""
        if need is None:
            return None, f"does not fit: the model states exceed {gpu.memory_usable_gib:.1f} GiB at any TP x PP"
        if target.kind == "gpus" and target.gpus is not None:
            least = min_memory_at(ev, target.gpus)
            if least > ev.limit:
                return None, (f"does not fit on {target.gpus:,} GPUs: needs at least {least / GIB:.1f} GiB per GPU "
                              f"(full recompute, ZeRO-2/3), has {usable_text(ev)}{states}"
                              f"{counts_phrase(ev, target.gpus)}")
        if found.min_memory < math.inf:
            lay = found.min_memory_layout
            where = f" (best: TP{lay.tp} PP{lay.pp} DP{lay.dp})" if lay else ""
            return None, (f"does not fit: needs {found.min_memory / GIB:.1f} GiB per GPU{where}, "
                          f"has {usable_text(ev)}{states}")
        if target.kind == "gpus":
            return None, (f"no valid layout on exactly {target.gpus:,} GPUs (TP x PP x CP x DP must match "
                          f"and DP x micro-batch divide a global batch near {ev.job.batch}){states}"
                          f"{counts_phrase(ev, target.gpus or 0)}")
        return None, f"no layout fits the power limit or the global batch{states}"
    e = found.fastest
    cost = cost_usd(gpu, e.gpus, e.gpu_hours, target.pricing)
    cand = _Candidate(gpu, e, (), cost, False)
    mp = min_model_parallel(ev)
    states = f"; the model states need TP*PP >= {mp}" if mp and mp > 1 else ""
    if target.kind == "deadline":
        deadline = target.deadline_days or math.inf
        need = math.ceil(e.gpus * e.wall_days / deadline)
        limit = ("the power limit" if target.power_limit_kw is not None else
                 f"the global batch of {ev.job.batch} sequences")
        return cand, (f"needs about {need:,} GPUs for the {deadline:g}-day deadline at the per-GPU speed of its "
                      f"fastest plan found ({e.gpus:,} GPUs, {_short(e.layout)}: {e.wall_days:.1f} days, "
                      f"{e.wall_days / deadline - 1:.0%} over), more than {limit} allows{states}")
    if target.kind == "budget":
        if cost is None:
            return cand, f"no {target.pricing} price in the catalog: the ${target.budget_usd:,.0f} budget cannot be checked"
        return cand, (f"the cheapest plan found ({e.gpus:,} GPUs, {e.wall_days:.1f} days) costs ${cost:,.0f}, "
                      f"{cost / target.budget_usd - 1:.0%} over the ${target.budget_usd:,.0f} budget")  # type: ignore[operator]
    return cand, "no layout fits"


def _rank(c: _Candidate, target: Target) -> tuple[object, ...]:
    priced = 0 if c.cost is not None else 1
    if target.kind == "deadline":
        return (priced, c.cost if c.cost is not None else c.best.gpu_hours, c.best.wall_days, c.gpu.id)
    return (priced, c.best.wall_days, c.cost or 0.0, c.gpu.id)


# -- the plan --------------------------------------------------------------------------------------
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
    found = _memo(memo, ("top", job, gpu.id, target, catalog.sha256, workload.cluster_network, headroom),
                  lambda: search(ev, Fixed(), target, top=TOP_LAYOUTS + 1))
    chosen = _layout_of(plan.layout)
    others = [e for e in found.best if e.layout != chosen][:TOP_LAYOUTS]
    return [TrainingLayoutOption(layout=_layout(e, job.batch), gpus=e.gpus, step_time_s=e.step_time, mfu=e.mfu,
                                 wall_clock_days=e.wall_days, breakdown=_breakdown(e),
                                 memory_headroom_gib=e.memory.headroom / GIB) for e in others]


def _layout_of(tl: TrainingLayout) -> Layout:
    """The search's layout for a plan's layout."""
    return Layout(tp=tl.tp, pp=tl.pp, dp=tl.dp, cp=tl.cp, ep=tl.ep, vp=tl.vp, micro_batch=tl.micro_batch,
                  recompute=tl.recompute, sequence_parallel=tl.sequence_parallel, zero=tl.zero,
                  recompute_layers=tl.recompute_layers)


def _layout(e: Evaluation, batch: int) -> TrainingLayout:
    lay = e.layout
    return TrainingLayout(tp=lay.tp, pp=lay.pp, dp=lay.dp, cp=lay.cp, ep=lay.ep, vp=lay.vp,
                          micro_batch=lay.micro_batch, num_micro_batches=lay.microbatches(batch),
                          global_batch_sequences=batch, recompute=lay.recompute,  # type: ignore[arg-type]
                          sequence_parallel=lay.sequence_parallel, zero=lay.zero,
                          recompute_layers=lay.recompute_layers)


def _short(lay: Layout) -> str:
    parts = [f"TP{lay.tp}", f"PP{lay.pp}" + (f"x{lay.vp}" if lay.vp > 1 else ""), f"DP{lay.dp}"]
    if lay.cp > 1:
        parts.append(f"CP{lay.cp}")
    if lay.ep > 1:
        parts.append(f"EP{lay.ep}")
    return " ".join(parts)


def bound_of(e: Evaluation) -> tuple[str, dict[str, float]]:
    """What bounds the step, and the share of each part of it."""
    s = e.step
    total = s.total or 1.0
    shares = {
        "compute": (s.compute + s.recompute) / total,
        "tp-comm": s.tp_comm / total,
        "pipeline": (s.bubble + s.pp_comm) / total,
        "dp-comm": s.dp_comm / total,
        "ep-comm": s.ep_comm / total,
        "cp-comm": s.cp_comm / total,
        "optimizer": s.optimizer / total,
        "host": s.host / total,
    }
    if shares["compute"] >= 0.5:
        return "compute", shares
    return max(sorted(shares), key=lambda k: shares[k]), shares


def _option(c: _Candidate, batch: int) -> TrainingOption:
    e = c.best
    return TrainingOption(gpu=c.gpu.id, gpus=e.gpus, nodes=c.gpu.servers_for(e.gpus),
                          layout=_layout(e, batch), step_time_s=e.step_time, mfu=e.mfu, wall_clock_days=e.wall_days,
                          gpu_hours=e.gpu_hours, cost_usd=c.cost, meets_target=c.meets, bound=bound_of(e)[0])


def _memory(e: Evaluation) -> MemoryBreakdown:
    m = e.memory
    return MemoryBreakdown(weights_gib=m.weights / GIB, gradients_gib=m.gradients / GIB,
                           optimizer_gib=m.optimizer / GIB, activations_gib=m.activations / GIB,
                           overhead_gib=m.overhead / GIB, total_gib=m.total / GIB, capacity_gib=m.capacity / GIB,
                           headroom_gib=m.headroom / GIB)


def _breakdown(e: Evaluation) -> TrainingBreakdown:
    s = e.step
    return TrainingBreakdown(compute_s=s.compute, recompute_s=s.recompute, tp_comm_s=s.tp_comm, pp_comm_s=s.pp_comm,
                             dp_comm_s=s.dp_comm, ep_comm_s=s.ep_comm, cp_comm_s=s.cp_comm, bubble_s=s.bubble,
                             optimizer_s=s.optimizer, step_time_s=s.total,
                             dp_bandwidth_to_hide_gbit_per_gpu=s.dp_gbit_to_hide, host_overhead_s=s.host)


def _plan(job: Job, gpu: Gpu, e: Evaluation, target: Target, workload: Workload, catalog: Catalog,
          cal: TrainingCalibration, alternatives: list[TrainingOption], infeasible: list[str],
          ranked: list[_Candidate] | None = None) -> TrainingPlan:
    nodes = gpu.servers_for(e.gpus)
    capex = nodes * gpu.node_price_usd if gpu.node_price_usd else None
    cloud_rate = gpu.billed_gpus(e.gpus) * gpu.cloud_usd_per_gpu_hour if gpu.cloud_usd_per_gpu_hour else None
    run_cost = cost_usd(gpu, e.gpus, e.gpu_hours, target.pricing)
    bound, _ = bound_of(e)
    meets = _meets(e, target, run_cost)
    reasons = _reasons(job, gpu, e, target, catalog, cal, run_cost, ranked or [])
    reasons[1:1] = sizing_notes(job, e, workload)
    return TrainingPlan(
        feasible=meets, gpu=gpu.id, gpus=e.gpus, nodes=nodes, layout=_layout(e, job.batch), precision=job.precision,
        step_time_s=e.step_time, mfu=e.mfu, hfu=e.hfu, model_tflops_per_gpu=e.model_tflops_per_gpu,
        tokens_per_s=job.tokens_per_step / e.step_time,
        total_flops=training_flops(job.arch, job.tokens, job.seq, _causal(job, cal)),
        steady_state_days=e.steady_days, goodput=e.good.fraction, wall_clock_days=e.wall_days,
        gpu_hours=e.gpu_hours, breakdown=_breakdown(e), memory=_memory(e), bound=bound,
        roofline=training_roofline(job.arch, gpu, job.precision, seq=job.seq, micro_batch=e.layout.micro_batch,
                                   tp=e.layout.tp, cp=e.layout.cp),
        interconnect=None,
        topology=None, bom=None, capex_usd=capex, power_kw=nodes * gpu.node_power_kw,
        cloud_usd_per_hour=cloud_rate, run_cost_usd=run_cost, alternatives=alternatives, reasons=reasons,
        infeasible=infeasible)


def _meets(e: Evaluation, target: Target, cost: float | None) -> bool:
    if target.kind == "deadline":
        return e.wall_days <= target.deadline_days + 1e-9  # type: ignore[operator]
    if target.kind == "budget":
        return cost is not None and cost <= target.budget_usd  # type: ignore[operator]
    return True


def _empty_plan(precision: str, reasons: list[str], infeasible: list[str] | None = None,
                alternatives: list[TrainingOption] | None = None, job: Job | None = None,
                causal: bool = False) -> TrainingPlan:
    total = training_flops(job.arch, job.tokens, job.seq, causal) if job else 0.0
    return TrainingPlan(
        feasible=False, gpu=None, gpus=0, nodes=0, layout=None, precision=precision, step_time_s=0.0, mfu=0.0,
        hfu=0.0, model_tflops_per_gpu=0.0, tokens_per_s=0.0, total_flops=total, steady_state_days=0.0, goodput=0.0,
        wall_clock_days=0.0, gpu_hours=0.0, breakdown=None, memory=None, bound="infeasible", interconnect=None,
        topology=None, bom=None, capex_usd=None, power_kw=0.0, cloud_usd_per_hour=None, run_cost_usd=None,
        alternatives=alternatives or [], reasons=reasons, infeasible=infeasible or [])


def _reasons(job: Job, gpu: Gpu, e: Evaluation, target: Target, catalog: Catalog,
             cal: TrainingCalibration, cost: float | None, ranked: list[_Candidate]) -> list[str]:
    lay = e.layout
    out = []
    rc = lay.recompute
    if rc == "full" and lay.recompute_layers:
        rc = f"full recompute on {lay.recompute_layers}/{layers_per_stage(job.arch.layers, lay.pp)} layers per stage"
    elif rc != "none":
        rc = f"{rc} recompute"
    else:
        rc = "no recompute"
    if target.kind == "deadline":
        what = f"cheapest plan finishing within {target.deadline_days:g} days"
    elif target.kind == "gpus":
        what = f"fastest layout on {target.gpus:,} GPUs"
    else:
        what = f"fastest plan within ${target.budget_usd:,.0f}"
    label = "server capex" if target.pricing == "capex" else "cloud cost"
    price = f"; {label} ${cost:,.0f}" if cost is not None else f"; no {target.pricing} price in the catalog"
    out.append(f"{gpu.id}: {what}: {e.gpus:,} GPUs, {_short(lay)}, micro-batch {lay.micro_batch}, "
               f"{rc}, ZeRO-{lay.zero}{', SP' if lay.sequence_parallel else ''}; {e.wall_days:.1f} days "
               f"end to end{price}")
    servers = gpu.servers_for(e.gpus)
    if servers * gpu.gpus_per_node > e.gpus:
        out.append(f"servers: {servers:,} bought ({gpu.purchase_unit_nodes} per {gpu.scaleup_domain}-GPU rack, sold "
                   f"whole); the {servers * gpu.gpus_per_node - e.gpus:,} GPUs the layout leaves idle are hot spares")
    bound, shares = bound_of(e)
    parts = ", ".join(f"{k} {v:.0%}" for k, v in sorted(shares.items(), key=lambda kv: (-kv[1], kv[0])) if v >= 0.01)
    out.append(f"bound: {bound} (step {e.step_time:.2f} s: {parts}); MFU {e.mfu:.1%}, HFU {e.hfu:.1%} "
               f"of the dense {'BF16' if job.precision != 'fp16' else 'FP16'} peak")
    m = e.memory
    need = _min_model_parallel_cached(job, gpu, catalog, cal)
    mp = f"; the model states need TP*PP >= {need}" if need and need > 1 else ""
    out.append(f"memory: {m.total / GIB:.1f} of {m.capacity / GIB:.1f} GiB per GPU (states {m.model_states / GIB:.1f}, "
               f"activations {m.activations / GIB:.1f}, overhead {m.overhead / GIB:.1f}); {m.headroom / GIB:.1f} GiB "
               f"({m.headroom / m.capacity:.0%}) free, at least {m.reserve / m.capacity:.0%} kept free{mp}")
    grp = groups(lay)
    crossing = [k for k in ("tp", "cp", "ep", "dp", "pp") if grp[k].crosses(gpu.scaleup_domain)]
    if crossing:
        out.append(f"fabric: {', '.join(g.upper() for g in crossing)} cross the {gpu.scaleup_domain}-GPU scale-up "
                   f"domain; hiding the gradient sync needs {e.step.dp_gbit_to_hide:.0f} Gb/s of data per GPU "
                   f"(reference: {gpu.reference_scaleout_gbit_per_gpu:g} Gb/s line rate)")
    else:
        out.append("fabric: every parallel group stays inside the scale-up domain")
    out.append(f"{e.good.describe()}; steady state {e.steady_days:.1f} days")
    wb, gb, ob = cal.state_bytes
    out.append(f"model states: {cal.state_convention} ({wb} + {gb} + {ob} = {wb + gb + ob} B/param before "
               f"ZeRO-{lay.zero} sharding)")
    if gpu.id not in cal.validated_gpus:
        out.append(unvalidated_note(gpu.id, cal))
    if cost is None:
        out.append(f"{gpu.id} has no {target.pricing} price in the catalog: ranked after priced GPUs")
    if len(ranked) > 1:
        nxt = ranked[1]
        diff = (f"server capex ${nxt.cost:,.0f}" if nxt.cost is not None else "unpriced")
        out.append(f"next best: {nxt.gpu.id} ({nxt.best.gpus:,} GPUs, {nxt.best.wall_days:.1f} days, {diff})")
    if ranked and ranked[0].thinned:
        out.append(f"search: the layout space of {gpu.id} exceeds {MAX_GROUPS:,} (TP, CP, EP, PP, micro-batch) "
                   f"groups and was thinned evenly ({'; '.join(ranked[0].thinned)}): the plan is the best of those")
    return out


def unvalidated_note(gpu_id: str, cal: TrainingCalibration) -> str:
    """Why a training plan on ``gpu_id`` is less certain than one on a validated GPU."""
    return (f"calibration: no published training run on {gpu_id} is among the validation cases (they cover "
            f"{', '.join(cal.validated_gpus) or 'no GPU'}); its step time extrapolates the catalog's efficiency "
            f"figures for it")


_MP_CACHE: dict[tuple[object, ...], int | None] = {}


def _min_model_parallel_cached(job: Job, gpu: Gpu, catalog: Catalog, cal: TrainingCalibration) -> int | None:
    key = (job, gpu.id, catalog.sha256)
    if key not in _MP_CACHE:
        _MP_CACHE[key] = min_model_parallel(Evaluator(job, gpu, network_for(gpu, catalog), cal))
    return _MP_CACHE[key]


# -- the fabric's view -----------------------------------------------------------------------------
def _demand(gpu: Gpu, e: Evaluation, catalog: Catalog) -> TrafficDemand:
    """Scale-out traffic of the chosen layout (bytes per GPU per step over the fabric)."""
    lay = e.layout
    grp = groups(lay)
    domain = gpu.scaleup_domain
    crossing = tuple(k for k in ("tp", "cp", "ep", "dp", "pp") if grp[k].crosses(domain))
    total = sum(e.step.scaleout_bytes.values())
    window = e.step.pipeline or e.step_time
    dp_bytes = e.step.scaleout_bytes.get("dp", 0.0)
    other = total - dp_bytes
    rate = max(dp_bytes / e.step.dp_window if e.step.dp_window > 0 else 0.0, other / window if window > 0 else 0.0)
    fab = default_fabric(gpu, catalog, gpu.reference_scaleout_gbit_per_gpu) if gpu.reference_scaleout_gbit_per_gpu else None
    eff = fab.efficiency if fab is not None else 1.0
    required = rate * 8 / 1e9 / eff
    rail = "ep" not in crossing and all(_rail_aligned(k, grp[k], domain) for k in crossing)
    return TrafficDemand(phase="training", gpu=gpu.id, gpus=e.gpus, gpus_per_node=gpu.gpus_per_node,
                         cross_node_groups=crossing, scaleout_bytes_per_gpu=total, window_s=window,
                         required_gbit_per_gpu=required, rail_aligned=rail)


def _rail_aligned(kind: str, group: Group, domain: int) -> bool:
    """Whether a group's cross-domain traffic stays between GPUs of the same local rank.

    Members one domain apart (stride a multiple of the domain) always are; collectives over a
    group with several members per domain are too (NCCL reduces inside first, then each local
    rank talks to its peers); point-to-point neighbours (PP, CP rings) are not unless aligned.
    """
    if group.stride % domain == 0:
        return True
    return kind == "dp" and domain % group.stride == 0


def with_network(result: TrainingResult, workload: Workload, catalog: Catalog, network: Network) -> TrainingResult:
    """Re-evaluate the chosen layout on ``network`` (another NIC speed or an oversubscribed
    fabric); step time, days, GPU-hours and costs follow."""
    plan, gpu = result.plan, result.chosen_gpu
    if gpu is None or plan.layout is None or workload.training is None:
        return result
    cal = calibration(catalog)
    job = job_of(workload, plan.layout.global_batch_sequences)
    e = Evaluator(job, gpu, network, cal, headroom=workload.constraints.memory_headroom).evaluate(
        _layout_of(plan.layout))
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
    return TrainingResult(plan=new, demand=_demand(gpu, e, catalog), chosen_gpu=gpu, ranked=result.ranked)
