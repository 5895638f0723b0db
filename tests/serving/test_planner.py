"""The serving planner: the checks a person would make of a recommendation."""

from __future__ import annotations

import time

import pytest

from gpuplan.serving.planner import plan_serving


def test_small_model_modest_load_lands_on_a_pcie_inference_card(catalog, serving_profile):
    # Cloud pricing ranks by $/GPU-hour (PCIe cards rent per GPU, SXM boards per server unless the
    # catalog lists smaller instances: A100 80GB rents by 1, 2, 4 or 8 GPUs and wins by cents).
    w = serving_profile(qps=5, prompt=1000, output=256, ttft_ms=5000, tpot_ms=100, pricing="cloud",
                        constraints='exclude_gpus = ["a100-sxm-80gb"]')
    r = plan_serving(w, catalog)
    gpu = catalog.gpu(r.plan.gpu)
    assert r.plan.feasible
    assert gpu.form_factor == "pcie" and "GDDR" in gpu.memory_type, r.plan.gpu
    h100 = next(a for a in r.plan.alternatives if a.gpu == "h100-sxm-80gb")
    assert h100.meets_target and h100.cloud_usd_per_hour > r.plan.cloud_usd_per_hour
    assert r.plan.ttft_ms_p99 <= 5000 and r.plan.tpot_ms <= 100


def test_small_model_lands_on_a_pcie_card_under_capex_too(catalog, serving_profile):
    # examples/chat-8b-serving.toml: Llama-3.1-8B, 10 QPS, 1000/250 tokens, fp8, TTFT p99 3 s,
    # TPOT 80 ms, N+1, capex. An H100 server meets the targets with one GPU but is bought as a
    # whole 8-GPU server; an 8B model in fp8 (8 GB) fits a 24-48 GB inference card.
    w = serving_profile(qps=10, prompt=1000, output=250, ttft_ms=3000, tpot_ms=80, precision="fp8",
                        pricing="capex")
    r = plan_serving(w, catalog)
    gpu = catalog.gpu(r.plan.gpu)
    assert r.plan.feasible and gpu.form_factor == "pcie" and "GDDR" in gpu.memory_type, r.plan.gpu
    h100 = next(a for a in r.plan.alternatives if a.gpu == "h100-sxm-80gb")
    assert h100.meets_target and h100.cost_usd > 2 * r.plan.capex_usd  # cost_usd: capex
    assert r.plan.ttft_ms_p99 <= 3000 and r.plan.tpot_ms <= 80


def test_never_recommends_a_gpu_the_model_does_not_fit(catalog, serving_profile):
    w = serving_profile(model="llama-3.1-405b", qps=2, ttft_ms=10_000, tpot_ms=200,
                        constraints='allow_gpus = ["l40s", "t4", "h100-sxm-80gb"]')
    r = plan_serving(w, catalog)
    assert r.plan.gpu == "h100-sxm-80gb"
    assert r.plan.layout.tp * r.plan.layout.pp >= 16      # 810 GB of bf16 weights
    for alt in r.plan.alternatives:
        assert not alt.meets_target and "does not fit" in alt.reason
    assert r.demand is not None and "pp" in r.demand.cross_node_groups
    assert r.demand.required_gbit_per_gpu > 0 and r.demand.rail_aligned


def test_tenfold_qps_is_a_tenfold_fleet(catalog, serving_profile):
    fixed = 'allow_gpus = ["h100-sxm-80gb"]'
    small = plan_serving(serving_profile(model="llama-3.1-70b", qps=40, spare=0, constraints=fixed), catalog).plan
    big = plan_serving(serving_profile(model="llama-3.1-70b", qps=400, spare=0, constraints=fixed), catalog).plan
    # Whole replicas: the small fleet rounds up by less than one replica.
    assert 10 * (small.replicas - 1) < big.replicas <= 10 * small.replicas


@pytest.mark.parametrize("gpu", ["l40s-pcie-48gb", "h100-sxm-80gb"])
def test_tenfold_qps_is_a_tenfold_fleet_for_a_small_model(catalog, serving_profile, gpu):
    # chat-8b settings on one SKU, no spares: 50 -> 500 QPS. The fleet at 50 QPS is a handful of
    # replicas (integer rounding up to one replica's worth), so "roughly tenfold" allows 20 %.
    def fleet(qps):
        w = serving_profile(qps=qps, prompt=1000, output=250, ttft_ms=3000, tpot_ms=80, precision="fp8",
                            spare=0, constraints=f'allow_gpus = ["{gpu}"]')
        return plan_serving(w, catalog).plan
    small, big = fleet(50), fleet(500)
    assert small.feasible and big.feasible and small.gpu == big.gpu == gpu
    # Whole replicas: each fleet rounds up by less than one of its replicas.
    assert 10 * (small.gpus - small.gpus_per_replica) < big.gpus <= 10 * small.gpus + big.gpus_per_replica
    # Per-replica load stays within max_load_fraction (0.85) of what a replica sustains:
    # ceil(QPS / (0.85 x rate)) replicas, one fewer would exceed it.
    for p, qps in ((small, 50), (big, 500)):
        assert p.max_qps * 0.85 >= qps * (1 - 1e-9) and (p.replicas - 1) * p.max_qps / p.replicas * 0.85 < qps
        assert p.peak_load_fraction <= 0.85


def test_impossible_ttft_says_what_fails(catalog, serving_profile):
    w = serving_profile(model="llama-3.1-70b", qps=1, prompt=8000, output=100, ttft_ms=20)
    r = plan_serving(w, catalog)
    assert not r.plan.feasible and r.chosen_gpu is None and r.demand is None
    assert any("below the prefill time of every GPU" in line for line in r.plan.infeasible)
    assert any("does not fit" in line for line in r.plan.infeasible)     # small cards


def test_plan_fields_are_consistent(catalog, serving_profile):
    w = serving_profile(model="llama-3.1-70b", qps=20, prompt=2000, output=400, ttft_ms=2000, tpot_ms=50,
                        precision="fp8", constraints='allow_gpus = ["h100-sxm-80gb", "h200-sxm-141gb"]')
    r = plan_serving(w, catalog)
    p = r.plan
    gpu = catalog.gpu(p.gpu)
    assert p.feasible and r.chosen_gpu is gpu
    assert p.gpus == p.replicas * p.gpus_per_replica and p.replicas - p.spare_replicas >= 1
    assert p.capex_usd == p.nodes * gpu.node_price_usd
    assert p.power_kw == pytest.approx(p.nodes * gpu.node_power_kw)
    assert p.interconnect is None and p.topology is None and p.bom is None
    assert p.ttft_ms_p99 <= 2000 and p.tpot_ms <= 50 and p.ttft_ms_mean <= p.ttft_ms_p99
    assert p.e2e_ms_mean == pytest.approx(p.ttft_ms_mean + 399 * p.tpot_ms, rel=1e-6)
    assert p.max_qps >= 20 and 0 < p.utilization <= 1
    assert p.output_tokens_per_s == 20 * 400
    assert p.compute_dtype == "fp8" and p.roofline.decode_bound == "memory"
    # with the 0.85 load margin the H200 fleet is the cheaper one
    # Datasheet ridge of dense FP8: 1,978.9 TFLOP/s over 4.8 TB/s (H200) = 412.3, over 3.35 TB/s (H100) = 590.7
    assert p.roofline.ridge_flops_per_byte == pytest.approx({"h200-sxm-141gb": 412.3, "h100-sxm-80gb": 590.7}[p.gpu],
                                                            abs=0.05)
    assert 0 < p.peak_load_fraction <= 0.85 and p.peak_load_fraction == pytest.approx(p.utilization)
    assert p.disaggregation is None  # weighed on whole costs by planning/disagg_choice.py
    assert p.usd_per_million_output_tokens > 0
    assert len(p.reasons) >= 5 and p.reasons[0].startswith(p.gpu)
    assert [a.gpu for a in p.alternatives] == [g for g in ("h100-sxm-80gb", "h200-sxm-141gb") if g != p.gpu]
    assert r.demand.gpus == p.gpus and r.demand.frontend_gbit_per_node > 0


def test_fp8_on_a_gpu_without_fp8_is_weight_only(catalog, serving_profile):
    w = serving_profile(qps=2, precision="fp8", constraints='allow_gpus = ["a100-sxm-80gb"]')
    p = plan_serving(w, catalog).plan
    assert p.compute_dtype == "bf16"
    assert any("weight-only" in line for line in p.reasons)


def test_t4_serves_bf16_with_fp16_math(catalog, serving_profile):
    w = serving_profile(model="llama-2-7b", qps=0.5, prompt=500, output=100, ttft_ms=10_000, tpot_ms=500,
                        constraints='allow_gpus = ["t4"]')
    p = plan_serving(w, catalog).plan
    assert p.feasible and p.gpu == "t4-pcie-16gb" and p.compute_dtype == "fp16"


def test_budget_and_power_gates(catalog, serving_profile):
    cons = 'allow_gpus = ["h100-sxm-80gb"]\nbudget_usd = 1000'
    p = plan_serving(serving_profile(model="llama-3.1-70b", qps=5, constraints=cons), catalog).plan
    assert not p.feasible and any("exceeds the budget" in x for x in p.infeasible)
    cons = 'allow_gpus = ["h100-sxm-80gb"]\npower_limit_kw = 1'
    p = plan_serving(serving_profile(model="llama-3.1-70b", qps=5, constraints=cons), catalog).plan
    assert not p.feasible and any("power limit" in x for x in p.infeasible)


def test_moe_and_mla_models_plan(catalog, serving_profile):
    for model in ("mixtral-8x7b", "deepseek-v3"):
        p = plan_serving(serving_profile(model=model, qps=4, precision="fp8", pricing="cloud",
                                         ttft_ms=5000, tpot_ms=100), catalog).plan
        assert p.feasible, (model, p.infeasible)


def test_whole_catalog_plan_is_fast(catalog, serving_profile):
    w = serving_profile(model="llama-3.1-70b", qps=20, prompt=2000, output=400, precision="fp8")
    plan_serving(w, catalog)
    start = time.perf_counter()
    plan_serving(w, catalog)
    assert time.perf_counter() - start < 1.0


def test_deterministic(catalog, serving_profile):
    w = serving_profile(model="mixtral-8x22b", qps=30, precision="fp8", pricing="cloud")
    assert plan_serving(w, catalog).plan == plan_serving(w, catalog).plan


def test_max_qps_holds_the_spare_replicas_back(catalog, serving_profile):
    """A spare replica adds GPUs, not promised capacity: N+1 means the rate still met with one down."""
    kw = dict(model="llama-3.1-8b", qps=40, prompt=2048, output=256, precision="fp8", ttft_ms=2000, tpot_ms=50,
              constraints='allow_gpus = ["h100-sxm-80gb"]')
    none, one = (plan_serving(serving_profile(spare=n, **kw), catalog).plan for n in (1, 2))
    assert one.replicas == none.replicas + 1 and one.gpus > none.gpus
    assert one.max_qps == pytest.approx(none.max_qps)
    assert one.utilization == pytest.approx(none.utilization) and 0.5 < one.utilization <= 1


def test_frontier_trades_throughput_for_speed_per_layout(catalog, serving_profile):
    """serving.frontier: per layout, more concurrency gives more tokens/s per GPU and fewer per user."""
    plan = plan_serving(serving_profile(qps=5), catalog).plan
    assert plan.frontier
    by_layout: dict[str, list] = {}
    for p in plan.frontier:
        by_layout.setdefault(p.layout, []).append(p)
    assert plan.layout is not None and any(p.meets_targets for p in plan.frontier)
    for points in by_layout.values():
        points.sort(key=lambda p: p.concurrency)
        assert [p.tokens_per_s_per_gpu for p in points] == sorted(p.tokens_per_s_per_gpu for p in points)
        assert [p.tokens_per_s_per_user for p in points] == sorted((p.tokens_per_s_per_user for p in points),
                                                                   reverse=True)


def test_the_plan_names_its_engine(catalog):
    """Left out, the engine is current vLLM and the plan says so; a named release is echoed with
    the features that shaped its numbers (TRT-LLM 0.6.1: per-query-head KV reads)."""
    from gpuplan.model.profile import load_profile_text

    base = '[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 5\nprecision = "fp8"\n'
    default = load_profile_text(base, "t.toml", catalog)
    assert any(a.field == "serving.engine" and a.value == "vllm" for a in default.assumptions)
    old = load_profile_text(base + 'engine = "trtllm"\nengine_version = "0.6.1"\n', "t.toml", catalog)
    plan = plan_serving(old, catalog).plan
    assert any(r.startswith("Engine trtllm 0.6.1") and "once per query head" in r for r in plan.reasons)
