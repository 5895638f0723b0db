"""Kernel times of one transformer layer for one micro-batch on one GPU (training/layer_time.py
assembles the layer): its GEMMs at the calibration's size curve plus their HBM traffic, the FP8
casts of their operands, and the elementwise kernels (norms, bias-dropout-add, the MLP activation)
at the achieved HBM bandwidth (docs/training-model.md, "Timing")."""

from __future__ import annotations

from gpuplan.core.memo import memo
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.model.arch import Architecture
from gpuplan.training.flops import attention_dims
from gpuplan.training.job import Hardware, Job
from gpuplan.training.layout import Layout, expert_tp


def gemm_s(flops: float, nbytes: float, hw: Hardware, cal: TrainingCalibration) -> float:
    """One GEMM: compute time at the size-dependent efficiency plus its HBM traffic time. The
    size is the GEMM's duration at the ceiling: a kernel's fixed cost weighs the same on a fast
    GPU, so the same FLOPs reach less of a faster GPU's ceiling.

    The two are added, not overlapped (Calculon ``processing_mode = "no_overlap"``, the mode its
    A100 validation against Korthikanti 2022 uses): a GEMM's prologue and epilogue stream
    operands and results while the tensor cores wait.
    """
    if flops <= 0:
        return 0.0
    ideal = flops / hw.gemm_flops
    return ideal / cal.gemm_fraction(ideal * 1e6) + nbytes / hw.mem_bw


#: GEMM times by shape and hardware and calibration identity (held in the entry, so their ids stay
#: theirs), for the LM head (layer_time.logits_cost: its (micro-batch, CP) pairs of the same tokens
#: share it). A layer's GEMMs are memoised with its tokens (layer_time._tokens_part), after which
#: this memo's lookups cost more than its few hits (callgrind: 5.2 M of a cold recommend). Bounded:
#: cleared when full.
_GEMMS: dict[tuple[float, float, float, int, int], tuple[tuple[float, float], Hardware, TrainingCalibration]] = memo()


def _gemm(tokens: float, k: float, n: float, hw: Hardware, cal: TrainingCalibration) -> tuple[float, float]:
    """:func:`_gemm_once`, memoised (``_GEMMS``)."""
    key = (tokens, k, n, id(hw), id(cal))
    hit = _GEMMS.get(key)
    if hit is None:
        if len(_GEMMS) >= 16384:
            _GEMMS.clear()
        hit = _GEMMS[key] = (_gemm_once(tokens, k, n, hw, cal), hw, cal)
    return hit[0]


def _gemm_once(tokens: float, k: float, n: float, hw: Hardware, cal: TrainingCalibration) -> tuple[float, float]:
    """(forward, backward) time of a (tokens x k) @ (k x n) GEMM in the training dtype.

    Inputs are ``hw.operand_bytes`` per element (1 in FP8), outputs 16-bit. Backward = dgrad
    (same shape) + wgrad, which accumulates into the fp32 main gradient (read and write 4 B per
    weight; Megatron gradient_accumulation_fusion).
    """
    flops = 2.0 * tokens * k * n
    if flops <= 0:
        return 0.0, 0.0
    # gemm_s of each of the three, their compute time (the same FLOPs) computed once.
    ideal = flops / hw.gemm_flops
    compute, b, bw = ideal / cal.gemm_fraction(ideal * 1e6), hw.operand_bytes, hw.mem_bw
    fwd = compute + (b * (tokens * k + k * n) + 2.0 * tokens * n) / bw
    dgrad = compute + (b * (tokens * n + k * n) + 2.0 * tokens * k) / bw
    wgrad = compute + (b * (tokens * k + tokens * n) + 4.0 * k * n) / bw
    bwd = dgrad + wgrad
    return fwd, bwd


def _add(a: tuple[float, float], b: tuple[float, float], times: float = 1.0) -> tuple[float, float]:
    return a[0] + times * b[0], a[1] + times * b[1]


def _gemms(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, moe: bool,
           tok: float) -> tuple[tuple[float, float], float, tuple[float, float]]:
    """(forward, backward) seconds of the layer's GEMMs, the elements of the MLP activation, and
    the (forward, backward) seconds of the local experts' GEMMs alone (the expert loop).

    Attention projections, then the MLP: dense, or the router (16-bit), the local experts and
    the shared experts. Backward is dgrad + wgrad of the same sizes."""
    arch, t = job.arch, layout.tp
    h, a = arch.hidden, arch.heads
    _, d_v = attention_dims(arch)
    sp = layout.sequence_parallel
    out_params = a * d_v * h
    qkv_params = arch.attention_params_per_layer - out_params
    g = _add(_gemm_once(tok, h, qkv_params / h / t, hw, cal), _gemm_once(tok, a * d_v / t, h, hw, cal))
    mats = arch.mlp_matrices
    if moe:
        k, e_ffn = arch.active_experts, arch.expert_ffn
        local_experts = max(1, arch.experts // layout.ep)
        # Expert GEMMs split by the expert TP: the layout's TP, or 1 when EP is folded onto the
        # TP ranks, each of which then dispatches its 1/TP share of the tokens.
        e_t = expert_tp(layout)
        moe_tok = tok * e_t / t
        per_expert_tok = moe_tok * k * layout.ep / arch.experts
        g = _add(g, _gemm_once(tok / (t if sp else 1), h, arch.experts, hw.sixteen_bit(), cal))  # router
        loop = _add(_gemm_once(per_expert_tok, h, (mats - 1) * e_ffn / e_t, hw, cal),
                    _gemm_once(per_expert_tok, e_ffn / e_t, h, hw, cal))
        loop = (loop[0] * local_experts, loop[1] * local_experts)
        g = _add(g, loop)
        if arch.shared_experts:
            s_ffn = arch.shared_experts * e_ffn
            g = _add(g, _gemm_once(tok, h, (mats - 1) * s_ffn / t, hw, cal))
            g = _add(g, _gemm_once(tok, s_ffn / t, h, hw, cal))
        act_elems = tok * (k * e_ffn + arch.shared_experts * e_ffn) / t
    else:
        g = _add(g, _gemm_once(tok, h, (mats - 1) * arch.ffn / t, hw, cal))
        g = _add(g, _gemm_once(tok, arch.ffn / t, h, hw, cal))
        act_elems = tok * arch.ffn / t
        loop = (0.0, 0.0)
    return g, act_elems, loop


def _fp8_casts(job: Job, hw: Hardware, cal: TrainingCalibration, layout: Layout, moe: bool,
               tok: float) -> tuple[float, float]:
    """(forward, backward) seconds of the FP8 quantization of the dense GEMMs' operands: each
    input activation in the forward and each output gradient in the backward is cast to FP8
    by its own memory-bound kernel (Transformer Engine quantize: ``fp8_cast_bytes`` per element,
    plus a re-read for the amax with per-tensor current scaling). The routed experts' casts are
    counted with the MoE data movement (moe.movement_bytes)."""
    if job.precision != "fp8":
        return 0.0, 0.0
    arch, t = job.arch, layout.tp
    h = arch.hidden
    _, d_v = attention_dims(arch)
    attn_out = arch.heads * d_v
    qkv_out = (arch.attention_params_per_layer - attn_out * h) / h
    ffn = arch.shared_experts * arch.expert_ffn if moe else arch.ffn
    mats = arch.mlp_matrices
    inputs = (2 * h if ffn else h) + attn_out + ffn                 # QKV, proj, FC1, FC2 inputs
    grads = qkv_out + h + ((mats - 1) * ffn + h if ffn else 0.0)     # their output gradients
    per_elem = cal.fp8_cast_bytes + (0.0 if hw.block_scaled_fp8 else cal.activation_bytes)
    scale = tok / t * per_elem / hw.mem_bw
    return inputs * scale, grads * scale


def _elementwise(arch: Architecture, hw: Hardware, cal: TrainingCalibration, layout: Layout, moe: bool,
                 tok: float, act_elems: float) -> tuple[float, float, float]:
    """(forward, backward, kernel gaps) seconds of the norms, bias-dropout-adds and the MLP
    activation: bytes over the achieved HBM bandwidth, plus a fixed gap per kernel."""
    n_rep = tok * arch.hidden / (layout.tp if layout.sequence_parallel else 1)  # a replicated [s, b, h] tensor
    act_b = cal.swiglu_bytes_per_element if arch.gated_mlp else cal.gelu_bytes_per_element
    ew_bytes = (2 * cal.norm_bytes_per_element + 2 * cal.bias_dropout_add_bytes_per_element) * n_rep
    ew_bytes += act_b * act_elems
    ew_f = ew_bytes / hw.mem_bw
    ew_b = cal.elementwise_bwd_factor * ew_f
    gap = cal.kernel_gap_us * 1e-6 * cal.kernels_per_layer_fwd
    return ew_f, ew_b, gap
