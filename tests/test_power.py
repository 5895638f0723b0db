"""physics/power.py and ``[training] gpu_power_cap_w``: the compute rate and the draw under a
per-GPU power cap."""

from __future__ import annotations

import json

import pytest

from gpuplan.physics.power import capped_clock_fraction, capped_memory_fraction, capped_node_power_kw


def test_a_cap_slows_the_gemms_as_the_zeus_power_limit_sweeps_measured():
    # Zeus NSDI'23 traces (summary_power_v100.csv, BERT SQuAD batch 32): uncapped the V100 draws
    # 228 W; capped at 200 W it trains at 0.940 of full speed, at 150 W at 0.780.
    assert capped_clock_fraction(200, 228, 2.0) == pytest.approx(0.940, abs=0.01)
    assert capped_clock_fraction(150, 228, 2.0) == pytest.approx(0.780, abs=0.035)
    # Llama 2 34B ran A100s (400 W) at 350 W: sqrt(350 / 400) = 0.9354 (hand calculation).
    assert capped_clock_fraction(350, 400, 2.0) == pytest.approx(0.9354, abs=1e-4)


def test_no_cap_or_a_cap_at_or_above_the_rating_changes_nothing():
    assert capped_clock_fraction(None, 400, 2.0) == 1.0
    assert capped_clock_fraction(400, 400, 2.0) == 1.0
    assert capped_clock_fraction(1000, 700, 2.0) == 1.0
    with pytest.raises(ValueError):
        capped_clock_fraction(0, 400, 2.0)


def test_memory_bound_kernels_keep_their_bandwidth_above_their_own_draw():
    # An H100 streaming HBM drew 381 W of its 700 W (0.55): a 500 W cap leaves it alone, a
    # 300 W cap slows it to sqrt(300 / 385) = 0.883 (hand calculation).
    assert capped_memory_fraction(500, 700, 0.55, 2.0) == 1.0
    assert capped_memory_fraction(300, 700, 0.55, 2.0) == pytest.approx(0.8827, abs=1e-4)


def test_a_capped_server_draws_its_rating_less_what_the_caps_take_off():
    # Eight A100s capped at 350 W of 400: 8 x 50 W = 0.4 kW off a 6.5 kW DGX A100.
    assert capped_node_power_kw(6.5, 8, 400, 350) == pytest.approx(6.1)
    assert capped_node_power_kw(6.5, 8, 400, None) == 6.5
    assert capped_node_power_kw(6.5, 8, 400, 450) == 6.5


PROFILE = """
name = "cap"
[model]
preset = "llama-2-70b"
[training]
tokens = 2e12
sequence_length = 4096
global_batch_tokens = 4e6
gpus = 1024
{cap}
[training.constraints]
allow_gpus = ["a100-sxm-80gb"]
"""


def _plan(cli, tmp_path, cap: str) -> dict:
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.format(cap=cap))
    run = cli("recommend", str(path), "-f", "json")
    assert run.code == 0, run
    return json.loads(run.out)["training"]


def test_a_capped_plan_is_slower_and_draws_less(cli, tmp_path):
    free, capped = _plan(cli, tmp_path, ""), _plan(cli, tmp_path, "gpu_power_cap_w = 350")
    # 1,024 A100s on 128 servers, each GPU 50 W under its rating: 6.4 kW less from the servers.
    assert free["power_kw"] - capped["power_kw"] == pytest.approx(128 * 8 * 0.05, rel=1e-6)
    assert capped["tco"]["energy_usd_per_year"] < free["tco"]["energy_usd_per_year"]
    # The GEMMs run at 0.935 of their rate: the step is slower, by less than 1/0.935 (the
    # communication, memory-bound kernels and host time are not capped).
    ratio = capped["step_time_s"] / free["step_time_s"]
    assert 1.0 < ratio < 1 / 0.9354


def test_a_cap_out_of_bounds_is_one_line_naming_the_field(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.format(cap="gpu_power_cap_w = 10"))
    run = cli("recommend", str(path))
    assert run.code == 2
    line = run.err.strip()
    assert "\n" not in line and "training.gpu_power_cap_w" in line and str(path) in line and "50" in line
