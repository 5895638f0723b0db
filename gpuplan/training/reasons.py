"""The training plan's reasons: what was chosen and why, in numbers (the plan's ``reasons`` lines)."""

from __future__ import annotations

from gpuplan.core.memo import memo
from gpuplan.core.numbers import num
from gpuplan.hardware.intervals import residual_table, validated_gpus
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.physics.network import network_for
from gpuplan.training.candidates import Candidate, Miss
from gpuplan.training.layout import groups, layers_per_stage
from gpuplan.training.memory import GIB
from gpuplan.training.plan_record import bound_of, short_layout
from gpuplan.training.sizing import counts_phrase, usable_text
from gpuplan.training.search import MAX_GROUPS, Evaluation, Evaluator, Target, min_model_parallel
from gpuplan.training.timing import Job
from gpuplan.training.traffic import ScaleoutNeed, scaleout_need
from gpuplan.fabric.demand import gbit_text


def plan_reasons(job: Job, gpu: Gpu, e: Evaluation, target: Target, catalog: Catalog,
             cal: TrainingCalibration, cost: float | None, ranked: list[Candidate]) -> list[str]:
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
    out.append(f"{gpu.id}: {what}: {e.gpus:,} GPUs, {short_layout(lay)}, micro-batch {lay.micro_batch}, "
               f"{rc}, ZeRO-{lay.zero}{', SP' if lay.sequence_parallel else ''}; {num(e.wall_days)} days "
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
    where = f" on pipeline stage {m.rank + 1} of {lay.pp}" if lay.pp > 1 else ""
    out.append(f"memory: {m.total / GIB:.1f} of {m.capacity / GIB:.1f} GiB per GPU{where} (states {m.model_states / GIB:.1f}, "
               f"activations {m.activations / GIB:.1f}, overhead {m.overhead / GIB:.1f}); {m.headroom / GIB:.1f} GiB "
               f"({m.headroom / m.capacity:.0%}) free, at least {m.reserve / m.capacity:.0%} kept free{mp}")
    grp = groups(lay)
    crossing = [k for k in ("tp", "cp", "ep", "dp", "pp") if grp[k].crosses(gpu.scaleup_domain)]
    if crossing:
        out.append(f"fabric: {', '.join(g.upper() for g in crossing)} cross the {gpu.scaleup_domain}-GPU scale-up "
                   f"domain; {_scaleout_words(scaleout_need(gpu, e, catalog))} (reference: "
                   f"{gpu.reference_scaleout_gbit_per_gpu:g} Gb/s line rate)")
    else:
        out.append("fabric: every parallel group stays inside the scale-up domain")
    out.append(f"{e.good.describe()}; steady state {num(e.steady_days)} days")
    wb, gb, ob = cal.state_bytes
    out.append(f"model states: {cal.state_convention} ({wb} + {gb} + {ob} = {wb + gb + ob} B/param before "
               f"ZeRO-{lay.zero} sharding)")
    validated = validated_gpus(residual_table(catalog), "training")
    if gpu.id not in validated:
        out.append(unvalidated_note(gpu.id, validated))
    if cost is None:
        out.append(f"{gpu.id} has no {target.pricing} price in the catalog: ranked after priced GPUs")
    if len(ranked) > 1:
        nxt = ranked[1]
        diff = (f"server capex ${nxt.cost:,.0f}" if nxt.cost is not None else "unpriced")
        out.append(f"next best: {nxt.gpu.id} ({nxt.best.gpus:,} GPUs, {num(nxt.best.wall_days)} days, {diff})")
    if ranked and ranked[0].thinned:
        out.append(f"search: the layout space of {gpu.id} exceeds {ranked[0].max_groups:,} (TP, CP, EP, PP, micro-batch) "
                   f"groups and was thinned evenly ({'; '.join(ranked[0].thinned)}): the plan is the best of those")
    return out


def _scaleout_words(need: ScaleoutNeed) -> str:
    """The scale-out need in words, the same figure the fabric line and ``required_gbit_per_gpu`` give."""
    parts = []
    if need.sync_bytes > 0:
        parts.append(f"gradient sync {gbit_text(need.sync_gbit)} Gb/s in its overlap window")
    if need.other_bytes > 0:
        parts.append(f"{'/'.join(k.upper() for k in need.other_groups) or 'other'} sends {gbit_text(need.other_gbit)} Gb/s")
    data = " + ".join(parts) or "no scale-out bytes"
    inside = "; the gradient sync stays inside the scale-up domain" if need.sync_bytes <= 0 else ""
    return (f"the scale-out network needs {gbit_text(need.line_gbit)} Gb/s of line rate per GPU to hide their "
            f"traffic ({data} of data, at {need.efficiency:.0%} link efficiency{inside})")


def miss_text(miss: Miss, target: Target) -> str:
    """Why a GPU type misses ``target``, in words, from the facts its search found."""
    return _miss_words(miss, target) + (f" (layout space thinned to {miss.max_groups:,} groups: "
                                        f"{'; '.join(miss.thinned)})" if miss.thinned else "")


def _miss_words(m: Miss, target: Target) -> str:
    states = f"; the model states need TP*PP >= {m.states}" if m.states and m.states > 1 else ""
    if m.kind == "unpriced":
        return f"no {target.pricing} price in the catalog: the ${m.limit:,.0f} budget cannot be checked"
    if m.kind == "budget" and m.plan is None:
        return f"the plan costs ${m.value:,.0f}, over the ${m.limit:,.0f} budget by {m.value / m.limit - 1:.0%}"
    if m.kind == "budget" and m.plan is not None:
        return (f"the cheapest plan found ({m.plan.gpus:,} GPUs, {num(m.plan.wall_days)} days) costs ${m.value:,.0f}, "
                f"{m.value / m.limit - 1:.0%} over the ${m.limit:,.0f} budget")
    if m.kind == "power":
        return (f"{m.gpus:,} GPUs draw {m.value:,.0f} kW, over the {m.limit:,.0f} kW power limit by "
                f"{m.value / m.limit - 1:.0%}")
    if m.kind == "isolated":
        return (f"the reference server has no scale-out network and a {m.domain}-GPU scale-up domain: its GPUs "
                f"cannot train one model together")
    if m.kind == "states":
        return f"does not fit: the model states exceed {m.usable[0]:.1f} GiB at any TP x PP"
    if m.kind == "count-memory":
        return (f"does not fit on {m.gpus:,} GPUs: needs at least {m.value / GIB:.1f} GiB per GPU (full recompute, "
                f"ZeRO-3 without a pipeline, ZeRO-1 with one), has {usable_text(*m.usable)}{states}{counts_phrase(m.nearest)}")
    if m.kind == "memory":
        lay = m.layout
        where = f" (best: TP{lay.tp} PP{lay.pp} DP{lay.dp})" if lay else ""
        return f"does not fit: needs {m.value / GIB:.1f} GiB per GPU{where}, has {usable_text(*m.usable)}{states}"
    if m.kind == "count":
        return (f"no valid layout on exactly {m.gpus:,} GPUs (TP x PP x CP x DP must match and DP x micro-batch "
                f"divide a global batch near {m.batch}){states}{counts_phrase(m.nearest)}")
    if m.kind == "limits":
        return f"no layout fits the power limit or the global batch{states}"
    if m.kind == "deadline" and m.plan is not None:
        e = m.plan
        limit = ("the power limit" if target.power_limit_kw is not None else
                 f"the global batch of {m.batch} sequences")
        return (f"needs about {m.gpus:,} GPUs for the {m.limit:g}-day deadline at the per-GPU speed of its fastest "
                f"plan found ({e.gpus:,} GPUs, {short_layout(e.layout)}: {num(e.wall_days)} days, "
                f"{e.wall_days / m.limit - 1:.0%} over), more than {limit} allows{states}")
    return "no layout fits"


def unvalidated_note(gpu_id: str, validated: tuple[str, ...]) -> str:
    """Why a training plan on ``gpu_id`` is less certain than one on a ``validated`` GPU
    (:func:`~gpuplan.hardware.intervals.validated_gpus`)."""
    return (f"calibration: no published training run on {gpu_id} is among the validation cases (they cover "
            f"{', '.join(validated) or 'no GPU'}); its step time extrapolates the catalog's efficiency "
            f"figures for it")


#: The least model parallelism of a job on a GPU type, by the catalog's hash. Bounded: cleared when full.
_MP_CACHE: dict[tuple[object, ...], int | None] = memo()


def _min_model_parallel_cached(job: Job, gpu: Gpu, catalog: Catalog, cal: TrainingCalibration) -> int | None:
    key = (job, gpu.id, catalog.sha256)
    if key not in _MP_CACHE:
        if len(_MP_CACHE) >= 256:
            _MP_CACHE.clear()
        _MP_CACHE[key] = min_model_parallel(Evaluator(job, gpu, network_for(gpu, catalog), cal))
    return _MP_CACHE[key]
