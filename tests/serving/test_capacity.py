"""Steady-state continuous batching: Little's law, targets, and the rate search."""

from __future__ import annotations

import pytest

from gpuplan.serving.capacity import (
    Demand,
    ReplicaCapacity,
    offline_tokens_per_s,
    static_batch_tokens_per_s,
)
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.model import Layout, build_replica

DEMAND = Demand(prompt_tokens=1000, output_tokens=256, ttft_s=2.0, tpot_s=0.05, percentile="p99", context_tokens=8192)


@pytest.fixture(params=["prefill_first", "mixed"])
def capacity(request, catalog, preset, k):
    # vLLM 0.5 pauses decode for each prefill; current vLLM (V1) mixes prefill chunks into decode steps.
    engine = resolve_engine(k, "vllm", "0.5" if request.param == "prefill_first" else None)
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), preset("llama-3.1-8b"), Layout(), "bf16", "bf16", k, catalog,
                        engine=engine)
    return ReplicaCapacity(rep, DEMAND)


def test_littles_law_holds_at_every_workpoint(capacity):
    if capacity.mixed:
        for c in (1.0, 10.0, 100.0):
            wp = capacity.at(c)
            assert wp.concurrency == pytest.approx(wp.rate * 255 * wp.tpot_s, rel=1e-9)
            assert wp.tpot_s == wp.step_s      # prefill shares the step: no pause to inflate TPOT
            assert wp.rho == pytest.approx(wp.rate * wp.prefill_service_s, rel=1e-12)
            assert wp.prefill_latency_s > capacity.step(c).total_s    # the chunk's step is longer
        return
    for c in (1.0, 10.0, 100.0):
        wp = capacity.at(c)
        assert wp.concurrency == pytest.approx(wp.rate * 255 * wp.tpot_s, rel=1e-9)
        assert wp.rho == pytest.approx(wp.rate * capacity.prefill_service_s, rel=1e-12)  # utilisation = lambda S
        assert 0 < wp.rho < 1
        # Decode pauses while a prompt is prefilled: a token takes longer than a decode step.
        assert wp.tpot_s > wp.step_s
    # ... and the pauses grow with the load: TPOT / step rises with the concurrency.
    stretch = [capacity.at(c).tpot_s / capacity.at(c).step_s for c in (1.0, 10.0, 100.0)]
    assert stretch == sorted(stretch)


def test_rate_and_latency_grow_with_concurrency(capacity):
    pts = [capacity.at(c) for c in (1, 4, 16, 64, 128)]
    assert [p.rate for p in pts] == sorted(p.rate for p in pts)
    assert [p.tpot_s for p in pts] == sorted(p.tpot_s for p in pts)
    assert [p.ttft_p99_s for p in pts] == sorted(p.ttft_p99_s for p in pts)
    assert all(p.ttft_p99_s >= p.ttft_mean_s for p in pts)


def test_best_meets_every_target_and_is_tight(capacity):
    wp, limit = capacity.best()
    assert wp is not None
    assert capacity.violations(wp) == []
    assert limit in ("tpot", "ttft", "kv", "utilisation")
    if limit != "kv":
        assert capacity.violations(capacity.at(wp.concurrency * 1.01))
    assert wp.tpot_s <= 0.05 and wp.ttft_target_stat_s <= 2.0


def test_at_rate_inverts_the_rate(capacity):
    ceiling, _ = capacity.best()
    half = capacity.at_rate(ceiling.rate / 2, ceiling)
    assert half.rate == pytest.approx(ceiling.rate / 2, rel=1e-4)
    assert half.tpot_s < ceiling.tpot_s


def test_impossible_targets_are_named(catalog, preset, k):
    rep = build_replica(catalog.gpu("l4"), preset("llama-3.1-8b"), Layout(), "fp8", "fp8", k, catalog)
    tight_tpot = ReplicaCapacity(rep, Demand(1000, 256, 10.0, 0.001, "p99"))
    assert tight_tpot.best() == (None, "tpot")
    tight_ttft = ReplicaCapacity(rep, Demand(8000, 256, 0.01, 1.0, "p99"))
    assert tight_ttft.best() == (None, "ttft")


def test_static_and_offline_throughput(catalog, preset, k):
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), preset("llama-3.1-8b"), Layout(), "fp8", "fp8", k, catalog)
    tps, batch = offline_tokens_per_s(rep, 1000, 1000)
    assert batch == rep.max_sequences(2000) and batch > 100
    assert tps == pytest.approx(static_batch_tokens_per_s(rep, batch, 1000, 1000), rel=0.05)
    assert static_batch_tokens_per_s(rep, 64, 1000, 1000) < tps


def test_paged_engines_admit_sequences_at_their_mean_length(catalog, preset, k):
    """The planner's replica capacity uses the engine's KV admission: vLLM's paged cache (block 16,
    taken as tokens arrive) holds a 1,000 + 1,000 sequence at 1,507 tokens on average, TRT-LLM's
    guaranteed-no-evict scheduler reserves 2,016 (63 blocks of 32): 2016 / 1507 = 1.34x more
    sequences for vLLM from the same cache."""
    gpu, arch = catalog.gpu("h100-sxm-80gb"), preset("llama-3.1-8b")
    demand = Demand(prompt_tokens=1000, output_tokens=1000, ttft_s=10.0, tpot_s=1.0, percentile="p99")
    caps = {}
    for name in ("vllm", "trtllm"):
        rep = build_replica(gpu, arch, Layout(), "fp8", "fp8", k, catalog, engine=resolve_engine(k, name))
        per_seq = rep.kv_bytes_per_token_stage
        caps[name] = ReplicaCapacity(rep, demand).max_sequences
        held = 1000 + 999 / 2 + 7.5 if name == "vllm" else 2016
        assert caps[name] == int(rep.kv_budget_bytes // (held * per_seq))
    assert caps["vllm"] / caps["trtllm"] == pytest.approx(2016 / 1507.0, rel=0.01)
