"""Prompts enter mixed steps filled up to the engine's token budget, offline and under load alike.

Published figure: TensorRT-LLM perf-overview (commit 00f37686), Llama 3.3 70B FP8 on 2 H100 (TP 2),
20000/2000 offline: 437 output tokens/s (../shared/validation/frontier/serving.toml).
"""

from __future__ import annotations

import pytest

from gpuplan.physics.kv_cache import mean_cached_tokens
from gpuplan.serving.capacity import Demand, ReplicaCapacity
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.fixed import evaluate_fixed
from gpuplan.serving.mixed import budget_share, mixed_offline_tokens_per_s
from gpuplan.serving.model import Layout, build_replica


def test_step_mix_by_hand():
    """405B at 37 sequences, 20000/2000, 8,192-token budget: 37 / 1,999 requests start a step, 370.2
    prompt tokens; the room is 8,192 - 37 = 8,155 tokens, so 370.2 / 8,155 = 4.54 % of the steps
    carry a full chunk (a prompt takes 3 of them) and the rest decode alone."""
    share, piece = budget_share(37, 37 / 1999 * 20000, 20000, 8192)
    assert piece == 8155
    assert share == pytest.approx(0.04539, abs=1e-5)
    # 1000/1000 at 500 sequences: 500.5 prompt tokens a step, one whole prompt every second step.
    assert budget_share(500, 500 / 999 * 1000, 1000, 8192) == pytest.approx((0.5005, 1000), rel=1e-4)
    # Three prompts arrive a step (a short output): every step carries them.
    assert budget_share(1000, 3000, 1000, 8192) == (1.0, 3000)
    # A budget below the decode batch leaves no room: every step carries its share.
    assert budget_share(9000, 100, 1000, 8192) == (1.0, 100)
    assert budget_share(100, 0.0, 1000, 8192) == (0.0, 0.0)


def _replica(catalog, preset, k):
    return build_replica(catalog.gpu("h100-sxm-80gb"), preset("llama-3.1-70b"), Layout(tp=2), "fp8", "fp8", k,
                         catalog, engine=resolve_engine(k, "trtllm"))


def test_long_context_prompts_in_budget_steps_match_the_published_row(catalog, preset, k):
    """437 tok/s measured. Budget-filled steps: within 5 %; every prompt spread over every step
    (~200 prompt tokens beside 22 decode tokens hide the weight stream) was 12.6 % fast."""
    r = evaluate_fixed(preset("llama-3.1-70b"), catalog.gpu("h100-sxm-80gb"), Layout(tp=2), "fp8", 20000, 2000,
                       catalog, engine=resolve_engine(k, "trtllm"))
    assert r.output_tokens_per_s == pytest.approx(437, rel=0.05)
    rep = _replica(catalog, preset, k)
    requests = r.batch / 1999
    spread = rep.step(r.batch, mean_cached_tokens(20000, 2000, None), requests, 20000).total_s
    assert requests * 2000 / spread > 437 * 1.10


def test_the_planner_under_load_runs_the_same_step_mix(catalog, preset, k):
    """recommend's capacity at the offline batch carries the offline harness's throughput: TPOT is the
    mean step of the same mix, so the two agree to rounding."""
    rep = _replica(catalog, preset, k)
    cap = ReplicaCapacity(rep, Demand(20000, 2000, ttft_s=60.0, tpot_s=1.0, percentile="p99"))
    batch = 22
    assert cap.rate(batch) * 2000 == pytest.approx(mixed_offline_tokens_per_s(rep, 20000, 2000, batch), rel=1e-9)
    wp = cap.at(batch)
    # Decode-only steps are faster than the mean; the steps carrying a prompt chunk are slower.
    decode_only = rep.step(batch, cap.mean_context).total_s
    assert decode_only < wp.tpot_s < wp.prefill_latency_s / 3
