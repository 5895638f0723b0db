"""A swept (or overridden) ``serving.qps`` scales a ``[serving.demand]`` curve to peak at it:
"what if demand is 0.5x or 2x" moves every hour alike. Hand calculations on a two-level day."""

from __future__ import annotations

import json

import pytest

from gpuplan.core.errors import InputError
from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from gpuplan.planning.sweep import parse_set, run_sweep, summarize
from gpuplan.render.sweep import render_sweep

# 12 hours at 20 req/s, then 12 at 5; one GPU type, an autoscaler floor of one replica.
PROFILE = """
name = "two-level-day"
[model]
preset = "llama-3.1-8b"
[serving]
prompt_tokens = 1000
output_tokens = 200
min_replicas = 1
{qps}
[serving.demand]
hourly_qps = {curve}
[serving.constraints]
allow_gpus = ["l40s-pcie-48gb"]
"""
DAY = [20.0] * 12 + [5.0] * 12


def _text(curve, qps=None):
    return PROFILE.format(curve=json.dumps(curve), qps="" if qps is None else f"qps = {qps}")


def test_the_curve_scales_to_peak_at_the_new_rate(catalog):
    # qps 10 = 0.5 x the peak of 20: 20 -> 10 and 5 -> 2.5; qps 40 = 2 x: 20 -> 40 and 5 -> 10.
    half = load_profile_text(_text(DAY), "day.toml", catalog, overrides={"serving.qps": 10})
    double = load_profile_text(_text(DAY), "day.toml", catalog, overrides={"serving.qps": 40})
    assert half.serving.hourly_qps == (10.0,) * 12 + (2.5,) * 12 and half.serving.qps == 10
    assert double.serving.hourly_qps == (40.0,) * 12 + (10.0,) * 12 and double.serving.qps == 40
    (note,) = [a for a in double.assumptions if a.field == "serving.demand"]
    assert note.value == "hourly_qps x2" and "peak 20 requests/s" in note.reason
    # Written in the file, a qps below the curve's peak is still refused: only a what-if scales.
    with pytest.raises(InputError, match="below the peak"):
        load_profile_text(_text(DAY, qps=10), "day.toml", catalog)
    # A curve overridden with the rate is taken as given.
    both = load_profile_text(_text(DAY), "day.toml", catalog,
                             overrides={"serving.qps": 40, "serving.demand.hourly_qps": DAY})
    assert both.serving.hourly_qps == tuple(DAY)


def test_the_plan_and_its_autoscaling_follow_the_scaled_curve(catalog):
    plans = {q: plan_workload(load_profile_text(_text(DAY), "day.toml", catalog, overrides={"serving.qps": q}),
                              catalog, phases=["serving"]).serving for q in (10, 40)}
    unscaled = plan_workload(load_profile_text(_text(DAY, qps=40), "day.toml", catalog), catalog,
                             phases=["serving"]).serving
    # Hand calculation: r = the l40s replica's latency-limited rate (the plan's qps_per_replica,
    # the same at every load), carried at 85 % (max_load_fraction): 4.716 req/s for r = 5.548.
    # Replicas at rate q: ceil(q / 4.716) + 1 spare, at least the floor of 1. The one ramp (hour 23
    # to 0) adds (peak - trough) x scale-up (~132 s) / 3600: 0.27 req/s at x0.5, 1.1 at x2.
    c = 0.85 * plans[40].qps_per_replica
    # the ceilings below, ramps included: 40 -> 9; 10 (+1.1) -> 3; 5 (+0.55) -> 2; 2.5 (+0.27) -> 1
    assert 8 < 40 / c <= 9 and 2 < 10 / c and 11.2 / c <= 3 and 1 < 5 / c and 5.6 / c <= 2 and 2.8 / c <= 1
    #   x0.5: peak 10 -> 3 + 1 = 4 replicas; trough 2.5 -> 1 + 1 = 2; 12 x 4 + 12 x 2 = 72 replica-hours a day.
    #   x2:   peak 40 -> 9 + 1 = 10;         trough 10 -> 3 + 1 = 4;  12 x 10 + 12 x 4 = 168.
    #   Before (qps 40 over the curve as written): trough 5 -> 2 + 1 = 3 all night.
    a10, a40 = plans[10].autoscaling, plans[40].autoscaling
    assert (plans[10].replicas, a10.min_replicas, a10.max_replicas, a10.replica_hours_per_day) == (4, 2, 4, 72)
    assert (plans[40].replicas, a40.min_replicas, a40.max_replicas, a40.replica_hours_per_day) == (10, 4, 10, 168)
    assert (unscaled.replicas, unscaled.autoscaling.min_replicas) == (10, 3)
    # The override is the curve written scaled in the file (the plan names its own assumption).
    written = plan_workload(load_profile_text(_text([10.0] * 12 + [2.5] * 12), "day.toml", catalog), catalog,
                            phases=["serving"]).serving
    assert written.autoscaling == a10 and written.replicas == plans[10].replicas


def test_the_sweep_plans_below_the_peak_and_says_the_scale(catalog):
    text = _text(DAY)
    result = run_sweep(text, "day.toml", [parse_set("serving.qps=10,40")], catalog, overlays=[], phases=("serving",))
    assert [(p.values["serving.qps"], p.demand_scale, p.serving.replicas) for p in result.sweep] == [
        (10, 0.5, 4), (40, 2.0, 10)]
    # each point is the full plan of the profile with that override (the sweep's identity)
    for point in result.sweep:
        workload = load_profile_text(text, "day.toml", catalog, overrides=point.values)
        assert point == summarize(point.values, plan_workload(workload, catalog, phases=["serving"]),
                                  point.values["serving.qps"] / 20)
    table = render_sweep(result, "table").splitlines()
    assert table[1].startswith("demand_scale: the profile's daily demand curve is scaled")
    assert table[3].split()[:2] == ["serving.qps", "demand_scale"] and table[5].split()[:2] == ["10", "0.5"]
    rows = render_sweep(result, "csv").splitlines()
    assert rows[0].startswith("serving.qps,demand_scale,gpu") and rows[2].startswith("40,2.0,")
    assert [p["demand_scale"] for p in json.loads(render_sweep(result, "json"))["sweep"]] == [0.5, 2.0]
    # Another field swept: the curve is the profile's, and no column or key says otherwise.
    other = run_sweep(text, "day.toml", [parse_set("serving.ttft_ms=500")], catalog, overlays=[], phases=("serving",))
    assert other.sweep[0].demand_scale is None and "demand_scale" not in render_sweep(other, "json")
