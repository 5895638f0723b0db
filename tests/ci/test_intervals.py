"""Intervals on a plan's figures (planning/intervals.py) and on validate's figures (ci/validate.py)."""

from __future__ import annotations

import json

import pytest

from gpuplan.hardware.intervals import Band

PROFILE = ('name = "bands"\n[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 2e12\ndeadline_days = 30\n'
           '[serving]\nqps = 20\nttft_ms = 1500\ntpot_ms = 40\n[constraints]\nallow_gpus = ["h100-sxm-80gb"]\n')


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE)
    return path


def test_every_predicted_figure_has_an_interval_around_it(cli, profile):
    plan = json.loads(cli("recommend", str(profile), "--format", "json", "-q").out)
    t, s = plan["training"], plan["serving"]
    for phase, figures in ((t, ("step_time_s", "mfu", "wall_clock_days", "gpu_hours", "model_tflops_per_gpu")),
                           (s, ("ttft_ms_mean", "ttft_ms_at_percentile", "tpot_ms", "max_qps"))):
        assert phase["interval_level"] == 0.8 and "published runs on" in phase["interval_basis"]
        for f in figures:
            low, high = phase["intervals"][f]
            assert low <= phase[f] * (1 + 1e-5) and phase[f] <= high * (1 + 1e-5) and low < high, f
    # output tokens/s is the demand (20 QPS x the default output), never more; less only where the
    # pessimistic capacity falls short of the target QPS
    low, high = s["intervals"]["output_tokens_per_s"]
    assert low <= high == s["output_tokens_per_s"]
    # GPUs that meet the deadline bracket the plan's count
    lo, hi = t["intervals"]["gpus_for_deadline"]
    assert lo <= t["gpus"] <= hi
    lo, hi = s["intervals"]["gpus_for_qps"]
    assert lo <= s["gpus"] <= hi and lo % s["gpus_per_replica"] == 0


def test_renderers_show_the_interval_in_parentheses(cli, profile):
    text = cli("recommend", str(profile), "-q", "--section", "facts").out
    assert " days (" in text and "80% intervals in parentheses" in text


def test_a_target_met_only_at_the_optimistic_end_says_so(cli, profile):
    plan = json.loads(cli("recommend", str(profile), "--format", "json", "-q").out)
    t = plan["training"]
    assert t["wall_clock_days"] <= 30 < t["intervals"]["wall_clock_days"][1]
    assert any(f["code"] == "training-optimistic-only" for f in plan["findings"])


def test_confidence_sizes_the_plan_to_hold_at_that_level(cli, profile):
    plain = json.loads(cli("recommend", str(profile), "--format", "json", "-q").out)
    sure = json.loads(cli("recommend", str(profile), "--format", "json", "-q", "--confidence", "0.9").out)
    assert sure["serving"]["gpus"] >= plain["serving"]["gpus"]
    assert sure["training"]["gpus"] >= plain["training"]["gpus"]
    assert sure["training"]["wall_clock_days"] < plain["training"]["wall_clock_days"]
    assert not any(f["code"].endswith("optimistic-only") for f in sure["findings"])
    assert any(f["code"] == "confidence" for f in sure["findings"])


def test_time_and_rate_scale_opposite_ways():
    band = Band(low=0.9, high=1.2, level=0.8, scope="gpu", key="x", n=5)
    assert band.time(10) == pytest.approx((9, 12))
    assert band.rate(10) == pytest.approx((10 / 1.2, 10 / 0.9))


def test_validate_json_gives_low_and_high_for_every_figure(cli):
    from tests.ci.test_residuals import _shared

    files = sorted(str(p) for p in _shared().glob("*.toml"))
    report = json.loads(cli("validate", *files, "--format", "json").out)
    for case in report["cases"]:
        for f in case["figures"]:
            assert f["low"] is not None and f["high"] is not None and f["low"] <= f["predicted"] <= f["high"]
    summary = report["summary"]
    assert summary["interval_level"] == 0.8
    assert all(k["coverage"] is not None for k in summary["by_kind"].values())


def test_the_python_api_plans_at_a_confidence(profile, catalog):
    from gpuplan import load_profile, plan

    workload = load_profile(profile, catalog)
    sure = plan(workload, catalog, confidence=0.9)
    assert sure.training.interval_level == 0.8 and any(f.code == "confidence" for f in sure.findings)
    with pytest.raises(ValueError):
        plan(workload, catalog, confidence=1.5)


def test_output_tokens_are_the_demand_less_what_a_pessimistic_fleet_misses(cli):
    """examples/llama-70b-train-serve.toml: 50 QPS x 500 output tokens = 25,000 tokens/s at the target,
    19 active B200 replicas of 59.76 req/s together, 47.88 req/s at the 80% interval's low end. The
    fleet delivers at most the demand and, at that low end, 47.88 / 50 of it: 23,940 tokens/s. The
    interval was 25,000 x the band (20,000-29,000), 4,000 tokens/s more than anyone asked for."""
    plan = json.loads(cli("recommend", "examples/llama-70b-train-serve.toml", "--phase", "serving",
                          "--format", "json", "-q").out)["serving"]
    assert plan["output_tokens_per_s"] == 25_000
    low, high = plan["intervals"]["output_tokens_per_s"]
    assert high == 25_000
    assert low == pytest.approx(25_000 * plan["intervals"]["max_qps"][0] / 50, rel=1e-5)
    assert low == pytest.approx(23_940)
