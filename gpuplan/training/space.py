"""The training layout space: the candidate values of every axis of one GPU type's search, and
the memory floors that reject a shape before it is searched (training/search.py)."""

from __future__ import annotations

import math
from dataclasses import replace

from gpuplan.core.memo import memo
from gpuplan.training.layout import (
    RECOMPUTE_ORDER,
    Group,
    Layout,
    _divisors,
    divisors,
    layers_per_stage,
)
from gpuplan.training.framework import constrain
from gpuplan.training.memory import GIB
from gpuplan.training.stages import pipeline_depths

from gpuplan.training.evaluator import (
    MICRO_BATCHES,
    MIN_CP_TOKENS,
    ZERO_STAGES,
    Evaluator,
    Fixed,
    Target,
)

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


def pp_candidates(layers: int, fixed: Fixed, every: bool = False, split: str | None = None) -> list[int]:
    """For each number of layers per stage, the smallest PP that gives it (larger PP with the
    same layers per stage only adds bubble and in-flight micro-batches). ``every``: on a fixed GPU
    count a deeper pipeline may be the only one whose DP fits the count, so every depth Megatron-Core
    can split the layers into (uneven first and last stages included, :mod:`.sizing`)."""
    if fixed.pp is not None:
        return [fixed.pp]
    if every or split is not None:  # a named split (job.pipeline_split): the depths it applies to
        return pipeline_depths(layers, split)
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


def recompute_candidates(ev: Evaluator, fixed: Fixed) -> tuple[str, ...]:
    if fixed.recompute is not None:
        return (fixed.recompute,)
    # With FlashAttention the score matrix is never stored: selective recompute saves nothing.
    return _RECOMPUTES_KEPT if ev.attention == "materialized" else _RECOMPUTES_FLASH


_RECOMPUTES_KEPT = RECOMPUTE_ORDER
_RECOMPUTES_FLASH = tuple(r for r in RECOMPUTE_ORDER if r != "selective")


def zero_candidates(fixed: Fixed, pp: int, dp_cp: int) -> list[int]:
    """ZeRO stages a shape is tried at: 1 to 3 without a pipeline, 1 with one (ZeRO-2 with PP is
    ZeRO-1, layout.sharding; ZeRO-3 with PP is not modelled); 0 when nothing shards."""
    if fixed.zero is not None:
        return [fixed.zero]
    if dp_cp == 1:
        return [0]
    return list(ZERO_STAGES) if pp == 1 else [1]


def most_sharded(fixed: Fixed, pp: int) -> int:
    """The largest ZeRO stage :func:`zero_candidates` tries at ``pp`` where something shards (the
    memory bounds' stage)."""
    return zero_candidates(fixed, pp, 2)[-1]


def dp_candidates(ev: Evaluator, fixed: Fixed, target: Target, mp: int, mb: int, ep: int, cp: int,
                  tp: int = 1) -> list[int]:
    """DP values giving integral micro-batch counts, EP | DP x CP (TP x DP x CP with folded
    experts), whole nodes, the power limit."""
    if fixed.dp is not None:
        return [fixed.dp]
    fold = tp if fixed.fold_experts else 1
    exact = target.kind == "gpus"  # the only kind whose DP values differ (_dp_values)
    key = (mp, mb, ep, cp, fold, exact, target.gpus if exact else None, target.power_limit_kw, target.whole_nodes)
    hit = ev._dps.get(key)
    if hit is None:
        if target.power_limit_kw is not None:  # the power limit reads the GPU's server power
            hit = ev._dps[key] = _dp_values(ev, target, mp, mb, ep, cp, fold)
            return hit
        # Else the values read only the batch and the server size: shared by the GPU types.
        common = (ev.job.batch, ev.hw.gpus_per_node, key)
        hit = _DPS.get(common)
        if hit is None:
            if len(_DPS) >= _DPS_MAX:
                _DPS.clear()
            hit = _DPS[common] = _dp_values(ev, target, mp, mb, ep, cp, fold)
        ev._dps[key] = hit
    return hit


#: DP values by batch, server size and the key of :func:`dp_candidates` (no power limit): the
#: same for every GPU type of a server size (a plan searches 20). Bounded: cleared when full.
_DPS: dict[tuple[object, ...], list[int]] = memo()
_DPS_MAX = 65536


def _step(ep: int, share: int, mp: int, gpn: int, whole: bool) -> int:
    """EP | DP x share and (whole nodes) GPN | MP x DP: DP a multiple of both quotients' lcm."""
    return math.lcm(ep // math.gcd(share, ep), gpn // math.gcd(mp, gpn) if whole else 1)


def dp_step(ev: Evaluator, fixed: Fixed, target: Target, mp: int, ep: int, cp: int, tp: int) -> int | None:
    """What :func:`dp_candidates` of a group reads besides the micro-batch, where it reads only
    the batch: its DP values are the divisors of B / micro-batch that are multiples of this
    (:func:`stepped_dps`). None under a fixed DP or count, or a power limit."""
    if fixed.dp is not None or target.kind == "gpus" or target.power_limit_kw is not None:
        return None
    return _step(ep, cp * (tp if fixed.fold_experts else 1), mp, ev.hw.gpus_per_node, target.whole_nodes)


#: :func:`stepped_dps` by (sequences a micro-batch count divides, step): a few dozen a plan.
_STEPPED: dict[tuple[int, int], tuple[list[int], tuple[int, ...]]] = memo()


def stepped_dps(per_mb: int, step: int) -> tuple[list[int], tuple[int, ...]]:
    """The divisors of ``per_mb`` that are multiples of ``step`` (a list and a tuple), memoised."""
    hit = _STEPPED.get((per_mb, step))
    if hit is None:
        if len(_STEPPED) >= 4096:
            _STEPPED.clear()
        values = [d for d in _divisors(per_mb) if not d % step]
        hit = _STEPPED[(per_mb, step)] = (values, tuple(values))
    return hit


def stepped_dps_of(batch: int, mb: int, step: int) -> tuple[list[int], tuple[int, ...]]:
    """:func:`stepped_dps` of a micro-batch of ``mb`` sequences: none unless it divides the batch."""
    return ([], ()) if batch % mb else stepped_dps(batch // mb, step)


def _dp_values(ev: Evaluator, target: Target, mp: int, mb: int, ep: int, cp: int, fold: int = 1) -> list[int]:
    batch = ev.job.batch
    gpn = ev.hw.gpus_per_node
    exact, count = target.kind == "gpus", target.gpus
    whole, limit = target.whole_nodes, target.power_limit_kw
    share = cp * fold
    if not exact and limit is None:
        return stepped_dps_of(batch, mb, _step(ep, share, mp, gpn, whole))[0]
    if batch % mb:
        return []
    gpu = ev.gpu
    out = []
    for d in divisors(batch // mb):
        n = mp * d
        if (d * share) % ep:
            continue
        if exact:
            if n != count:
                continue
        elif whole and n % gpn:
            continue
        if limit is not None and gpu.servers_for(n) * gpu.node_power_kw > limit:
            continue
        out.append(d)
    return out


def states_can_fit(ev: Evaluator, tp: int, pp: int, cp: int, ep: int, fixed: Fixed) -> bool:
    """Whether the part of the model states no DP sharding removes (16-bit weights, and the
    gradients without ZeRO-2) fits at all: a quick memory lower bound."""
    zero = most_sharded(fixed, pp)
    # The bytes no GPU type changes, kept with the job's model-state bytes (Evaluator.states).
    key = ("unsharded", tp, pp, cp, ep, zero)
    memo = ev._states
    need = memo.get(key)
    if need is None:
        # Layout(tp=tp, pp=pp, dp=1 << 20, cp=cp, ep=ep, zero=zero), built positionally (the groups' hot path).
        probe = tuple.__new__(Layout, (tp, pp, 1 << 20, cp, ep, 1, 1, "none", False, zero, 0, False))
        w, g, _ = ev.states(probe)
        need = memo[key] = w + g + ev.cal.runtime_overhead_gib * GIB  # type: ignore[assignment]
    return need <= ev.limit  # type: ignore[operator]


def min_model_parallel(ev: Evaluator, zero: int | None = None) -> int | None:
    """Smallest TP x PP whose model states fit with ZeRO stage ``zero`` at any DP (None: none
    does). ``zero`` left out: the stage the framework runs when it runs one (FSDP: ZeRO-3, whose
    states per GPU are the states / (TP x PP x DP), so any TP x PP fits at a large enough DP),
    else ZeRO-1 (Megatron's distributed optimizer: the 16-bit weights and fp32 gradients stay whole
    on every GPU of a model replica)."""
    fixed = constrain(ev.framework, Fixed())
    if zero is None:
        zero = fixed.zero if fixed.zero is not None else 1
    best, at_zero = None, replace(fixed, zero=zero)
    for tp in tp_candidates(ev, fixed):
        for pp in pp_candidates(ev.job.arch.layers, fixed, split=ev.job.pipeline_split):
            if states_can_fit(ev, tp, pp, 1, 1, at_zero):
                best = tp * pp if best is None else min(best, tp * pp)
                break
    return best


def min_memory_at(ev: Evaluator, gpus: int) -> float:
    """Least per-GPU memory of any layout on exactly ``gpus`` GPUs (full recompute, the
    largest ZeRO stage, micro-batch 1); infinite when no layout matches the count."""
    best = math.inf
    fixed = constrain(ev.framework, Fixed())  # what the framework runs (FSDP: ZeRO-3, no pipeline)
    for tp in tp_candidates(ev, fixed):
        for pp in pp_candidates(ev.job.arch.layers, fixed, every=True, split=ev.job.pipeline_split):
            if gpus % (tp * pp):
                continue
            dp = gpus // (tp * pp)
            sp = fixed.sequence_parallel if fixed.sequence_parallel is not None else tp > 1
            zero = most_sharded(fixed, pp)
            lay = Layout(tp=tp, pp=pp, dp=dp, micro_batch=1, recompute="full", sequence_parallel=sp, zero=zero)
            best = min(best, ev.memory(lay).total)
    return best




def fits_in_domain(ev: Evaluator, fixed: Fixed) -> bool:
    """Whether some layout of the space whose DP x CP group stays inside one scale-up domain may
    fit memory (a lower bound: False proves that none does). On a network without a scale-out tier
    the other layouts have an infinite step (fit._unreachable), so False proves that no search of
    the space finds any plan (planning's "isolated" miss, training/candidates.py).

    A superset of those layouts, each at its least memory: every TP, PP depth, CP and EP, every DP
    that keeps DP x CP inside a domain, VP 1 and micro-batch 1 (interleaving only adds micro-batches
    in flight, memory.in_flight; a micro-batch of ``b`` holds ``min(PP x b, B / DP)`` sequences in
    flight where the space's ``B / (DP x b)`` is whole, never fewer than one of 1), full recompute on
    every layer as well as none and selective (a partial recompute's layers are a mix of the two),
    and the most sharded ZeRO stage (the least memory: fit._fit_once tries it first). Memoised on the Evaluator's shared parts."""
    key = ("fits in a domain", ev.capacity, ev.headroom, fixed)
    hit = ev._searches.get(key)
    if hit is None:
        hit = ev._searches[key] = [_fits_in_domain(ev, constrain(ev.framework, fixed))]  # type: ignore[list-item]
    return hit[0]  # type: ignore[return-value]


def _fits_in_domain(ev: Evaluator, fixed: Fixed) -> bool:
    """:func:`fits_in_domain`. A (TP, PP, DP, CP, EP) one of whose ranks' model states and runtime
    overhead alone exceed the bytes Memory.fits allows fits at no recompute: that rank's total adds
    activations and their fragmentation (>= 0) to the same sum (memory.peak; rounding is monotone),
    and the peak is the largest rank's total."""
    domain, fold = ev.hw.domain, fixed.fold_experts
    rcs = recompute_candidates(ev, fixed)
    runtime, capacity = ev.cal.runtime_overhead_gib * GIB, ev.capacity
    allowed = capacity - (capacity - capacity * (1.0 - ev.headroom))  # capacity - reserve (Evaluator.memory)
    for tp in tp_candidates(ev, fixed):
        sp = fixed.sequence_parallel if fixed.sequence_parallel is not None else tp > 1
        for cp in cp_candidates(ev.job.seq, fixed):
            # DP x CP members TP ranks apart (layout.groups' "dp") inside one domain.
            dps = [d for d in range(1, domain + 1) if not Group(d * cp, tp).crosses(domain)]
            for dp in dps:
                for ep in ep_candidates(ev, fixed):
                    if (dp * cp * (tp if fold else 1)) % ep:  # EP | DP x CP (x TP folded): dp_candidates
                        continue
                    for pp in pp_candidates(ev.job.arch.layers, fixed, every=True, split=ev.job.pipeline_split):
                        zero = zero_candidates(fixed, pp, dp * cp)[-1]
                        probe = tuple.__new__(Layout, (tp, pp, dp, cp, ep, 1, 1, "none", sp, zero, 0, fold))
                        if any(w + g + o + runtime > allowed for w, g, o in ev.stage_states(probe)):
                            continue
                        for rc in rcs:
                            # Layout(tp, pp, dp, cp, ep, vp=1, micro_batch=1, rc, sp, zero, 0, fold), positionally.
                            lay = tuple.__new__(Layout, (tp, pp, dp, cp, ep, 1, 1, rc, sp, zero, 0, fold))
                            if ev.memory(lay).fits:
                                return True
    return False
