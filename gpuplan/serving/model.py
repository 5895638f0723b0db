"""Per-replica performance model of LLM serving: weights, memory, prefill and decode steps.

Everything here is one replica of ``tp x dp x pp`` GPUs running one model (docs/serving-model.md
states each formula with its source):

* weights by precision, with quantisation-scale overhead; embeddings and LM head in 16 bit;
* a forward step over ``T`` tokens is GEMMs + attention + collectives + fixed per-layer latency;
  GEMMs stream their weights (only the experts the step's tokens touch, for MoE) and do
  ``2 * active params`` FLOPs per token; their time is the no-overlap roofline
  ``F / (peak * eff) + bytes / (BW * MBU)``; attention is ``max(F_attn / peak_attn, KV / BW)``;
* decode runs one step per output token over the whole batch; prefill runs the prompt's tokens
  (several prompts share a step up to ``prefill_tokens_per_step``).

Times are per TP rank summed over all layers: a token's trip through ``pp`` stages is the sum of
the stage times plus ``pp - 1`` hand-offs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.arch import Architecture
from gpuplan.catalog.loader import Catalog
from gpuplan.catalog.schema import Gpu
from gpuplan.kv_cache import cached_tokens, kv_bytes_per_token_per_gpu
from gpuplan.serving.constants import ServingConstants
from gpuplan.serving.links import Links, links_for

GIB = 2**30
#: Bits per stored weight of each serving precision (format definitions).
WEIGHT_BITS: dict[str, float] = {"bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 4, "fp4": 4}


# -- compute dtype -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ComputePath:
    """How weights of one precision are multiplied on one GPU."""

    precision: str
    #: dtype of the tensor-core math.
    math: str
    #: False when the GPU lacks the format's math and the weights are dequantised (weight-only).
    native: bool
    note: str = ""


def sixteen_bit(gpu: Gpu) -> str:
    """The GPU's 16-bit math: bf16 where it has bf16 tensor cores, else fp16 (T4, V100)."""
    return "bf16" if gpu.bf16_dense_tflops else "fp16"


def compute_path(gpu: Gpu, precision: str) -> ComputePath:
    """Math dtype for weights stored at ``precision`` on ``gpu``.

    bf16/fp16: 16-bit math (fp16 where bf16 is missing). int8/int4: weight-only quantisation,
    16-bit math (AWQ/GPTQ/Marlin kernels dequantise in registers). fp8: fp8 math where the GPU
    has it, else weight-only fp8 with 16-bit math. fp4: fp4 math where supported, else
    dequantised to fp8 math, else to 16-bit math; weight bytes stay 4-bit plus scales.
    """
    base = sixteen_bit(gpu)
    if precision in ("bf16", "fp16"):
        math_dtype = "fp16" if precision == "fp16" or base == "fp16" else "bf16"
        note = "" if math_dtype == precision else f"{gpu.id} has no bf16 tensor cores: fp16 math"
        return ComputePath(precision, math_dtype, True, note)
    if precision in ("int8", "int4"):
        return ComputePath(precision, base, True, f"{precision} weight-only: {base} math")
    if precision == "fp8":
        if gpu.fp8_dense_tflops:
            return ComputePath(precision, "fp8", True)
        return ComputePath(precision, base, False,
                           f"{gpu.id} has no fp8 tensor cores: fp8 weights served weight-only, {base} math")
    if precision == "fp4":
        if gpu.fp4_dense_tflops:
            return ComputePath(precision, "fp4", True)
        fallback = "fp8" if gpu.fp8_dense_tflops else base
        return ComputePath(precision, fallback, False,
                           f"{gpu.id} has no fp4 tensor cores: fp4 weights dequantised to {fallback} math")
    raise ValueError(f"unknown precision {precision!r}")


def weight_stream_factor(path: ComputePath, k: ServingConstants) -> float:
    """Bandwidth share a GEMM keeps when it dequantises its weights in the loop (weight-only int8/
    int4, fp8 without fp8 math, fp4 without fp4 math); 1 when the format is multiplied natively."""
    weight_only = path.precision in ("int8", "int4") or (path.precision in ("fp8", "fp4") and not path.native)
    return k.weight_only_factor(path.precision) if weight_only else 1.0


def default_kv_precision(precision: str) -> str:
    """KV dtype when none is given: follows the weights (bf16/fp16/fp8), fp8 for fp4, else bf16.

    Same rule as the profile (gpuplan/profile.py)."""
    if precision in ("bf16", "fp16", "fp8"):
        return precision
    return "fp8" if precision == "fp4" else "bf16"


# -- weights -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WeightBytes:
    """Bytes of the whole model by part, at a serving precision."""

    attention: float     # all layers' attention projections (quantised)
    dense_mlp: float     # MLPs of the dense layers (quantised)
    expert: float        # one routed expert of one layer (quantised)
    shared: float        # shared experts of one MoE layer (quantised)
    router: float        # all routers (16-bit)
    norms: float         # all norms (16-bit)
    embedding: float     # 16-bit
    lm_head: float       # 16-bit; 0 when tied to the embedding
    moe_layers: int
    experts: int

    @property
    def layer_parts(self) -> float:
        """Everything that scales with the layer count."""
        return (self.attention + self.dense_mlp + self.moe_layers * (self.experts * self.expert + self.shared)
                + self.router + self.norms)

    @property
    def total(self) -> float:
        return self.layer_parts + self.embedding + self.lm_head


def weight_bytes(arch: Architecture, precision: str, k: ServingConstants) -> WeightBytes:
    """Weight bytes by part: linear layers at ``bits + scale bits``, the rest in 16 bit.

    Quantisation recipes (TensorRT Model Optimizer, vLLM fp8/AWQ/GPTQ, NVFP4 checkpoints) quantise
    the linear layers of the transformer blocks and keep embeddings, LM head, norms and routers in
    16 bit.
    """
    q = (WEIGHT_BITS[precision] + k.scale_bits(precision)) / 8
    half = 2.0
    head = 0 if arch.tied_embeddings else arch.vocab * arch.hidden
    return WeightBytes(
        attention=arch.layers * arch.attention_params_per_layer * q,
        dense_mlp=arch.dense_layer_count * arch.dense_mlp_params * q,
        expert=arch.expert_params * q if arch.is_moe else 0.0,
        shared=arch.shared_experts * arch.expert_params * q if arch.is_moe else 0.0,
        router=arch.moe_layers * arch.hidden * arch.experts * half,
        norms=(2 * arch.layers + 1) * arch.hidden * half,
        embedding=arch.vocab * arch.hidden * half,
        lm_head=head * half,
        moe_layers=arch.moe_layers,
        experts=arch.experts,
    )


def expected_experts_touched(experts: int, active: int, tokens: float) -> float:
    """Distinct routed experts a step of ``tokens`` tokens touches in one MoE layer.

    With uniform top-k routing each expert is missed by one token with probability ``1 - k/E``,
    so ``E * (1 - (1 - k/E)^tokens)`` experts are touched (active experts at batch 1, all of
    them at large batch; aiconfigurator caps the same read with ``min(E, tokens * k)``).
    """
    if experts <= 0:
        return 0.0
    return experts * (1.0 - (1.0 - active / experts) ** max(tokens, 0.0))


# -- layout ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """Parallelism of one replica. ``ep > tp`` means attention data parallelism (dp = ep / tp)."""

    tp: int = 1
    pp: int = 1
    ep: int = 1

    @property
    def dp(self) -> int:
        return self.ep // self.tp if self.ep > self.tp else 1

    @property
    def expert_shards(self) -> int:
        """GPUs one MoE layer's experts are spread over."""
        return max(self.tp, self.ep)

    @property
    def gpus(self) -> int:
        return self.tp * self.dp * self.pp

    def check(self, arch: Architecture) -> str | None:
        """Why the layout cannot run ``arch``, or None."""
        if arch.heads % self.tp:
            return f"tp {self.tp} does not divide {arch.heads} attention heads"
        if self.pp > arch.layers:
            return f"pp {self.pp} exceeds {arch.layers} layers"
        if self.ep > 1 and not arch.is_moe:
            return "ep > 1 needs a mixture-of-experts model"
        if self.ep > 1 and self.ep % self.tp and self.tp % self.ep:
            return f"ep {self.ep} and tp {self.tp} must divide one another"
        if arch.is_moe and self.ep > arch.experts:
            return f"ep {self.ep} exceeds {arch.experts} experts"
        return None


# -- step times -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepTime:
    """One forward step on one GPU, seconds, with its FLOPs and DRAM bytes."""

    gemm_s: float
    attention_s: float
    comm_s: float
    fixed_s: float
    flops: float
    weight_bytes: float
    kv_bytes: float
    activation_bytes: float
    gemm_memory_s: float

    @property
    def total_s(self) -> float:
        return self.gemm_s + self.attention_s + self.comm_s + self.fixed_s

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.kv_bytes + self.activation_bytes

    def dominant(self) -> str:
        """The largest share of the step, in words."""
        kv_s = self.attention_s
        weights_s = self.gemm_memory_s
        math_s = self.gemm_s - self.gemm_memory_s
        parts = {"memory bandwidth (weights)": weights_s, "memory bandwidth (KV cache)": kv_s,
                 "compute": math_s, "communication": self.comm_s, "fixed per-layer latency": self.fixed_s}
        return max(parts, key=lambda p: parts[p])


@dataclass(frozen=True)
class Replica:
    """One replica's per-GPU constants; build with :func:`build_replica`."""

    gpu: Gpu
    arch: Architecture
    layout: Layout
    path: ComputePath
    kv_dtype: str
    k: ServingConstants
    links: Links
    weights: WeightBytes
    matmul_flops_per_s: float
    attention_flops_per_s: float
    bandwidth: float
    # per GPU, all layers (one TP rank's share of the whole model)
    fixed_stream_bytes: float
    #: Of which quantised linear-layer bytes (streamed at the dequantising kernel's rate).
    quantised_stream_bytes: float
    expert_bytes_per_gpu: float
    #: Fraction of the bandwidth roofline a weight-only (dequantising) GEMM keeps; 1 for native math.
    weight_stream_factor: float
    gemm_flops_per_token: float
    expert_flops_per_token: float
    lm_head_flops_per_token: float
    attn_flops_per_pair_prefill: float
    attn_flops_per_pair_decode: float
    activation_bytes_per_token: float
    kv_bytes_per_token: float
    # per GPU of the largest pipeline stage
    resident_weight_bytes: float
    kv_bytes_per_token_stage: float
    #: Fraction of the usable memory left free (``[constraints] memory_headroom``): caps the KV cache.
    memory_headroom: float = 0.0

    # -- memory ---------------------------------------------------------------------------------
    @property
    def kv_budget_bytes(self) -> float:
        """KV bytes per GPU: ``(usable - weights - runtime overhead) * kv_memory_fraction``."""
        usable = self.gpu.memory_usable_gib * GIB
        free = usable - self.resident_weight_bytes - self.k.runtime_overhead_gib * GIB
        return max(0.0, min(free * self.k.kv_memory_fraction, free - self.memory_headroom * usable))

    def sequence_bytes(self, context: float) -> float:
        """KV bytes per GPU of one sequence of ``context`` tokens (window-capped)."""
        return cached_tokens(context, self.arch.sliding_window) * self.kv_bytes_per_token_stage

    def max_sequences(self, context: float) -> int:
        """Concurrent sequences of ``context`` tokens whose cache fits one replica.

        Attention data parallelism keeps a separate cache on each of its ``dp`` groups."""
        per_group = math.floor(self.kv_budget_bytes / self.sequence_bytes(context))
        return max(0, per_group) * self.layout.dp

    # -- communication ----------------------------------------------------------------------------
    def _comm_s(self, tokens: float) -> float:
        """TP all-reduces (two per layer; MoE layers with EP use dispatch + combine all-to-all)."""
        a = self.arch
        lay = self.layout
        act = self.k.activation_bytes
        local_tokens = tokens / lay.dp
        moe_ar = a.moe_layers if lay.ep == 1 else 0
        n_ar = a.layers + a.dense_layer_count + moe_ar
        t = n_ar * self.links.all_reduce_s(local_tokens * a.hidden * act, lay.tp)
        if lay.ep > 1 and a.moe_layers:
            per_rank = tokens / lay.expert_shards * a.active_experts * a.hidden * act
            t += 2 * a.moe_layers * self.links.all_to_all_s(per_rank, lay.expert_shards)
        return t

    def _handoffs_s(self, tokens: float) -> float:
        lay = self.layout
        if lay.pp <= 1:
            return 0.0
        size = tokens / lay.dp * self.arch.hidden * self.k.activation_bytes
        stage_gpus = lay.tp * lay.dp
        per_domain = self.links.local_domain // stage_gpus if stage_gpus <= self.links.local_domain else 1
        crossing = lay.pp - 1 if per_domain <= 1 else math.ceil(lay.pp / per_domain) - 1
        local = lay.pp - 1 - crossing
        t = local * self.links.handoff_s(size, 2 * stage_gpus) if local else 0.0
        if crossing:
            t += crossing * self.links.handoff_s(size, None)
        return t

    # -- forward steps ----------------------------------------------------------------------------
    def _gemm(self, tokens: float, logits: float) -> tuple[float, float, float, float, float]:
        """(time, memory part of time, flops, weight bytes, activation bytes) of the step's GEMMs."""
        a = self.arch
        touched = expected_experts_touched(a.experts, a.active_experts, tokens)
        experts = a.moe_layers * touched * self.expert_bytes_per_gpu
        w = self.fixed_stream_bytes + experts
        quantised = self.quantised_stream_bytes + experts
        local = tokens / self.layout.dp
        flops = (local * self.gemm_flops_per_token + tokens * self.expert_flops_per_token
                 + logits / self.layout.dp * self.lm_head_flops_per_token)
        act = local * self.activation_bytes_per_token
        mem_s = (w - quantised + quantised / self.weight_stream_factor + act) / self.bandwidth
        return flops / self.matmul_flops_per_s + mem_s, mem_s, flops, w, act

    def decode_step(self, batch: float, mean_context: float) -> StepTime:
        """One decode step of ``batch`` sequences whose cache holds ``mean_context`` tokens on average."""
        b = max(batch, 1.0)
        ctx = cached_tokens(mean_context, self.arch.sliding_window)
        gemm_s, mem_s, flops, w, act = self._gemm(b, b)
        local = b / self.layout.dp
        kv = local * ctx * self.kv_bytes_per_token
        f_attn = local * ctx * self.attn_flops_per_pair_decode
        attn_s = max(f_attn / self.attention_flops_per_s, kv / self.bandwidth)
        return StepTime(gemm_s=gemm_s, attention_s=attn_s, comm_s=self._comm_s(b) + self._handoffs_s(b),
                        fixed_s=self.arch.layers * self.k.layer_latency_us * 1e-6 + self.k.step_overhead_us * 1e-6,
                        flops=flops + f_attn, weight_bytes=w, kv_bytes=kv, activation_bytes=act, gemm_memory_s=mem_s)

    def prefill_step(self, requests: int, prompt: int) -> StepTime:
        """One prefill step of ``requests`` prompts of ``prompt`` tokens (logits of the last token only)."""
        tokens = requests * prompt
        gemm_s, mem_s, flops, w, act = self._gemm(tokens, requests)
        pairs = causal_pairs(prompt, self.arch.sliding_window)
        local_req = requests / self.layout.dp
        f_attn = local_req * pairs * self.attn_flops_per_pair_prefill
        kv = local_req * prompt * self.kv_bytes_per_token
        attn_s = max(f_attn / self.attention_flops_per_s, kv / self.bandwidth)
        return StepTime(gemm_s=gemm_s, attention_s=attn_s,
                        comm_s=self._comm_s(tokens) + self._handoffs_s(tokens),
                        fixed_s=self.arch.layers * self.k.layer_latency_us * 1e-6 + self.k.step_overhead_us * 1e-6,
                        flops=flops + f_attn, weight_bytes=w, kv_bytes=kv, activation_bytes=act, gemm_memory_s=mem_s)

    def prefill_s(self, requests: int, prompt: int) -> float:
        """Time to prefill ``requests`` prompts, packed ``prefill_tokens_per_step`` tokens a step.

        A prompt longer than the step budget runs as one step of its own."""
        per_step = max(1, self.k.engine.prefill_tokens_per_step // max(prompt, 1))
        full, rest = divmod(requests, per_step)
        t = full * self.prefill_step(per_step, prompt).total_s if full else 0.0
        if rest:
            t += self.prefill_step(rest, prompt).total_s
        return t


def causal_pairs(prompt: int, window: int = 0) -> float:
    """(query, key) pairs of causal attention over ``prompt`` tokens: ``sum_i min(i, window)``."""
    if not window or prompt <= window:
        return prompt * (prompt + 1) / 2
    return window * (window + 1) / 2 + (prompt - window) * window


def attention_flops_per_pair(arch: Architecture, absorbed: bool) -> float:
    """FLOPs of one (query, key) pair in one layer, all heads: QK^T plus AV.

    MHA/GQA: ``4 * heads * head_dim``. MLA prefill (decompressed K, V): ``2 * heads * (head_dim +
    rope_head_dim + v_head_dim)``. MLA decode with the up-projections absorbed into the query and
    output (DeepSeek-V2 section 2.1.2): ``2 * heads * (2 * kv_lora_rank + rope_head_dim)``.
    """
    if not arch.is_mla:
        return 4.0 * arch.heads * arch.head_dim
    if absorbed:
        return 2.0 * arch.heads * (2 * arch.kv_lora_rank + arch.rope_head_dim)
    v = arch.v_head_dim or arch.head_dim
    return 2.0 * arch.heads * (arch.head_dim + arch.rope_head_dim + v)


def activation_elements_per_token(arch: Architecture, tp: int) -> float:
    """Activation elements one token reads and writes in DRAM per step, all layers, one TP rank.

    GEMM inputs and outputs (QKV in/out, attention out, O-proj in/out, MLP up in/out, gated
    activation in/out, down in/out) and two fused residual-add + norm passes; the tensors that TP
    splits count ``1/tp``. LLM-Viewer (model_analyzer.py) counts the same load_act/store_act.
    """
    h = arch.hidden
    if arch.is_mla:
        qkv_out = (arch.heads * (arch.head_dim + arch.rope_head_dim)) / tp + arch.kv_lora_rank + arch.rope_head_dim
        attn_out = arch.heads * (arch.v_head_dim or arch.head_dim) / tp
    else:
        qkv_out = (arch.heads + 2 * arch.kv_heads) * arch.head_dim / tp
        attn_out = arch.heads * arch.head_dim / tp
    gate = 2 if arch.gated_mlp else 1

    def mlp(width: float) -> float:
        return h + gate * width / tp + (gate + 1) * width / tp + width / tp + h

    dense = mlp(arch.ffn)
    moe = mlp((arch.active_experts + arch.shared_experts) * arch.expert_ffn) if arch.is_moe else 0.0
    attention = h + qkv_out + 2 * attn_out + h
    norms = 2 * 3 * h
    return (arch.layers * (attention + norms) + arch.dense_layer_count * dense + arch.moe_layers * moe)


def build_replica(gpu: Gpu, arch: Architecture, layout: Layout, precision: str, kv_dtype: str,
                  k: ServingConstants, catalog: Catalog, links: Links | None = None) -> Replica:
    """Per-GPU constants of one replica (rates are datasheet peaks times measured efficiencies)."""
    path = compute_path(gpu, precision)
    peak = gpu.peak_tflops(path.math)
    assert peak is not None
    matmul = peak * 1e12 * gpu.matmul_efficiency(path.math) * k.gemm_efficiency_vs_mamf
    base = sixteen_bit(gpu)
    attn_peak = gpu.peak_tflops(base)
    assert attn_peak is not None
    attention = attn_peak * 1e12 * gpu.matmul_efficiency(base) * k.attention_efficiency_vs_mamf
    bw = gpu.mem_bw_tbps * 1e12 * gpu.efficiency.mem_bw
    wb = weight_bytes(arch, precision, k)
    tp, pp, shards = layout.tp, layout.pp, layout.expert_shards
    head_stream = wb.lm_head if wb.lm_head else wb.embedding  # tied: the embedding is the LM head
    quantised_stream = (wb.attention + wb.dense_mlp + wb.moe_layers * wb.shared) / tp
    fixed_stream = quantised_stream + (wb.norms + head_stream + wb.router) / tp
    expert_per_gpu = wb.expert / shards
    layers_stage = math.ceil(arch.layers / pp) / arch.layers
    ends = wb.embedding + wb.lm_head if pp == 1 else max(wb.embedding, wb.lm_head)
    resident = ((wb.attention + wb.dense_mlp + wb.moe_layers * wb.shared + wb.norms + wb.router) * layers_stage / tp
                + wb.moe_layers * wb.experts * wb.expert * layers_stage / shards + ends / tp)
    lm_head_params = arch.vocab * arch.hidden
    expert_active = arch.moe_layers * arch.active_experts * arch.expert_params
    dense_active = arch.active_matmul_params - lm_head_params - expert_active
    return Replica(
        gpu=gpu, arch=arch, layout=layout, path=path, kv_dtype=kv_dtype, k=k,
        links=links or links_for(gpu, catalog, k.collective_launch_us), weights=wb,
        matmul_flops_per_s=matmul, attention_flops_per_s=attention, bandwidth=bw,
        fixed_stream_bytes=fixed_stream, quantised_stream_bytes=quantised_stream, expert_bytes_per_gpu=expert_per_gpu,
        weight_stream_factor=weight_stream_factor(path, k),
        gemm_flops_per_token=2.0 * dense_active / tp,
        expert_flops_per_token=2.0 * expert_active / shards,
        lm_head_flops_per_token=2.0 * lm_head_params / tp,
        attn_flops_per_pair_prefill=arch.layers * attention_flops_per_pair(arch, False) / tp,
        attn_flops_per_pair_decode=arch.layers * attention_flops_per_pair(arch, True) / tp,
        activation_bytes_per_token=activation_elements_per_token(arch, tp) * k.activation_bytes,
        kv_bytes_per_token=kv_bytes_per_token_per_gpu(arch, kv_dtype, tp, 1),
        resident_weight_bytes=resident,
        kv_bytes_per_token_stage=kv_bytes_per_token_per_gpu(arch, kv_dtype, tp, pp),
    )
