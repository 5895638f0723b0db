"""Disaggregated prefill and decode pools (DistServe): rates, and layouts that cannot hold the model."""

from __future__ import annotations

from gpuplan.serving.capacity import Demand
from gpuplan.serving.disagg import decode_rate, prefill_rate
from gpuplan.serving.model import Layout, build_replica

DEMAND = Demand(prompt_tokens=2000, output_tokens=500, ttft_s=3.0, tpot_s=0.06, percentile="p99",
                context_tokens=8192)


def test_a_prefill_replica_whose_weights_do_not_fit_serves_nothing(catalog, preset, k):
    """DeepSeek-V3 in FP8 is about 671 GB: one 192 GB MI300X cannot hold it, eight can."""
    gpu, arch = catalog.gpu("mi300x-oam-192gb"), preset("deepseek-v3")
    one = build_replica(gpu, arch, Layout(tp=1), "fp8", "fp8", k, catalog)
    eight = build_replica(gpu, arch, Layout(tp=8), "fp8", "fp8", k, catalog)
    assert one.max_sequences(2000) == 0 and eight.max_sequences(2000) >= 1
    assert prefill_rate(one, DEMAND) == 0.0 and decode_rate(one, DEMAND) == 0.0
    assert prefill_rate(eight, DEMAND) > 0
