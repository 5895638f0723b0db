"""The training Evaluator (one job on one GPU type, with the parts layouts share memoised), what
a search holds fixed, what it optimises, and its outcome. The search itself: training/search.py;
the candidate values of every axis: training/space.py."""

# No ``from __future__ import annotations``: the NamedTuples' field types stay objects (typing
# turns a string annotation into a ForwardRef, compiled at import: ~70k instructions a field).

import math
from gpuplan.core.memo import memo
from gpuplan.core.records import dataclass, field, hash_once
from typing import NamedTuple

from gpuplan.hardware.schema import Gpu
from gpuplan.physics.collectives import Network
from gpuplan.hardware.training_calibration import TrainingCalibration, calibration_view
from gpuplan.training.flops import hardware_flops_per_token, model_flops_per_token
from gpuplan.training.goodput import Goodput, goodput
from gpuplan.training.layout import Layout, folded, recomputed_fraction
from gpuplan.training.memory import GIB, Memory, activation_budget, peak, per_layer_pair, stage_state_bytes
from gpuplan.training.timing import Hardware, Job, LayerCost, StepTime, layer_cost, logits_cost, stage_seconds, step_time

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


class Evaluation(NamedTuple):
    """One layout on one GPU type: time, memory, throughput and the end-to-end figures. A named
    tuple (the layout search builds one per layout it evaluates)."""

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


class _Parts:
    """The memoised parts of an Evaluator: they depend on the job, GPU, network, calibration and
    attention kernel only (not on the target, the headroom or the deadline), so Evaluators of the
    same job and GPU share them: the planner's repeated plans and a sweep over the deadline,
    budget or GPU count reuse every layer cost. The GPU and calibration are keyed by identity and
    held here, so their ids stay theirs while the entry lives. Bounded: cleared when full."""

    _shared: dict[tuple[object, ...], "_Parts"] = memo()
    #: The parts no GPU reads (a layout's model-state and activation bytes: memory.py), shared by
    #: the Evaluators of every GPU type of a job's model, sequence and precision (a plan searches
    #: 20 GPU types; the same layouts' bytes were computed once per type). The calibration is held
    #: (keyed by identity).
    _bytes: dict[tuple[object, ...], tuple[TrainingCalibration, dict, dict]] = memo()
    MAX_ENTRIES = 256

    def __init__(self, gpu: Gpu, cal: TrainingCalibration, job: Job | None = None, attention: str = ""):
        self.gpu, self.cal = gpu, cal
        self.layers: dict[tuple[object, ...], tuple[LayerCost, LayerCost | None]] = {}
        self.stages: dict[tuple[object, ...], float] = {}
        self.good: dict[int, Goodput] = {}
        self.acts: dict[tuple[object, ...], tuple[float, float]] = {}
        self.states: dict[tuple[object, ...], tuple[float, float, float]] = {}
        if job is not None:
            key = (job.arch, job.seq, job.precision, id(cal), attention)
            hit = _Parts._bytes.get(key)
            if hit is None:
                if len(_Parts._bytes) >= _Parts.MAX_ENTRIES:
                    _Parts._bytes.clear()
                hit = _Parts._bytes[key] = (cal, self.acts, self.states)
            self.acts, self.states = hit[1], hit[2]
        self.dps: dict[tuple[object, ...], list[int]] = {}
        self.logits: dict[tuple[object, ...], tuple[float, float]] = {}
        #: The search's deadline-independent work (training/search.py): the bounded groups of a
        #: search space, the best (recompute, ZeRO) of a (shape, DP) and the light stage time of a
        #: shape, keyed by what else they read (memory capacity and headroom, the fixed fields).
        self.groups: dict[tuple[object, ...], object] = {}
        self.fits: dict[tuple[object, ...], object] = {}
        self.light: dict[tuple[object, ...], object] = {}
        #: A group's shapes, one per VP (training/search.py ``_vp_shapes``).
        self.expanded: dict[tuple[object, ...], object] = {}
        #: What the deadline bounds of a space's groups read besides the deadline (bounds.py).
        self.terms: dict[tuple[object, ...], object] = {}
        #: Least seconds of a layer of a (TP, CP, EP, micro-batch) family (groups.layer_floor).
        self.floors: dict[tuple[object, ...], float] = {}
        #: Server capex by GPU count (:meth:`Evaluator.cost`).
        self.capex: dict[int, float | None] = {}
        #: Days of pipeline sends of a (shape, DP) (scan_parts.py ``_send_days``).
        self.sends: dict[tuple[int, ...], float] = {}
        #: Deadline searches with the deadlines each result holds for (training/search.py).
        self.searches: dict[tuple[object, ...], list[tuple[float, float, object]]] = {}

    @classmethod
    def of(cls, job: Job, gpu: Gpu, net: Network, cal: TrainingCalibration, attention: str) -> "_Parts":
        try:
            key = (job, id(gpu), net, id(cal), attention)
            hit = cls._shared.get(key)
        except TypeError:  # an unhashable job or network: no sharing
            return cls(gpu, cal)
        if hit is None:
            if len(cls._shared) >= cls.MAX_ENTRIES:
                cls._shared.clear()
            hit = cls._shared[key] = cls(gpu, cal, job, attention)
        return hit


#: Goodput by calibration identity and GPU count (the calibration held, so its id stays its own).
_GOODPUT: dict[tuple[int, int], tuple[Goodput, TrainingCalibration]] = memo()


class Evaluator:
    """Evaluates layouts of one job on one GPU and network, caching the parts layouts share."""

    def __init__(self, job: Job, gpu: Gpu, net: Network, cal: TrainingCalibration, attention: str | None = None,
                 headroom: float = 0.0):
        cal = calibration_view(cal)  # type: ignore[assignment]  # plain slots: hot reads
        self.job, self.gpu, self.cal = job, gpu, cal
        self.framework = cal.framework(job.framework)
        self.attention = attention or self.framework.attention
        #: Fraction of the usable memory a layout must leave free (``[constraints] memory_headroom``).
        self.headroom = headroom
        self.hw = Hardware.of(gpu, net, job.precision, job.gpu_power_cap_w, cal.power_cap_clock_exponent,
                             cal.hbm_stream_power_fraction)
        self.steps = job.tokens / job.tokens_per_step
        #: Days of the host time every step pays (timing.host_overhead without its straggler share):
        #: a fixed time per step and one per micro-batch, over the run (the search's bounds).
        self.host_days = (self.steps * cal.host_step_s / 86400.0, self.steps * cal.host_microbatch_s / 86400.0)
        self.capacity = gpu.memory_usable_gib * GIB
        #: Dense and MoE layers mixed: a stage's dense layers depend on VP (timing._stage_parts),
        #: so its stage time is memoised per VP; else only VP > 1 changes it (the MoE overlap).
        self._mixed = 0 < job.arch.moe_layers < job.arch.layers
        causal = self.framework.flop_convention == "causal"
        self._model_flops = model_flops_per_token(job.arch, job.seq, causal) * job.tokens_per_step
        parts = _Parts.of(job, gpu, net, cal, self.attention)
        self._layers, self._stages, self._good = parts.layers, parts.stages, parts.good
        self._acts, self._states, self._dps, self._logits = parts.acts, parts.states, parts.dps, parts.logits
        self._groups, self._fits, self._light = parts.groups, parts.fits, parts.light
        self._expanded, self._terms = parts.expanded, parts.terms
        self._searches, self._capex, self._sends, self._floors = parts.searches, parts.capex, parts.sends, parts.floors
        #: This Evaluator's view of its search memos by memory limit and fixed fields (fit._table).
        #: Every attribute is set here, 29 of them: reading ``__dict__`` (as fit._table did) or a
        #: 30th attribute cost a cold recommend 17.6 M and 5 M instructions (callgrind, CPython
        #: 3.11: the search's attribute loads lose their specialisation for an instance's own keys).
        self._memo_tables: dict[tuple[int, int, float, float], tuple[Fixed, dict[object, object]]] = {}

    # -- cached parts ----------------------------------------------------------------------------
    def layers(self, layout: Layout) -> tuple[LayerCost, LayerCost | None]:
        """Per-layer costs (dense, MoE) of the layout's TP, CP, EP, micro-batch, SP, recompute."""
        fold = folded(layout)
        paired = layout.pp > 1 and layout.vp > 1
        key = (layout.tp, layout.cp, layout.ep, layout.micro_batch, layout.sequence_parallel, layout.recompute, fold,
               paired)
        hit = self._layers.get(key)
        if hit is None and not self.job.arch.moe_layers:  # interleaving changes MoE layers only (ep_overlaps)
            hit = self._layers.get((*key[:7], not paired))
            hit = hit if hit is None else self._layers.setdefault(key, hit)
        if hit is None:
            # Layout(tp, pp=1, dp=max(ep, 1), cp, ep, micro_batch, recompute, sequence_parallel,
            # fold_experts=fold), the other fields their defaults, built positionally (hot path).
            probe = tuple.__new__(Layout, (layout.tp, 1, max(layout.ep, 1), layout.cp, layout.ep, 1, layout.micro_batch,
                                           layout.recompute, layout.sequence_parallel, 1, 0, fold))
            dense = layer_cost(self.job, self.hw, self.cal, probe, False, self.attention, paired)
            moe = (layer_cost(self.job, self.hw, self.cal, probe, True, self.attention, paired)
                   if self.job.arch.moe_layers else None)
            hit = self._layers[key] = (dense, moe)
        return hit

    def logits(self, layout: Layout) -> tuple[float, float]:
        # logits_cost reads the micro-batch and CP only through its tokens (as logits_cost forms them).
        key = (layout.micro_batch * self.job.seq / layout.cp, layout.tp, layout.sequence_parallel)
        hit = self._logits.get(key)
        if hit is None:
            hit = self._logits[key] = logits_cost(self.job, self.hw, self.cal, layout)
        return hit

    def stage_time(self, layout: Layout) -> float:
        """Seconds per micro-batch of the slowest stage with the layout's recompute."""
        tp, pp, _, cp, ep, vp, mb, rc, sp, _, rl, fold = layout
        key = (tp, cp, ep, mb, sp, rc, pp, rl, fold, vp if self._mixed else vp > 1)
        hit = self._stages.get(key)
        if hit is None:
            dense, moe = self.layers(layout)
            hit = self._stages[key] = stage_seconds(self.job, self.hw, self.cal, layout, dense, moe,
                                                    self.logits(layout))
        return hit

    def stage_time_any_vp(self, layout: Layout) -> float:
        """A lower bound of the stage seconds over the VP values (the search's bound): with
        PP > 1 an MoE layer costs differently with and without interleaving (the EP all-to-all
        overlap needs it), so the lesser of the two."""
        # stage_time's memo read first, keyed as it keys (VP > 1 or not): no copy on a hit.
        tp, pp, _, cp, ep, _, mb, rc, sp, _, rl, fold = layout
        stages = self._stages
        mixed = self._mixed
        base = stages.get((tp, cp, ep, mb, sp, rc, pp, rl, fold, 1 if mixed else False))
        if base is None:
            base = self.stage_time(tuple.__new__(Layout, (*layout[:5], 1, *layout[6:])))  # layout.but(vp=1)
        if pp == 1 or not self.job.arch.moe_layers:
            return base
        paired = stages.get((tp, cp, ep, mb, sp, rc, pp, rl, fold, 2 if mixed else True))
        if paired is None:
            paired = self.stage_time(tuple.__new__(Layout, (*layout[:5], 2, *layout[6:])))  # layout.but(vp=2)
        return min(base, paired)

    def goodput(self, gpus: int) -> Goodput:
        hit = self._good.get(gpus)
        if hit is None:  # the same for every GPU type of the calibration (_GOODPUT)
            key = (id(self.cal), gpus)
            shared = _GOODPUT.get(key)
            if shared is None:
                if len(_GOODPUT) >= 65536:
                    _GOODPUT.clear()
                shared = _GOODPUT[key] = (goodput(gpus, self.cal), self.cal)
            hit = self._good[gpus] = shared[0]
        return hit

    def cost(self, gpus: int, gpu_hours: float, pricing: str) -> float | None:
        """:func:`cost_usd` on this GPU; the capex (which reads only the count) memoised."""
        if pricing == "cloud":
            return self.hw.cost_usd(gpus, gpu_hours, pricing)
        hit = self._capex.get(gpus, False)
        if hit is False:
            hit = self._capex[gpus] = self.hw.cost_usd(gpus, gpu_hours, pricing)
        return hit  # type: ignore[return-value]

    def activation_pair(self, layout: Layout) -> tuple[float, float]:
        key = (layout.tp, layout.cp, layout.micro_batch, layout.sequence_parallel, layout.recompute)
        hit = self._acts.get(key)
        if hit is None:
            hit = self._acts[key] = per_layer_pair(self.job.arch, self.job.seq, layout, self.attention, self.cal,
                                                   self.job.precision == "fp8")
        return hit

    def stage_states(self, layout: Layout) -> tuple[tuple[float, float, float], ...]:
        """memory.stage_state_bytes: (weights, gradients, optimizer) bytes of each rank it names."""
        key = (layout.tp, layout.pp, layout.ep, layout.dp, layout.cp, layout.zero, layout.fold_experts)
        hit = self._states.get(key)
        if hit is None:
            hit = self._states[key] = stage_state_bytes(self.job.arch, layout, self.cal, self.job.precision,
                                                        self.job.pipeline_split)
        return hit  # type: ignore[return-value]

    def states(self, layout: Layout) -> tuple[float, float, float]:
        return max(self.stage_states(layout), key=sum)  # the rank with the most (memory.model_state_bytes)

    # -- memory and time -------------------------------------------------------------------------
    def memory(self, layout: Layout) -> Memory:
        """Per-GPU memory of the fullest pipeline rank (memory.peak; the memos read first: the hot path)."""
        tp, pp, dp, cp, ep, _, mb, rc, sp, zero, _, fold = layout
        states = self._states.get((tp, pp, ep, dp, cp, zero, fold)) or self.stage_states(layout)
        pair = self._acts.get((tp, cp, mb, sp, rc))
        stored, full = pair if pair is not None else self.activation_pair(layout)
        job, capacity = self.job, self.capacity  # the reserve: capacity - self.limit, inlined
        return peak(job.arch, job.seq, job.batch, layout, self.cal, states, stored, full,  # type: ignore[arg-type]
                    capacity, capacity - capacity * (1.0 - self.headroom), job.pipeline_split)

    @property
    def limit(self) -> float:
        """Bytes a layout may use: the usable memory less the headroom."""
        return self.capacity * (1.0 - self.headroom)

    def activation_budget(self, layout: Layout) -> tuple[float, ...]:
        """Bytes left for activations on each rank after its states and runtime (memory.activation_budget)."""
        return activation_budget(self.stage_states(layout), self.limit, self.cal)

    def evaluate(self, layout: Layout, memory: Memory | None = None) -> Evaluation:
        dense, moe = self.layers(layout)
        step = step_time(self.job, self.hw, self.cal, layout, dense, moe, self.logits(layout))
        frac = recomputed_fraction(layout, self.job.arch.layers) if layout.recompute == "full" else 1.0
        hw_flops = (hardware_flops_per_token(self.job.arch, self.job.seq, layout.recompute, frac)
                    * self.job.tokens_per_step)
        # Evaluation's fields in order: layout, step, memory, model and hardware FLOPs, steps, goodput, peak.
        return tuple.__new__(Evaluation, (layout, step, memory or self.memory(layout), self._model_flops, hw_flops,
                                          self.steps, self.goodput(layout.gpus), self.hw.peak_flops))


@hash_once
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


@hash_once
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
    #: Groups of the searched space: each bounded, or, in a capex deadline search, left behind a
    #: cost floor that never reached the heap's top (training/lazy_scan.py: its bound would not
    #: have been popped).
    bounded: int = 0
    #: Axes thinned to keep the group count within the limit, as "PP 90 -> 23" (empty: none).
    thinned: tuple[str, ...] = ()
    #: The group limit the search ran under (MAX_GROUPS, or a GPU type's share of MAX_TOTAL_GROUPS).
    max_groups: int = MAX_GROUPS


def group_limit(gpu_types: int) -> int:
    """Groups one GPU type's search may bound when a plan searches ``gpu_types`` types."""
    return max(MIN_GROUPS, min(MAX_GROUPS, MAX_TOTAL_GROUPS // max(1, gpu_types)))


