"""The plan's training phase: layout, step-time and memory breakdowns, roofline, options.
Data only, re-exported by :mod:`gpuplan.core.contract`."""


from typing import Literal

from gpuplan.core.fix_contract import ClosestFix
from gpuplan.core.contract_base import RoofFigure, _Out
from gpuplan.core.records import dataclass, field
from gpuplan.core.contract_fabric import Bom, Interconnect, Topology
from gpuplan.core.cost_contract import Tco


@dataclass(frozen=True, kw_only=True)
class TrainingLayout(_Out):
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    vp: int
    micro_batch: int
    num_micro_batches: int
    global_batch_sequences: int
    recompute: Literal["none", "selective", "full"]
    sequence_parallel: bool
    zero: int
    #: With recompute "full": layers per pipeline stage that are recomputed (0 = all of them).
    recompute_layers: int = 0


@dataclass(frozen=True, kw_only=True)
class TrainingBreakdown(_Out):
    """Seconds per optimizer step; the ``*_comm_s`` are the exposed (not overlapped) parts."""

    compute_s: float
    recompute_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    ep_comm_s: float
    cp_comm_s: float
    bubble_s: float
    optimizer_s: float
    step_time_s: float
    #: Scale-out data rate per GPU that hides the DP gradient sync alone in its overlap window
    #: (0 when the sync stays inside the scale-up domain). What the network needs for all the
    #: scale-out traffic, in line rate, is the interconnect's ``required_gbit_per_gpu``.
    dp_bandwidth_to_hide_gbit_per_gpu: float
    #: Host-side gaps, synchronisation and stragglers between kernels (part of step_time_s).
    host_overhead_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class MemoryBreakdown(_Out):
    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    overhead_gib: float
    total_gib: float
    capacity_gib: float
    headroom_gib: float


@dataclass(frozen=True, kw_only=True)
class TrainingOption(_Out):
    gpu: str
    gpus: int
    nodes: int
    layout: TrainingLayout
    step_time_s: float
    mfu: float
    wall_clock_days: float
    gpu_hours: float
    cost_usd: float | None
    meets_target: bool
    bound: str
    #: True when cost_usd includes the option's own network (fabric, NICs, optics), not servers only.
    network_included: bool = False


@dataclass(frozen=True, kw_only=True)
class TrainingLayoutOption(_Out):
    """A runner-up layout on the recommended GPU, with the terms of its step time."""

    layout: TrainingLayout
    gpus: int
    step_time_s: float
    mfu: float
    wall_clock_days: float
    breakdown: TrainingBreakdown
    memory_headroom_gib: float


@dataclass(frozen=True, kw_only=True)
class RooflinePoint(_Out):
    """One kernel class on a roofline: FLOP per byte of HBM traffic and which side of the ridge."""

    name: str
    flops_per_byte: float
    bound: Literal["compute", "memory"]


@dataclass(frozen=True, kw_only=True)
class TrainingRoofline(_Out):
    """Where the training layout's layer GEMMs sit on the chosen GPU's roofline."""

    peak_tflops: RoofFigure
    mem_bw_tb_per_s: RoofFigure
    ridge_flops_per_byte: RoofFigure
    points: list[RooflinePoint]


@dataclass(frozen=True, kw_only=True)
class TrainingPlan(_Out):
    #: [low, high] of each predicted figure at ``interval_level``, from the validation residuals
    #: of the phase's regime, named by ``interval_basis``; empty without a residual table
    #: (docs/calibration.md). Both phases carry these three first.
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    interval_level: float | None = None
    interval_basis: str | None = None
    feasible: bool
    gpu: str | None
    gpus: int
    nodes: int
    #: GPUs paid for and not used by the plan: the rest of the last whole server (capex) or of the
    #: last cloud instance rented (cloud pricing).
    gpus_idle: int = 0
    layout: TrainingLayout | None
    precision: str
    step_time_s: float
    mfu: float
    hfu: float
    model_tflops_per_gpu: float
    tokens_per_s: float
    total_flops: float
    steady_state_days: float
    goodput: float
    wall_clock_days: float
    gpu_hours: float
    breakdown: TrainingBreakdown | None
    memory: MemoryBreakdown | None
    bound: str
    #: The layer GEMMs against the GPU's ridge point (docs/training-model.md, "Roofline").
    roofline: TrainingRoofline | None = None
    interconnect: Interconnect | None
    topology: Topology | None
    bom: Bom | None
    capex_usd: float | None
    power_kw: float
    cloud_usd_per_hour: float | None
    #: The cost the training target ranks by, not a per-run cost under capex pricing: capex pricing,
    #: the servers' price (servers x server price; no network or facility, unlike ``capex_usd``);
    #: cloud pricing, the run's GPU-hours x the cloud rate. The run's share of ownership is
    #: ``tco.usd_per_training_run``.
    run_cost_usd: float | None
    alternatives: list[TrainingOption]
    reasons: list[str]
    infeasible: list[str]
    #: Infeasible only: the smallest change of one constraint that plans feasibly (core/fix_contract.py).
    closest_fix: ClosestFix | None = None
    #: The next best layouts on the recommended GPU (search order), each with its breakdown.
    layout_alternatives: list[TrainingLayoutOption] = field(default_factory=list)
    tco: Tco | None = None
