"""Evaluate layouts and search the layout space of one GPU type (branch and bound).

The space: TP (powers of two inside the scale-up domain dividing heads, KV heads and the MLP),
CP (powers of two while each rank keeps >= ``MIN_CP_TOKENS`` tokens of a sequence), EP (powers
of two dividing the experts and DP x CP), PP (for each number of layers per stage, the smallest
PP that gives it), VP (divisors of the layers per stage), micro-batch (powers of two), recompute
(none / selective / full on as few layers as memory needs), ZeRO stage (1, 2, 3; 3 only
without PP) and DP (divisors of the global batch that fill whole nodes).

Nothing better than the result is pruned:

* every (TP, CP, EP, PP, VP, micro-batch) gets a lower bound of its ranking key: the step
  without DP sync, pipeline sends and optimizer, with the least recompute memory allows at the
  largest DP, the bubble, the host share and the goodput of its GPU count; shapes are visited
  in bound order and the search stops once a bound exceeds the best key found;
* recompute and ZeRO are tried from the cheapest; a costlier one only when memory demands;
* a (TP, PP, CP, EP) whose 16-bit weights and gradients alone exceed memory is skipped, and
  so are larger micro-batches once one does not fit at the most sharding and recompute.

Iteration is over sorted lists and ties break on the layout tuple: results are deterministic.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field
from typing import NamedTuple

from gpuplan.hardware.schema import Gpu
from gpuplan.physics.collectives import Network
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.training.framework import constrain
from gpuplan.training.flops import hardware_flops_per_token, model_flops_per_token
from gpuplan.training.goodput import Goodput, goodput
from gpuplan.training.layout import (
    RECOMPUTE_ORDER,
    Layout,
    check,
    divisors,
    folded,
    layers_per_stage,
    recomputed_fraction,
)
from gpuplan.training.memory import (
    GIB,
    Memory,
    activation_total,
    model_state_bytes,
    per_layer_pair,
    recompute_layers_to_fit,
)
from gpuplan.training.stages import pipeline_depths
from gpuplan.training.timing import (
    Hardware,
    Job,
    LayerCost,
    StepTime,
    layer_cost,
    logits_cost,
    stage_seconds,
    step_time,
)

#: CP is searched only while each rank keeps at least this many tokens of a sequence
#: (Llama 3 used CP only for its 128k-token stage; below 4k tokens per rank ring attention
#: cannot hide its K/V exchange behind the attention kernel).
MIN_CP_TOKENS = 4096
#: Most (TP, CP, EP, PP, micro-batch) groups one GPU type's search bounds (bounded work, issue 7).
#: Real models stay far below it (Llama 3.1 405B: ~800; DeepSeek-V3 at a 1e10-token batch:
#: ~9,300); a larger space is thinned evenly along its longest axis and the plan says so.
MAX_GROUPS = 20_000
#: Most groups one training plan bounds over all its GPU types together (bounded work, issue 14):
#: the shipped catalog's 20 types get MAX_GROUPS each, and each of the 100 types a full overlay
#: allows gets 4,000, so the worst valid input costs what it costs on the shipped catalog.
MAX_TOTAL_GROUPS = 400_000
#: The smallest per-type share of MAX_TOTAL_GROUPS.
MIN_GROUPS = 1_000
MICRO_BATCHES = (1, 2, 4, 8, 16)
ZERO_STAGES = (1, 2, 3)
HOURS_PER_DAY = 24.0
#: Evaluations spent finding the fastest (or cheapest) plan for a "misses the target" message.
MAX_RELAXED_EVALUATIONS = 64


@dataclass(frozen=True)
class Evaluation:
    """One layout on one GPU type: time, memory, throughput and the end-to-end figures."""

    layout: Layout
    step: StepTime
    memory: Memory
    model_flops_per_step: float
    hardware_flops_per_step: float
    steps: float
    good: Goodput
    peak_flops: float

    @property
    def gpus(self) -> int:
        return self.layout.gpus

    @property
    def step_time(self) -> float:
        return self.step.total

    @property
    def model_tflops_per_gpu(self) -> float:
        return self.model_flops_per_step / (self.gpus * self.step_time) / 1e12

    @property
    def hardware_tflops_per_gpu(self) -> float:
        return self.hardware_flops_per_step / (self.gpus * self.step_time) / 1e12

    @property
    def mfu(self) -> float:
        return self.model_tflops_per_gpu * 1e12 / self.peak_flops

    @property
    def hfu(self) -> float:
        return self.hardware_tflops_per_gpu * 1e12 / self.peak_flops

    @property
    def steady_days(self) -> float:
        return self.steps * self.step_time / 86400.0

    @property
    def wall_days(self) -> float:
        return self.steady_days / self.good.fraction

    @property
    def gpu_hours(self) -> float:
        return self.wall_days * HOURS_PER_DAY * self.gpus


class Evaluator:
    """Evaluates layouts of one job on one GPU and network, caching the parts layouts share."""

    def __init__(self, job: Job, gpu: Gpu, net: Network, cal: TrainingCalibration, attention: str | None = None,
                 headroom: float = 0.0):
        self.job, self.gpu, self.cal = job, gpu, cal
        self.framework = cal.framework(job.framework)
        self.attention = attention or self.framework.attention
        #: Fraction of the usable memory a layout must leave free (``[constraints] memory_headroom``).
        self.headroom = headroom
        self.hw = Hardware.of(gpu, net, job.precision)
        self.steps = job.tokens / job.tokens_per_step
        self.capacity = gpu.memory_usable_gib * GIB
        causal = self.framework.flop_convention == "causal"
        self._model_flops = model_flops_per_token(job.arch, job.seq, causal) * job.tokens_per_step
        self._layers: dict[tuple[object, ...], tuple[LayerCost, LayerCost | None]] = {}
        self._stages: dict[tuple[object, ...], float] = {}
        self._good: dict[int, Goodput] = {}
        self._acts: dict[tuple[object, ...], tuple[float, float]] = {}
        self._states: dict[tuple[object, ...], tuple[float, float, float]] = {}
        self._dps: dict[tuple[object, ...], list[int]] = {}
        self._logits: dict[tuple[object, ...], tuple[float, float]] = {}

    # -- cached parts ----------------------------------------------------------------------------
    def layers(self, layout: Layout) -> tuple[LayerCost, LayerCost | None]:
        """Per-layer costs (dense, MoE) of the layout's TP, CP, EP, micro-batch, SP, recompute."""
        fold = folded(layout)
        key = (layout.tp, layout.cp, layout.ep, layout.micro_batch, layout.sequence_parallel, layout.recompute, fold)
        hit = self._layers.get(key)
        if hit is None:
            probe = Layout(tp=layout.tp, pp=1, dp=max(layout.ep, 1), cp=layout.cp, ep=layout.ep, fold_experts=fold,
                           micro_batch=layout.micro_batch, recompute=layout.recompute,
                           sequence_parallel=layout.sequence_parallel)
            dense = layer_cost(self.job, self.hw, self.cal, probe, False, self.attention)
            moe = (layer_cost(self.job, self.hw, self.cal, probe, True, self.attention)
                   if self.job.arch.moe_layers else None)
            hit = self._layers[key] = (dense, moe)
        return hit

    def logits(self, layout: Layout) -> tuple[float, float]:
        key = (layout.tp, layout.cp, layout.micro_batch, layout.sequence_parallel)
        hit = self._logits.get(key)
        if hit is None:
            hit = self._logits[key] = logits_cost(self.job, self.hw, self.cal, layout)
        return hit

    def stage_time(self, layout: Layout) -> float:
        """Seconds per micro-batch of the slowest stage with the layout's recompute."""
        key = (layout.tp, layout.cp, layout.ep, layout.micro_batch, layout.sequence_parallel, layout.recompute,
               layout.pp, layout.recompute_layers, layout.fold_experts)
        hit = self._stages.get(key)
        if hit is None:
            dense, moe = self.layers(layout)
            hit = self._stages[key] = stage_seconds(self.job, self.hw, self.cal, layout, dense, moe,
                                                    self.logits(layout))
        return hit

    def goodput(self, gpus: int) -> Goodput:
        hit = self._good.get(gpus)
        if hit is None:
            hit = self._good[gpus] = goodput(gpus, self.cal)
        return hit

    def activation_pair(self, layout: Layout) -> tuple[float, float]:
        key = (layout.tp, layout.cp, layout.micro_batch, layout.sequence_parallel, layout.recompute)
        hit = self._acts.get(key)
        if hit is None:
            hit = self._acts[key] = per_layer_pair(self.job.arch, self.job.seq, layout, self.attention, self.cal,
                                                   self.job.precision == "fp8")
        return hit

    def states(self, layout: Layout) -> tuple[float, float, float]:
        key = (layout.tp, layout.pp, layout.ep, layout.dp, layout.cp, layout.zero, layout.fold_experts)
        hit = self._states.get(key)
        if hit is None:
            hit = self._states[key] = model_state_bytes(self.job.arch, layout, self.cal, self.job.precision)
        return hit

    # -- memory and time -------------------------------------------------------------------------
    def memory(self, layout: Layout) -> Memory:
        """Per-GPU memory (memory.estimate, from cached parts)."""
        weights, grads, optim = self.states(layout)
        stored, full = self.activation_pair(layout)
        acts = activation_total(self.job.arch, self.job.seq, self.job.batch, layout, self.cal, stored, full)
        overhead = self.cal.runtime_overhead_gib * GIB + self.cal.fragmentation_fraction * acts
        return Memory(weights=weights, gradients=grads, optimizer=optim, activations=acts, overhead=overhead,
                      capacity=self.capacity, reserve=self.capacity - self.limit)

    @property
    def limit(self) -> float:
        """Bytes a layout may use: the usable memory less the headroom."""
        return self.capacity * (1.0 - self.headroom)

    def activation_budget(self, layout: Layout) -> float:
        """Bytes left for activations after states and runtime overhead (memory.activation_budget)."""
        free = self.limit - sum(self.states(layout)) - self.cal.runtime_overhead_gib * GIB
        return free / (1.0 + self.cal.fragmentation_fraction)

    def evaluate(self, layout: Layout, memory: Memory | None = None) -> Evaluation:
        dense, moe = self.layers(layout)
        step = step_time(self.job, self.hw, self.cal, layout, dense, moe, self.logits(layout))
        frac = recomputed_fraction(layout, self.job.arch.layers) if layout.recompute == "full" else 1.0
        hw_flops = (hardware_flops_per_token(self.job.arch, self.job.seq, layout.recompute, frac)
                    * self.job.tokens_per_step)
        return Evaluation(layout=layout, step=step, memory=memory or self.memory(layout),
                          model_flops_per_step=self._model_flops, hardware_flops_per_step=hw_flops,
                          steps=self.steps, good=self.goodput(layout.gpus), peak_flops=self.hw.peak_flops)


@dataclass(frozen=True)
class Fixed:
    """Layout fields given by the user or a validation case (None = search it)."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    cp: int | None = None
    ep: int | None = None
    vp: int | None = None
    micro_batch: int | None = None
    recompute: str | None = None
    sequence_parallel: bool | None = None
    zero: int | None = None
    #: Expert layers folded onto the TP ranks (layout.folded): only when a run's EP needs it.
    fold_experts: bool = False


@dataclass(frozen=True)
class Target:
    """What to optimise: ``gpus`` (fastest at this count), ``deadline`` (cheapest count and
    layout meeting ``deadline_days``), ``budget`` (fastest whose cost fits ``budget_usd``) or
    ``fastest`` (fastest at any count and cost)."""

    kind: str
    gpus: int | None = None
    deadline_days: float | None = None
    budget_usd: float | None = None
    pricing: str = "capex"
    power_limit_kw: float | None = None
    #: Planner-chosen counts are whole nodes (multiples of gpus_per_node).
    whole_nodes: bool = True


def cost_usd(gpu: Gpu, gpus: int, gpu_hours: float, pricing: str) -> float | None:
    """Capex: servers bought x server price; cloud: GPU-hours x the hourly rate. None when unpriced."""
    if pricing == "cloud":
        return gpu_hours * gpu.cloud_usd_per_gpu_hour if gpu.cloud_usd_per_gpu_hour else None
    return gpu.servers_for(gpus) * gpu.node_price_usd if gpu.node_price_usd else None


@dataclass
class SearchOutcome:
    """Best evaluations (sorted, best first) and why nothing better was possible."""

    best: list[Evaluation] = field(default_factory=list)
    #: Lowest per-GPU memory any layout needed (bytes) when nothing fit.
    min_memory: float = math.inf
    min_memory_layout: Layout | None = None
    #: Fastest evaluation seen (for "needs N GPUs" / "takes X days" messages).
    fastest: Evaluation | None = None
    evaluated: int = 0
    bounded: int = 0
    #: Axes thinned to keep the group count within the limit, as "PP 90 -> 23" (empty: none).
    thinned: tuple[str, ...] = ()
    #: The group limit the search ran under (MAX_GROUPS, or a GPU type's share of MAX_TOTAL_GROUPS).
    max_groups: int = MAX_GROUPS


def group_limit(gpu_types: int) -> int:
    """Groups one GPU type's search may bound when a plan searches ``gpu_types`` types."""
    return max(MIN_GROUPS, min(MAX_GROUPS, MAX_TOTAL_GROUPS // max(1, gpu_types)))


# -- candidate values ------------------------------------------------------------------------------
def _powers_of_two(limit: int) -> list[int]:
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return out


def tp_candidates(ev: Evaluator, fixed: Fixed) -> list[int]:
    if fixed.tp is not None:
        return [fixed.tp]
    arch = ev.job.arch
    out = []
    for t in _powers_of_two(min(ev.hw.domain, arch.heads)):
        if arch.heads % t or arch.ffn % t or (arch.kv_heads % t and not arch.is_mla):
            continue
        if arch.is_moe and arch.expert_ffn % t:
            continue
        out.append(t)
    return out or [1]


def pp_candidates(layers: int, fixed: Fixed, every: bool = False) -> list[int]:
    """For each number of layers per stage, the smallest PP that gives it (larger PP with the
    same layers per stage only adds bubble and in-flight micro-batches). ``every``: on a fixed GPU
    count a deeper pipeline may be the only one whose DP fits the count, so every depth Megatron-Core
    can split the layers into (uneven first and last stages included, :mod:`.sizing`)."""
    if fixed.pp is not None:
        return [fixed.pp]
    if every:
        return pipeline_depths(layers)
    out, p = [], 1
    while p <= layers:
        out.append(p)
        k = layers_per_stage(layers, p)
        if k == 1:
            break
        p = -(-layers // (k - 1))  # the smallest PP with fewer layers per stage
    return out


def cp_candidates(seq: int, fixed: Fixed) -> list[int]:
    if fixed.cp is not None:
        return [fixed.cp]
    return [c for c in _powers_of_two(max(1, seq // MIN_CP_TOKENS)) if c == 1 or seq % (2 * c) == 0]


def ep_candidates(ev: Evaluator, fixed: Fixed) -> list[int]:
    if fixed.ep is not None:
        return [fixed.ep]
    arch = ev.job.arch
    if not arch.is_moe:
        return [1]
    return [e for e in _powers_of_two(arch.experts) if arch.experts % e == 0]


def vp_candidates(layers: int, pp: int, fixed: Fixed) -> list[int]:
    if fixed.vp is not None:
        return [fixed.vp]
    if pp == 1:
        return [1]
    return divisors(layers_per_stage(layers, pp))


def mb_candidates(fixed: Fixed, batch: int) -> list[int]:
    if fixed.micro_batch is not None:
        return [fixed.micro_batch]
    return [b for b in MICRO_BATCHES if batch % b == 0]


def recompute_candidates(ev: Evaluator, fixed: Fixed) -> list[str]:
    if fixed.recompute is not None:
        return [fixed.recompute]
    # With FlashAttention the score matrix is never stored: selective recompute saves nothing.
    return [r for r in RECOMPUTE_ORDER if not (r == "selective" and ev.attention == "flash")]


def zero_candidates(fixed: Fixed, pp: int, dp_cp: int) -> list[int]:
    if fixed.zero is not None:
        return [fixed.zero]
    if dp_cp == 1:
        return [0]
    return [z for z in ZERO_STAGES if z < 3 or pp == 1]


def dp_candidates(ev: Evaluator, fixed: Fixed, target: Target, mp: int, mb: int, ep: int, cp: int,
                  tp: int = 1) -> list[int]:
    """DP values giving integral micro-batch counts, EP | DP x CP (TP x DP x CP with folded
    experts), whole nodes, the power limit."""
    if fixed.dp is not None:
        return [fixed.dp]
    fold = tp if fixed.fold_experts else 1
    key = (mp, mb, ep, cp, fold, target.kind, target.gpus, target.power_limit_kw, target.whole_nodes)
    hit = ev._dps.get(key)
    if hit is None:
        hit = ev._dps[key] = _dp_values(ev, target, mp, mb, ep, cp, fold)
    return hit


def _dp_values(ev: Evaluator, target: Target, mp: int, mb: int, ep: int, cp: int, fold: int = 1) -> list[int]:
    if ev.job.batch % mb:
        return []
    gpn = ev.gpu.gpus_per_node
    out = []
    for d in divisors(ev.job.batch // mb):
        n = mp * d
        if (d * cp * fold) % ep:
            continue
        if target.kind == "gpus":
            if n != target.gpus:
                continue
        elif target.whole_nodes and n % gpn:
            continue
        if target.power_limit_kw is not None and ev.gpu.servers_for(n) * ev.gpu.node_power_kw > target.power_limit_kw:
            continue
        out.append(d)
    return out


def states_can_fit(ev: Evaluator, tp: int, pp: int, cp: int, ep: int, fixed: Fixed) -> bool:
    """Whether the part of the model states no DP sharding removes (16-bit weights, and the
    gradients without ZeRO-2) fits at all: a quick memory lower bound."""
    zero = fixed.zero if fixed.zero is not None else (3 if pp == 1 else 2)
    probe = Layout(tp=tp, pp=pp, dp=1 << 20, cp=cp, ep=ep, zero=zero)
    w, g, _ = ev.states(probe)
    return w + g + ev.cal.runtime_overhead_gib * GIB <= ev.limit


def min_model_parallel(ev: Evaluator, zero: int = 1) -> int | None:
    """Smallest TP x PP whose model states fit with ZeRO stage ``zero`` at any DP (None: none
    does). With ZeRO-1 (Megatron's distributed optimizer) the 16-bit weights and fp32
    gradients stay whole on every GPU of a model replica."""
    best = None
    for tp in tp_candidates(ev, Fixed()):
        for pp in pp_candidates(ev.job.arch.layers, Fixed()):
            if states_can_fit(ev, tp, pp, 1, 1, Fixed(zero=zero)):
                best = tp * pp if best is None else min(best, tp * pp)
                break
    return best


def min_memory_at(ev: Evaluator, gpus: int) -> float:
    """Least per-GPU memory of any layout on exactly ``gpus`` GPUs (full recompute, the
    largest ZeRO stage, micro-batch 1); infinite when no layout matches the count."""
    best = math.inf
    for tp in tp_candidates(ev, Fixed()):
        for pp in pp_candidates(ev.job.arch.layers, Fixed(), every=True):
            if gpus % (tp * pp):
                continue
            dp = gpus // (tp * pp)
            lay = Layout(tp=tp, pp=pp, dp=dp, micro_batch=1, recompute="full", sequence_parallel=tp > 1,
                         zero=3 if pp == 1 else 2)
            best = min(best, ev.memory(lay).total)
    return best


# -- evaluation of one (shape, DP) -------------------------------------------------------------------
def _best_fit(ev: Evaluator, base: Layout, fixed: Fixed, outcome: SearchOutcome) -> Evaluation | None:
    """The fastest (recompute, ZeRO) of ``base`` that fits memory. For each recompute setting,
    least first, the smallest ZeRO stage that fits; more recompute is tried only while the last one
    needed more than the smallest ZeRO stage (it may fit with less sharding: ZeRO-2/3 add a
    reduce-scatter or all-gather per micro-batch, which can cost more than recomputing layers)."""
    zeros = zero_candidates(fixed, base.pp, base.dp * base.cp)
    rcs = recompute_candidates(ev, fixed)
    if check(base.but(recompute=rcs[0], zero=zeros[0]), ev.job.arch, ev.job.seq, ev.job.batch, ev.hw.domain):
        return None
    partial = fixed.recompute is None

    def fit(rc: str, zero: int) -> tuple[Layout, Memory]:
        lay = base.but(recompute=rc, zero=zero, recompute_layers=0)
        if rc == "full" and partial:
            lay = _partial(ev, lay)
        return lay, ev.memory(lay)

    best: Evaluation | None = None
    for rc in rcs:
        lay, mem = fit(rc, zeros[-1])
        if not mem.fits:
            # The most sharded stage does not fit: no smaller one will.
            if mem.total < outcome.min_memory:
                outcome.min_memory, outcome.min_memory_layout = mem.total, lay
            continue
        for zc in zeros[:-1]:
            # The cheapest stage that also fits has the least traffic.
            cheaper, m2 = fit(rc, zc)
            if m2.fits:
                lay, mem = cheaper, m2
                break
        e = ev.evaluate(lay, mem)
        outcome.evaluated += 1
        if math.isfinite(e.step_time) and (best is None or (e.step_time, e.layout) < (best.step_time, best.layout)):
            best = e
        if lay.zero == zeros[0]:
            break  # the least sharding already: more recompute would only add compute
    return best


def _partial(ev: Evaluator, lay: Layout) -> Layout:
    """Recompute only as many layers per stage as memory needs (Megatron --recompute-num-layers)."""
    arch = ev.job.arch
    k = recompute_layers_to_fit(arch, ev.job.seq, ev.job.batch, lay, ev.attention, ev.cal,
                                ev.activation_budget(lay), pair=ev.activation_pair(lay))
    if k is None or k >= layers_per_stage(arch.layers, lay.pp):
        return lay
    return lay.but(recompute_layers=k)


# -- lower bounds ------------------------------------------------------------------------------------
def _rank_key(e: Evaluation, target: Target, gpu: Gpu) -> tuple[float, float, Layout]:
    """Ranking of evaluations of one GPU type: lower is better."""
    if target.kind == "deadline":
        cost = cost_usd(gpu, e.gpus, e.gpu_hours, target.pricing)
        return (cost if cost is not None else e.gpu_hours, e.wall_days, e.layout)
    if target.kind in ("budget", "fastest"):
        return (e.wall_days, 0.0, e.layout)
    return (e.step_time, 0.0, e.layout)


#: Stages of a heap entry: a (TP, CP, EP, PP, micro-batch) group bounded at its largest VP
#: (the smallest bubble), one VP, and one VP with the recompute its memory needs.
GROUP, SHAPE, REFINED = 0, 1, 2


class _Bounded(NamedTuple):
    """A shape (or group of shapes) with the lower bound of its ranking key and the DP values
    worth evaluating."""

    key: tuple[float, float]
    shape: Layout
    dps: tuple[int, ...]
    level: int


def _light_stage(ev: Evaluator, shape: Layout, dp: int, fixed: Fixed, outcome: SearchOutcome) -> float | None:
    """Stage seconds with the least recompute that can fit at ``dp`` with the largest ZeRO
    stage (None: nothing fits, and ``outcome`` keeps the least memory seen); a lower bound of the
    stage time at any DP <= ``dp``."""
    zero = fixed.zero if fixed.zero is not None else (3 if shape.pp == 1 else 2)
    for rc in recompute_candidates(ev, fixed):
        lay = shape.but(dp=dp, recompute=rc, zero=zero)
        if rc == "full" and fixed.recompute is None:
            lay = _partial(ev, lay)
        mem = ev.memory(lay)
        if mem.fits:
            return ev.stage_time(lay)
        if mem.total < outcome.min_memory:
            outcome.min_memory, outcome.min_memory_layout = mem.total, lay
    return None


class _Scale(NamedTuple):
    """What the bound of one (TP, CP, EP, PP, micro-batch) needs, shared by its VP values."""

    stage: float          # seconds per micro-batch on the slowest stage (bound), incl. host share
    dps: list[int]
    mp: int


def thin_axes(axes: dict[str, list[int]], limit: int) -> tuple[dict[str, list[int]], tuple[str, ...]]:
    """Keep the product of the axis lengths within ``limit``: halve the longest axis (every other
    value, both ends kept) until it fits. Deterministic; returns the axes and what was thinned."""
    out = {k: list(v) for k, v in axes.items()}
    before = {k: len(v) for k, v in axes.items()}
    while math.prod(len(v) for v in out.values()) > limit:
        name = max(out, key=lambda k: (len(out[k]), k))
        values = out[name]
        if len(values) <= 2:
            break
        out[name] = values[::2] if values[-1] in values[::2] else values[::2] + [values[-1]]
    notes = tuple(f"{k.upper()} {before[k]} -> {len(out[k])} values" for k in axes if len(out[k]) < before[k])
    return out, notes


def _bounds(ev: Evaluator, fixed: Fixed, target: Target, outcome: SearchOutcome) -> list[_Bounded]:
    """Every (TP, CP, EP, PP, micro-batch) group with a first bound of its key (no recompute,
    the largest VP); groups whose bound already misses the target are left out. At most
    ``MAX_GROUPS`` groups (:func:`thin_axes`)."""
    arch, job = ev.job.arch, ev.job
    busy = ev.cal.kernel_busy_fraction
    bounded: list[_Bounded] = []
    pps = pp_candidates(arch.layers, fixed, every=target.kind == "gpus")
    axes, outcome.thinned = thin_axes({"tp": tp_candidates(ev, fixed), "cp": cp_candidates(job.seq, fixed),
                                       "ep": ep_candidates(ev, fixed), "pp": pps,
                                       "mb": mb_candidates(fixed, job.batch)}, outcome.max_groups)
    for tp in axes["tp"]:
        sp = fixed.sequence_parallel if fixed.sequence_parallel is not None else tp > 1
        for cp in axes["cp"]:
            for ep in axes["ep"]:
                for pp in axes["pp"]:
                    if not states_can_fit(ev, tp, pp, cp, ep, fixed):
                        continue
                    mp = tp * pp * cp
                    for mb in axes["mb"]:
                        dps = dp_candidates(ev, fixed, target, mp, mb, ep, cp, tp)
                        if not dps:
                            continue
                        base = Layout(tp=tp, pp=pp, dp=1, cp=cp, ep=ep, micro_batch=mb, sequence_parallel=sp,
                                      recompute=fixed.recompute or "none", fold_experts=fixed.fold_experts)
                        scale = _Scale(ev.stage_time(base) / busy, dps, mp)
                        vps = vp_candidates(arch.layers, pp, fixed)
                        b = _bound_shape(ev, base._replace(vp=vps[-1]), scale, target, GROUP)
                        outcome.bounded += 1
                        if b is not None:
                            bounded.append(b)
    return bounded


def _expand(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target) -> list[_Bounded]:
    """The VP values of a group, each with its own bound."""
    shape = b.shape
    base = shape._replace(vp=1)
    mp = shape.tp * shape.pp * shape.cp
    dps = dp_candidates(ev, fixed, target, mp, shape.micro_batch, shape.ep, shape.cp, shape.tp)
    scale = _Scale(ev.stage_time(base) / ev.cal.kernel_busy_fraction, dps, mp)
    out = []
    for vp in vp_candidates(ev.job.arch.layers, shape.pp, fixed):
        one = _bound_shape(ev, base._replace(vp=vp), scale, target, SHAPE)
        if one is not None:
            out.append(one)
    return out


def _bound_shape(ev: Evaluator, shape: Layout, scale: _Scale, target: Target, level: int) -> _Bounded | None:
    """Bound of one shape's ranking key over its DP values (see the module docstring).

    Deadline: (cost, days) at the smallest DP whose bound meets the deadline (a larger DP only
    costs more). Budget: (days, 0) at the largest DP whose bound cost fits. GPU count: (step
    seconds, 0). None when the bound already misses the target.
    """
    batch, mb = ev.job.batch, shape.micro_batch
    bubble = (shape.pp - 1) / shape.vp
    stage, dps, mp = scale
    per_day = ev.steps * stage / 86400.0

    def days(d: int) -> float:
        return per_day * (batch / (d * mb) + bubble) / ev.goodput(mp * d).fraction

    if target.kind == "gpus":
        d = dps[0]
        return _Bounded(((batch / (d * mb) + bubble) * stage, 0.0), shape, (d,), level)
    if target.kind == "deadline":
        deadline = target.deadline_days
        # Smallest DP that can meet the deadline with the best goodput of these counts: a DP
        # below it cannot (goodput only falls with the GPU count), so the scan starts there.
        g = ev.goodput(mp * dps[0]).fraction
        room = deadline * g / per_day - bubble  # type: ignore[operator]
        if room <= 0:
            return None
        i = bisect.bisect_left(dps, batch / (mb * room) * (1 - 1e-12))
        while i < len(dps) and days(dps[i]) > deadline:  # type: ignore[operator]
            i += 1
        if i == len(dps):
            return None
        d = dps[i]
        t = days(d)
        n = mp * d
        cost = cost_usd(ev.gpu, n, t * HOURS_PER_DAY * n, target.pricing)
        return _Bounded((cost if cost is not None else t * HOURS_PER_DAY * n, t), shape, tuple(dps[i:]), level)
    if target.kind == "fastest":
        return _Bounded((days(dps[-1]), 0.0), shape, tuple(reversed(dps)), level)
    fits = [d for d in dps
            if (cost_usd(ev.gpu, mp * d, days(d) * HOURS_PER_DAY * mp * d, target.pricing) or math.inf)
            <= target.budget_usd]  # type: ignore[operator]
    if not fits:
        return None
    return _Bounded((days(fits[-1]), 0.0), shape, tuple(reversed(fits)), level)


def _refine(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target, outcome: SearchOutcome) -> _Bounded | None:
    """The bound again with the least recompute that fits at the shape's largest DP."""
    shape = b.shape
    descending = target.kind in ("budget", "fastest")
    stage = _light_stage(ev, shape, b.dps[0] if descending else b.dps[-1], fixed, outcome)
    if stage is None:
        return None
    scale = _Scale(stage / ev.cal.kernel_busy_fraction, sorted(b.dps) if descending else list(b.dps),
                   shape.tp * shape.pp * shape.cp)
    return _bound_shape(ev, shape, scale, target, REFINED)


# -- the search --------------------------------------------------------------------------------------
def search(ev: Evaluator, fixed: Fixed, target: Target, top: int = 1, relax: bool = True,
           limit: int | None = None, max_groups: int = MAX_GROUPS) -> SearchOutcome:
    """Branch and bound over the layout space of one GPU type for ``target``; keeps ``top``.

    Groups of shapes wait in a heap ordered by their bound; a group reaching the top is split
    into its VP values, a shape reaching the top has its bound refined for the recompute its
    memory needs, and is evaluated only if it is still the most promising. The search stops
    when the best bound left exceeds the ``top``-th key found.
    """
    outcome = SearchOutcome(max_groups=max_groups)
    fixed = constrain(ev.framework, fixed)
    heap = _bounds(ev, fixed, target, outcome)
    heapq.heapify(heap)
    pool: list[Evaluation] = []
    worst: tuple[float, float] = (math.inf, math.inf)
    while heap:
        b = heapq.heappop(heap)
        if b.key > worst or (limit is not None and outcome.evaluated >= limit):
            break
        if b.level == GROUP:
            for one in _expand(ev, b, fixed, target):
                heapq.heappush(heap, one)
            continue
        if b.level == SHAPE:
            r = _refine(ev, b, fixed, target, outcome)
            if r is None:
                continue
            if heap and r.key > heap[0].key:
                heapq.heappush(heap, r)
                continue
            b = r
            if b.key > worst:
                continue
        chosen = _evaluate_shape(ev, b, fixed, target, outcome)
        if chosen is None:
            continue
        pool.append(chosen)
        pool.sort(key=lambda e: _rank_key(e, target, ev.gpu))
        del pool[top:]
        if len(pool) == top:
            k = _rank_key(pool[-1], target, ev.gpu)
            worst = (k[0], k[1])
    outcome.best = pool
    if not pool and relax and target.kind in ("deadline", "budget"):
        # Nothing meets the target: the fastest plan at any cost (for a missed deadline) or the
        # cheapest at any speed (for a missed budget) says by how much. Only for the message,
        # so the effort is capped (MAX_RELAXED_EVALUATIONS): the fastest found, not proven.
        relaxed = (Target(kind="fastest", pricing=target.pricing, power_limit_kw=target.power_limit_kw,
                          whole_nodes=target.whole_nodes)
                   if target.kind == "deadline" else
                   Target(kind="deadline", deadline_days=math.inf, pricing=target.pricing,
                          power_limit_kw=target.power_limit_kw, whole_nodes=target.whole_nodes))
        near = search(ev, fixed, relaxed, top=1, relax=False, limit=MAX_RELAXED_EVALUATIONS, max_groups=max_groups)
        outcome.fastest = near.best[0] if near.best else None
        outcome.evaluated += near.evaluated
        outcome.bounded += near.bounded
        if near.min_memory < outcome.min_memory:
            outcome.min_memory, outcome.min_memory_layout = near.min_memory, near.min_memory_layout
    return outcome


def _evaluate_shape(ev: Evaluator, b: _Bounded, fixed: Fixed, target: Target,
                    outcome: SearchOutcome) -> Evaluation | None:
    """The best DP of one shape for the target (DP values in the order the bound gives)."""
    for d in b.dps:
        e = _best_fit(ev, b.shape.but(dp=d), fixed, outcome)
        if e is None:
            continue
        if outcome.fastest is None or (e.wall_days, e.layout) < (outcome.fastest.wall_days, outcome.fastest.layout):
            outcome.fastest = e
        if target.kind == "deadline":
            if e.wall_days <= target.deadline_days:  # type: ignore[operator]
                return e
            continue
        if target.kind == "budget":
            cost = cost_usd(ev.gpu, e.gpus, e.gpu_hours, target.pricing)
            if cost is not None and cost <= target.budget_usd:  # type: ignore[operator]
                return e
            continue
        return e
    return None


