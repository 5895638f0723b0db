"""The serving engine as an input: documented kernel and scheduler features by release.

``catalog/calibration/serving.toml`` ``[engines]`` lists, per engine (vLLM, SGLang, TensorRT-LLM,
FasterTransformer, gpt-fast), the releases at which a documented feature changed, each with its
source. A run names an engine and, optionally, a release; it takes the features of the latest
entry whose ``since`` is not after the release (the newest entry when no release is given). No
engine means current vLLM, and the plan's assumptions say so.

What each feature changes in the model (docs/serving-model.md, "Engines"):

* ``gqa_kv_reads``: decode attention streams every KV head once per query head (``heads /
  kv_heads`` times the cache) instead of once per group;
* ``kv_reads``: ``reserved`` decode attention runs over each sequence's whole reserved cache, the
  unfilled part masked (a static cache: gpt-fast), instead of the tokens cached so far
  (:meth:`gpuplan.serving.model.Replica.decode_context`);
* ``scheduling``: ``mixed`` steps carry prefill chunks beside the decode tokens and share one
  weight stream (:mod:`gpuplan.serving.mixed`); ``prefill_first`` pauses decode for each prefill;
* ``kv_admission`` and ``kv_block_tokens``: the sequences the cache holds (full-length
  reservation, or paged on-demand allocation filling the cache at the mean length) and the
  unused tail of each sequence's last block;
* ``fp8_quantize``: a separate quantise kernel reads 16-bit and writes 8-bit activations
  before every fp8 GEMM;
* ``cuda_graphs``: without graphs every kernel of a step pays its host launch;
* ``all_reduce``: custom peer-to-peer kernels (one-shot and two-shot, taken where faster than
  NCCL: :mod:`gpuplan.serving.links`) beside NCCL, or NCCL alone; ``rocm_all_reduce`` the same
  on AMD GPUs where a release's ROCm build differs (vLLM disabled its kernel on ROCm until 2025);
* ``max_batch``, ``max_step_tokens``: the scheduler's limits, which some releases pick by device
  (``small_gpu_*``: :func:`on_gpu`).
* ``host_us_per_sequence``: host (CPU) time per scheduled sequence per step, scaled by the host
  core's clock; with ``host_overlap`` a step lasts the longer of its GPU and host times.
* ``graphs_decode_only`` and ``eager_op_us``: only decode-only steps replay the CUDA graph; a step
  that carries a prompt launches its ops from Python, ``eager_op_us`` each (host clock scaled),
  on the same host thread as the per-sequence work (:func:`eager_ops_per_step`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from gpuplan.core.records import dataclass

from gpuplan.hardware.serving_calibration import ENGINE_NAMES, EngineRelease, ServingConstants

#: Host launch of one CUDA kernel without a graph (PyTorch eager / TensorRT enqueue): ~5 us per
#: launch on current CPUs (CUDA programming guide, "CUDA Graphs": launch overhead is the reason
#: graphs exist; vLLM reports eager decode 1.5-2x slower at small batch, enforce_eager docs).
EAGER_LAUNCH_US = 5.0
#: Kernels per transformer layer in a decode step (norm, QKV, RoPE + cache write, attention,
#: output projection, residual + norm, gate/up, activation, down, residual).
KERNELS_PER_LAYER = 10
#: Host op calls of a dense MLP (gate/up GEMM, activation, down GEMM) and of a routed MoE module
#: launched eagerly in TensorRT-LLM's PyTorch modules (modeling_qwen3_moe.py ``Qwen3MoE.forward``:
#: the router GEMM ``cublas_mm``, the routing method's top-k, one ``fused_moe`` op whose C++ side
#: expands, runs both grouped GEMMs with the activation between and finalizes).
DENSE_MLP_OPS = 3
MOE_MODULE_OPS = 3
#: Separate activation-quantise ops per layer where activations are quantised (``fp4_quantize`` /
#: the per-tensor fp8 quantise before each quantised Linear): a dense layer's QKV, output, gate/up
#: and down projections; an MoE layer's QKV and output projections and the experts' input (the
#: fused op quantises the second GEMM's input itself); a shared expert's two GEMMs.
DENSE_QUANTISE_OPS = 4
MOE_QUANTISE_OPS = 3
SHARED_EXPERT_QUANTISE_OPS = 2


def bench_batch_limit(batch: float) -> int:
    """The per-executor batch limit trtllm-bench sets for a run whose cache holds ``batch``
    sequences (``bench/build/tuning.py`` ``finetune_setting``: the count capped at 4,096, rounded
    up to a multiple of 32 with a floor of 64 below 256, of 128 below 1,024, of 256 above).

    Under attention DP the count is the whole group's (``calc_engine_setting`` sums the memory of
    the ``tp`` GPUs) and the limit applies to each rank."""
    raw = min(batch, 4096.0)
    if raw < 256:
        return max(64, 32 * math.ceil(raw / 32))
    step = 128 if raw < 1024 else 256
    return step * math.ceil(raw / step)


def graph_batch(per_rank: float, sizes: tuple[int, ...], limit: int) -> float:
    """Sequences a decode-only step's CUDA graph runs for ``per_rank`` sequences on each rank.

    TensorRT-LLM pads the batch with a dummy request to the next captured size
    (``cuda_graph_runner.py`` ``_get_padded_batch`` / ``_round_up_batch_size``; under attention DP
    first to the largest rank's batch, equal here); the captured sizes stop at the executor's
    batch limit, which is itself kept as the last size (``model_engine.py``
    ``_filter_cuda_graph_batch_sizes``). Without sizes, or past them, the batch runs as it is."""
    for size in sizes:
        if size >= per_rank:
            return float(min(size, limit)) if limit >= per_rank else per_rank
    return per_rank


def eager_ops_per_step(dense_layers: int, moe_layers: int, shared_experts: int, quantised: bool) -> int:
    """Ops the host launches from Python for one eager forward pass over these layers.

    A dense layer launches ``KERNELS_PER_LAYER`` ops; an MoE layer the same less the dense MLP's
    three plus the router GEMM, the top-k and the fused expert op, and a shared expert's MLP; with
    quantised activations each quantised GEMM input adds its quantise op (the FX listing of an
    NVFP4 MLP in TensorRT-LLM's torch_compile_and_piecewise_cuda_graph.md: ``fp4_quantize`` before
    every ``nvfp4_gemm``)."""
    dense = KERNELS_PER_LAYER + (DENSE_QUANTISE_OPS if quantised else 0)
    shared = DENSE_MLP_OPS + (SHARED_EXPERT_QUANTISE_OPS if quantised else 0) if shared_experts else 0
    moe = (KERNELS_PER_LAYER - DENSE_MLP_OPS + MOE_MODULE_OPS + shared
           + (MOE_QUANTISE_OPS if quantised else 0))
    return dense_layers * dense + moe_layers * moe


def parse_version(text: str) -> tuple[int, ...]:
    """``"0.6.1"`` -> ``(0, 6, 1)``; trailing non-digits of a part are ignored (``1.0rc2`` -> 1, 0)."""
    parts = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


@dataclass(frozen=True)
class Engine:
    """The resolved features of one engine release."""

    name: str
    #: The release asked for (None: the newest the catalog describes).
    version: str | None
    features: EngineRelease
    #: True when the run named no engine and the default was taken.
    defaulted: bool = False

    @property
    def label(self) -> str:
        since = self.features.since
        asked = self.version or f"current (catalog entry {since})"
        return f"{self.name} {asked}"

    def summary(self) -> str:
        """The features that shape the numbers, in words (one plan reason line)."""
        f = self.features
        sched = ("prefill chunks share the decode steps" if f.scheduling == "mixed"
                 else "each prefill pauses the decode batch")
        gqa = ("decode attention reads each KV head once per query group" if f.gqa_kv_reads == "per_group"
               else "decode attention reads each KV head once per query head")
        if f.kv_reads == "reserved":
            gqa += " over the whole reserved cache"
        admit = ("KV blocks reserved for the whole sequence" if f.kv_admission == "reserve_full"
                 else "KV blocks taken as tokens arrive")
        graphs = "CUDA graphs" if f.cuda_graphs else "no CUDA graphs"
        ar = "custom peer-to-peer all-reduce" if f.all_reduce == "custom" else "NCCL all-reduce"
        if f.rocm_all_reduce is not None and f.rocm_all_reduce != f.all_reduce:
            ar += " (RCCL on AMD GPUs)" if f.rocm_all_reduce == "nccl" else " (custom on AMD GPUs)"
        return f"Engine {self.label}: {sched}; {gqa}; {admit}; {graphs}; {ar}."

    def custom_all_reduce(self, vendor: str) -> bool:
        """The release runs its own peer-to-peer all-reduce kernels on a GPU of ``vendor``."""
        f = self.features
        choice = f.rocm_all_reduce if vendor == "amd" and f.rocm_all_reduce is not None else f.all_reduce
        return choice == "custom"

    def kv_read_factor(self, heads: int, kv_heads: int) -> float:
        """Times decode attention streams the cache: ``heads / kv_heads`` per query head, else 1."""
        if self.features.gqa_kv_reads == "per_query_head" and kv_heads:
            return heads / kv_heads
        return 1.0

    def launch_s(self, layers: int) -> float:
        """Host launch time a step pays without CUDA graphs (0 with graphs)."""
        if self.features.cuda_graphs:
            return 0.0
        return layers * KERNELS_PER_LAYER * EAGER_LAUNCH_US * 1e-6

    def host_s(self, sequences: float, host_ghz: float | None) -> float:
        """Host time of one step that schedules ``sequences`` on one executor (one attention
        data-parallel rank): ``sequences x host_us_per_sequence x reference clock / host clock``.

        The per-request Python work is single-threaded, so it scales with the core's clock; a
        host the catalog does not name runs at the reference clock."""
        f = self.features
        if f.host_us_per_sequence <= 0 or sequences <= 0:
            return 0.0
        return self._on_host(sequences * f.host_us_per_sequence, host_ghz)

    def graph_tokens(self, batch: float, dp: int) -> float:
        """Sequences a decode-only step of ``batch`` over ``dp`` attention-DP ranks computes: each
        rank's share padded to its CUDA graph's batch (:func:`graph_batch`, the limit trtllm-bench
        sets, :func:`bench_batch_limit`); ``batch`` itself without ``graph_batch_sizes``."""
        sizes = self.features.graph_batch_sizes
        if not sizes or batch <= 0:
            return batch
        return dp * graph_batch(batch / dp, sizes, bench_batch_limit(batch))

    def eager_s(self, ops: float, host_ghz: float | None) -> float:
        """Host time of launching ``ops`` from Python in a step the CUDA graph does not cover:
        ``ops x eager_op_us x reference clock / host clock`` (0 where every step is graphed)."""
        f = self.features
        if not f.graphs_decode_only or ops <= 0:
            return 0.0
        return self._on_host(ops * f.eager_op_us, host_ghz)

    def _on_host(self, reference_us: float, host_ghz: float | None) -> float:
        """Seconds of single-threaded host work that takes ``reference_us`` on a core of the
        reference clock, on a core of ``host_ghz`` (the reference clock where the catalog names none)."""
        ref = self.features.host_reference_ghz
        return reference_us * 1e-6 * ref / (host_ghz if host_ghz else ref)

    def separate_quantize(self, precision: str, native: bool) -> bool:
        """A quantise kernel runs before each GEMM (fp8 activations with fp8 math, unfused)."""
        return precision == "fp8" and native and self.features.fp8_quantize == "separate"

    def block_tokens(self, tokens: float) -> float:
        """Cache tokens a sequence of ``tokens`` occupies: rounded up to whole blocks."""
        b = self.features.kv_block_tokens
        return math.ceil(tokens / b) * b if b > 1 else tokens

    def batch_cap(self, pp: int = 1) -> int | None:
        """Sequences the scheduler runs at most per pipeline stage (None: memory only)."""
        cap = self.features.max_batch
        return max(1, cap // max(pp, 1)) if cap else None


def resolve_engine(k: ServingConstants, engine: str | None = None, version: str | None = None) -> Engine:
    """Features of ``engine`` at ``version`` (newest entry when no version; default engine when none)."""
    name = engine or k.engines.default
    if name not in ENGINE_NAMES:
        raise ValueError(f"unknown engine {name!r} (known: {', '.join(ENGINE_NAMES)})")
    releases = sorted((r for r in k.engines.release if r.engine == name), key=lambda r: parse_version(r.since))
    chosen = releases[-1]
    if version is not None:
        asked = parse_version(version)
        earlier = [r for r in releases if parse_version(r.since) <= asked]
        chosen = earlier[-1] if earlier else releases[0]
    return Engine(name=name, version=version, features=chosen, defaulted=engine is None)


def on_gpu(engine: Engine, gpu_id: str, memory_gib: float) -> Engine:
    """``engine`` with the scheduler limits it picks on this GPU.

    vLLM V1 sets ``max_num_seqs`` and ``max_num_batched_tokens`` from the device (engine/arg_utils.py:
    1,024 and 16,384 on GPUs of 70 GiB or more "like H100 and MI300x", 256 and 8,192 on smaller
    ones and on A100, vllm-project/vllm#16158 and #17885); a release without ``small_gpu_*`` limits
    is the same on every GPU."""
    f = engine.features
    if f.small_gpu_max_batch is None and f.small_gpu_max_step_tokens is None:
        return engine
    if memory_gib >= f.large_gpu_memory_gib and not any(name in gpu_id for name in f.large_gpu_excluded):
        return engine
    small = {"max_batch": f.small_gpu_max_batch, "max_step_tokens": f.small_gpu_max_step_tokens}
    return replace(engine, features=f.model_copy(update={k: v for k, v in small.items() if v is not None}))


def on_context(engine: Engine, context_tokens: int | None, vendor: str, mla: bool) -> Engine:
    """``engine`` with the scheduler it picks for a maximum model length of ``context_tokens``.

    vLLM V0 turns chunked prefill on by itself above 32K tokens (vllm-project/vllm#6666, 0.5.3) and
    then fills a step with 512 tokens, decodes first (config.py SchedulerConfig), except on ROCm from
    0.6.5 (#11146) and for MLA models from 0.7.1 (#12642). None: the length is not known."""
    f = engine.features
    if (f.long_context_step_tokens is None or not context_tokens or context_tokens <= f.long_context_above_tokens
            or (vendor == "amd" and not f.long_context_on_amd) or (mla and not f.long_context_with_mla)):
        return engine
    update = {"scheduling": "mixed", "max_step_tokens": f.long_context_step_tokens}
    return replace(engine, features=f.model_copy(update=update))
