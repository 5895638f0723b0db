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
from gpuplan.core.memo import memo
from gpuplan.core.records import cached_property, dataclass

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
from gpuplan.serving.moe import moe_launch_s
from gpuplan.serving.links import Links, links_for
from gpuplan.serving.step import StepTime, replica_step, step_constants  # noqa: F401  (StepTime re-exported)
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
        block, window = f.kv_block_tokens, self.arch.sliding_window  # read once
        full = held_tokens(prompt, output, block, False, window)
        if full * self.kv_bytes_per_token_stage > self.kv_budget_bytes:
            return 0
        held = held_tokens(prompt, output, block, f.kv_admission == "on_demand", window)
        return max(0, math.floor(self.kv_budget_bytes / (held * self.kv_bytes_per_token_stage))) * self.layout.dp

    def decode_context(self, prompt: int, output: int) -> float:
        """Cache tokens a decode step's attention reads per sequence, averaged over the output: the
        filled part (``prompt + (output - 1) / 2``), or the whole reserved cache for engines that
        attend over a static cache through a mask (``kv_reads = "reserved"``)."""
        if self._reads_reserved:
            return float(cached_tokens(prompt + output, self.arch.sliding_window))
        return mean_cached_tokens(prompt, output, self.arch.sliding_window)

    @cached_property
    def _reads_reserved(self) -> bool:
        """Whether the engine's decode attention reads the whole reserved cache (``kv_reads``), read
        once per replica (its steps ask at every step)."""
        return self.engine is not None and self.engine.features.kv_reads == "reserved"

    # -- forward steps ----------------------------------------------------------------------------
    @cached_property
    def _per_step(self) -> tuple[float, float, float, int, bool, bool]:
        """What every step shares, once: (fixed latency with the MoE launch chain, host launch time
        without CUDA graphs, decode KV read factor, TP all-reduces, custom all-reduce kernels in
        use, any collective or hand-off at all)."""
        a, eng, lay, k = self.arch, self.engine, self.layout, self.k
        layer_us = k.layer_latency_us  # a catalog figure, read once
        fixed_s = ((a.layers * layer_us + k.step_overhead_us) * 1e-6
                   + moe_launch_s(a, k.moe, layer_us / KERNELS_PER_LAYER))
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

    @cached_property
    def step_budget(self) -> int:
        """The engine's step token budget (``max_step_tokens``; 0 without an engine), read once: a
        capacity search fills ~1,400 steps up to the budget (serving/mixed.py)."""
        return self.engine.features.max_step_tokens if self.engine is not None else 0

    #: One engine step (gpuplan/serving/step.py: the formulas written out over these constants).
    step = replica_step
    _step_constants = cached_property(step_constants)

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
                  engine: Engine | None = None, context_tokens: int | None = None,
                  memory_headroom: float = 0.0, rates: tuple | None = None) -> Replica:
    """Per-GPU constants of one replica (rates are datasheet peaks times measured efficiencies).

    ``context_tokens``: the engine's maximum model length, where known (engine.on_context);
    ``memory_headroom``: :attr:`Replica.memory_headroom`; ``rates``: :func:`gpu_rates` of the same
    GPU, precision, constants, engine and length, where the caller builds several layouts of it."""
    if rates is None:
        rates = gpu_rates(gpu, arch, precision, k, engine, context_tokens)
    path, matmul, attention, lm_head, bw, attn_bw, eng, stream_factor = rates
    wb = _weights(arch, precision, k)
    tp, pp, shards = layout.tp, layout.pp, layout.expert_shards
    head_stream = wb.lm_head if wb.lm_head else wb.embedding  # tied: the embedding is the LM head
    quantised_stream = (wb.attention + wb.dense_mlp + wb.moe_layers * wb.shared) / tp
    fixed_stream = quantised_stream + (wb.norms + head_stream + wb.router) / tp
    expert_per_gpu = wb.expert / shards
    layers_stage = layers_per_stage(arch.layers, pp) / arch.layers
    ends = wb.embedding + wb.lm_head if pp == 1 else max(wb.embedding, wb.lm_head)
    resident = ((wb.attention + wb.dense_mlp + wb.moe_layers * wb.shared + wb.norms + wb.router) * layers_stage / tp
                + wb.moe_layers * wb.experts * wb.expert * layers_stage / shards + ends / tp)
    lm_head_params = arch.vocab * arch.hidden
    expert_active = arch.moe_layers * arch.active_experts * arch.expert_params
    dense_active = arch.active_matmul_params - lm_head_params - expert_active
    # An unfused fp8 quantise kernel reads each GEMM input in 16 bit and writes it in 8.
    quantise = 3.0 * gemm_input_elements_per_token(arch, tp) if eng.separate_quantize(precision, path.native) else 0.0
    act_bytes = k.activation_bytes  # a catalog figure, read once
    return _replica(
        gpu=gpu, arch=arch, layout=layout, path=path, kv_dtype=kv_dtype, k=k,
        links=links or links_for(gpu, catalog, k.collective_launch_us, k.all_reduce.algorithm), weights=wb,
        matmul_flops_per_s=matmul, attention_flops_per_s=attention, lm_head_flops_per_s=lm_head, bandwidth=bw,
        attention_bandwidth=attn_bw, decode_attention_s=arch.layers * k.decode_attention_latency_us * 1e-6,
        decode_attention_full_bytes=arch.layers * k.decode_attention_full_mb * 1e6,
        fixed_stream_bytes=fixed_stream, quantised_stream_bytes=quantised_stream, expert_bytes_per_gpu=expert_per_gpu,
        weight_stream_factor=stream_factor,
        gemm_flops_per_token=2.0 * dense_active / tp,
        expert_flops_per_token=2.0 * expert_active / shards,
        lm_head_flops_per_token=2.0 * lm_head_params / tp,
        attn_flops_per_pair_prefill=arch.layers * attention_flops_per_pair(arch, False) / tp,
        attn_flops_per_pair_decode=arch.layers * attention_flops_per_pair(arch, True) / tp,
        activation_bytes_per_token=activation_elements_per_token(arch, tp) * act_bytes + quantise,
        elementwise_bytes_per_token=elementwise_elements_per_token(arch, tp) * act_bytes + quantise,
        head_stream_bytes=head_stream / tp,
        kv_bytes_per_token=kv_bytes_per_token_per_gpu(arch, kv_dtype, tp, 1),
        resident_weight_bytes=resident,
        kv_bytes_per_token_stage=kv_bytes_per_token_per_gpu(arch, kv_dtype, tp, pp),
        engine=eng, memory_headroom=memory_headroom,
    )


def gpu_rates(gpu: Gpu, arch: Architecture, precision: str, k: ServingConstants, engine: Engine | None = None,
              context_tokens: int | None = None) -> tuple:
    """What :func:`build_replica` reads of the GPU alone, the same for every layout: the compute
    path, the GEMM, attention and LM-head rates, the memory and attention bandwidths, the engine on
    this GPU and length, the weight-stream factor."""
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
    eng = on_gpu(engine if engine is not None else resolve_engine(k), gpu.id, gpu.memory_usable_gib)
    eng = on_context(eng, context_tokens, gpu.vendor, arch.is_mla)
    return path, matmul, attention, lm_head, bw, attn_bw, eng, weight_stream_factor(path, k)


def _replica(**fields: object) -> Replica:
    """``Replica(**fields)``, every field given, set at once (the frozen dataclass sets its 35 fields
    one by one; a plan builds a replica per GPU and layout): an equal object."""
    out = object.__new__(Replica)
    object.__setattr__(out, "__dict__", fields)
    return out


#: Weight bytes by (architecture, precision, constants), by identity, the two held in the entry:
#: every GPU and layout of a plan shares them. Bounded: cleared when full.
_WEIGHTS: dict[tuple[int, str, int], tuple[Architecture, ServingConstants, WeightBytes]] = memo()


def _weights(arch: Architecture, precision: str, k: ServingConstants) -> WeightBytes:
    """:func:`weight_bytes`, memoised in :data:`_WEIGHTS`."""
    key = (id(arch), precision, id(k))
    hit = _WEIGHTS.get(key)
    if hit is None:
        if len(_WEIGHTS) >= 256:
            _WEIGHTS.clear()
        hit = _WEIGHTS[key] = (arch, k, weight_bytes(arch, precision, k))
    return hit[2]
