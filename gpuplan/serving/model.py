"""Per-replica performance model of LLM serving: weights, memory, prefill and decode steps.

Everything here is one replica of ``tp x dp x pp`` GPUs running one model (docs/serving-model.md
states each formula with its source):

* weights by precision, with quantisation-scale overhead; embeddings and LM head in 16 bit;
* a forward step over ``T`` tokens is GEMMs + attention + collectives + fixed per-layer latency;
  GEMMs stream their weights (only the experts the step's tokens touch, for MoE) and do
  ``2 * active params`` FLOPs per token; their time is the smooth roofline
  ``((F / (peak * eff))^p + (bytes / (BW * MBU))^p)^(1/p)`` fitted to measured GEMMs;
  attention is ``max(F_attn / peak_attn, KV / BW_attn)``, decode attention plus an op latency a layer;
* decode runs one step per output token over the whole batch; prefill runs the prompt's tokens
  (several prompts share a step up to ``prefill_tokens_per_step``).

Times are per TP rank summed over all layers: a token's trip through ``pp`` stages is the sum of
the stage times plus ``pp - 1`` hand-offs.
"""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass
from functools import cached_property

from gpuplan.core.units import GIB
from gpuplan.model.arch import Architecture
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.physics.kv_cache import cached_tokens, held_tokens, kv_bytes_per_token_per_gpu, mean_cached_tokens
from gpuplan.physics.pipeline import layers_per_stage
from gpuplan.hardware.serving_calibration import ServingConstants
from gpuplan.physics.roofline import gemm_time_s  # noqa: F401  (re-exported)
from gpuplan.serving.layout import Layout  # noqa: F401  (re-exported)
from gpuplan.serving.engine import KERNELS_PER_LAYER, Engine, eager_ops_per_step, on_context, on_gpu, resolve_engine
from gpuplan.serving.moe import moe_launch_s, moe_module_s
from gpuplan.serving.links import Links, links_for
from gpuplan.serving.weights import (  # noqa: F401  (re-exported)
    ComputePath,
    WeightBytes,
    compute_path,
    default_kv_precision,
    sixteen_bit,
    weight_bytes,
    weight_stream_factor,
)
from gpuplan.serving.shapes import (  # noqa: F401  (re-exported: the model's public names)
    activation_elements_per_token,
    attention_flops_per_pair,
    causal_pairs,
    elementwise_elements_per_token,
    expected_experts_touched,
    gemm_input_elements_per_token,
)


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
    #: The LM head's rate: quantisation recipes keep it in 16 bit, so it multiplies at 16-bit speed.
    lm_head_flops_per_s: float
    bandwidth: float
    #: Decode attention's KV-cache read rate (``efficiency.attention_mem_bw``, else ``bandwidth``).
    attention_bandwidth: float
    #: Decode attention's fixed op latency, all layers (``decode_attention_latency_us`` each) ...
    decode_attention_s: float
    #: ... in full from this many KV bytes read, all layers (``decode_attention_full_mb`` each).
    decode_attention_full_bytes: float
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
    #: Of which the traffic of kernels other than the GEMMs (norms, gated activation, quantise).
    elementwise_bytes_per_token: float
    #: The LM head's weight bytes (part of ``fixed_stream_bytes``).
    head_stream_bytes: float
    kv_bytes_per_token: float
    # per GPU of the largest pipeline stage
    resident_weight_bytes: float
    kv_bytes_per_token_stage: float
    #: The serving engine's features (None: the bare model, no engine effects).
    engine: Engine | None = None
    #: Fraction of the usable memory left free (``[constraints] memory_headroom``): caps the KV cache.
    memory_headroom: float = 0.0

    # -- memory ---------------------------------------------------------------------------------
    @cached_property
    def kv_budget_bytes(self) -> float:
        """KV bytes per GPU: ``(usable - weights - runtime overhead) * kv_memory_fraction``."""
        usable = self.gpu.memory_usable_gib * GIB
        free = usable - self.resident_weight_bytes - self.k.runtime_overhead_gib * GIB
        fraction = self.engine.features.kv_memory_fraction if self.engine else self.k.kv_memory_fraction
        return max(0.0, min(free * fraction, free - self.memory_headroom * usable))

    def sequence_bytes(self, context: float) -> float:
        """KV bytes per GPU of one sequence of ``context`` tokens (window-capped)."""
        return cached_tokens(context, self.arch.sliding_window) * self.kv_bytes_per_token_stage

    def max_sequences(self, context: float) -> int:
        """Concurrent sequences of ``context`` tokens whose cache fits one replica.

        Attention data parallelism keeps a separate cache on each of its ``dp`` groups."""
        per_group = math.floor(self.kv_budget_bytes / self.sequence_bytes(context))
        return max(0, per_group) * self.layout.dp

    def admitted_sequences(self, prompt: int, output: int) -> int:
        """Sequences of ``prompt + output`` tokens the engine keeps in the cache at once.

        Paged on-demand allocation holds each at its mean length over its life, reservation at its
        full length, each with its block waste (physics/kv_cache.py ``held_tokens``); a sequence
        must still fit whole. Without an engine: contiguous full-length reservation."""
        eng = self.engine
        if eng is None:
            return self.max_sequences(prompt + output)
        f = eng.features
        full = held_tokens(prompt, output, f.kv_block_tokens, False, self.arch.sliding_window)
        if full * self.kv_bytes_per_token_stage > self.kv_budget_bytes:
            return 0
        held = held_tokens(prompt, output, f.kv_block_tokens, f.kv_admission == "on_demand", self.arch.sliding_window)
        return max(0, math.floor(self.kv_budget_bytes / (held * self.kv_bytes_per_token_stage))) * self.layout.dp

    def decode_context(self, prompt: int, output: int) -> float:
        """Cache tokens a decode step's attention reads per sequence, averaged over the output: the
        filled part (``prompt + (output - 1) / 2``), or the whole reserved cache for engines that
        attend over a static cache through a mask (``kv_reads = "reserved"``)."""
        if self.engine is not None and self.engine.features.kv_reads == "reserved":
            return float(cached_tokens(prompt + output, self.arch.sliding_window))
        return mean_cached_tokens(prompt, output, self.arch.sliding_window)

    # -- communication ----------------------------------------------------------------------------
    def _comm_s(self, tokens: float) -> float:
        """TP all-reduces (two per layer; MoE layers with EP use dispatch + combine all-to-all)."""
        a, lay, act = self.arch, self.layout, self.k.activation_bytes
        local_tokens = tokens / lay.dp
        n_ar, custom = self._per_step[3:5]
        t = n_ar * self.links.all_reduce_s(local_tokens * a.hidden * act, lay.tp, custom)
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
        """(time, memory part of time, flops, weight bytes, activation bytes) of the step's GEMMs.

        Each group of GEMMs takes the smooth roofline of its own math and operand stream
        (:func:`gemm_time_s`): the layers' projections at ``tokens`` rows, the LM head at ``logits``
        rows. The routed experts add their weights and math (the split the fused-MoE constants
        were fitted with, serving/moe.py); norms, the gated activation and unfused quantise
        kernels add their traffic: they run between the GEMMs, not under them."""
        a = self.arch
        touched = expected_experts_touched(a.experts, a.active_experts, tokens)
        experts = a.moe_layers * touched * self.expert_bytes_per_gpu
        w = self.fixed_stream_bytes + experts
        quantised = self.quantised_stream_bytes + experts
        local = tokens / self.layout.dp
        head_flops = logits / self.layout.dp * self.lm_head_flops_per_token
        flops = local * self.gemm_flops_per_token + tokens * self.expert_flops_per_token + head_flops
        act = local * self.activation_bytes_per_token
        bw, wsf, p = self.bandwidth, self.weight_stream_factor, self.k.gemm_knee_exponent
        mem_s = (w - quantised + quantised / wsf + act) / bw
        elementwise_s = local * self.elementwise_bytes_per_token / bw
        head_math, head_mem = head_flops / self.lm_head_flops_per_s, self.head_stream_bytes / bw
        expert_math, expert_mem = tokens * self.expert_flops_per_token / self.matmul_flops_per_s, experts / wsf / bw
        layer_math = local * self.gemm_flops_per_token / self.matmul_flops_per_s
        layer_mem = mem_s - elementwise_s - head_mem - expert_mem
        # The fused MoE module's gather, scatter and per-expert costs run beside the GEMM roofline.
        moe_s = moe_module_s(a, self.k.moe, tokens, self.layout.ep, self.layout.dp, self.path.math == "fp4")
        t = (gemm_time_s(layer_math, layer_mem, p) + gemm_time_s(head_math, head_mem, p)
             + expert_math + expert_mem + elementwise_s + moe_s)
        return t, mem_s, flops, w, act

    @cached_property
    def _per_step(self) -> tuple[float, float, float, int, bool, bool]:
        """What every step shares, once: (fixed latency with the MoE launch chain, host launch time
        without CUDA graphs, decode KV read factor, TP all-reduces, custom all-reduce kernels in
        use, any collective or hand-off at all)."""
        a, eng, lay = self.arch, self.engine, self.layout
        fixed_s = ((a.layers * self.k.layer_latency_us + self.k.step_overhead_us) * 1e-6
                   + moe_launch_s(a, self.k.moe, self.k.layer_latency_us / KERNELS_PER_LAYER))
        n_ar = a.layers + a.dense_layer_count + (a.moe_layers if lay.ep == 1 else 0)
        talks = lay.tp > 1 or lay.pp > 1 or (lay.ep > 1 and a.moe_layers > 0)
        if eng is None:
            return fixed_s, 0.0, 1.0, n_ar, False, talks
        return (fixed_s, eng.launch_s(a.layers), eng.kv_read_factor(a.heads, a.kv_heads), n_ar,
                eng.custom_all_reduce(self.gpu.vendor), talks)

    @cached_property
    def eager_prompt_s(self) -> float:
        """Host time of launching one pipeline stage's layers from Python, paid by each step that
        carries a prompt on an engine that graphs decode-only steps alone (0 elsewhere)."""
        a, eng = self.arch, self.engine
        if eng is None or not eng.features.graphs_decode_only:
            return 0.0
        ops = eager_ops_per_step(a.dense_layer_count, a.moe_layers, a.shared_experts,
                                 self.path.math in ("fp8", "fp4"))
        stage = layers_per_stage(a.layers, self.layout.pp) / a.layers
        return eng.eager_s(ops * stage, self.gpu.host_cpu_max_ghz)

    def step(self, batch: float, mean_context: float, requests: float = 0.0, prompt: int = 0) -> StepTime:
        """One engine step: ``batch`` decode tokens over caches of ``mean_context`` tokens, plus
        prefill of ``requests`` prompts of ``prompt`` tokens (a mixed step of in-flight batching
        when both are given; fractional ``requests`` is a steady-state share of a chunked prompt).

        The decode and prefill tokens share one weight stream and one set of fixed costs; decode
        attention reads each cache once (``kv_read_factor`` times for engines that read a grouped
        KV head per query head), prefill attention is causal over the prompt."""
        a = self.arch
        b = 0.0 if 0.0 > batch else batch  # max(batch, 0.0), and below max(tokens, 1.0), spelled out
        prompt_tokens = requests * prompt
        eng = self.engine
        # A decode-only step replays the CUDA graph, its batch padded to a captured size.
        rows = eng.graph_tokens(b, self.layout.dp) if eng is not None and requests == 0.0 else b
        tokens = rows + prompt_tokens
        at_least_one = 1.0 if 1.0 > tokens else tokens
        gemm_s, mem_s, flops, w, act = self._gemm(at_least_one, rows + requests)
        ctx = cached_tokens(mean_context, a.sliding_window)
        local, local_req = b / self.layout.dp, requests / self.layout.dp
        kv_decode = local * ctx * self.kv_bytes_per_token
        fixed_s, launch_s, read_factor, _, _, talks = self._per_step
        kv_decode *= read_factor
        f_decode = local * ctx * self.attn_flops_per_pair_decode
        kv_prefill = local_req * prompt * self.kv_bytes_per_token
        f_prefill = local_req * causal_pairs(prompt, a.sliding_window) * self.attn_flops_per_pair_prefill
        # Decode and prefill attention are separate kernels: each takes its own roofline.
        math_d, mem_d = f_decode / self.attention_flops_per_s, kv_decode / self.attention_bandwidth
        math_p, mem_p = f_prefill / self.attention_flops_per_s, kv_prefill / self.bandwidth
        attn_s = (mem_d if mem_d > math_d else math_d) + (mem_p if mem_p > math_p else math_p)
        if kv_decode > 0.0:
            # The decode op's fixed latency, grown in full once a layer reads decode_attention_full_mb.
            ramp = kv_decode / self.decode_attention_full_bytes
            attn_s += self.decode_attention_s * (ramp if ramp < 1.0 else 1.0)
        kv, f_attn = kv_decode + kv_prefill, f_decode + f_prefill
        # Without a TP, EP or PP group both terms are 0.0 (the calls return it): skipped.
        comm_s = self._comm_s(at_least_one) + self._handoffs_s(at_least_one) if talks else 0.0
        if eng is not None:
            # Without CUDA graphs the host launches every kernel: the step lasts at least that long.
            busy = gemm_s + attn_s + comm_s + fixed_s
            fixed_s += max(0.0, launch_s - busy)
            # Per-request host work of one executor (one per attention data-parallel rank): hidden
            # under the GPU step with the overlap scheduler, added to it without.
            host = eng.host_s(local + local_req, self.gpu.host_cpu_max_ghz)
            if requests > 0.0:
                # The CUDA graph covers decode-only steps alone: this step's ops launch from Python.
                host += self.eager_prompt_s
            busy = gemm_s + attn_s + comm_s + fixed_s
            fixed_s += max(0.0, host - busy) if eng.features.host_overlap else host
        # Positional, in field order: a frozen dataclass takes keywords about 60% slower.
        return StepTime(gemm_s, attn_s, comm_s, fixed_s, flops + f_attn, w, kv, act, mem_s)

    def decode_step(self, batch: float, mean_context: float) -> StepTime:
        """One decode step of ``batch`` sequences whose cache holds ``mean_context`` tokens on average."""
        return self.step(max(batch, 1.0), mean_context)

    def prefill_step(self, requests: int, prompt: int) -> StepTime:
        """One prefill step of ``requests`` prompts of ``prompt`` tokens (logits of the last token only)."""
        return self.step(0.0, 0.0, requests, prompt)

    def prefill_s(self, requests: int, prompt: int) -> float:
        """Time to prefill ``requests`` prompts, packed ``prefill_tokens_per_step`` tokens a step.

        A prompt longer than the step budget runs as one step of its own."""
        per_step = max(1, self.k.engine.prefill_tokens_per_step // max(prompt, 1))
        full, rest = divmod(requests, per_step)
        t = full * self.prefill_step(per_step, prompt).total_s if full else 0.0
        if rest:
            t += self.prefill_step(rest, prompt).total_s
        return t


def build_replica(gpu: Gpu, arch: Architecture, layout: Layout, precision: str, kv_dtype: str,
                  k: ServingConstants, catalog: Catalog, links: Links | None = None,
                  engine: Engine | None = None, context_tokens: int | None = None) -> Replica:
    """Per-GPU constants of one replica (rates are datasheet peaks times measured efficiencies).

    ``context_tokens``: the engine's maximum model length, where known (engine.on_context)."""
    path = compute_path(gpu, precision)
    peak = gpu.peak_tflops(path.math)
    assert peak is not None
    matmul = peak * 1e12 * gpu.matmul_efficiency(path.math) * k.gemm_efficiency_vs_mamf
    base = sixteen_bit(gpu)
    attn_peak = gpu.peak_tflops(base)
    assert attn_peak is not None
    attention = attn_peak * 1e12 * gpu.matmul_efficiency(base) * k.attention_efficiency_vs_mamf
    lm_head = min(matmul, attn_peak * 1e12 * gpu.matmul_efficiency(base) * k.gemm_efficiency_vs_mamf)
    bw = gpu.mem_bw_tb_per_s * 1e12 * gpu.efficiency.mem_bw
    attn_bw = gpu.mem_bw_tb_per_s * 1e12 * (gpu.efficiency.attention_mem_bw or gpu.efficiency.mem_bw)
    wb = weight_bytes(arch, precision, k)
    tp, pp, shards = layout.tp, layout.pp, layout.expert_shards
    head_stream = wb.lm_head if wb.lm_head else wb.embedding  # tied: the embedding is the LM head
    quantised_stream = (wb.attention + wb.dense_mlp + wb.moe_layers * wb.shared) / tp
    fixed_stream = quantised_stream + (wb.norms + head_stream + wb.router) / tp
    expert_per_gpu = wb.expert / shards
    layers_stage = layers_per_stage(arch.layers, pp) / arch.layers
    ends = wb.embedding + wb.lm_head if pp == 1 else max(wb.embedding, wb.lm_head)
    resident = ((wb.attention + wb.dense_mlp + wb.moe_layers * wb.shared + wb.norms + wb.router) * layers_stage / tp
                + wb.moe_layers * wb.experts * wb.expert * layers_stage / shards + ends / tp)
    eng = on_gpu(engine if engine is not None else resolve_engine(k), gpu.id, gpu.memory_usable_gib)
    eng = on_context(eng, context_tokens, gpu.vendor, arch.is_mla)
    lm_head_params = arch.vocab * arch.hidden
    expert_active = arch.moe_layers * arch.active_experts * arch.expert_params
    dense_active = arch.active_matmul_params - lm_head_params - expert_active
    # An unfused fp8 quantise kernel reads each GEMM input in 16 bit and writes it in 8.
    quantise = 3.0 * gemm_input_elements_per_token(arch, tp) if eng.separate_quantize(precision, path.native) else 0.0
    return Replica(
        gpu=gpu, arch=arch, layout=layout, path=path, kv_dtype=kv_dtype, k=k,
        links=links or links_for(gpu, catalog, k.collective_launch_us, k.all_reduce.algorithm), weights=wb,
        matmul_flops_per_s=matmul, attention_flops_per_s=attention, lm_head_flops_per_s=lm_head, bandwidth=bw,
        attention_bandwidth=attn_bw, decode_attention_s=arch.layers * k.decode_attention_latency_us * 1e-6,
        decode_attention_full_bytes=arch.layers * k.decode_attention_full_mb * 1e6,
        fixed_stream_bytes=fixed_stream, quantised_stream_bytes=quantised_stream, expert_bytes_per_gpu=expert_per_gpu,
        weight_stream_factor=weight_stream_factor(path, k),
        gemm_flops_per_token=2.0 * dense_active / tp,
        expert_flops_per_token=2.0 * expert_active / shards,
        lm_head_flops_per_token=2.0 * lm_head_params / tp,
        attn_flops_per_pair_prefill=arch.layers * attention_flops_per_pair(arch, False) / tp,
        attn_flops_per_pair_decode=arch.layers * attention_flops_per_pair(arch, True) / tp,
        activation_bytes_per_token=activation_elements_per_token(arch, tp) * k.activation_bytes + quantise,
        elementwise_bytes_per_token=elementwise_elements_per_token(arch, tp) * k.activation_bytes + quantise,
        head_stream_bytes=head_stream / tp,
        kv_bytes_per_token=kv_bytes_per_token_per_gpu(arch, kv_dtype, tp, 1),
        resident_weight_bytes=resident,
        kv_bytes_per_token_stage=kv_bytes_per_token_per_gpu(arch, kv_dtype, tp, pp),
        engine=eng,
    )
