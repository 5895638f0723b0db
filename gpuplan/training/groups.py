"""The groups of one GPU type's layout search (training/search.py), and a floor on its GPU count.

A group is a (TP, CP, EP, PP, micro-batch) whose 16-bit weights can fit, with the DP values that
fill whole nodes, and a lower bound of the seconds per micro-batch of its slowest stage (the
cheaper layer kind's seconds times L / PP: :func:`layer_floor`); the search computes the stage
itself, without recompute (a lower bound for every VP, recompute and ZeRO stage of the group),
only for the groups it reaches (training/search.py). None of it depends on the deadline or the
budget, so the groups are enumerated once per job, GPU, network, memory limit and search space,
and every later search of the same space (the re-planned runners-up of a plan, each point of a
deadline or budget sweep) starts from them.
"""

# No ``from __future__ import annotations``: the NamedTuples' field types stay objects (typing
# turns a string annotation into a ForwardRef, compiled at import: ~70k instructions a field).

import math
from typing import NamedTuple

from gpuplan.core.memo import memo
from gpuplan.training.framework import constrain
from gpuplan.training.evaluator import HOURS_PER_DAY, Evaluator, Fixed, Target
from gpuplan.training.layout import Layout, layers_per_stage
from gpuplan.training.space import (
    cp_candidates,
    dp_candidates,
    dp_step,
    ep_candidates,
    mb_candidates,
    most_sharded,
    pp_candidates,
    states_can_fit,
    stepped_dps_of,
    tp_candidates,
)


class Scale(NamedTuple):
    """What the bound of one (TP, CP, EP, PP, micro-batch) needs, shared by its VP values."""

    stage: float          # seconds per micro-batch on the slowest stage (a lower bound over VP; no host time)
    dps: list[int] | tuple[int, ...]
    mp: int


class Groups(NamedTuple):
    #: (shape at its largest VP, its scale), in the enumeration order of the axes.
    groups: tuple[tuple[Layout, Scale], ...]
    thinned: tuple[str, ...]
    #: Whether the scales hold the groups' stage seconds (:func:`exact_stages`), else lower bounds.
    exact: bool


def exact_stages(ev: Evaluator) -> bool:
    """Whether the groups carry their stage seconds, computed when they are enumerated, rather
    than lower bounds: for a model of dense and MoE layers, whose stage time depends on the VP
    (the dense layers on the slowest rank) beyond what the Evaluator's stage memo tells apart
    (VP > 1), so that a stage time depends on which VP asked first; the groups ask first, before
    any search, as they always have."""
    arch = ev.job.arch
    return 0 < arch.moe_layers < arch.layers


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


def search_groups(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int) -> Groups:
    """Every group of the space (at most ``max_groups``, :func:`thin_axes`), memoised on the
    Evaluator's shared parts: the key holds everything but the job, GPU and network it reads."""
    exact = target.kind == "gpus"  # the only kind whose DP values and PP depths differ (space.py)
    key = (ev.capacity, ev.headroom, fixed, exact, target.gpus if exact else None, target.power_limit_kw,
           target.whole_nodes, max_groups)
    hit = ev._groups.get(key)
    if hit is None:
        if len(ev._groups) >= 64:
            ev._groups.clear()
        hit = ev._groups[key] = _enumerate(ev, fixed, target, max_groups)
    return hit  # type: ignore[return-value]


def space_thinned(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int) -> tuple[str, ...]:
    """What a search of the space thins (``Groups.thinned``, :func:`search_groups`), without its groups."""
    return _axes(ev, fixed, target, max_groups)[1]


def _axes(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int) -> tuple[dict[str, list[int]], tuple[str, ...]]:
    job = ev.job
    pps = pp_candidates(job.arch.layers, fixed, every=target.kind == "gpus", split=job.pipeline_split)
    return thin_axes({"tp": tp_candidates(ev, fixed), "cp": cp_candidates(job.seq, fixed),
                      "ep": ep_candidates(ev, fixed), "pp": pps, "mb": mb_candidates(fixed, job.batch)}, max_groups)


def _enumerate(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int) -> Groups:
    arch = ev.job.arch
    axes, thinned = _axes(ev, fixed, target, max_groups)
    interleaved = _interleaved(ev, axes)
    exact = exact_stages(ev)
    out: list[tuple[Layout, Scale]] = []
    new, append, margin, n_layers = tuple.__new__, out.append, FLOOR_MARGIN, arch.layers
    family, floors = None, {}
    states, limit = ev._states, ev.limit
    for blk in _skeleton(ev, fixed, target, axes):
        tp, cp, ep, pp, sp, block, unsharded = blk
        need = states.get(unsharded)  # states_can_fit's memo read first (the hot path)
        if not (need <= limit if need is not None else states_can_fit(ev, tp, pp, cp, ep, fixed)):
            continue
        if block is None:
            block = blk[5] = _block(ev, fixed, target, axes, tp, cp, ep, pp, sp)
        if family != (tp, cp, ep):
            family, floors = (tp, cp, ep), {}
        for mb, shape, dps, mp in block:
            if exact:
                stage = ev.stage_time_any_vp(shape)
            else:
                floor = floors.get(mb)
                if floor is None:
                    floor = floors[mb] = layer_floor(ev, fixed, tp, cp, ep, mb, sp, interleaved) * n_layers
                stage = floor / pp * margin
            append((shape, new(Scale, (stage, dps, mp))))
    return Groups(tuple(out), thinned, exact)


#: The (TP, CP, EP, PP) blocks of :func:`_enumerate` with their groups' (micro-batch, shape, DP
#: values, MP), by everything they read (the axes, the layers, the fixed fields and the key of the
#: DP values, :func:`_rows_key`): shared by the GPU types of a server size, each of which keeps the blocks
#: whose model states fit its memory and bounds their groups with its own stage floors. A block's
#: groups are built when a GPU type first keeps it. Not under a power limit (the DP values read the
#: GPU's server power). Bounded: cleared when full.
_SKELETONS: dict[tuple[object, ...], list[list]] = memo()


def _skeleton(ev: Evaluator, fixed: Fixed, target: Target,
              axes: dict[str, list[int]]) -> list[list]:
    """:data:`_SKELETONS`' blocks for this space: [TP, CP, EP, PP, SP, groups, key of
    space.states_can_fit's memo], in the enumeration
    order of the axes (the groups None until built: :func:`_block`)."""
    rows = _rows_key(ev, fixed, target, axes["mb"])
    key = None if rows is None else (rows, ev.job.arch.layers, fixed, *(tuple(v) for v in axes.values()))
    hit = None if key is None else _SKELETONS.get(key)
    if hit is None:
        hit = []
        for tp in axes["tp"]:
            sp = fixed.sequence_parallel if fixed.sequence_parallel is not None else tp > 1
            for cp in axes["cp"]:
                for ep in axes["ep"]:
                    # The key of states_can_fit's memo last.
                    hit.extend([tp, cp, ep, pp, sp, None, ("unsharded", tp, pp, cp, ep, most_sharded(fixed, pp))]
                               for pp in axes["pp"])
        if key is not None:
            if len(_SKELETONS) >= 64:
                _SKELETONS.clear()
            _SKELETONS[key] = hit
    return hit


def _block(ev: Evaluator, fixed: Fixed, target: Target, axes: dict[str, list[int]], tp: int, cp: int, ep: int,
           pp: int, sp: bool) -> list[tuple[int, Layout, tuple[int, ...], int]]:
    """The groups of one (TP, CP, EP, PP): each micro-batch with DP values, its shape at the largest
    VP (vp_candidates: the divisors of the layers per stage) and its model parallelism."""
    mp = tp * pp * cp
    vp = fixed.vp if fixed.vp is not None else (1 if pp == 1 else layers_per_stage(ev.job.arch.layers, pp))
    rc, fold = fixed.recompute or "none", fixed.fold_experts
    out = []
    step, batch = dp_step(ev, fixed, target, mp, ep, cp, tp), ev.job.batch
    for mb in axes["mb"]:
        if step is None:
            dps = tuple(dp_candidates(ev, fixed, target, mp, mb, ep, cp, tp))
        else:  # dp_candidates' values, read from one memo by step
            dps = stepped_dps_of(batch, mb, step)[1]
        if dps:
            # The group's shape (Layout's fields in order; the rest default).
            out.append((mb, tuple.__new__(Layout, (tp, pp, 1, cp, ep, vp, mb, rc, sp, 1, 0, fold)), dps, mp))
    return out


def _rows_key(ev: Evaluator, fixed: Fixed, target: Target, mbs: list[int]) -> tuple[object, ...] | None:
    """What the DP values of a space read besides the group (space.dp_candidates: the batch, the
    server size, a fixed DP, folded experts, the target's count); None under a power limit, which
    reads the GPU's server power."""
    if target.power_limit_kw is not None:
        return None
    count = target.kind == "gpus"
    return (ev.job.batch, ev.hw.gpus_per_node, fixed.dp, fixed.fold_experts, count,
            target.gpus if count else None, target.whole_nodes, tuple(mbs))


#: Lower bounds are scaled by this before they are compared with computed values, so that no
#: rounding of the different order of the same sums can put a bound above what it bounds.
FLOOR_MARGIN = 1.0 - 1e-9


def _interleaved(ev: Evaluator, axes: dict[str, list[int]]) -> bool:
    """Whether a group of the space may take the stage time of an interleaved schedule (an MoE
    layer with PP > 1: Evaluator.stage_time_any_vp)."""
    return ev.job.arch.moe_layers > 0 and any(pp > 1 for pp in axes["pp"])


def layer_floor(ev: Evaluator, fixed: Fixed, tp: int, cp: int, ep: int, mb: int, sp: bool,
                interleaved: bool) -> float:
    """Least seconds per micro-batch of one layer of a (TP, CP, EP, micro-batch) family: the
    cheaper layer kind (dense or MoE; with and without interleaving when ``interleaved``).

    The slowest stage of any PP holds at least ``L / PP`` layers' worth of it: a stage of at
    least that many layers does, and one with fewer (``floor(L / PP)`` on an uneven split) also
    holds the LM head, which weighs more than a layer there (timing.stage_layout), or more than the
    layers it lacks (the balanced split of a multi-token-prediction tail). Each part of a layer is
    averaged the same way over the kinds, so a stage of ``n`` layers takes at least ``n`` times
    the cheaper kind's total."""
    rc, fold = fixed.recompute or "none", fixed.fold_experts
    key = (rc, fold, tp, cp, ep, mb, sp, interleaved)
    floors = ev._floors
    hit = floors.get(key)
    if hit is None:
        # Layout(tp, pp, dp=1, cp, ep, vp, mb, recompute, sp, fold_experts=...), built positionally.
        pp = 2 if interleaved else 1
        costs = [c for vp in ((1, 2) if interleaved else (1,))
                 for c in ev.layers(tuple.__new__(Layout, (tp, pp, 1, cp, ep, vp, mb, rc, sp, 1, 0, fold)))
                 if c is not None]
        if len(floors) >= 4096:
            floors.clear()
        hit = floors[key] = min(c.total for c in costs)
    return hit


def deadline_cost_floor(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int,
                        exact: bool = True) -> float | None:
    """A lower bound of the cost of any plan of this space that meets ``target.deadline_days``
    (``inf``: none can; None: the GPU has no price for the target's pricing): :func:`cost_floor`
    at the space's least GPU-seconds per sequence (``exact=False``: at its least family bound, a
    weaker floor that computes no stage time: :func:`seconds_per_sequence`)."""
    if ev.hw.cost_usd(ev.hw.gpus_per_node, 1.0, target.pricing) is None:
        return None
    per_seq = seconds_per_sequence(ev, constrain(ev.framework, fixed), target, max_groups, exact)
    return cost_floor(ev, target, per_seq)


def seconds_per_sequence(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int, exact: bool = True) -> float:
    """Least GPU-seconds of one sequence over the groups of the space (stage x TP x PP x CP /
    micro-batch): every layout of the space takes at least this long per sequence (infinite: no
    group). Memoised; computed without every group's stage time (a GPU type whose floor rules it
    out is never searched): the (TP, CP, EP, micro-batch) families go cheapest bound first, and
    only those whose bound is within the least value found are computed, each at every PP (a model
    of dense and MoE layers: from its groups, whose stage times are computed up front).

    A family's bound: a stage holds at least L / PP layers' worth of work, each layer at least the
    cheaper kind's per-layer seconds (with and without interleaving), so every PP takes at least
    ``L x layer x TP x CP / mb`` GPU-seconds per sequence (timing.stage_layout: a stage with fewer
    layers holds the head, which outweighs a layer). ``exact=False``: the least family bound
    alone, no stage time computed (a lower bound of the least value; the groups of a model of
    dense and MoE layers are enumerated all the same)."""
    floor_key = ("seconds per sequence", exact, ev.capacity, ev.headroom, fixed, target.kind == "gpus",
                 target.gpus if target.kind == "gpus" else None, target.power_limit_kw, target.whole_nodes, max_groups)
    known = ev._groups.get(floor_key)
    if known is None:
        if exact_stages(ev):
            found = search_groups(ev, fixed, target, max_groups)
            known = min((scale.stage * scale.mp / shape.micro_batch for shape, scale in found.groups), default=math.inf)
        else:
            known = _least_per_sequence(ev, fixed, target, max_groups, exact)
        if len(ev._groups) >= 64:
            ev._groups.clear()
        ev._groups[floor_key] = known
    return known  # type: ignore[return-value]


def _least_per_sequence(ev: Evaluator, fixed: Fixed, target: Target, max_groups: int, exact: bool = True) -> float:
    """:func:`seconds_per_sequence` of a model of one layer kind."""
    arch = ev.job.arch
    axes, _ = _axes(ev, fixed, target, max_groups)
    interleaved = _interleaved(ev, axes)
    families = []
    for tp in axes["tp"]:
        sp = fixed.sequence_parallel if fixed.sequence_parallel is not None else tp > 1
        for cp in axes["cp"]:
            for ep in axes["ep"]:
                for mb in axes["mb"]:
                    layer = layer_floor(ev, fixed, tp, cp, ep, mb, sp, interleaved)
                    families.append((arch.layers * layer * tp * cp / mb * FLOOR_MARGIN, tp, cp, ep, mb, sp))
    families.sort(key=lambda f: f[0])
    if not exact:
        return families[0][0] if families else math.inf
    least = math.inf
    for bound, tp, cp, ep, mb, sp in families:
        if bound > least:
            break
        for pp in axes["pp"]:
            if not states_can_fit(ev, tp, pp, cp, ep, fixed):
                continue
            mp = tp * pp * cp
            if not dp_candidates(ev, fixed, target, mp, mb, ep, cp, tp):
                continue
            # Layout(tp, pp, dp=1, cp, ep, micro_batch=mb, recompute, sp, fold_experts), positionally.
            base = tuple.__new__(Layout, (tp, pp, 1, cp, ep, 1, mb, fixed.recompute or "none", sp, 1, 0,
                                          fixed.fold_experts))
            least = min(least, ev.stage_time_any_vp(base) * mp / mb)
    return least


def cost_floor(ev: Evaluator, target: Target, per_seq: float) -> float:
    """A lower bound of the cost of a plan meeting ``target.deadline_days`` whose group takes at
    least ``per_seq`` GPU-seconds per sequence (``inf``: none can; the GPU must be priced).

    Any layout's days are at least the search's bound of its group, ``steps x stage x (B / (DP x
    mb) + bubble) / 86400 / goodput(N)``, so with ``N = TP x PP x CP x DP`` GPUs,
    ``days >= (tokens / seq) x per_seq / 86400 / (N x goodput(N))``. Goodput only falls with the
    GPU count, so ``N >= A / (deadline x goodput(N0))`` for any count ``N0`` already known to be a
    floor; two passes from ``goodput <= 1`` give the floor of N, and the cost is non-decreasing in
    N (capex) or in GPU-hours ``>= 24 x A / goodput(N)`` (cloud). Non-decreasing in ``per_seq``."""
    deadline = target.deadline_days
    assert target.kind == "deadline" and deadline is not None
    if not math.isfinite(per_seq) or deadline <= 0:
        return math.inf
    gpu_days = ev.job.tokens / ev.job.seq * per_seq / 86400.0  # A: N x goodput x days >= A
    n = max(1, math.ceil(gpu_days / deadline * (1 - 1e-9)))
    for _ in range(2):
        n = max(n, math.ceil(gpu_days / (deadline * ev.goodput(n).fraction) * (1 - 1e-9)))
    cost = ev.hw.cost_usd(n, HOURS_PER_DAY * gpu_days / ev.goodput(n).fraction, target.pricing)
    assert cost is not None
    return cost
