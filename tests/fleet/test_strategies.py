"""Fleet strategies on the synthetic plans of tests/render/fixtures.py: hand calculations written out."""

from __future__ import annotations

import json

import pytest

from gpuplan.core.contract import Autoscaling
from gpuplan.fabric.tco import cost_basis
from gpuplan.model.profile import load_profile_text
from gpuplan.planning.fleet import _time_slice, energy_usd_per_year, plan_fleet
from tests.render.fixtures import serving_plan, training_plan

# 2 replicas of 4 GPUs at night (hours 0-11), 10 by day (hours 12-23); a replica starts in 180 s.
HOURLY = [2] * 12 + [10] * 12


def autoscaled():
    return serving_plan().model_copy(update={"autoscaling": Autoscaling(
        min_replicas=2, max_replicas=10, target_load_fraction=0.9, scale_up_s=180.0, ramp_headroom_qps=1.0,
        headroom_fraction=0.1, hourly_replicas=HOURLY, replica_hours_per_day=144.0, peak_replica_hours_per_day=240.0,
        saving_fraction=0.4)})


def test_energy_by_hand(catalog):
    # On the plan's cost basis (the TCO's $0.08/kWh, catalog/calibration/bom.toml), at an air hall's
    # PUE 1.5: 100 kW x 1.5 x $0.08/kWh x 8,766 h (365.25 days) = $105,192 at full power all year;
    # half the hours busy and half idle at 25 % of peak: x (0.5 + 0.5 x 0.25) = x 0.625 = $65,745.
    basis = cost_basis((), catalog)
    assert energy_usd_per_year(100.0, 0.5, 1.5, basis) == pytest.approx(65_745.0)
    assert energy_usd_per_year(100.0, 1.0, 1.5, basis) == pytest.approx(105_192.0)


def test_time_slice_by_hand(catalog):
    # 1,024 H100s, training in model-parallel groups of 1,024 / dp 32 = 32 GPUs.
    # Night: 1,024 - 2 x 4 = 1,016 -> 31 groups = 992 GPUs train; day: 1,024 - 40 = 984 -> 30 groups = 960.
    # Two switches a day (hour 12: 2 -> 10 replicas, hour 0: 10 -> 2). Each stops every training GPU for a
    # checkpoint (0.005 h) and a restart (0.05 h): 992 x 0.055 = 54.56 GPU-hours, twice; the 8 replicas
    # added at hour 12 load for 180 s: 8 x 4 x 0.05 h = 1.6 GPU-hours; the 8 removed at hour 0 drain the
    # requests in flight for the mean 15.82 s end to end: 32 x 15.82 / 3600 = 0.140622 GPU-hours.
    # Training GPU-hours a day: 992 x 12 + 960 x 12 - 2 x 54.56 - 1.6 - 0.140622 = 23,313.139378.
    daily, switches, trough = _time_slice(training_plan(), autoscaled(), autoscaled().autoscaling, 1024, catalog)
    assert switches == 2
    assert trough == 992  # what serving leaves at its trough (2 replicas)
    assert daily == pytest.approx(23_313.139378)


PROFILE = """
[model]
preset = "llama-3.1-70b"
[training]
tokens = 2e12
deadline_days = {deadline}
[serving]
qps = 20
"""


def fleet_for(catalog, deadline=90):
    wl = load_profile_text(PROFILE.format(deadline=deadline), "f.toml", catalog)
    return plan_fleet(wl, catalog, training_plan(), autoscaled(), serve_on=lambda gpu: pytest.fail("same GPU"))


def test_three_strategies_priced(catalog):
    fleet = fleet_for(catalog)
    by = {s.name: s for s in fleet.strategies}
    assert list(by) == ["separate", "time-sliced", "converged"]
    t, s = training_plan(), serving_plan()
    sep = by["separate"]
    assert sep.gpus == 1024 + 24 and sep.capex_usd == pytest.approx(t.capex_usd + s.capex_usd)
    # Busy: the training run's GPU-hours + 144 replica-hours x 4 GPUs x 365.25 days = 210,384 GPU-hours.
    assert sep.utilization == pytest.approx((t.gpu_hours + 210_384) / (1048 * 8766))
    ts = by["time-sliced"]
    # One fleet of 1,024 (the larger need); 23,313.14 training GPU-hours a day stretch the run.
    assert ts.gpus == 1024 and ts.capex_usd == pytest.approx(t.capex_usd)
    assert ts.training_days == pytest.approx(t.gpu_hours / 23_313.139378)
    assert ts.training_days > t.wall_clock_days and ts.switches_per_day == 2
    assert ts.utilization == pytest.approx((t.gpu_hours + 210_384) / (1024 * 8766))
    conv = by["converged"]
    # Trains first, then serves for the rest of the year; 1,024 - 40 GPUs idle after training, and
    # (10 x 24 - 144) x 4 = 384 GPU-hours a day parked off-peak: 984 x 24 + 384 = 23,999 GPU-hours to lend.
    assert conv.training_days == pytest.approx(t.wall_clock_days)
    assert conv.lendable_gpu_hours_per_day == pytest.approx(984 * 24 + 384)
    assert conv.idle_gpus_after_training == 984
    # Meanwhile the model in service runs on rented replicas: 24 GPUs at $2.99 = $71.76/h for 6
    # replicas, $11.96 a replica-hour, x 144 replica-hours a day x the training days.
    bridge = 144 * 11.96 * t.wall_clock_days
    # Capex over the plan's 4-year horizon (the TCO's, catalog/calibration/bom.toml).
    assert conv.cost_usd_per_year == pytest.approx(conv.capex_usd / 4 + conv.energy_usd_per_year + bridge)
    assert conv.serving_slo_met
    for strategy in fleet.strategies:
        assert strategy.cost_usd_per_year is not None and strategy.cost_usd_per_year > 0
        assert strategy.risks
    assert fleet.recommended in by and fleet.reasons[0].startswith(fleet.recommended)
    # The capex over the 4-year horizon is the bulk of each cost.
    assert sep.cost_usd_per_year == pytest.approx(sep.capex_usd / 4 + sep.energy_usd_per_year)


def test_a_missed_deadline_grows_the_time_sliced_fleet(catalog):
    # Alone the run takes 35.7 days; time-sliced on 1,024 GPUs it takes 37.6; a 36-day deadline needs more.
    fleet = fleet_for(catalog, deadline=36)
    ts = next(s for s in fleet.strategies if s.name == "time-sliced")
    assert ts.gpus > 1024 and ts.training_days <= 36
    assert any("grown to" in r for r in ts.reasons)


def test_the_default_has_a_fleet_answer(cli):
    run = cli("recommend", "-f", "json")
    fleet = json.loads(run.out)["fleet"]
    names = [s["name"] for s in fleet["strategies"]]
    assert "separate" in names and {"time-sliced", "converged"} & set(names)
    assert all(s["cost_usd_per_year"] for s in fleet["strategies"] if s["feasible"])
    assert fleet["recommended"] in names


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_every_renderer_shows_the_fleet(cli, fmt):
    run = cli("recommend", "examples/chat-8b-finetune-fleet.toml", "-f", fmt, *(["-v"] if fmt == "table" else []))
    assert run.code == 0, run
    for word in ("separate", "time-sliced", "converged", "recommended", "autoscaling"):
        assert word in run.out.lower(), word


@pytest.mark.parametrize("example", ["examples/chat-8b-finetune-fleet.toml", "examples/frontier-train-serve-fleet.toml"])
def test_the_fleet_examples_are_answered(cli, example):
    run = cli("recommend", example, "-f", "json")
    plan = json.loads(run.out)
    a = plan["serving"]["autoscaling"]
    assert a["demand"] == "hourly" and 2 <= a["min_replicas"] < a["max_replicas"]
    assert a["max_replicas_next_year"] > a["max_replicas"]  # growth_per_year > 0
    fleet = plan["fleet"]
    assert [s["name"] for s in fleet["strategies"]] == ["separate", "time-sliced", "converged"]
    assert all(s["feasible"] and s["cost_usd_per_year"] > 0 for s in fleet["strategies"])
    best = next(s for s in fleet["strategies"] if s["name"] == fleet["recommended"])
    assert best["cost_usd_per_year"] == min(s["cost_usd_per_year"] for s in fleet["strategies"])


def test_training_must_fit_in_what_serving_leaves_at_its_trough(catalog):
    # One data-parallel replica of 1,024 GPUs (dp = 1): at the trough serving keeps 2 x 4 = 8 GPUs and
    # leaves 1,016, less than the one model-parallel group: training never runs on a shared 1,024.
    t = training_plan()
    t = t.model_copy(update={"layout": t.layout.model_copy(update={"dp": 1})})
    wl = load_profile_text('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 2e12\ngpus = 1024\n'
                           '[serving]\nqps = 20\n', "f.toml", catalog)
    fleet = plan_fleet(wl, catalog, t, autoscaled(), serve_on=lambda gpu: pytest.fail("same GPU"))
    ts = next(s for s in fleet.strategies if s.name == "time-sliced")
    assert not ts.feasible and ts.serving_slo_met
    assert "fleet-trough-too-small" in {r.code for r in ts.risks}
    assert fleet.recommended != "time-sliced"
