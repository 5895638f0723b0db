"""Step time of a layout: per-layer compute and communication, pipeline, DP sync, optimizer.

Per layer and micro-batch (docs/training-model.md, "Timing"):

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
* Collectives over placed groups: groupcomm.py.

Per step: (m + (p-1)/v) x stage time (1F1B with interleaving: bubble (p-1)/(v m), Narayanan
2021 section 2.2) + exposed pipeline sends of the fill and drain + exposed DP gradient sync
(overlapped with the last micro-batch's backward; Calculon's overlap window) + optimizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache

from gpuplan.model.arch import Architecture
from gpuplan.hardware.schema import Gpu
from gpuplan.physics.collectives import Network, p2p_s
from gpuplan.training import moe as moe_exec
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.training.flops import attended_keys, attention_dims
from gpuplan.training.groupcomm import group_all_to_all, group_collective, group_tier, ramp  # noqa: F401 (re-exported)
from gpuplan.training.layout import Group, Layout, expert_tp, groups, recomputed_fraction
from gpuplan.training.memory import expert_dp, stage_params

GB = 1e9
#: FlashAttention's backward executes 2.5x the forward FLOPs (it recomputes S = QK^T and P; five
#: matmuls against two; Dao 2023, arXiv:2307.08691, section 3.1.2).
FLASH_BWD_RATIO = 2.5


@dataclass(frozen=True)
class Job:
    """What is trained: model, sequence length, global batch in sequences, precision, tokens."""

    arch: Architecture
    seq: int
    batch: int
    precision: str
    tokens: float
    #: The training software (training.toml [frameworks.*]); None = the default framework.
    framework: str | None = None

    @property
    def tokens_per_step(self) -> int:
        return self.batch * self.seq


@dataclass(frozen=True)
class Hardware:
    """What the timing model needs from one GPU and its network."""

    gpu: Gpu
    net: Network
    gemm_flops: float          # achievable GEMM FLOP/s of the training dtype (peak x MAMF)
    attn_flops: float          # achievable 16-bit matmul FLOP/s (attention runs in BF16/FP16)
    mem_bw: float              # achievable HBM bytes/s
    peak_flops: float          # dense 16-bit peak: the MFU denominator
    domain: int
    #: Bytes per GEMM input element in the training dtype: 1 for FP8 (Transformer Engine feeds
    #: the tensor cores quantized copies; outputs stay 16-bit), else 2.
    operand_bytes: float = 2.0
    #: FP8 with block scaling in the tensor cores (MXFP8: Blackwell, the GPUs with FP4 tensor
    #: cores); without it FP8 recipes scale per tensor (amax, then cast: NeMo's "FP8-CS" on H100).
    block_scaled_fp8: bool = False

    @staticmethod
    def of(gpu: Gpu, net: Network, precision: str) -> "Hardware":
        half = "bf16" if precision == "bf16" else "fp16"
        peak16 = gpu.peak_tflops(half) or gpu.peak_tflops("fp16") or 0.0
        gemm_dtype = "fp8" if precision == "fp8" else half
        peak_gemm = gpu.peak_tflops(gemm_dtype) or 0.0
        return Hardware(gpu=gpu, net=net,
                        gemm_flops=peak_gemm * 1e12 * gpu.matmul_efficiency(gemm_dtype),
                        attn_flops=peak16 * 1e12 * gpu.efficiency.matmul_bf16,
                        mem_bw=gpu.mem_bw_tbps * 1e12 * gpu.efficiency.mem_bw,
                        peak_flops=peak16 * 1e12, domain=net.scaleup_domain,
                        operand_bytes=1.0 if precision == "fp8" else 2.0,
                        block_scaled_fp8=gpu.fp4_dense_tflops is not None)

    def sixteen_bit(self) -> "Hardware":
        """The same GPU running its GEMMs in 16 bits (what FP8 recipes keep in BF16: the LM
        head and the router; Megatron-Core's output layer is not a Transformer Engine module)."""
        if self.operand_bytes == 2.0:
            return self
        return replace(self, gemm_flops=self.attn_flops, operand_bytes=2.0)


# -- one layer ---------------------------------------------------------------------------------
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


def gemm_s(flops: float, nbytes: float, hw: Hardware, cal: TrainingCalibration) -> float:
    """One GEMM: compute time at the size-dependent efficiency plus its HBM traffic time.

    The two are added, not overlapped (Calculon ``processing_mode = "no_overlap"``, the mode its
    A100 validation against Korthikanti 2022 uses): a GEMM's prologue and epilogue stream
    operands and results while the tensor cores wait.
    """
    if flops <= 0:
        return 0.0
    eff = cal.gemm_fraction(flops / 1e9)
    return flops / (hw.gemm_flops * eff) + nbytes / hw.mem_bw


def _gemm(tokens: float, k: float, n: float, hw: Hardware, cal: TrainingCalibration) -> tuple[float, float]:
    """(forward, backward) time of a (tokens x k) @ (k x n) GEMM in the training dtype.

    Inputs are ``hw.operand_bytes`` per element (1 in FP8), outputs 16-bit. Backward = dgrad
    (same shape) + wgrad, which accumulates into the fp32 main gradient (read and write 4 B per
    weight; Megatron gradient_accumulation_fusion).
    """
    flops = 2.0 * tokens * k * n
    b = hw.operand_bytes
    fwd = gemm_s(flops, b * (tokens * k + k * n) + 2.0 * tokens * n, hw, cal)
    dgrad = gemm_s(flops, b * (tokens * n + k * n) + 2.0 * tokens * k, hw, cal)
    wgrad = gemm_s(flops, b * (tokens * k + tokens * n) + 4.0 * k * n, hw, cal)
    bwd = dgrad + wgrad
    return fwd, bwd


def _add(a: tuple[float, float], b: tuple[float, float], times: float = 1.0) -> tuple[float, float]:
    return a[0] + times * b[0], a[1] + times * b[1]


def layer_cost(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, moe: bool,
               attention: str) -> LayerCost:
    """Time of one transformer layer (dense or MoE) for one micro-batch on one GPU."""
    arch, t = job.arch, layout.tp
    h, a, kv = arch.hidden, arch.heads, arch.kv_heads
    d_qk, d_v = attention_dims(arch)
    sq = job.seq / layout.cp                      # local queries per sequence
    tok = layout.micro_batch * sq                 # tokens of this GPU's micro-batch
    keys = attended_keys(arch, job.seq)
    a_b = cal.activation_bytes
    sp = layout.sequence_parallel
    n_rep = tok * h / (t if sp else 1)            # elements of a replicated [s, b, h] tensor

    # GEMMs (forward); backward is dgrad + wgrad of the same sizes.
    out_params = a * d_v * h
    qkv_params = arch.attention_params_per_layer - out_params
    g = _add(_gemm(tok, h, qkv_params / h / t, hw, cal), _gemm(tok, a * d_v / t, h, hw, cal))
    mats = arch.mlp_matrices
    act_b = cal.swiglu_bytes_per_element if arch.gated_mlp else cal.gelu_bytes_per_element
    if moe:
        k, e_ffn = arch.active_experts, arch.expert_ffn
        local_experts = max(1, arch.experts // layout.ep)
        # Expert GEMMs split by the expert TP: the layout's TP, or 1 when EP is folded onto the
        # TP ranks, each of which then dispatches its 1/TP share of the tokens.
        e_t = expert_tp(layout)
        moe_tok = tok * e_t / t
        per_expert_tok = moe_tok * k * layout.ep / arch.experts
        g = _add(g, _gemm(tok / (t if sp else 1), h, arch.experts, hw.sixteen_bit(), cal))  # router
        g = _add(g, _gemm(per_expert_tok, h, (mats - 1) * e_ffn / e_t, hw, cal), local_experts)
        g = _add(g, _gemm(per_expert_tok, e_ffn / e_t, h, hw, cal), local_experts)
        if arch.shared_experts:
            s_ffn = arch.shared_experts * e_ffn
            g = _add(g, _gemm(tok, h, (mats - 1) * s_ffn / t, hw, cal))
            g = _add(g, _gemm(tok, s_ffn / t, h, hw, cal))
        act_elems = tok * (k * e_ffn + arch.shared_experts * e_ffn) / t
    else:
        g = _add(g, _gemm(tok, h, (mats - 1) * arch.ffn / t, hw, cal))
        g = _add(g, _gemm(tok, arch.ffn / t, h, hw, cal))
        act_elems = tok * arch.ffn / t

    # Attention core.
    heads_local = a / t
    core_flops = 2.0 * tok * keys * heads_local * (d_qk + d_v)     # Megatron's full-matrix count
    score_elems = layout.micro_batch * heads_local * sq * keys
    if attention == "flash":
        causal = cal.causal_fraction if keys >= job.seq else 1.0
        executed = core_flops * causal
        attn_f = executed / (hw.attn_flops * cal.flash_attention_fwd_efficiency)
        attn_b = FLASH_BWD_RATIO * executed / (hw.attn_flops * cal.flash_attention_bwd_efficiency)
        soft_f = soft_b = 0.0
    else:
        bmm = (gemm_s(2.0 * tok * keys * heads_local * d_qk, 2.0 * score_elems, hw, cal)
               + gemm_s(2.0 * tok * keys * heads_local * d_v, 2.0 * score_elems, hw, cal))
        attn_f, attn_b = bmm, 2.0 * bmm
        soft_f = score_elems * cal.softmax_fwd_bytes_per_element / hw.mem_bw
        soft_b = score_elems * cal.softmax_bwd_bytes_per_element / hw.mem_bw

    # Elementwise kernels.
    ew_bytes = (2 * cal.norm_bytes_per_element + 2 * cal.bias_dropout_add_bytes_per_element) * n_rep
    ew_bytes += act_b * act_elems
    ew_f = ew_bytes / hw.mem_bw
    ew_b = cal.elementwise_bwd_factor * ew_f
    gap = cal.kernel_gap_us * 1e-6 * cal.kernels_per_layer_fwd

    fwd = g[0] + attn_f + soft_f + ew_f + gap
    bwd = g[1] + attn_b + soft_b + ew_b + 2.0 * gap
    if moe:
        # Token permutation traffic and the exposed host time of the expert loop (moe.py).
        perm = moe_exec.permute_bytes(arch, tok * expert_tp(layout) / t, cal) / hw.mem_bw
        host_f, host_b = moe_exec.host_seconds(arch, layout, cal, job.precision, hw.block_scaled_fp8)
        fwd += perm + host_f
        bwd += perm + host_b
    if layout.recompute == "full":
        recompute = fwd
    elif layout.recompute == "selective" and attention == "materialized":
        recompute = attn_f + soft_f
    else:
        recompute = 0.0

    # Tensor parallelism: exposed collectives on the activations of the micro-batch.
    grp = groups(layout)
    tp_f = tp_b = 0.0
    if t > 1:
        size = tok * h * a_b
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
    tp_r = tp_f if layout.recompute == "full" else 0.0

    # Context parallelism: ring exchange of K/V blocks, overlapped with the attention kernels.
    cp_exposed = 0.0
    scaleout = 0.0
    if layout.cp > 1:
        kv_bytes = tok * kv / t * (d_qk + d_v) * a_b if not arch.is_mla else tok * heads_local * (d_qk + d_v) * a_b
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

    # Expert parallelism: dispatch + combine all-to-all, forward and backward.
    ep_exposed = 0.0
    if moe and layout.ep > 1:
        size = tok * arch.active_experts * h * a_b / t
        fw = cal.framework(job.framework)
        copies = arch.active_experts if fw.ep_hierarchical_dispatch else 1
        one, cross = group_all_to_all(size, grp["ep"], hw.net, cal, copies)
        count = 4 + (2 if layout.recompute == "full" else 0)
        ep_exposed = count * one
        scaleout += count * cross
        # Frameworks that overlap one micro-batch's dispatch/combine with another's compute
        # (Megatron-Core overlap_moe_expert_parallel_comm, DualPipe-style) hide up to
        # ep_comm_overlap of the layer's compute (Megatron-Core needs VP > 1 with PP; the layer
        # costs here do not depend on PP or VP, so that condition is not modelled).
        share = fw.ep_comm_overlap
        if share:
            ep_exposed = _overlapped(ep_exposed, 1.0, share * (fwd + bwd), _slowdown(cal, grp["ep"], hw.net))
    return LayerCost(fwd=fwd, bwd=bwd, recompute=recompute, tp_fwd=tp_f, tp_bwd=tp_b, tp_recompute=tp_r,
                     cp=cp_exposed, ep=ep_exposed, scaleout_bytes=scaleout)


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


# -- the step ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepTime:
    """Seconds per optimizer step and its parts (the ``*_comm`` are exposed)."""

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
    scaleout_bytes: dict[str, float] = field(default_factory=dict)
    #: The DP overlap window (seconds) and the pipeline time (the window of PP/CP/EP traffic).
    dp_window: float = 0.0
    pipeline: float = 0.0

    #: Host-side gaps, synchronisation and stragglers (1 - kernel_busy_fraction of the step).
    host: float = 0.0

    @property
    def total(self) -> float:
        return (self.compute + self.recompute + self.tp_comm + self.pp_comm + self.dp_comm
                + self.ep_comm + self.cp_comm + self.bubble + self.optimizer + self.host)


def stage_layout(layers: int, pp: int, logits_layers: float) -> tuple[int, bool]:
    """(layers, holds the LM head) of the slowest pipeline stage, the head placed where it fits.

    PP = 1: all layers and the head. Uneven split (L mod p != 0): the head joins a stage with
    floor(L/p) layers (Llama 3's balancing, arXiv:2407.21783 section 3.3.2), so the slowest
    stage is max(ceil(L/p), floor(L/p) + head). Even split: L/p layers + head (Megatron).
    """
    if pp == 1:
        return layers, True
    lo, rem = divmod(layers, pp)
    if rem and lo + 1.0 >= lo + logits_layers:
        return lo + 1, False
    return lo, True


#: LayerCost fields (and properties) that a stage averages over the model's dense / MoE mix.
_AVERAGED = ("fwd", "bwd", "recompute", "tp_fwd", "tp_bwd", "tp_recompute", "cp", "ep", "total", "forward_total",
             "scaleout_bytes")


@lru_cache(maxsize=4096)
def _layer_averages(dense: LayerCost, moe: LayerCost | None, n_dense: int, n_moe: int,
                    layers: int) -> dict[str, float]:
    """Per-layer costs averaged over the dense / MoE mix. Cached: the search asks for the same
    layer costs at many PP and recompute settings (read-only result, do not mutate)."""

    def avg(attr: str) -> float:
        return (n_dense * getattr(dense, attr) + n_moe * (getattr(moe, attr) if moe else 0.0)) / layers

    return {attr: avg(attr) for attr in _AVERAGED}


def _stage_parts(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, dense: LayerCost,
                 moe: LayerCost | None, logits: tuple[float, float] | None) -> tuple[dict[str, float], int, bool]:
    """Seconds per micro-batch on the slowest stage by part, its layers, and whether it holds
    the LM head. Dense and MoE layers are averaged over the model's mix."""
    arch = job.arch
    n_moe = arch.moe_layers if moe is not None else 0
    n_dense = arch.layers - n_moe
    a = _layer_averages(dense, moe, n_dense, n_moe, arch.layers)

    lg_compute, lg_comm = logits if logits is not None else logits_cost(job, hw, cal, layout)
    layer = a["total"]
    n, has_head = stage_layout(arch.layers, layout.pp, (lg_compute + lg_comm) / layer if layer else 0.0)
    head = 1.0 if has_head else 0.0
    frac = recomputed_fraction(layout, arch.layers) if layout.recompute == "full" else 1.0
    parts = {
        "compute": n * (a["fwd"] + a["bwd"]) + head * lg_compute,
        "recompute": n * a["recompute"] * frac,
        "tp": n * (a["tp_fwd"] + a["tp_bwd"] + frac * a["tp_recompute"]) + head * lg_comm,
        "cp": n * a["cp"],
        "ep": n * a["ep"],
        # Overlap windows of the DP traffic: the backward (with what is recomputed) and the
        # forward of one micro-batch on this stage.
        "window_b": n * (a["bwd"] + a["tp_bwd"] + frac * (a["recompute"] + a["tp_recompute"]))
        + head * lg_compute * 2.0 / 3.0,
        "window_f": n * a["forward_total"],
        "scaleout": n * a["scaleout_bytes"],
    }
    return parts, n, has_head


STAGE_PARTS = ("compute", "recompute", "tp", "cp", "ep")


def stage_seconds(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, dense: LayerCost,
                  moe: LayerCost | None, logits: tuple[float, float] | None = None) -> float:
    """Seconds of one micro-batch (forward + backward) on the slowest pipeline stage.
    ``logits`` is :func:`logits_cost` when the caller has it."""
    parts, _, _ = _stage_parts(job, hw, cal, layout, dense, moe, logits)
    return sum(parts[k] for k in STAGE_PARTS)


def step_time(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout,
              dense: LayerCost, moe: LayerCost | None, logits: tuple[float, float] | None = None) -> StepTime:
    """Assemble the step from per-layer costs (see the module docstring)."""
    arch = job.arch
    parts, n_layers_stage, _ = _stage_parts(job, hw, cal, layout, dense, moe, logits)
    per_mb = {k: parts[k] for k in STAGE_PARTS}
    t_stage = sum(per_mb.values())
    m = layout.microbatches(job.batch)
    p, v = layout.pp, layout.vp
    bubble = (p - 1) / v * t_stage
    grp = groups(layout)
    scaleout: dict[str, float] = {}

    # Pipeline sends: 1F1B exchanges activations and gradients with blocking send/recv pairs,
    # one per chunk boundary for the forward and one for the backward of every micro-batch
    # (Megatron-LM p2p_communication, scatter-gather: each TP rank sends 1/t); the fill and
    # drain add 2 (p-1) hops.
    pp_exposed = 0.0
    if p > 1:
        hop_bytes = layout.micro_batch * job.seq / layout.cp * arch.hidden * cal.activation_bytes / layout.tp
        hop = p2p_s(hop_bytes, group_tier(grp["pp"], hw.net, hop_bytes, cal))
        pp_exposed = (2 * m * v + 2 * (p - 1)) * hop
        if grp["pp"].crosses(hw.domain):
            scaleout["pp"] = 2.0 * m * v * hop_bytes

    # CP / EP bytes over scale-out.
    if parts["scaleout"]:
        scaleout["ep" if layout.ep > 1 else "cp"] = m * parts["scaleout"]

    # Data-parallel gradient sync and parameter gather.
    dense_p, expert_p = stage_params(arch, layout)
    w_bytes, g_bytes, _ = cal.state_bytes
    window_b, window_f = parts["window_b"], parts["window_f"]
    dp_exposed, dp_cross = _dp_sync(layout, m, dense_p, expert_p, g_bytes, w_bytes, grp, hw, cal,
                                    window_b, window_f)
    if dp_cross:
        scaleout["dp"] = dp_cross
    window = window_b + window_f if layout.zero < 2 else m * (window_b + window_f)
    dp_gbit = dp_cross * 8 / window / GB if window > 0 else 0.0

    # Optimizer: memory-bound Adam over the parameters this GPU owns.
    owned = dense_p + expert_p
    if layout.zero >= 1:
        owned = dense_p / (layout.dp * layout.cp) + expert_p / expert_dp(layout)
    optimizer = owned * cal.optimizer_bytes_per_param / hw.mem_bw

    busy = (m * sum(per_mb.values()) + bubble + pp_exposed + dp_exposed + optimizer)
    host = busy * (1.0 / cal.kernel_busy_fraction - 1.0)
    return StepTime(compute=m * per_mb["compute"], recompute=m * per_mb["recompute"], tp_comm=m * per_mb["tp"],
                    pp_comm=pp_exposed, dp_comm=dp_exposed, ep_comm=m * per_mb["ep"], cp_comm=m * per_mb["cp"],
                    bubble=bubble, optimizer=optimizer, dp_gbit_to_hide=dp_gbit, scaleout_bytes=scaleout,
                    dp_window=window, pipeline=(m + (p - 1) / v) * t_stage, host=host)


def _dp_sync(layout: Layout, m: int, dense_p: float, expert_p: float, g_bytes: float, w_bytes: float,
             grp: dict[str, Group], hw: Hardware, cal: TrainingCalibration, window_b: float,
             window_f: float) -> tuple[float, float]:
    """(exposed seconds incl. the slowdown of overlapped compute, scale-out bytes per GPU) of the
    DP traffic of one step.

    ZeRO-0: all-reduce of the gradients; ZeRO-1: reduce-scatter of the gradients + all-gather
    of the updated 16-bit weights (Megatron distributed optimizer); both overlapped with the
    last micro-batch's backward and the first one's forward. ZeRO-2 reduce-scatters after
    every micro-batch; ZeRO-3/FSDP also all-gathers the weights for every forward and backward
    (Rajbhandari et al. 2020).
    """
    parts = [(dense_p, grp["dp"]), (expert_p, grp["edp"])]
    exposed = hidden = 0.0

    up_time = all_time = 0.0

    def overlap(comm: float, window: float) -> None:
        nonlocal exposed, hidden
        exposed += max(0.0, comm - window)
        hidden += min(comm, window)

    def total(kind: str, nbytes_per_param: float) -> tuple[float, float]:
        nonlocal up_time, all_time
        t = c = 0.0
        for params, group in parts:
            dt, dc, du = group_collective(kind, params * nbytes_per_param, group, hw.net, cal)
            t, c = t + dt, c + dc
            up_time, all_time = up_time + du, all_time + dt
        return t, c

    def slowdown() -> float:
        """Compute slowdown while hidden collectives run (Calculon processor_usage, by tier)."""
        if hidden <= 0 or all_time <= 0:
            return 0.0
        frac = up_time / all_time
        return hidden * (frac * cal.overlap_slowdown_scaleup + (1 - frac) * cal.overlap_slowdown_scaleout)

    if layout.zero == 0:
        ar, ar_c = total("ar", g_bytes)
        overlap(ar, window_b)
        return exposed + slowdown(), ar_c
    rs, rs_c = total("rs", g_bytes)
    ag, ag_c = total("ag", w_bytes)
    if layout.zero == 1:
        overlap(rs, window_b)
        overlap(ag, window_f)
        return exposed + slowdown(), rs_c + ag_c
    if layout.zero == 2:
        overlap(m * rs, m * window_b)
        overlap(ag, window_f)
        return exposed + slowdown(), m * rs_c + ag_c
    # ZeRO-3: per micro-batch, gather for forward, gather again for backward, reduce-scatter.
    overlap(m * ag, m * window_f)
    overlap(m * (ag + rs), m * window_b)
    return exposed + slowdown(), m * (2 * ag_c + rs_c)
