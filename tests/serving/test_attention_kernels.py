"""Attention terms of the serving model against measured TensorRT-LLM attention kernels.

Measured: aiconfigurator's TensorRT-LLM 1.3.0rc20 tables on H100 SXM (github.com/ai-dynamo/
aiconfigurator at 095f58a, 2026-08-21, aic-core/src/aiconfigurator_core/systems/data/h100_sxm/
attention/trtllm/1.3.0rc20/{generation,context}_attention_perf.parquet): one layer's
``TrtllmAttention.forward`` (RoPE and KV-cache write, then XQA or context FMHA), heads per GPU,
fp8 KV cache. Modelled: the step's attention term over its layers (decode: with its op latency
``decode_attention_latency_us``) plus the two kernels' share of the per-layer fixed latency
(``2 x layer_latency_us / KERNELS_PER_LAYER``, as benchmarks/fit_attention.py compares). benchmarks/fit_attention.py reports the whole tables.
"""

from __future__ import annotations

import pytest

from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.model.arch import resolve
from gpuplan.serving.engine import KERNELS_PER_LAYER, resolve_engine
from gpuplan.serving.model import Layout, build_replica


def _per_layer_us(catalog, preset: str, tp: int, batch: int, context: int, prompt: int = 0) -> float:
    k = serving_constants(catalog)
    arch = resolve(catalog.lookup("model", preset))[0]
    replica = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=tp), "fp8", "fp8", k, catalog,
                            engine=resolve_engine(k, "trtllm", None))
    step = replica.step(batch, context) if not prompt else replica.step(0.0, 0.0, 1, prompt)
    return step.attention_s / arch.layers * 1e6 + 2 * k.layer_latency_us / KERNELS_PER_LAYER


@pytest.mark.parametrize("preset, tp, batch, measured_us", [
    ("llama-3.1-8b", 1, 32, 357.0),     # 32 query / 8 KV heads, 32 x 16,384 cached tokens: 1.07 GB of KV
    ("llama-3.1-70b", 2, 16, 100.4),    # 32 / 4 heads, 16 x 16,384 tokens: 268 MB
    ("llama-3.1-405b", 8, 32, 68.9),    # 16 / 1 heads, 32 x 16,384 tokens: 134 MB
])
def test_decode_attention_matches_measured_xqa(catalog, preset, tp, batch, measured_us):
    """Decode attention reads the cache at 0.93 of the H100's 3.35 TB/s after an op latency of 6 +
    15 us a layer (the fit to the TensorRT-LLM tables, benchmarks/fit_attention.py): 8B 21 +
    1,074 MB / 3.12 TB/s = 365 us against 357 measured, 405B 21 + 43 = 64 us against 68.9. The
    roofline at the weight-stream bandwidth (0.84 of spec, no op latency) gave 387 and 54 us."""
    modelled = _per_layer_us(catalog, preset, tp, batch, 16384)
    assert modelled == pytest.approx(measured_us, rel=0.08)


def test_short_decode_attention_pays_a_share_of_the_op_latency(catalog):
    """At batch 1 over 1,024 tokens (Llama 3.1 8B shape, fp8 KV: 2.1 MB a layer) the measured op
    takes 7.9 us; the op latency counts 2.1 / 32 of its 15 us: 6 + 1.0 + 0.7 = 7.7 us."""
    assert _per_layer_us(catalog, "llama-3.1-8b", 1, 1, 1023) == pytest.approx(7.9, rel=0.08)


def test_prefill_attention_of_a_long_prompt_matches_measured_fmha(catalog):
    """One 8,192-token prompt of Llama 3.1 70B at TP 2 (32 query / 4 KV heads, fp8 KV, FP8 context
    FMHA): 922.2 us per layer measured; the model's causal FLOPs at 0.70 of the 16-bit MAMF give
    ~1,000 us (within 10 %)."""
    assert _per_layer_us(catalog, "llama-3.1-70b", 2, 0, 0, prompt=8192) == pytest.approx(922.2, rel=0.10)
