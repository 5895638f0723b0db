"""Evaluate one fixed serving configuration: a GPU, a layout, a batch or the offline maximum.

Used by the validation cases (:mod:`gpuplan.serving.cases`) and available to callers that want
the figures of a configuration without the fleet search.
"""

from __future__ import annotations

from gpuplan.core.records import dataclass

from gpuplan.model.arch import Architecture
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.serving.offline import offline_tokens_per_s, static_batch_tokens_per_s
from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.serving.engine import Engine
from gpuplan.serving.mixed import mixed_offline_tokens_per_s, offline_batch
from gpuplan.serving.model import GIB, Layout, build_replica, default_kv_precision


@dataclass(frozen=True)
class FixedResult:
    """Figures of one replica (``replicas`` copies for the system totals)."""

    gpu: str
    layout: Layout
    compute_dtype: str
    #: Sequences decoded together: the given batch, or the offline maximum.
    batch: int
    max_sequences: int
    weights_gib_per_gpu: float
    #: One sequence's decode rate and step time at ``batch``.
    decode_tokens_per_s: float
    tpot_ms: float
    #: Prefill of the batch's prompts (first-token latency without queueing).
    ttft_ms: float
    #: Output tokens/s of one replica: the static batch run to completion, or the offline maximum.
    output_tokens_per_s: float
    bound: str

    @property
    def fits(self) -> bool:
        return self.max_sequences >= 1


def evaluate_fixed(arch: Architecture, gpu: Gpu, layout: Layout, precision: str, prompt_tokens: int,
                   output_tokens: int, catalog: Catalog, *, kv_precision: str | None = None,
                   batch: int | None = None, engine: Engine | None = None,
                   requests: int | None = None, context_tokens: int | None = None) -> FixedResult:
    """Figures of ``layout`` on ``gpu`` at ``batch`` sequences, or (``batch=None``) offline.

    Offline: the largest batch whose full-length KV cache fits, continuously refilled, prefill
    amortised (``lam * output`` of :func:`~gpuplan.serving.capacity.offline_tokens_per_s`), or
    with an engine that mixes prefill into decode steps the steady state of
    :mod:`gpuplan.serving.mixed`. ``engine`` None: the catalog's default engine (current vLLM).
    ``requests``: the requests an offline run sent, where known; when the engine could hold them
    all, it admits them at once and the run is one static batch of ``requests`` sequences (same
    lengths: they prefill together and finish together), never a steady state at the full cache.
    ``context_tokens``: the engine's maximum model length (engine.on_context), where known.
    """
    k = serving_constants(catalog)
    kv = kv_precision or default_kv_precision(precision)
    replica = build_replica(gpu, arch, layout, precision, kv, k, catalog, engine=engine, context_tokens=context_tokens)
    cap = replica.max_sequences(prompt_tokens + output_tokens)
    if batch is None and requests is not None and 1 <= requests <= offline_batch(replica, prompt_tokens, output_tokens):
        used = requests
        throughput = static_batch_tokens_per_s(replica, requests, prompt_tokens, output_tokens)
    elif batch is None:
        used = offline_batch(replica, prompt_tokens, output_tokens)
        eng = replica.engine
        if eng is not None and eng.features.scheduling == "mixed" and output_tokens > 1:
            throughput = mixed_offline_tokens_per_s(replica, prompt_tokens, output_tokens, used)
        else:
            throughput, _ = offline_tokens_per_s(replica, prompt_tokens, output_tokens, used)
        used = max(used, 1)
    else:
        used = batch
        throughput = static_batch_tokens_per_s(replica, batch, prompt_tokens, output_tokens)
    micro = min(layout.pp, used)
    step = replica.decode_step(used / micro, replica.decode_context(prompt_tokens, output_tokens))
    return FixedResult(
        gpu=gpu.id, layout=layout, compute_dtype=replica.path.math, batch=used, max_sequences=cap,
        weights_gib_per_gpu=replica.resident_weight_bytes / GIB, decode_tokens_per_s=1.0 / step.total_s,
        tpot_ms=step.total_s * 1e3, ttft_ms=replica.prefill_s(used, prompt_tokens) * 1e3,
        output_tokens_per_s=throughput, bound=step.dominant(),
    )
