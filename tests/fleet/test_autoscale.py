"""Autoscaling bounds from a daily demand curve: hand calculations written out (docs/fleet-model.md)."""

from __future__ import annotations

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from gpuplan.serving.autoscale import hourly_replicas, reserved_split, scale_up_seconds
from tests.render.fixtures import serving_plan
from tests.conftest import plan_file

# 3 req/s at night, a four-hour morning ramp to 40, a plateau, 20 in the evening.
CURVE = [3.0] * 6 + [13.0, 23.0, 33.0, 40.0] + [40.0] * 10 + [20.0] * 4


def test_hourly_replicas_by_hand():
    # 10 req/s per replica, 1 spare, floor 2, a replica starts in 360 s = 0.1 h.
    # Hour 5 (3 -> 13): the ramp adds 10 * 0.1 = 1 req/s while a replica starts: target 3 / 4 = 0.75.
    # Replicas: ceil((q + ramp) / 10) + 1, at least 2:
    #   h0-4: ceil(0.3) + 1 = 2;  h5: ceil(0.4) + 1 = 2;  h6: ceil(1.4) + 1 = 3;  h7: ceil(2.4) + 1 = 4;
    #   h8: ceil(3.37) + 1 = 5;   h9-19: ceil(4.0) + 1 = 5;  h20-23: ceil(2.0) + 1 = 3.
    hourly, target, ramp = hourly_replicas(CURVE, 10.0, 1, 2, 360.0)
    assert hourly == [2] * 6 + [3, 4, 5] + [5] * 11 + [3] * 4
    assert target == pytest.approx(0.75)
    assert ramp == pytest.approx(1.0)
    assert sum(hourly) == 91  # replica-hours a day, against 5 x 24 = 120 at the peak all day


def test_a_floor_of_one_follows_the_curve():
    hourly, _, _ = hourly_replicas(CURVE, 10.0, 0, 1, 360.0)
    assert min(hourly) == 1 and max(hourly) == 4


def test_reserved_split_by_hand():
    # With 40 % off for a commitment, a replica is worth reserving when it runs >= 24 x 0.6 = 14.4 h:
    # replicas 1-2 run 24 h, the 3rd 18 h (all but hours 0-5), the 4th 13 h (hours 7-19): 3 reserved.
    # On demand: hour 7 one, hour 8 two, hours 9-19 two each = 1 + 2 + 22 = 25 replica-hours a day.
    hourly = [2] * 6 + [3, 4, 5] + [5] * 11 + [3] * 4
    assert reserved_split(hourly, 0.4) == (3, 25.0)
    assert reserved_split(hourly, 0.0) == (2, 91.0 - 48.0)  # no discount: only the always-on replicas


def test_scale_up_reads_the_weights_over_the_front_end(catalog):
    # 4 GPUs x 10 GiB = 42.95 GB per server; with no front end designed, the smallest Ethernet of
    # 100G or more (ethernet-100g, 80 % efficiency): 42.95e9 x 8 / 80e9 = 4.295 s, + 130 s server start.
    plan = serving_plan().model_copy(update={"weights_gib_per_gpu": 10.0, "interconnect": None})
    seconds, why = scale_up_seconds(plan, catalog)
    assert seconds == pytest.approx(134.295, abs=1e-3)
    assert "130 s server start" in why


PEAK_40_TROUGH_3 = """
[model]
preset = "llama-3.1-70b"
[serving]
prompt_tokens = 2000
output_tokens = 400
precision = "fp8"
{extra}
[serving.demand]
hourly_qps = [4, 3, 3, 3, 3, 4, 6, 10, 18, 26, 32, 36, 38, 40, 40, 38, 34, 30, 24, 18, 14, 10, 7, 5]
"""


@pytest.fixture(scope="module")
def curve_plan(catalog):
    return plan_workload(load_profile_text(PEAK_40_TROUGH_3.format(extra=""), "curve.toml", catalog), catalog)


def test_peak_40_trough_3_scales_between_two_and_the_peak(curve_plan):
    a = curve_plan.serving.autoscaling
    assert a.demand == "hourly"
    assert 2 <= a.min_replicas < a.max_replicas
    assert a.max_replicas == curve_plan.serving.replicas  # the peak sizes the fleet
    assert a.replica_hours_per_day < a.peak_replica_hours_per_day
    assert 0 < a.saving_fraction < 1 and a.saving_usd_per_year > 0
    assert a.scale_up_s > 130.0  # server start + weights
    # The sizing load is the peak: qps was left out.
    assert curve_plan.serving.output_tokens_per_s == pytest.approx(40 * 400)
    assert curve_plan.fleet is None  # one phase: no fleet question


def test_min_replicas_from_the_profile(catalog):
    text = PEAK_40_TROUGH_3.format(extra="spare_replicas = 0\nmin_replicas = 1")
    plan = plan_workload(load_profile_text(text, "curve.toml", catalog), catalog)
    assert plan.serving.autoscaling.min_replicas == 1


def test_cloud_pricing_splits_reserved_and_on_demand(catalog):
    text = PEAK_40_TROUGH_3 .format(extra="") + '[constraints]\npricing = "cloud"\n'
    plan = plan_workload(load_profile_text(text, "curve.toml", catalog), catalog)
    a = plan.serving.autoscaling
    assert a.reserved_replicas is not None and 0 < a.reserved_replicas <= a.max_replicas
    assert a.cloud_usd_per_year == pytest.approx(a.reserved_usd_per_year + a.on_demand_usd_per_year)
    assert a.saving_usd_per_year > 0


def test_constant_demand_is_said(catalog):
    text = '[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 5\n'
    wl = load_profile_text(text, "c.toml", catalog)
    assert any(n.field == "serving.demand" and "constant 5" in n.value for n in wl.assumptions)
    a = plan_workload(wl, catalog).serving.autoscaling
    assert a.demand == "constant" and a.min_replicas == a.max_replicas and a.saving_fraction == 0


def test_hourly_replicas_carry_the_load_at_the_max_load_fraction():
    # The serving planner sizes the peak at most 0.85 of a replica's latency-limited rate: 50 req/s
    # on 3.15 req/s replicas is ceil(50 / (0.85 x 3.15) = 18.67) = 19 active + 2 spare = 21, every
    # hour of a constant demand (no ramp). At the full rate it would be ceil(15.87) + 2 = 18, fewer
    # than the 19 that carry the load.
    hourly, target, ramp = hourly_replicas([50.0] * 24, 3.15, 2, 2, 137.0, 0.85)
    assert hourly == [21] * 24
    assert target == 1.0 and ramp == 0.0


def test_constant_demand_runs_the_plans_fleet_every_hour(catalog):
    # llama-3.1-70b fp8 at a constant 40 req/s: the autoscaler's every hour is the plan's fleet
    # (active + spare), so nothing is parked and no saving is claimed.
    text = PEAK_40_TROUGH_3.split("[serving.demand]")[0].format(extra="qps = 40")
    s = plan_workload(load_profile_text(text, "c.toml", catalog), catalog).serving
    a = s.autoscaling
    assert a.demand == "constant"
    assert a.hourly_replicas == [s.replicas] * 24
    assert a.saving_fraction == 0 and a.saving_usd_per_year == 0
    assert a.target_load_fraction == pytest.approx(0.85)


def test_every_hour_carries_its_load_with_the_spares(curve_plan):
    s, a = curve_plan.serving, curve_plan.serving.autoscaling
    curve = [4, 3, 3, 3, 3, 4, 6, 10, 18, 26, 32, 36, 38, 40, 40, 38, 34, 30, 24, 18, 14, 10, 7, 5]
    for q, r in zip(curve, a.hourly_replicas):
        assert (r - s.spare_replicas) * 0.85 * s.qps_per_replica >= q
    assert a.hourly_replicas[13] == s.replicas  # the 40 req/s peak hour is the plan's fleet


def test_a_year_of_reserved_rent_is_the_cost_of_ownership_s_year():
    """examples/moe-serving.toml: 12 MI325X replicas on 2 servers billed whole, 16 x $1.95 = $31.20/h,
    40 % off reserved. The fleet line's year and the cost of ownership's 4-year rent count the same
    year of 8,766 h: 31.20 x 0.6 x 8,766 = $164,099.52 a year, x 4 = $656,398.08. The fleet line
    counted 8,760 h ($163,987.20 a year, not a quarter of the 4-year rent)."""
    from pathlib import Path

    from gpuplan.hardware import load_catalog

    root = Path(__file__).resolve().parents[2]
    path = root / "examples" / "moe-serving.toml"
    catalog = load_catalog()
    s = plan_file(path, catalog, "serving").serving
    assert s.cloud_usd_per_hour == pytest.approx(31.20)
    assert s.autoscaling.reserved_usd_per_year == pytest.approx(164_099.52)
    assert s.tco.cloud_total_usd == pytest.approx(656_398.08)
    assert s.tco.cloud_total_usd == pytest.approx(s.tco.horizon_years * s.autoscaling.reserved_usd_per_year)
