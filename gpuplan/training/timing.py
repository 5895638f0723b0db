"""Step time of a layout: the slowest pipeline stage, pipeline sends, DP sync, optimizer.

Per layer and micro-batch: :mod:`gpuplan.training.layer_time` (GEMMs, attention, elementwise
kernels, TP, CP and EP communication).

Per step: (m + (p-1)/v) x stage time (1F1B with interleaving: bubble (p-1)/(v m), Narayanan
2021 section 2.2) + exposed pipeline sends (all of them, or with Megatron-Core's interleaved
overlap those of the fill and drain) + exposed DP gradient sync (overlapped with the last
micro-batch's backward where the framework does it; per layer with ZeRO-3) + optimizer + host
time (per step, per micro-batch, and the wait for the slowest GPU: :func:`host_overhead`).
"""

# No ``from __future__ import annotations``: the NamedTuples' field types stay objects (typing
# turns a string annotation into a ForwardRef, compiled at import: ~70k instructions a field).

import math
from typing import NamedTuple

from gpuplan.core.memo import memo
from gpuplan.core.units import GB
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.physics.collectives import Network, p2p_s
from gpuplan.training.groupcomm import group_all_to_all, group_collective, group_tier, ramp  # noqa: F401 (re-exported)
from gpuplan.training.job import Hardware, Job  # noqa: F401  (re-exported)
from gpuplan.training.layer_time import (  # noqa: F401  (re-exported)
    FLASH_BWD_RATIO, LayerCost, gemm_s, layer_cost, logits_cost, mtp_projection_cost,
)
from gpuplan.training.layout import Group, Layout, dense_layers_per_rank, groups, recomputed_fraction, sharding
from gpuplan.training.memory import expert_dp, stage_params
from gpuplan.training.stages import rank_layers, stage_layout, stated_stage  # noqa: F401 (re-exported)


class StepTime(NamedTuple):
    """Seconds per optimizer step and its parts (the ``*_comm`` are exposed). A named tuple (the
    layout search builds one per layout it evaluates)."""

    compute: float
    recompute: float
    tp_comm: float
    pp_comm: float
    dp_comm: float
    ep_comm: float
    cp_comm: float
    bubble: float
    optimizer: float
    #: Scale-out Gb/s per GPU (data rate) that would hide the DP gradient sync.
    dp_gbit_to_hide: float
    #: Bytes per GPU per step over the scale-out tier, by group.
    scaleout_bytes: dict[str, float]
    #: The DP overlap window (seconds) and the pipeline time (the window of PP/CP/EP traffic).
    dp_window: float = 0.0
    pipeline: float = 0.0

    #: Host time per step and micro-batch and the wait for the slowest GPU (host_overhead).
    host: float = 0.0

    @property
    def total(self) -> float:
        return (self.compute + self.recompute + self.tp_comm + self.pp_comm + self.dp_comm
                + self.ep_comm + self.cp_comm + self.bubble + self.optimizer + self.host)


#: LayerCost fields (and properties) that a stage averages over the model's dense / MoE mix, in
#: the order of :func:`_layer_averages`' tuple (the indices below).
_AVERAGED = ("fwd", "bwd", "recompute", "tp_fwd", "tp_bwd", "tp_recompute", "cp", "ep", "total", "forward_total",
             "scaleout_bytes")
_FWD, _BWD, _RC, _TPF, _TPB, _TPR, _CP, _EP, _TOTAL, _FWD_TOTAL, _SCALEOUT = range(len(_AVERAGED))

#: Per-layer averages by the identity of the (dense, MoE) layer costs and the mix: the search asks
#: for the same layer costs at many PP and recompute settings (an identity key: hashing a
#: LayerCost's floats cost more than the averages). The costs are held in the entry, so their ids
#: stay theirs while it lives. Bounded: cleared when full.
_AVERAGES: dict[tuple[int, int, float, float, int], tuple[tuple[float, ...], LayerCost, LayerCost | None]] = memo()


def _layer_averages(dense: LayerCost, moe: LayerCost | None, n_dense: float, n_moe: float,
                    layers: int) -> tuple[float, ...]:
    """Per-layer costs averaged over the dense / MoE mix, in the order of ``_AVERAGED``."""
    key = (id(dense), id(moe), n_dense, n_moe, layers)
    hit = _AVERAGES.get(key)
    if hit is None:
        # Each (n_dense x dense + n_moe x moe) / layers, an absent MoE cost read as 0.0.
        ds = _fields(dense)
        ms = _fields(moe) if moe else _ZEROS
        if len(_AVERAGES) >= 4096:
            _AVERAGES.clear()
        hit = _AVERAGES[key] = (tuple([(n_dense * d + n_moe * m) / layers for d, m in zip(ds, ms)]), dense, moe)
    return hit[0]


_ZEROS = (0.0,) * len(_AVERAGED)


def _fields(cost: LayerCost) -> tuple[float, ...]:
    """``cost``'s values in the order of ``_AVERAGED``."""
    return (cost.fwd, cost.bwd, cost.recompute, cost.tp_fwd, cost.tp_bwd, cost.tp_recompute, cost.cp, cost.ep,
            cost.total, cost.forward_total, cost.scaleout_bytes)


def _stage_mix(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, dense: LayerCost,
               moe: LayerCost | None, logits: tuple[float, float] | None
               ) -> tuple[tuple[float, ...], int, bool, float, tuple[float, float, float, float], float]:
    """What the slowest stage's parts are made of: the per-layer averages of its layer mix, its
    layers, whether it holds the LM head, the recomputed fraction, the head's (compute,
    recompute, TP, EP) seconds and the LM head's compute. Dense and MoE layers are averaged over
    the model's mix."""
    arch = job.arch
    layers, pp = arch.layers, layout.pp
    n_moe = arch.moe_layers if moe is not None else 0
    n_dense = layers - n_moe
    a = _layer_averages(dense, moe, n_dense, n_moe, layers)

    lg_compute, lg_comm = logits if logits is not None else logits_cost(job, hw, cal, layout)
    # The tail's (compute, recompute, TP, EP) seconds.
    tail = (lg_compute, 0.0, lg_comm, 0.0)
    if arch.mtp_layers:
        # Multi-token prediction: per module a block of the last layer's kind, its projection and
        # the output head again, on the last stage with the head (flops.mtp_matmul_params).
        last = moe if moe is not None else dense
        k = arch.mtp_layers
        tail = (lg_compute + k * (last.fwd + last.bwd + lg_compute + mtp_projection_cost(job, hw, cal, layout)),
                k * last.recompute,
                lg_comm + k * (last.tp_fwd + last.tp_bwd + last.tp_recompute + lg_comm),
                k * last.ep)
    if pp == 1:  # one stage: every layer and the tail
        n, has_head = layers, True
    elif job.pipeline_split is not None or not arch.mtp_layers:
        n, has_head = stated_stage(rank_layers(layers, pp, job.pipeline_split), sum(tail) / a[_TOTAL] if a[_TOTAL] else 0.0)
    else:
        layer = a[_TOTAL]
        n, has_head = stage_layout(layers, pp, sum(tail) / layer if layer else 0.0)
    if n_dense and n_moe and pp > 1:
        # The dense layers lead the model and sit on the first rank: the slowest rank holds the
        # mix of the rank with the fewest (or, were dense layers the dearer, the most) of them.
        few, most = dense_layers_per_rank(n_dense, layers, pp, layout.vp)
        d_on = few if moe is not None and moe.total >= dense.total else most
        d_on = min(float(n), d_on)
        a = _layer_averages(dense, moe, d_on, n - d_on, n)
    frac = recomputed_fraction(layout, layers) if layout.recompute == "full" else 1.0
    return a, n, has_head, frac, tail, lg_compute


def _per_microbatch(a: tuple[float, ...], n: int, head: float, frac: float,
                    tail: tuple[float, float, float, float]) -> tuple[float, float, float, float, float]:
    """The stage's (compute, recompute, TP, CP, EP) seconds per micro-batch (STAGE_PARTS)."""
    return (n * (a[_FWD] + a[_BWD]) + head * tail[0],
            n * a[_RC] * frac + head * tail[1],
            n * (a[_TPF] + a[_TPB] + frac * a[_TPR]) + head * tail[2],
            n * a[_CP],
            n * a[_EP] + head * tail[3])


def _stage_parts(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, dense: LayerCost,
                 moe: LayerCost | None, logits: tuple[float, float] | None
                 ) -> tuple[tuple[float, float, float, float, float], float, float, float, int]:
    """Seconds per micro-batch on the slowest stage by part (``STAGE_PARTS``), the DP traffic's
    overlap windows (the backward with what is recomputed, and the forward, of one micro-batch on
    the stage), its CP/EP scale-out bytes and its layers (:func:`_stage_mix`)."""
    a, n, has_head, frac, tail, lg_compute = _stage_mix(job, hw, cal, layout, dense, moe, logits)
    head = 1.0 if has_head else 0.0
    window_b = n * (a[_BWD] + a[_TPB] + frac * (a[_RC] + a[_TPR])) + head * lg_compute * 2.0 / 3.0
    return _per_microbatch(a, n, head, frac, tail), window_b, n * a[_FWD_TOTAL], n * a[_SCALEOUT], n


STAGE_PARTS = ("compute", "recompute", "tp", "cp", "ep")


def stage_seconds(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, dense: LayerCost,
                  moe: LayerCost | None, logits: tuple[float, float] | None = None) -> float:
    """Seconds of one micro-batch (forward + backward) on the slowest pipeline stage.
    ``logits`` is :func:`logits_cost` when the caller has it."""
    a, n, has_head, frac, tail, _ = _stage_mix(job, hw, cal, layout, dense, moe, logits)
    return sum(_per_microbatch(a, n, 1.0 if has_head else 0.0, frac, tail))


def step_time(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout,
              dense: LayerCost, moe: LayerCost | None, logits: tuple[float, float] | None = None) -> StepTime:
    """Assemble the step from per-layer costs (see the module docstring)."""
    arch = job.arch
    per_mb, window_b, window_f, stage_scaleout, n_layers_stage = _stage_parts(job, hw, cal, layout, dense, moe, logits)
    t_stage = sum(per_mb)
    m = layout.microbatches(job.batch)
    p, v = layout.pp, layout.vp
    bubble = (p - 1) / v * t_stage
    grp = groups(layout)
    scaleout: dict[str, float] = {}

    # Pipeline sends: 1F1B exchanges activations and gradients with blocking send/recv pairs,
    # one per chunk boundary for the forward and one for the backward of every micro-batch
    # (Megatron-LM p2p_communication, scatter-gather: each TP rank sends 1/t); the fill and
    # drain add 2 (p-1) hops.
    pp_exposed, hop_bytes = pipeline_sends_s(job, hw, cal, layout, m)
    if p > 1 and grp["pp"].crosses(hw.domain):
        scaleout["pp"] = 2.0 * m * v * hop_bytes

    # CP / EP bytes over scale-out.
    if stage_scaleout:
        scaleout["ep" if layout.ep > 1 else "cp"] = m * stage_scaleout

    # Data-parallel gradient sync and parameter gather.
    dense_p, expert_p = stage_params(arch, layout)
    w_bytes, g_bytes, _ = cal.state_bytes
    fw = cal.framework(job.framework)
    if not fw.grad_reduce_fp32:
        g_bytes = cal.activation_bytes
    if not fw.dp_comm_overlap:
        # Reduced after the pipeline flush (Megatron-LM before --overlap-grad-reduce, 2023;
        # DeepSpeed's pipeline engine ReduceGrads step): nothing hides it.
        window_b = window_f = 0.0
    dp_exposed, dp_cross = _dp_sync(layout, m, dense_p, expert_p, g_bytes, w_bytes, grp, hw, cal,
                                    window_b, window_f, n_layers_stage)
    if dp_cross:
        scaleout["dp"] = dp_cross
    window = window_b + window_f if sharding(layout) < 2 else m * (window_b + window_f)
    dp_gbit = dp_cross * 8 / window / GB if window > 0 else 0.0

    # Optimizer: memory-bound Adam over the parameters this GPU owns.
    owned = dense_p + expert_p
    if layout.zero >= 1:
        owned = dense_p / (layout.dp * layout.cp) + expert_p / expert_dp(layout)
    optimizer = owned * cal.optimizer_bytes_per_param / hw.mem_bw

    busy = (m * t_stage + bubble + pp_exposed + dp_exposed + optimizer)
    host = host_overhead(cal, m, layout.gpus, busy)
    # StepTime's fields in order (positionally: the search builds one per layout it evaluates).
    compute, recompute, tp, cp, ep = per_mb
    return tuple.__new__(StepTime, (m * compute, m * recompute, m * tp, pp_exposed,
                                    dp_exposed, m * ep, m * cp, bubble, optimizer, dp_gbit,
                                    scaleout, window, (m + (p - 1) / v) * t_stage, host))


def pipeline_sends_s(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, m: int) -> tuple[float, float]:
    """(exposed seconds, bytes of one hop) of a step's pipeline sends over ``m`` micro-batches:
    they read neither the recompute nor the ZeRO stage (the search's bounds count them too)."""
    tp, p, dp, cp, _, v, mb = layout[:7]  # Layout's first fields, by index
    return sends_s(job, hw, cal, tp, p, dp, cp, v, mb, m)


def sends_s(job: Job, hw: Hardware, cal: TrainingCalibration, tp: int, p: int, dp: int, cp: int, v: int, mb: int,
            m: int) -> tuple[float, float]:
    """:func:`pipeline_sends_s` of a layout of these TP, PP, DP, CP, VP and micro-batch (the only
    fields it reads; bounds.py's sends call it without building the layout)."""
    if p <= 1:
        return 0.0, 0.0
    hop_bytes = mb * job.seq / cp * job.arch.hidden * cal.activation_bytes / tp
    # The PP group: p members, TP x CP x DP ranks apart (layout.groups).
    hop, crosses = _hop(hop_bytes, p, tp * cp * dp, hw, cal)
    sends = 2 * m * v + 2 * (p - 1)
    if v > 1 and cal.framework(job.framework).pp_comm_overlap:
        # Megatron-Core overlap_p2p_comm (the default with interleaving since 2023): the
        # steady-state sends hide under the next chunk's compute, slowing it a little; the
        # warm-up and flush pass (p - 1) chunk boundaries each way, exposed.
        exposed = 2 * (p - 1) * v
        slow = cal.overlap_slowdown_scaleout if crosses else cal.overlap_slowdown_scaleup
        return (exposed + slow * max(0, sends - exposed)) * hop, hop_bytes
    return sends * hop, hop_bytes


#: (seconds, crosses the scale-up domain) of one pipeline hop by its bytes, the PP group's size and
#: stride, and the network and calibration (held in the entry, so their ids stay theirs): the
#: search's bounds ask for every DP of a shape. Bounded: cleared when full.
_HOPS: dict[tuple[float, int, int, int, int, int], tuple[tuple[float, bool], Network, TrainingCalibration]] = memo()


def _hop(hop_bytes: float, size: int, stride: int, hw: Hardware, cal: TrainingCalibration) -> tuple[float, bool]:
    """One point-to-point hop of ``hop_bytes`` between neighbours of a PP group of ``size``
    members ``stride`` ranks apart, and whether the group crosses the scale-up domain; memoised."""
    net = hw.net
    key = (hop_bytes, size, stride, hw.domain, id(net), id(cal))
    hit = _HOPS.get(key)
    if hit is None:
        pp = Group(size, stride)
        if len(_HOPS) >= 16384:
            _HOPS.clear()
        hit = _HOPS[key] = ((p2p_s(hop_bytes, group_tier(pp, net, hop_bytes, cal)), pp.crosses(hw.domain)), net, cal)
    return hit[0]


def straggler(n: int, sigma: float) -> float:
    """Expected lag of the slowest of ``n`` GPUs whose speeds spread normally by ``sigma``: the
    maximum of n standard normals is about sqrt(2 ln n) (Cramer's extreme-value asymptote), and a
    synchronous step waits for it."""
    if n <= 1 or sigma <= 0:
        return 0.0
    return sigma * math.sqrt(2.0 * math.log(n))


def host_overhead(cal: TrainingCalibration, microbatches: int, gpus: int, busy: float) -> float:
    """Seconds a step spends outside the modelled kernels: a fixed host time per optimizer step
    and per micro-batch (each ends in a host synchronisation), and the wait for the slowest of
    the job's GPUs, a share of the ``busy`` step (training.toml, host_step_s)."""
    return cal.host_step_s + microbatches * cal.host_microbatch_s + busy * straggler(gpus, cal.straggler_sigma)


def _dp_sync(layout: Layout, m: int, dense_p: float, expert_p: float, g_bytes: float, w_bytes: float,
             grp: dict[str, Group], hw: Hardware, cal: TrainingCalibration, window_b: float,
             window_f: float, layers: int = 1) -> tuple[float, float]:
    """(exposed seconds incl. the slowdown of overlapped compute, scale-out bytes per GPU) of the
    DP traffic of one step.

    ZeRO-0: all-reduce of the gradients; ZeRO-1: reduce-scatter of the gradients + all-gather
    of the updated 16-bit weights (Megatron distributed optimizer); both overlapped with the
    last micro-batch's backward and the first one's forward. ZeRO-2 reduce-scatters after
    every micro-batch (DeepSpeed stage_1_and_2 partition_gradients; Megatron-FSDP optim_grads,
    "grad_reduce_every_bprop"); with PP it is ZeRO-1 (layout.sharding). ZeRO-3/FSDP also
    all-gathers the weights for every forward and backward (Rajbhandari et al. 2020).
    """
    parts = ((dense_p, grp["dp"]), (expert_p, grp["edp"]))
    net = hw.net
    exposed = hidden = 0.0
    zero = sharding(layout)
    if zero == 0:
        ar, ar_c, up_time, all_time = _dp_total("ar", g_bytes, parts, net, cal, 0.0, 0.0)
        exposed += max(0.0, ar - window_b)
        hidden += min(ar, window_b)
        return exposed + _dp_slowdown(hidden, up_time, all_time, cal), ar_c
    rs, rs_c, up_time, all_time = _dp_total("rs", g_bytes, parts, net, cal, 0.0, 0.0)
    ag, ag_c, up_time, all_time = _dp_total("ag", w_bytes, parts, net, cal, up_time, all_time)
    if zero == 1:
        exposed += max(0.0, rs - window_b)
        hidden += min(rs, window_b)
        exposed += max(0.0, ag - window_f)
        hidden += min(ag, window_f)
        return exposed + _dp_slowdown(hidden, up_time, all_time, cal), rs_c + ag_c
    if zero == 2:
        exposed += max(0.0, m * rs - m * window_b)
        hidden += min(m * rs, m * window_b)
        exposed += max(0.0, ag - window_f)
        hidden += min(ag, window_f)
        return exposed + _dp_slowdown(hidden, up_time, all_time, cal), m * rs_c + ag_c
    # ZeRO-3 / FSDP: per micro-batch and layer, gather the layer's weights for its forward, again
    # for its backward, and reduce-scatter its gradients, each a collective of one layer's
    # parameters (at the bandwidth of that message size) prefetched under the previous layer's
    # compute; the first layer's gathers have nothing to hide under (Zhao et al. 2023, PyTorch
    # FSDP, section 3.3: backward/forward prefetch). With a small micro-batch a layer computes
    # for less time than its gathers take, and the rest is exposed.
    n = max(1, layers)
    ag1 = _dp_layer("ag", w_bytes, n, parts, net, cal)
    rs1 = _dp_layer("rs", g_bytes, n, parts, net, cal)
    f1, b1 = window_f / n, window_b / n
    for comm, window in ((ag1, f1), (ag1 + rs1, b1)):
        exposed += m * (comm + (n - 1) * max(0.0, comm - window))
        hidden += m * (n - 1) * min(comm, window)
    return exposed + _dp_slowdown(hidden, up_time, all_time, cal), m * (2 * ag_c + rs_c)


def _dp_total(kind: str, nbytes_per_param: float, parts: tuple[tuple[float, Group], ...], net: Network,
              cal: TrainingCalibration, up_time: float, all_time: float) -> tuple[float, float, float, float]:
    """(seconds, scale-out bytes) of a DP collective of ``nbytes_per_param`` over the dense and the
    expert parameters' groups, and the running sums of its scale-up and all seconds."""
    t = c = 0.0
    for params, group in parts:
        size = params * nbytes_per_param
        if size <= 0:
            continue  # no bytes: (0.0, 0.0, 0.0) (groupcomm), and adding 0.0 to these sums changes none
        dt, dc, du = group_collective(kind, size, group, net, cal)
        t, c = t + dt, c + dc
        up_time, all_time = up_time + du, all_time + dt
    return t, c, up_time, all_time


def _dp_layer(kind: str, nbytes_per_param: float, n: int, parts: tuple[tuple[float, Group], ...], net: Network,
              cal: TrainingCalibration) -> float:
    """Seconds of one layer's share (1/n of the stage's parameters) of a DP collective."""
    t = 0.0
    for params, group in parts:
        t = t + group_collective(kind, params / n * nbytes_per_param, group, net, cal)[0]
    return t


def _dp_slowdown(hidden: float, up_time: float, all_time: float, cal: TrainingCalibration) -> float:
    """Compute slowdown while ``hidden`` seconds of collectives run (Calculon processor_usage, by
    tier: the scale-up share of the DP traffic's seconds)."""
    if hidden <= 0 or all_time <= 0:
        return 0.0
    frac = up_time / all_time
    return hidden * (frac * cal.overlap_slowdown_scaleup + (1 - frac) * cal.overlap_slowdown_scaleout)
