"""Memory per GPU: model states, activations, runtime overhead (docs/training-model.md, M1-M7).

Model states follow a named byte convention (calibration ``state_convention``):
``mixed-adam-fp32-grads`` = 2 + 4 + 12 = 18 B/param (Megatron-LM), ``mixed-adam`` = 16 B/param
(ZeRO paper). ZeRO-1 shards the optimizer states, ZeRO-2 also the gradients, ZeRO-3/FSDP also
the weights, over the data-parallel group (DP x CP for dense weights; expert weights over the
DP x CP / EP ranks that hold the same experts) (Rajbhandari et al. 2020, arXiv:1910.02054).

Activations per layer follow Korthikanti et al. 2022 (arXiv:2205.05198) Table 2, written per
tensor so that GQA, SwiGLU, MoE and MLA change the right terms; for GPT (MHA, 4h GeLU MLP)
they reduce exactly to sbh(34 + 5as/h) (no parallelism), sbh(10 + 24/t + 5as/(ht)) (TP),
sbh/t(34 + 5as/h) (TP + SP), and 2sbh (full recompute).

The peak is the pipeline rank whose total is largest (:func:`pipeline_stages`): rank 0 holds the
input embedding and the most micro-batches in flight (min(p, m) with 1F1B, p(1 + (p-1)/(pv))
interleaved: Korthikanti section 4.2.3), the last rank the output layer (a copy of the word
embeddings when they are tied) and the fp32 logits of the loss, the middle ranks transformer
layers only (Megatron-Core GPTModel: ``pre_process`` / ``post_process`` stages). With an uneven
split (Megatron-Core ``num_layers_in_first/last_pipeline_stage``) the first and last ranks hold
fewer layers and the peak may sit on rank 1.
"""

# No ``from __future__ import annotations``: the NamedTuples' field types stay objects (typing
# turns a string annotation into a ForwardRef, compiled at import: ~70k instructions a field).

import math
from typing import NamedTuple

from gpuplan.core.memo import memo
from gpuplan.core.units import GIB, dtype_bytes
from gpuplan.model.arch import Architecture
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.training.flops import attention_dims
from gpuplan.training.layout import Layout, expert_tp, layers_per_stage, recomputed_layers, sharding
from gpuplan.training.stages import rank_layers

#: Bytes per score-matrix element stored by materialized attention: softmax output (2),
#: dropout mask (1), dropout output (2) (Korthikanti 2022 section 4.1: the 5as/h term).
SCORE_BYTES = 5
#: Bytes per dropout-mask element (Korthikanti 2022: one byte per element).
MASK_BYTES = 1
#: FlashAttention keeps one fp32 log-sum-exp per query and head.
LSE_BYTES = 4


class Memory(NamedTuple):
    """Per-GPU bytes on the most loaded pipeline rank (:func:`pipeline_stages`). A named tuple (the
    layout search builds several per layout it evaluates)."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    overhead: float
    capacity: float
    #: Bytes every recommended layout leaves free (``[constraints] memory_headroom``).
    reserve: float = 0.0
    #: The pipeline rank these bytes are of (0 = first; PP - 1 = last).
    rank: int = 0

    @property
    def model_states(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> float:
        return self.model_states + self.activations + self.overhead

    @property
    def headroom(self) -> float:
        return self.capacity - self.total

    @property
    def fits(self) -> bool:
        return self.total <= self.capacity - self.reserve


# -- parameters per GPU ----------------------------------------------------------------------
def expert_dp(layout: Layout) -> int:
    """Ranks that hold the same experts (the expert-DP group ZeRO shards expert states over)."""
    return max(1, layout.tp * layout.dp * layout.cp // (expert_tp(layout) * layout.ep))


def layer_params(arch: Architecture, moe: bool) -> tuple[float, float]:
    """(non-expert, routed-expert) parameters of one layer (dense or MoE)."""
    common = arch.attention_params_per_layer + arch.norm_params_per_layer
    if not moe:
        return float(common + arch.dense_mlp_params), 0.0
    shared = arch.shared_experts * arch.expert_params + arch.hidden * arch.experts
    return float(common + shared), float(arch.experts * arch.expert_params)


def _layer_pair(arch: Architecture) -> tuple[float, float]:
    """(non-expert, expert) parameters of one layer of the heavier kind (dense or MoE)."""
    dense, expert = layer_params(arch, arch.is_moe and arch.moe_layers > 0)
    if arch.is_moe and arch.dense_layer_count and arch.moe_layers:
        d_dense, _ = layer_params(arch, False)
        dense = max(dense, d_dense)
    return dense, expert


def stage_params(arch: Architecture, layout: Layout) -> tuple[float, float]:
    """(non-expert, expert) parameters one GPU of the fullest stage holds (the DP traffic's
    stage, timing.py): ceil(L/p) layers of the heavier kind plus the embedding or the LM head
    (both when p = 1); everything is split by TP, experts also by EP.
    """
    ends = arch.embedding_params + arch.lm_head_params if layout.pp == 1 else max(
        arch.embedding_params, arch.lm_head_params)
    # Stage(0, layers, ends, False), built as a tuple (about 300 a plan).
    return rank_params(arch, layout, tuple.__new__(Stage, (0, layers_per_stage(arch.layers, layout.pp), ends, False)))


class Stage(NamedTuple):
    """A pipeline rank the memory peak may sit on."""

    rank: int
    layers: int
    #: Parameters of the input embedding and the output layer the rank holds.
    ends: float
    #: Whether the rank computes the loss (holds the fp32 logits of a micro-batch).
    logits: bool


def pipeline_stages(arch: Architecture, pp: int, split: str | None = None) -> tuple[Stage, ...]:
    """The ranks the peak may sit on: the first (embedding), the first middle rank of each layer
    count (its peers hold as many layers and fewer micro-batches) and the last (output layer and
    loss). Megatron-Core builds the embedding where ``pre_process`` (pipeline rank 0, its first
    virtual chunk) and the output layer where ``post_process`` (the last rank, its last chunk);
    with tied embeddings the last rank keeps a copy of the word embeddings for the output layer
    (``share_embeddings_and_output_weights``). Layers per rank: the run's ``split``
    (stages.rank_layers; default stages.stage_split: middle ranks ``ceil(L/p)``, first and last
    lighter when ``p`` does not divide ``L``)."""
    key = (arch.layers, pp, arch.embedding_params, arch.lm_head_params, split)
    hit = _STAGES.get(key)
    if hit is None:
        emb = float(arch.embedding_params)
        if pp <= 1:
            hit = (Stage(0, arch.layers, emb + arch.lm_head_params, True),)
        else:
            per = rank_layers(arch.layers, pp, split)
            seen: dict[int, int] = {}
            for r in range(1, pp - 1):
                seen.setdefault(per[r], r)
            middle = tuple(Stage(r, n, 0.0, False) for n, r in sorted(seen.items(), key=lambda kv: kv[1]))
            hit = (Stage(0, per[0], emb, False), *middle, Stage(pp - 1, per[-1], emb, True))
        if len(_STAGES) >= 4096:
            _STAGES.clear()
        _STAGES[key] = hit
    return hit


#: :func:`pipeline_stages` by (layers, PP, embedding and output-layer parameters, split); bounded.
_STAGES: dict[tuple[int, int, int, int, str | None], tuple[Stage, ...]] = memo()


def rank_params(arch: Architecture, layout: Layout, stage: Stage) -> tuple[float, float]:
    """(non-expert, expert) parameters one GPU of ``stage`` holds: its layers of the heavier kind
    and its ends, split by TP; experts by expert TP x EP."""
    dense, expert = _layer_pair(arch)
    return _params_on(stage.layers, stage.ends, dense, expert, layout.tp, expert_tp(layout) * layout.ep)


def _params_on(layers: int, ends: float, dense: float, expert: float, tp: int, experts_split: int) -> tuple[float, float]:
    """:func:`rank_params` of a rank of ``layers`` layers (``dense`` and ``expert`` parameters each)
    and ``ends`` parameters of embedding and head: the non-expert ones split by TP, the experts by
    expert TP x EP (``experts_split``)."""
    return (layers * dense + ends) / tp, layers * expert / experts_split


def model_state_bytes(arch: Architecture, layout: Layout, cal: TrainingCalibration,
                      precision: str, split: str | None = None) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per GPU under the byte convention and ZeRO stage, of
    the rank with the most (:func:`stage_state_bytes`)."""
    return max(stage_state_bytes(arch, layout, cal, precision, split), key=sum)


def stage_state_bytes(arch: Architecture, layout: Layout, cal: TrainingCalibration,
                      precision: str, split: str | None = None) -> tuple[tuple[float, float, float], ...]:
    """(weights, gradients, optimizer) bytes per GPU of each of :func:`pipeline_stages`: each
    rank's parameters (:func:`rank_params`' split) at the convention's bytes, sharded over the
    data-parallel ranks from the ZeRO stage that shards them (what every rank shares computed once)."""
    w_b, g_b, o_b = cal.state_bytes
    if precision == "fp8":
        w_b = w_b + cal.fp8_weight_copy_bytes
    dense, expert = _layer_pair(arch)
    tp, experts_split = layout.tp, expert_tp(layout) * layout.ep
    shard_dense = layout.dp * layout.cp
    shard_expert = expert_dp(layout)
    zero = sharding(layout)
    gathered = 0.0
    if layout.zero == 3:
        # FSDP gathers the current layer and prefetches the next: two layers of 16-bit weights.
        d_layer, e_layer = layer_params(arch, arch.is_moe and arch.moe_layers > 0)
        gathered = 2 * w_b * (d_layer / layout.tp + e_layer / (layout.ep * expert_tp(layout)))
    out = []
    for st in pipeline_stages(arch, layout.pp, split):
        d, e = _params_on(st[1], st[2], dense, expert, tp, experts_split)
        sharded, whole = d / shard_dense + e / shard_expert, d + e
        weights = w_b * (sharded if zero >= 3 else whole)
        if layout.zero == 3:
            weights += gathered
        out.append((weights, g_b * (sharded if zero >= 2 else whole), o_b * (sharded if zero >= 1 else whole)))
    return tuple(out)


# -- activations -----------------------------------------------------------------------------
def layer_activation_bytes(arch: Architecture, seq: int, micro_batch: int, layout: Layout,
                           attention: str, cal: TrainingCalibration, moe: bool,
                           recompute: str | None = None, fp8: bool = False) -> float:
    """Bytes one layer keeps for the backward pass of one micro-batch (Korthikanti Table 2).

    ``recompute`` defaults to the layout's. Tensors are 16-bit (``activation_bytes``), dropout
    masks one byte. CP splits the sequence; TP splits the per-head and MLP tensors; SP also
    splits the replicated ones (norm inputs, GEMM inputs, dropout masks). ``fp8``: the inputs
    of the FP8 GEMMs (QKV, out-projection, FC1, FC2, expert GEMMs) are kept as the 1-byte FP8
    copies the forward GEMM used (Transformer Engine saves the quantized input for the wgrad
    GEMM: te.pytorch Linear / LayerNormLinear ``ctx.save_for_backward`` of the FP8 tensor).
    """
    rc = layout.recompute if recompute is None else recompute
    a_b = cal.activation_bytes
    g_b = dtype_bytes("fp8") if fp8 else a_b                             # bytes of a saved GEMM input
    t = layout.tp
    sb = seq / layout.cp * micro_batch                    # tokens of this GPU's micro-batch
    h = arch.hidden
    sp_div = t if layout.sequence_parallel else 1
    if rc == "full":
        return a_b * sb * h / sp_div                      # the layer input only
    d_qk, d_v = attention_dims(arch)
    a, kv = arch.heads, arch.kv_heads
    # Replicated across TP unless SP: two norm inputs, QKV input, MLP input, two dropout masks.
    replicated = sb * h * (2 * a_b + 2 * g_b + 2 * MASK_BYTES)
    if arch.is_mla:
        replicated += a_b * sb * (arch.q_lora_rank + arch.kv_lora_rank + arch.rope_head_dim)
    # Split by TP: Q, K, V and the attention output (out-projection input).
    split = a_b * sb * (a * d_qk + kv * d_qk + kv * d_v) + g_b * sb * a * d_v
    mats_in = 2 if arch.gated_mlp else 1                  # GeLU input, or gate and up outputs
    if moe:
        k = arch.active_experts
        ffn_e = arch.expert_ffn
        # dispatched input and FC2 input (GEMM inputs) + activation inputs
        split += sb * (k * (g_b * (h + ffn_e) + a_b * mats_in * ffn_e)
                       + arch.shared_experts * (g_b + a_b * mats_in) * ffn_e)
        replicated += 4.0 * sb * arch.experts                 # fp32 router probabilities
    else:
        split += sb * (a_b * mats_in + g_b) * arch.ffn    # activation inputs + FC2 input
    keys = min(seq, arch.sliding_window) if arch.sliding_window else seq
    if attention == "materialized" and rc == "none":
        scores = SCORE_BYTES * micro_batch * a * (seq / layout.cp) * keys
    elif attention == "materialized":
        scores = 0.0                                      # selective recompute drops them
    else:
        scores = LSE_BYTES * sb * a                       # FlashAttention log-sum-exp
    return replicated / sp_div + (split + scores) / t


def in_flight(layout: Layout, batch: int, rank: int = 0) -> float:
    """Micro-batches' worth of its layers pipeline rank ``rank`` holds at its peak (M7): the
    forward passes Megatron-Core's schedule runs before that rank's first backward, plus the one
    in flight (schedules.get_pp_rank_microbatches): 1F1B ``p - r - 1`` warm-up micro-batches,
    interleaved ``2 (p - r - 1) + (v - 1) p`` warm-up chunks of ``1/v`` of the rank's layers;
    both capped by the micro-batches of the step. Rank 0 interleaved: ``p (1 + (p-1)/(p v))``
    (Korthikanti 2022 section 4.2.3)."""
    p = layout.pp
    return _held(p, layout.vp, layout.microbatches(batch) if p != 1 else 0, rank)


def _held(p: int, v: int, m: int, rank: int) -> float:
    """:func:`in_flight` of PP ``p``, VP ``v`` and ``m`` micro-batches a step."""
    if p == 1:
        return 1.0
    if v > 1:
        return min(m * v, 2 * (p - rank - 1) + (v - 1) * p + 1) / v
    return float(min(p - rank, m))


def stage_activations(arch: Architecture, seq: int, batch: int, layout: Layout, cal: TrainingCalibration,
                      stored: float, full: float, stage: Stage) -> float:
    """Activation bytes of ``stage`` at its peak, from the per-layer bytes of a recomputed and a
    kept layer: its layers x its in-flight micro-batches x per-layer bytes, a recomputed layer
    keeping only its input (Megatron-LM --recompute-num-layers recomputes the first k layers of
    each stage); plus the backward working set of one layer (its activations, recomputed or
    not, while their gradients are formed); on the rank with the loss, the fp32 logits of one
    micro-batch (Korthikanti 2022 section 4.3: 4 s b V / t)."""
    n = stage.layers
    k = recomputed_layers(layout, n)
    acts = in_flight(layout, batch, stage.rank) * (k * stored + (n - k) * full)
    return acts + _transient(arch, seq, layout, cal, full if n else 0.0, stage.logits)


def _transient(arch: Architecture, seq: int, layout: Layout, cal: TrainingCalibration, full: float,
               logits: bool) -> float:
    """One layer's activations being differentiated, and the logits of the loss on its rank."""
    extra = full
    if logits:
        extra += _logits_bytes(arch, seq, layout, cal)
    return extra


def _logits_bytes(arch: Architecture, seq: int, layout: Layout, cal: TrainingCalibration) -> float:
    """The fp32 logits of one micro-batch on the rank with the loss (Korthikanti 2022 section 4.3)."""
    return cal.logits_bytes_per_element * seq / layout.cp * layout.micro_batch * arch.vocab / layout.tp


def per_layer_pair(arch: Architecture, seq: int, layout: Layout, attention: str,
                   cal: TrainingCalibration, fp8: bool = False) -> tuple[float, float]:
    """(bytes kept by a fully recomputed layer, bytes kept by a layer that is not)."""
    return _per_layer(arch, seq, layout, attention, cal, fp8)


def _per_layer(arch: Architecture, seq: int, layout: Layout, attention: str,
               cal: TrainingCalibration, fp8: bool = False) -> tuple[float, float]:
    """(bytes kept by a fully recomputed layer, bytes kept by a layer that is not), of the
    heavier layer kind; "full" here means the layout's non-full recompute (none/selective)."""
    kinds = [arch.is_moe and arch.moe_layers > 0]
    if arch.is_moe and arch.dense_layer_count:
        kinds.append(False)
    rest = "none" if layout.recompute == "full" else layout.recompute
    stored = max(layer_activation_bytes(arch, seq, layout.micro_batch, layout, attention, cal, k, "full")
                 for k in kinds)
    full = max(layer_activation_bytes(arch, seq, layout.micro_batch, layout, attention, cal, k, rest, fp8)
               for k in kinds)
    return stored, full


def recompute_layers_to_fit(arch: Architecture, seq: int, batch: int, layout: Layout, attention: str,
                            cal: TrainingCalibration, budgets: tuple[float, ...],
                            pair: tuple[float, float] | None = None, split: str | None = None) -> int | None:
    """Fewest recomputed layers per stage (at least 1, full recompute) that bring every rank's
    activations within its budget (``budgets``, one per :func:`pipeline_stages`, as
    :func:`activation_budget`); None when even recomputing every layer does not fit.
    ``pair`` is :func:`per_layer_pair` when the caller has it."""
    stored, full = pair if pair is not None else _per_layer(arch, seq, layout, attention, cal)
    most = 1
    # in_flight and _transient of each rank inlined (as in peak).
    p, v = layout.pp, layout.vp
    m = layout.microbatches(batch) if p != 1 else 0
    for (rank, n, _, logits), budget in zip(pipeline_stages(arch, layout.pp, split), budgets):
        held = _held(p, v, m, rank)
        extra = full if n else 0.0
        if logits:
            extra += _logits_bytes(arch, seq, layout, cal)
        need = n * held * full + extra - budget
        if need <= 0:
            continue
        saving = held * (full - stored)
        if saving <= 0:
            return None
        k = math.ceil(need / saving)
        if k > n:
            return None
        most = max(most, k)
    return most


def peak(arch: Architecture, seq: int, batch: int, layout: Layout, cal: TrainingCalibration,
         states: tuple[tuple[float, float, float], ...], stored: float, full: float, capacity: float,
         reserve: float = 0.0, split: str | None = None) -> Memory:
    """The :class:`Memory` of the rank of :func:`pipeline_stages` with the largest total, from each
    rank's model-state bytes (:func:`stage_state_bytes`) and the per-layer activation bytes."""
    runtime, frag = cal.runtime_overhead_gib * GIB, cal.fragmentation_fraction
    # stage_activations and Memory.total of each rank, their expressions inlined (the hot path: a
    # plan asks for ~1,100 peaks), and one Memory built, of the rank with the largest total.
    p, v, full_rc = layout.pp, layout.vp, layout.recompute == "full"
    m = layout.microbatches(batch) if p != 1 else 0
    top = None
    top_total = 0.0
    for st, (w, g, o) in zip(pipeline_stages(arch, layout.pp, split), states):
        rank, n, _, logits = st
        k = recomputed_layers(layout, n) if full_rc else 0
        extra = full if n else 0.0
        if logits:
            extra += _logits_bytes(arch, seq, layout, cal)
        acts = _held(p, v, m, rank) * (k * stored + (n - k) * full) + extra
        overhead = runtime + frag * acts
        total = w + g + o + acts + overhead
        if top is None or total > top_total:
            top, top_total = (w, g, o, acts, overhead, rank), total
    w, g, o, acts, overhead, rank = top  # type: ignore[misc]
    # Memory's fields in order: weights, gradients, optimizer, activations, overhead, capacity,
    # reserve, rank (positionally: the search builds one per layout).
    return tuple.__new__(Memory, (w, g, o, acts, overhead, capacity, reserve, rank))


def activation_budget(states: tuple[tuple[float, float, float], ...], limit: float,
                      cal: TrainingCalibration) -> tuple[float, ...]:
    """Bytes left for activations on each rank of ``states`` (:func:`stage_state_bytes`) within
    ``limit`` bytes after its model states and the runtime overhead (fragmentation is a fraction of
    the activations themselves)."""
    runtime = cal.runtime_overhead_gib * GIB
    return tuple((limit - sum(s) - runtime) / (1.0 + cal.fragmentation_fraction) for s in states)
