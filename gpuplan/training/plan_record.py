"""A training search result as the plan's records: layout, step-time and memory breakdowns, the
bound, the option line, an empty (infeasible) plan. Formatting only; nothing here searches."""

from __future__ import annotations

from gpuplan.core.contract import MemoryBreakdown, TrainingBreakdown, TrainingLayout, TrainingOption, TrainingPlan
from gpuplan.training.flops import training_flops
from gpuplan.training.layout import Layout
from gpuplan.training.memory import GIB
from gpuplan.training.search import Evaluation, Target
from gpuplan.training.timing import Job


def search_layout(tl: TrainingLayout) -> Layout:
    """The search's layout for a plan's layout."""
    return Layout(tp=tl.tp, pp=tl.pp, dp=tl.dp, cp=tl.cp, ep=tl.ep, vp=tl.vp, micro_batch=tl.micro_batch,
                  recompute=tl.recompute, sequence_parallel=tl.sequence_parallel, zero=tl.zero,
                  recompute_layers=tl.recompute_layers)


def layout_record(e: Evaluation, batch: int) -> TrainingLayout:
    lay = e.layout
    return TrainingLayout(tp=lay.tp, pp=lay.pp, dp=lay.dp, cp=lay.cp, ep=lay.ep, vp=lay.vp,
                          micro_batch=lay.micro_batch, num_micro_batches=lay.microbatches(batch),
                          global_batch_sequences=batch, recompute=lay.recompute,  # type: ignore[arg-type]
                          sequence_parallel=lay.sequence_parallel, zero=lay.zero,
                          recompute_layers=lay.recompute_layers)


def short_layout(lay: Layout) -> str:
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


def memory_record(e: Evaluation) -> MemoryBreakdown:
    m = e.memory
    return MemoryBreakdown(weights_gib=m.weights / GIB, gradients_gib=m.gradients / GIB,
                           optimizer_gib=m.optimizer / GIB, activations_gib=m.activations / GIB,
                           overhead_gib=m.overhead / GIB, total_gib=m.total / GIB, capacity_gib=m.capacity / GIB,
                           headroom_gib=m.headroom / GIB)


def breakdown_record(e: Evaluation) -> TrainingBreakdown:
    s = e.step
    return TrainingBreakdown(compute_s=s.compute, recompute_s=s.recompute, tp_comm_s=s.tp_comm, pp_comm_s=s.pp_comm,
                             dp_comm_s=s.dp_comm, ep_comm_s=s.ep_comm, cp_comm_s=s.cp_comm, bubble_s=s.bubble,
                             optimizer_s=s.optimizer, step_time_s=s.total,
                             dp_bandwidth_to_hide_gbit_per_gpu=s.dp_gbit_to_hide, host_overhead_s=s.host)


def meets_target(e: Evaluation, target: Target, cost: float | None) -> bool:
    if target.kind == "deadline":
        return e.wall_days <= target.deadline_days + 1e-9  # type: ignore[operator]
    if target.kind == "budget":
        return cost is not None and cost <= target.budget_usd  # type: ignore[operator]
    return True


def empty_plan(precision: str, reasons: list[str], infeasible: list[str] | None = None,
                alternatives: list[TrainingOption] | None = None, job: Job | None = None,
                causal: bool = False) -> TrainingPlan:
    total = training_flops(job.arch, job.tokens, job.seq, causal) if job else 0.0
    return TrainingPlan(
        feasible=False, gpu=None, gpus=0, nodes=0, layout=None, precision=precision, step_time_s=0.0, mfu=0.0,
        hfu=0.0, model_tflops_per_gpu=0.0, tokens_per_s=0.0, total_flops=total, steady_state_days=0.0, goodput=0.0,
        wall_clock_days=0.0, gpu_hours=0.0, breakdown=None, memory=None, bound="infeasible", interconnect=None,
        topology=None, bom=None, capex_usd=None, power_kw=0.0, cloud_usd_per_hour=None, run_cost_usd=None,
        alternatives=alternatives or [], reasons=reasons, infeasible=infeasible or [])
