"""The decode step's floor (serving/step_floor.py) holds: past the concurrency it names, every step
misses the TPOT target, and no ceiling is faster than the rate bound the lean sizing prunes by
(issue 21: the capacity search skips those steps and layouts, its plans byte-identical)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.serving.capacity import Demand, ReplicaCapacity
from gpuplan.serving.disagg import decode_rate_bound, decode_worker
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.model import Layout, build_replica
from gpuplan.serving.step_floor import (
    attention_terms,
    ceiling_rate_bound,
    decode_tight_rate_bound,
    floor_terms,
    gemm_terms,
    reduce_lines,
    step_floor,
    tight_floor,
    tight_rate_bound,
    with_all_reduce,
)

DEMAND = Demand(prompt_tokens=2000, output_tokens=400, ttft_s=2.0, tpot_s=0.05, percentile="p99", context_tokens=8192)
CASES = [  # GPU, model, layout, precision, engine (vllm mixes prefill into the decode steps, sglang does not)
    ("h100-sxm-80gb", "llama-3.1-70b", Layout(tp=4), "fp8", "vllm"),
    ("h100-sxm-80gb", "llama-3.1-8b", Layout(tp=1), "bf16", "sglang"),
    ("mi355x-oam-288gb", "llama-3.1-70b", Layout(tp=1), "fp8", "vllm"),
    ("b200-sxm-180gb", "llama-3.1-70b", Layout(tp=8, pp=2), "fp8", "vllm"),
    ("a100-sxm-80gb", "llama-3.1-70b", Layout(tp=8, pp=4), "bf16", "sglang"),
    ("h200-sxm-141gb", "mixtral-8x22b", Layout(tp=8, ep=8), "fp8", "trtllm"),
]


def _capacity(catalog, preset, k, gpu, model, layout, precision, engine, demand=DEMAND):
    rep = build_replica(catalog.gpu(gpu), preset(model), layout, precision, precision, k, catalog,
                        engine=resolve_engine(k, engine), context_tokens=demand.context_tokens)
    return ReplicaCapacity(rep, demand)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}")
def test_every_step_past_the_floors_concurrency_misses_the_tpot_target(catalog, preset, k, case):
    for tpot_s in (0.012, 0.03, 0.05, 0.2):
        cap = _capacity(catalog, preset, k, *case, demand=replace(DEMAND, tpot_s=tpot_s))
        terms = floor_terms(cap.replica, cap.mean_context)
        beyond = cap._tpot_beyond
        for c in (0.5, 1.0, 3.0, 17.0, 64.0, 250.0, 1000.0, 4096.0):
            pp = cap.replica.layout.pp
            batch = max(c, 1.0) / min(pp, max(c, 1.0))
            tokens = batch * (1 + DEMAND.prompt_tokens / DEMAND.decode_steps) if cap.mixed else batch
            step = cap.step(c).total_s
            assert step_floor(terms, batch, tokens) <= step
            assert step_floor(with_all_reduce(cap.replica, terms), batch, tokens) <= step
            if c > beyond:
                assert step > tpot_s


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}")
def test_no_ceiling_is_faster_than_the_rate_bound(catalog, preset, k, case):
    for tpot_s in (0.02, 0.05, 0.2):
        demand = replace(DEMAND, tpot_s=tpot_s)
        cap = _capacity(catalog, preset, k, *case, demand=demand)
        ceiling, _ = cap.best()
        if ceiling is not None:
            assert ceiling.rate <= ceiling_rate_bound(cap.replica, demand)


def test_the_bounds_bite_where_prompts_share_the_decode_steps(catalog, preset, k):
    """70B FP8 on one MI355X under vLLM, the default profile's plan (TPOT-limited at 4.90 req/s, a
    concurrency of 97.8): the floor proves a miss within 2x the ceiling's concurrency, and the rate
    bound is within 2x the ceiling's rate, so the lean sizing can skip layouts by it."""
    cap = _capacity(catalog, preset, k, "mi355x-oam-288gb", "llama-3.1-70b", Layout(tp=1), "fp8", "vllm")
    ceiling, limit = cap.best()
    assert limit == "tpot" and ceiling.rate == pytest.approx(4.90, abs=0.01)
    assert ceiling.concurrency < cap._tpot_beyond < 2 * ceiling.concurrency
    assert ceiling.rate < ceiling_rate_bound(cap.replica, DEMAND) < 2 * ceiling.rate


def test_the_all_reduce_tightens_the_rate_bound_from_tp2_up(catalog, preset, k):
    """70B FP8 on four H100 SXM under vLLM: the step's 160 all-reduces (two a layer, NCCL's measured
    algorithms, each at least its fixed latency) take 12.4 of the 50.0 ms step at the ceiling
    (6.64 req/s), so the floor with them bounds the ceiling's rate within 1.7x; one GPU has no TP
    group and its floor is unchanged."""
    cap = _capacity(catalog, preset, k, "h100-sxm-80gb", "llama-3.1-70b", Layout(tp=4), "fp8", "vllm")
    terms = floor_terms(cap.replica, cap.mean_context)
    fixed, _, kv, _ = with_all_reduce(cap.replica, terms)
    assert fixed > terms[0] and kv > terms[2]
    ceiling, _ = cap.best()
    assert ceiling.rate == pytest.approx(6.64, abs=0.01)
    assert ceiling.rate < ceiling_rate_bound(cap.replica, DEMAND) < 1.7 * ceiling.rate
    single = _capacity(catalog, preset, k, "h100-sxm-80gb", "llama-3.1-70b", Layout(tp=1), "fp8", "vllm")
    one = floor_terms(single.replica, single.mean_context)
    assert with_all_reduce(single.replica, one) == one


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}")
def test_no_step_is_below_the_tight_floor_nor_a_ceiling_above_its_bound(catalog, preset, k, case):
    for tpot_s in (0.012, 0.03, 0.05, 0.2):
        demand = replace(DEMAND, tpot_s=tpot_s)
        cap = _capacity(catalog, preset, k, *case, demand=demand)
        rep, pp = cap.replica, cap.replica.layout.pp
        base = floor_terms(rep, cap.mean_context)
        per = 1 + DEMAND.prompt_tokens / DEMAND.decode_steps if cap.mixed else 1.0
        attention = attention_terms(rep, cap.mean_context, DEMAND.prompt_tokens if cap.mixed else 0, base[2])
        for c in (0.5, 1.0, 3.0, 17.0, 64.0, 250.0, 1000.0, 4096.0):
            batch = max(c, 1.0) / min(pp, max(c, 1.0))
            floor = tight_floor(base, gemm_terms(rep), batch, batch * per, reduce_lines(rep), attention)
            assert step_floor(base, batch, batch * per) <= floor <= cap.step(c).total_s * (1 + 1e-9)
        ceiling, _ = cap.best()
        if ceiling is not None:
            assert ceiling.rate <= tight_rate_bound(rep, demand) <= ceiling_rate_bound(rep, demand) * (1 + 1e-6)


def test_the_gemms_rooflines_and_attention_tighten_the_rate_bound(catalog, preset, k):
    """70B FP8 on four H100 SXM under vLLM (6.64 req/s at the TPOT target, a 50.0 ms mixed step
    whose GEMMs sit near the smooth roofline's knee and whose all-reduces carry the prompt chunks):
    the bound with the GEMMs' rooflines, the all-reduces at the mix's tokens and attention's least
    time is 1.14x the ceiling's rate, the linear floor's 1.68x; on one MI355X (4.90 req/s, no TP
    group) 1.09x against 1.31x."""
    cap = _capacity(catalog, preset, k, "h100-sxm-80gb", "llama-3.1-70b", Layout(tp=4), "fp8", "vllm")
    ceiling, _ = cap.best()
    assert ceiling.rate == pytest.approx(6.64, abs=0.01)
    assert ceiling.rate < tight_rate_bound(cap.replica, DEMAND) < 1.2 * ceiling.rate < ceiling_rate_bound(cap.replica, DEMAND)
    one = _capacity(catalog, preset, k, "mi355x-oam-288gb", "llama-3.1-70b", Layout(tp=1), "fp8", "vllm")
    ceiling, _ = one.best()
    assert ceiling.rate == pytest.approx(4.90, abs=0.01)
    assert ceiling.rate < tight_rate_bound(one.replica, DEMAND) < 1.15 * ceiling.rate < ceiling_rate_bound(one.replica, DEMAND)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}")
def test_no_decode_worker_is_faster_than_its_tight_bound(catalog, preset, k, case):
    """The disaggregation search orders its decode pools by this bound before it sizes them."""
    for tpot_s in (0.012, 0.03, 0.05, 0.2):
        demand = replace(DEMAND, tpot_s=tpot_s)
        rep = _capacity(catalog, preset, k, *case, demand=demand).replica
        worker = decode_worker(rep, demand)
        if worker is not None:
            assert worker.rate <= decode_tight_rate_bound(rep, demand)


def test_the_tight_bound_of_a_decode_worker_is_close(catalog, preset, k):
    """70B FP8 decode workers at a 50 ms TPOT target. One B200: 263 sequences (the cache's capacity
    of 2,400-token sequences) at 18.72 req/s; the tight bound is within 1e-4 of it, decode_rate_bound
    (the weights' and the caches' stream alone) 1.32x. Two pipelined TP8 B200 stages: 185 req/s, the
    tight bound 1.02x, decode_rate_bound 3.75x."""
    one = _capacity(catalog, preset, k, "b200-sxm-180gb", "llama-3.1-70b", Layout(tp=1), "fp8", "vllm").replica
    worker = decode_worker(one, DEMAND)
    assert worker.concurrency == 263 and worker.rate == pytest.approx(18.72, abs=0.01)
    assert worker.rate <= decode_tight_rate_bound(one, DEMAND) < (1 + 1e-4) * worker.rate
    assert decode_rate_bound(one, DEMAND) == pytest.approx(1.32 * worker.rate, rel=0.01)
    two = _capacity(catalog, preset, k, "b200-sxm-180gb", "llama-3.1-70b", Layout(tp=8, pp=2), "fp8", "vllm").replica
    worker = decode_worker(two, DEMAND)
    assert worker.rate == pytest.approx(185, abs=0.1)
    assert worker.rate < decode_tight_rate_bound(two, DEMAND) < 1.02 * worker.rate
    assert decode_rate_bound(two, DEMAND) == pytest.approx(3.75 * worker.rate, rel=0.01)
