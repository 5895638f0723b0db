"""Disaggregated prefill and decode workers (DistServe, Splitwise): per-worker rates, the KV link,
and the search over worker pairs."""

from __future__ import annotations

import math

import pytest

from gpuplan.model.arch import ArchitectureSpec, resolve
from gpuplan.physics.kv_cache import kv_bytes_per_token
from gpuplan.serving import disagg_search
from gpuplan.serving.capacity import Demand
from gpuplan.serving.disagg import decode_worker, domain_link, prefill_worker, request_kv_bytes, scaleout_link
from gpuplan.serving.model import Layout, build_replica
from gpuplan.serving.planner import plan_disaggregated

DEMAND = Demand(prompt_tokens=2000, output_tokens=500, ttft_s=3.0, tpot_s=0.06, percentile="p99",
                context_tokens=8192)


def test_a_worker_whose_weights_do_not_fit_serves_nothing(catalog, preset, k):
    """DeepSeek-V3 in FP8 is about 671 GB: one 192 GB MI300X cannot hold it, eight can."""
    gpu, arch = catalog.gpu("mi300x-oam-192gb"), preset("deepseek-v3")
    one = build_replica(gpu, arch, Layout(tp=1), "fp8", "fp8", k, catalog)
    eight = build_replica(gpu, arch, Layout(tp=8), "fp8", "fp8", k, catalog)
    assert one.max_sequences(2000) == 0 and eight.max_sequences(2000) >= 1
    assert prefill_worker(one, DEMAND) is None and decode_worker(one, DEMAND) is None
    assert prefill_worker(eight, DEMAND).rate(DEMAND, 0.0) > 0


def test_one_requests_kv_cache_is_distserves_opt66b_figure(catalog, k):
    """DistServe (OSDI 2024) section 3.3: "the KV cache size of a single 512-token request on OPT-66B
    is approximately 1.13GB"; at 10 requests/s that is 11.3 GB/s, "90Gbps". Their GB are GiB:
    OPT-66B has 64 layers of 72 heads x 128 (MHA, fp16): 2 x 64 x 9216 x 2 B = 2,359,296 B a token,
    x 512 = 1.125 GiB; x 10 x 8 = 90 Gibit/s."""
    arch = resolve(ArchitectureSpec(layers=64, hidden=9216, heads=72, ffn=36864, vocab=50272))[0]
    assert kv_bytes_per_token(arch, "fp16") == 2 * 64 * 9216 * 2
    rep = build_replica(catalog.gpu("a100-sxm-80gb"), arch, Layout(tp=4), "fp16", "fp16", k, catalog)
    size = request_kv_bytes(rep, 512)
    assert size / 2**30 == pytest.approx(1.13, abs=0.01)
    assert 10 * size * 8 / 2**30 == pytest.approx(90, abs=1)


def test_the_prefill_rate_solves_distserves_md1_queue(catalog, preset, k):
    """DistServe section 3.1 models a prefill instance as M/D/1: mean TTFT = D + R D^2 / (2 (1 - R D)),
    so the rate that meets a mean target T is R = 2 (T - D) / (D (2T - D)). At T = 1.5 D:
    R = 2 (0.5 D) / (D x 2 D) = 0.5 / D (half utilised, below the 0.9 ceiling)."""
    assert k.queueing.prefill_service_scv == 0  # deterministic service: M/D/1
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), preset("llama-3.1-8b"), Layout(tp=1), "fp8", "fp8", k, catalog)
    probe = prefill_worker(rep, DEMAND)
    d = probe.latency_s
    demand = Demand(prompt_tokens=2000, output_tokens=500, ttft_s=1.5 * d, tpot_s=0.06, percentile="mean",
                    context_tokens=8192)
    assert prefill_worker(rep, demand).rate(demand, 0.0) == pytest.approx(0.5 / d, rel=1e-6)
    # A KV transfer of D / 4 added to TTFT leaves W = T - D - D/4 = D / 4 for the queue: R D^2 / (2 (1 - R D)) = D / 4.
    w = 0.25 * d
    r = prefill_worker(rep, demand).rate(demand, 0.25 * d)
    assert r * d * d / (2 * (1 - r * d)) == pytest.approx(w, rel=1e-6)
    loose = Demand(prompt_tokens=2000, output_tokens=500, ttft_s=100 * d, tpot_s=0.06, percentile="mean")
    assert prefill_worker(rep, loose).rate(loose, 0.0) == pytest.approx(k.queueing.max_utilisation / d)


def test_a_decode_worker_follows_littles_law(catalog, preset, k):
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), preset("llama-3.1-70b"), Layout(tp=4), "fp8", "fp8", k, catalog)
    w = decode_worker(rep, DEMAND)
    n = DEMAND.decode_steps
    assert w.step_s <= DEMAND.tpot_s and w.rate == pytest.approx(w.concurrency / (n * w.step_s))
    conc, tpot = w.point(w.rate / 2, n)
    assert conc / (n * tpot) == pytest.approx(w.rate / 2, rel=1e-6) and tpot < w.step_s


def test_the_kv_link_is_the_slower_sides_nics_or_one_domain(catalog, preset, k):
    arch = preset("llama-3.1-70b")
    h100, h200 = catalog.gpu("h100-sxm-80gb"), catalog.gpu("h200-sxm-141gb")
    pre = build_replica(h100, arch, Layout(tp=4), "fp8", "fp8", k, catalog)
    dec = build_replica(h200, arch, Layout(tp=2), "fp8", "fp8", k, catalog)
    link = scaleout_link(pre, dec)
    per_gpu = min(pre.links.network.scaleout.bandwidth_bytes_per_s, dec.links.network.scaleout.bandwidth_bytes_per_s)
    assert link.kind == "scale-out" and link.bytes_per_s == pytest.approx(2 * per_gpu)  # two decode GPUs receive
    assert domain_link(pre, dec, 6) is None  # two GPU types never share a domain
    same = build_replica(h100, arch, Layout(tp=2), "fp8", "fp8", k, catalog)
    inside = domain_link(pre, same, 6)
    nvlink = pre.links.network.scaleup.bandwidth_bytes_per_s
    assert inside.kind == "scale-up" and inside.bytes_per_s == pytest.approx(2 * nvlink)
    assert domain_link(pre, same, 10) is None  # past the 8-GPU baseboard
    l4 = build_replica(catalog.gpu("l4-pcie-24gb"), preset("llama-3.1-8b"), Layout(tp=1), "fp8", "fp8", k, catalog)
    assert scaleout_link(l4, l4) is None and domain_link(l4, l4, 2).kind == "pcie"


def _workload(catalog, body: str):
    from gpuplan.model.profile import load_profile_text

    return load_profile_text(body, "test.toml", catalog)


H100_H200 = """[model]
preset = "llama-3.1-70b"
[serving]
qps = 100
prompt_tokens = 2000
output_tokens = 500
ttft_ms = 1000
tpot_ms = 20
precision = "fp8"
[constraints]
allow_gpus = ["h100-sxm-80gb", "h200-sxm-141gb"]
pricing = "capex"
"""


def test_pruning_by_the_cost_bound_finds_what_the_full_search_finds(catalog, monkeypatch):
    w = _workload(catalog, H100_H200)
    pruned = plan_disaggregated(w, catalog)
    monkeypatch.setattr(disagg_search._Search, "lower_bound", lambda self, rep, rate: 0.0)
    full = plan_disaggregated(w, catalog)
    assert [(f.fleet.objective, f.gpus, f.link.kind) for f in pruned] == \
        [(f.fleet.objective, f.gpus, f.link.kind) for f in full]


def test_a_limit_keeps_every_fleet_below_it_and_the_cheapest(catalog):
    """``worth_below`` (the aggregated plan's cost under ``auto``): the one-domain search stops at
    the larger of the limit and the scale-out fleet's cost; whichever fleets the full search finds
    below that, and the cheapest of all, are the same fleets."""
    w = _workload(catalog, H100_H200)
    full = plan_disaggregated(w, catalog)
    assert [f.link.kind for f in full] == ["scale-out", "scale-up"]
    cheapest, other = (f.fleet.objective for f in full)
    for limit in (0.0, cheapest, (cheapest + other) / 2, other, other * 2):
        kept = plan_disaggregated(w, catalog, worth_below=limit)
        want = [f for k, f in enumerate(full) if k == 0 or f.fleet.objective < max(limit, cheapest)
                or f.fleet.objective <= cheapest]
        assert kept == want, limit


def test_worker_counts_groups_and_rate_matching_by_hand(catalog):
    """Scale-out placement: P = ceil(Q / (L r_p)) prefill and D = ceil(Q / (L r_d)) decode workers,
    g = gcd(P, D) groups of (P/g)P(D/g)D, each pool + 1 spare worker; the group carries
    min(x r_p, y r_d) and the larger side idles 1 - min / its capacity."""
    w = _workload(catalog, H100_H200)
    f = next(f for f in plan_disaggregated(w, catalog) if f.link.kind == "scale-out")
    q, load = 100, 0.85
    p = math.ceil(q / (load * f.prefill_rate))
    d = math.ceil(q / (load * f.decode.rate))
    g = math.gcd(p, d)
    assert (f.groups, f.x, f.y) == (g, p // g, d // g)
    assert f.prefill_gpus == (p + 1) * f.prefill.replica.layout.gpus
    assert f.decode_gpus == (d + 1) * f.decode.replica.layout.gpus
    side, idle = f.idle_fraction
    caps = {"prefill": p * f.prefill_rate, "decode": d * f.decode.rate}
    assert idle == pytest.approx(1 - min(caps.values()) / caps[side]) and caps[side] == max(caps.values())
    assert f.fleet.capex_usd == pytest.approx(f.prefill_fleet.capex_usd + f.decode_fleet.capex_usd)
