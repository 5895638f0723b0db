"""Time of one transformer layer for one micro-batch on one GPU (docs/training-model.md, "Timing").

* GEMMs: FLOPs / (peak(dtype) x MAMF ceiling x size curve(GFLOP)) plus their HBM traffic
  (inputs 1 byte in FP8, outputs 16-bit; the LM head and router stay 16-bit); backward =
  dgrad + wgrad = 2 x forward (Narayanan 2021).
* Attention core: FlashAttention on the FLOPs it executes (causal half; backward 2.5 x
  forward) at a fraction of the matmul ceiling; or, materialized, two batched GEMMs plus the
  softmax/dropout traffic over the s x s scores (Korthikanti 2022 section 4.1).
* Elementwise kernels (norms, bias-dropout-add, GeLU/SwiGLU): bytes / achieved HBM bandwidth,
  plus a fixed gap per kernel.
* TP: 2 all-reduces forward and 2 backward per layer, or with SP 2 all-gathers + 2
  reduce-scatters each way (Narayanan 2021 section 2.3; Korthikanti 2022 section 4.2.2),
  exposed, or with SP partly hidden under the GEMMs where the framework overlaps them
  (``tp_comm_overlap``); full recompute repeats the forward ones.
* CP: ring attention passes K/V blocks CP-1 times forward, K/V and their gradients backward,
  overlapped with the attention kernels (Liu et al. 2023, Ring Attention).
* EP: all-to-all dispatch and combine, forward and backward, exposed or hidden behind another
  micro-batch's compute (``ep_comm_overlap``); token permutation and the host time of the
  expert loop (moe.py); experts folded onto the TP ranks when EP exceeds DP x CP.
"""

from __future__ import annotations

from gpuplan.core.memo import memo
from gpuplan.core.records import constructor, dataclass
from gpuplan.hardware.intervals import generation
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.hardware.training_frameworks import Framework
from gpuplan.physics.collectives import Network, p2p_s
from gpuplan.training.flops import attended_keys, attention_dims
from gpuplan.training.groupcomm import group_all_to_all, group_collective, group_tier
from gpuplan.training.job import Hardware, Job
from gpuplan.training.kernels import _elementwise, _fp8_casts, _gemm, _gemms, gemm_s  # noqa: F401 (re-exported)
from gpuplan.training.layout import Group, Layout, expert_tp, folded, groups

#: FlashAttention's backward executes 2.5x the forward FLOPs (it recomputes S = QK^T and P; five
#: matmuls against two; Dao 2023, arXiv:2307.08691, section 3.1.2).
FLASH_BWD_RATIO = 2.5


@dataclass(frozen=True)
class LayerCost:
    """Seconds per layer per micro-batch on one GPU; comm terms are the exposed parts."""

    fwd: float
    bwd: float
    recompute: float
    tp_fwd: float
    tp_bwd: float
    tp_recompute: float
    cp: float
    ep: float
    #: Per micro-batch bytes over scale-out from CP and EP (for the fabric demand).
    scaleout_bytes: float = 0.0

    @property
    def total(self) -> float:
        return (self.fwd + self.bwd + self.recompute + self.tp_fwd + self.tp_bwd + self.tp_recompute
                + self.cp + self.ep)

    @property
    def forward_total(self) -> float:
        return self.fwd + self.tp_fwd


#: ``LayerCost(...)``, all nine fields by position, set at once (a plan costs about 750 layers).
new_layer_cost = constructor(LayerCost)


def layer_cost(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, moe: bool,
               attention: str, interleaved: bool = True) -> LayerCost:
    """Time of one transformer layer (dense or MoE) for one micro-batch on one GPU, in steps:
    GEMMs, attention core, elementwise kernels, MoE permutation, recompute, then the exposed
    TP, CP and EP communication. ``interleaved``: the pipeline runs interleaved stages (PP > 1,
    VP > 1), where Megatron-Core's EP all-to-all overlap pairs micro-batches (ep_overlaps)."""
    arch, t = job.arch, layout.tp
    sq = job.seq / layout.cp                      # local queries per sequence
    tok = layout.micro_batch * sq                 # tokens of this GPU's micro-batch
    g, loop, ew_f, ew_b, gap, tp_f, tp_b = _tokens_part(job, hw, cal, layout, moe, tok)
    attn_f, attn_b, soft_f, soft_b = _attention_core(job, hw, cal, layout, attention, tok, sq)

    fwd = g[0] + attn_f + soft_f + ew_f + gap
    bwd = g[1] + attn_b + soft_b + ew_b + 2.0 * gap
    overlap_ep = False
    if moe:
        from gpuplan.training import moe as moe_exec  # MoE layers only: a dense plan never loads it
        fw = cal.framework(job.framework)
        dispatch = moe_exec.dispatcher(job.moe_dispatcher, fw, hw.domain, hw.gpu.gpus_per_node)
        overlap_ep = layout.ep > 1 and ep_overlaps(fw, layout, interleaved, dispatch)
        # Token permutation traffic and the exposed host time of the expert loop (moe.py).
        perm = moe_exec.movement_bytes(arch, tok * expert_tp(layout) / t, moe_exec.local_experts(arch, layout), cal,
                                       job.precision, hw.block_scaled_fp8, dispatch) / hw.mem_bw
        host_f, host_b = moe_exec.host_seconds(arch, layout, cal, job.precision, hw.block_scaled_fp8, loop,
                                               paired=overlap_ep)
        fwd += perm + host_f
        bwd += perm + host_b
    if layout.recompute == "full":
        recompute = fwd
    elif layout.recompute == "selective" and attention == "materialized":
        recompute = attn_f + soft_f
    else:
        recompute = 0.0

    grp = groups(layout)
    tp_r = tp_f if layout.recompute == "full" else 0.0
    cp_exposed, scaleout = _cp_comm(job, hw, cal, layout, grp, tok, attn_f, attn_b)
    ep_exposed = 0.0
    if moe and layout.ep > 1:
        ep_exposed, ep_bytes = _ep_comm(job, hw, cal, layout, grp, tok, fwd + bwd, overlap_ep)
        scaleout += ep_bytes
    return new_layer_cost(fwd, bwd, recompute, tp_f, tp_b, tp_r, cp_exposed, ep_exposed, scaleout)


#: :func:`_tokens_part` by what it reads: the micro-batch's tokens, TP, SP, EP and its folding, the
#: layer kind, and the job, hardware and calibration (by identity, held in the entry so their ids stay
#: theirs). A search costs each of these at every recompute setting and at every (micro-batch, CP)
#: of the same tokens (339 distinct of 745 layer costs, the default plan). Bounded: cleared when full.
_TOKENS: dict[tuple[object, ...], tuple[tuple[object, ...], Job, Hardware, TrainingCalibration]] = memo()


def _tokens_part(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, moe: bool,
                 tok: float) -> tuple[tuple[float, float], tuple[float, float], float, float, float, float, float]:
    """The parts of a layer cost that read the micro-batch only through its tokens ``tok``, and
    neither the recompute, the pipeline nor CP beyond them: (the GEMMs' (forward, backward), the
    expert loop's, the elementwise kernels' forward and backward with the FP8 casts, the kernel
    gaps, the exposed TP forward and backward); memoised (``_TOKENS``)."""
    key = (tok, layout.tp, layout.sequence_parallel, layout.ep, folded(layout), moe, id(job), id(hw), id(cal))
    hit = _TOKENS.get(key)
    if hit is None:
        g, act_elems, loop = _gemms(job, hw, cal, layout, moe, tok)
        ew_f, ew_b, gap = _elementwise(job.arch, hw, cal, layout, moe, tok, act_elems)
        cast_f, cast_b = _fp8_casts(job, hw, cal, layout, moe, tok)
        tp_f, tp_b = _tp_comm(job, hw, cal, layout, groups(layout), tok, g)
        if len(_TOKENS) >= 4096:
            _TOKENS.clear()
        hit = _TOKENS[key] = ((g, loop, ew_f + cast_f, ew_b + cast_b, gap, tp_f, tp_b), job, hw, cal)
    return hit[0]  # type: ignore[return-value]


def flash_efficiency(attention: str, hw: Hardware, cal: TrainingCalibration) -> tuple[float, float]:
    """(forward, backward) FlashAttention throughput as fractions of the GPU's 16-bit matmul rate.

    ``flash``: the kernel native to the GPU (FlashAttention-2 on Ampere; cuDNN fused attention or
    FlashAttention-3 on Hopper and later, what Transformer Engine picks). ``flash2``: the
    FlashAttention-2 kernel of PyTorch stacks (SDPA's flash backend, the flash-attn 2 package),
    written for Ampere's mma.sync: on Hopper and later it reaches at most ``flash2_peak_fraction``
    of the dense 16-bit peak forward (35% on H100, Shah et al. 2024, arXiv:2407.08608), the
    backward in the same proportion to the forward as the native kernel's."""
    fwd, bwd = cal.flash_attention_fwd_efficiency, cal.flash_attention_bwd_efficiency
    if attention != "flash2" or generation(hw.gpu.vendor, hw.gpu.arch) not in cal.flash2_capped_generations:
        return fwd, bwd
    cap = cal.flash2_peak_fraction / hw.gpu.efficiency.matmul_bf16       # of attn_flops (peak x MAMF x clock)
    return min(fwd, cap), min(bwd, cap * bwd / fwd)


def _attention_core(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, attention: str,
                    tok: float, sq: float) -> tuple[float, float, float, float]:
    """(forward, backward, softmax forward, softmax backward) seconds of the attention core:
    FlashAttention on the FLOPs it executes, or two batched GEMMs plus the score traffic."""
    arch = job.arch
    d_qk, d_v = attention_dims(arch)
    keys = attended_keys(arch, job.seq)
    heads_local = arch.heads / layout.tp
    core_flops = 2.0 * tok * keys * heads_local * (d_qk + d_v)     # Megatron's full-matrix count
    score_elems = layout.micro_batch * heads_local * sq * keys
    if attention != "materialized":
        causal = cal.causal_fraction if keys >= job.seq else 1.0
        executed = core_flops * causal
        eff_f, eff_b = flash_efficiency(attention, hw, cal)
        attn_f = executed / (hw.attn_flops * eff_f)
        attn_b = FLASH_BWD_RATIO * executed / (hw.attn_flops * eff_b)
        return attn_f, attn_b, 0.0, 0.0
    bmm = (gemm_s(2.0 * tok * keys * heads_local * d_qk, 2.0 * score_elems, hw, cal)
           + gemm_s(2.0 * tok * keys * heads_local * d_v, 2.0 * score_elems, hw, cal))
    soft_f = score_elems * cal.softmax_fwd_bytes_per_element / hw.mem_bw
    soft_b = score_elems * cal.softmax_bwd_bytes_per_element / hw.mem_bw
    return bmm, 2.0 * bmm, soft_f, soft_b


def _tp_comm(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, grp: dict[str, Group],
             tok: float, g: tuple[float, float]) -> tuple[float, float]:
    """Tensor parallelism: exposed (forward, backward) collectives on the micro-batch's activations."""
    t, sp = layout.tp, layout.sequence_parallel
    tp_f = tp_b = 0.0
    if t > 1:
        size = tok * job.arch.hidden * cal.activation_bytes
        if sp:
            one = (group_collective("ag", size, grp["tp"], hw.net, cal)[0]
                   + group_collective("rs", size, grp["tp"], hw.net, cal)[0])
        else:
            one = group_collective("ar", size, grp["tp"], hw.net, cal)[0]
        tp_f = tp_b = 2.0 * one
        if sp:
            # Frameworks that overlap the SP all-gather / reduce-scatter with the GEMMs they feed
            # hide a share of it (Transformer Engine userbuffers; framework.tp_comm_overlap),
            # never more than the GEMM time, and the hidden part still slows the GEMMs.
            hide = cal.framework(job.framework).tp_comm_overlap
            if hide:
                slow = _slowdown(cal, grp["tp"], hw.net)
                tp_f = _overlapped(tp_f, hide, g[0], slow)
                tp_b = _overlapped(tp_b, hide, g[1], slow)
    return tp_f, tp_b


def _cp_comm(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, grp: dict[str, Group],
             tok: float, attn_f: float, attn_b: float) -> tuple[float, float]:
    """Context parallelism: (exposed seconds, scale-out bytes) of the ring exchange of K/V blocks,
    overlapped with the attention kernels."""
    cp_exposed = scaleout = 0.0
    if layout.cp > 1:
        arch, t = job.arch, layout.tp
        d_qk, d_v = attention_dims(arch)
        heads_local = arch.heads / t
        a_b = cal.activation_bytes
        kv_bytes = tok * arch.kv_heads / t * (d_qk + d_v) * a_b if not arch.is_mla else tok * heads_local * (d_qk + d_v) * a_b
        hop = p2p_s(kv_bytes, group_tier(grp["cp"], hw.net, kv_bytes, cal))
        comm_f = (layout.cp - 1) * hop
        passes = [(comm_f, attn_f), (2 * comm_f, attn_b)]
        if layout.recompute == "full":
            passes.append((comm_f, attn_f))
        slow = _slowdown(cal, grp["cp"], hw.net)
        for comm, window in passes:
            cp_exposed += max(0.0, comm - window) + slow * min(comm, window)
        if grp["cp"].crosses(hw.domain):
            scaleout += (3 + (layout.recompute == "full")) * (layout.cp - 1) * kv_bytes
    return cp_exposed, scaleout


def ep_overlaps(fw: Framework, layout: Layout, interleaved: bool, dispatch: str) -> bool:
    """Whether the EP all-to-all overlap (Megatron-Core overlap_moe_expert_parallel_comm) runs:
    the framework has it, the pipeline is interleaved and not fully recomputed (Megatron-Core
    transformer_config.py requires virtual stages with PP > 1 and no full recompute), and the
    dispatcher is the all-to-all one. NeMo 25.11 turns it on exactly there: the H100 Qwen3 and
    B200 Qwen3-235B recipes (all-to-all, PP > 1 with VP), not the PP 1 ones nor with HybridEP."""
    return fw.ep_comm_overlap > 0 and interleaved and layout.recompute != "full" and dispatch == "alltoall"


def _ep_comm(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, grp: dict[str, Group],
             tok: float, compute: float, overlap: bool) -> tuple[float, float]:
    """Expert parallelism: (exposed seconds, scale-out bytes) of the dispatch + combine
    all-to-all, forward and backward; ``compute`` is the layer's forward + backward seconds."""
    arch = job.arch
    size = tok * arch.active_experts * arch.hidden * cal.activation_bytes / layout.tp
    fw = cal.framework(job.framework)
    copies = arch.active_experts if fw.ep_hierarchical_dispatch else 1
    one, cross = group_all_to_all(size, grp["ep"], hw.net, cal, copies)
    count = 4 + (2 if layout.recompute == "full" else 0)
    ep_exposed = count * one
    # Frameworks that overlap one micro-batch's dispatch/combine with another's compute
    # (Megatron-Core overlap_moe_expert_parallel_comm, DualPipe-style) hide up to
    # ep_comm_overlap of the layer's compute, where the layout allows it (ep_overlaps).
    share = fw.ep_comm_overlap
    if share and overlap:
        ep_exposed = _overlapped(ep_exposed, 1.0, share * compute, _slowdown(cal, grp["ep"], hw.net))
    return ep_exposed, count * cross


def _overlapped(comm: float, share: float, window: float, slow: float) -> float:
    """Exposed seconds of ``comm`` when ``share`` of it may run under ``window`` seconds of
    compute, the hidden part slowing that compute by ``slow`` per second."""
    hidden = min(share * comm, window)
    return comm - hidden + slow * hidden


def _slowdown(cal: TrainingCalibration, group: Group, net: Network) -> float:
    """Compute slowdown per second of overlapped communication (Calculon processor_usage)."""
    if group.crosses(net.scaleup_domain):
        return cal.overlap_slowdown_scaleout
    return cal.overlap_slowdown_scaleup


def logits_cost(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout) -> tuple[float, float]:
    """(compute, exposed TP comm) seconds of the LM head and cross-entropy for one micro-batch."""
    arch, t = job.arch, layout.tp
    tok = layout.micro_batch * job.seq / layout.cp
    g = _gemm(tok, arch.hidden, arch.vocab / t, hw.sixteen_bit(), cal)
    ce = tok * arch.vocab / t * (cal.activation_bytes + cal.logits_bytes_per_element) / hw.mem_bw
    compute = g[0] + g[1] + ce * (1.0 + cal.elementwise_bwd_factor)
    comm = 0.0
    if t > 1:
        size = tok * arch.hidden * cal.activation_bytes
        kind = ("ag", "rs") if layout.sequence_parallel else ("ar", "ar")
        grp = groups(layout)["tp"]
        comm = sum(group_collective(k, size, grp, hw.net, cal)[0] for k in kind)
    return compute, comm


def mtp_projection_cost(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout) -> float:
    """Forward + backward seconds of one multi-token-prediction module's projection of
    [hidden; next-token embedding] (2h) to h, column-split by TP (DeepSeek-V3 section 2.2)."""
    h = job.arch.hidden
    f, b = _gemm(layout.micro_batch * job.seq / layout.cp, 2 * h, h / layout.tp, hw, cal)
    return f + b
