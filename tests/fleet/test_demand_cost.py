"""A serving fleet's $ per million tokens and TCO from the load its daily demand curve carries
(docs/fleet-model.md, "Cost on the demand curve"), pinned to a hand calculation.

The profile: examples/default.toml's serving (Llama 3.1 70B, FP8, 400 output tokens) on a curve of
12 hours at 20 requests/s and 12 at 5. The fleet is sized for the peak (6 one-GPU replicas on one
MI355X server: $246,000, 14 kW, liquid-cooled, PUE 1.2) and carries the mean, 12.5 requests/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload

CURVE = "hourly_qps = [" + ", ".join(["20"] * 12 + ["5"] * 12) + "]"


_PLANS: dict[tuple[str, bool], object] = {}


def _serving(catalog, constraints: str = "", demand: bool = True):
    if (constraints, demand) not in _PLANS:
        _PLANS[constraints, demand] = _plan(catalog, constraints, demand)
    return _PLANS[constraints, demand]


def _plan(catalog, constraints: str, demand: bool):
    text = Path("examples/default.toml").read_text()
    if demand:
        text += f"\n[serving.demand]\n{CURVE}\n"
    if constraints:
        text += f"\n[constraints]\n{constraints}\n"
    wl = load_profile_text(text, "curve.toml", catalog)
    return plan_workload(wl, catalog, phases=("serving",), intervals=False)


def test_the_fleet_is_the_peaks_and_parks_half_of_it_at_night(catalog):
    s = _serving(catalog).serving
    assert (s.gpu, s.replicas, s.gpus_per_replica, s.nodes) == ("mi355x-oam-288gb", 6, 1, 1)
    assert s.bom.capex_by_category_usd["server"] == 246_000.0 and s.bom.pue == 1.2
    assert s.autoscaling.hourly_replicas == [6] * 12 + [3] * 12


def test_token_cost_on_the_curve_by_hand(catalog):
    """Tokens a year: mean 12.5 req/s x 400 x 3,600 x 8,766 h = 157,788 M (utilisation 12.5 / 20 =
    0.625, not 0.8 of the hours at the peak). Servers a year: $246,000 / 4 = $61,500. Energy: the
    server draws 14 kW every hour, less 3 parked one-GPU replicas for 12 h (1.5 on average) x 14 / 8
    kW x (1 - 0.25 idle) = 1.96875 kW; 12.03125 kW x 1.2 x $0.08 x 8,766 h = $10,124.73. ($61,500 +
    $10,124.73) / 157,788 M = $0.45393 per million output tokens (on the peak for 80% of the hours
    it read $0.3512)."""
    s = _serving(catalog).serving
    assert s.usd_per_million_output_tokens == pytest.approx(0.453930, rel=1e-5)


def test_tco_on_the_curve_by_hand_and_the_gap_is_the_rest_of_the_bill(catalog):
    """Energy: the whole bill's 20.0322 kW x 1.2 x $0.08 x 8,766 h = $16,857.8 less the parked
    replicas' $1,656.77 (the autoscaler's saving) = $15,201.0 a year. Total $377,343 + 4 x ($15,201.0
    + $37,734.3 support) = $589,084; over 4 x 157,788 M tokens, $0.93335 per million. The gap to the
    servers' $0.45393 is the rest of the bill ($131,343 capex, 6.0322 kW x 1.2 x $0.08 x 8,766 h =
    $5,076.3 of energy a year) and support: ($131,343 + 4 x ($5,076.3 + $37,734.3)) / 631,152 M =
    $0.47942."""
    s = _serving(catalog).serving
    t = s.tco
    assert t.utilization == pytest.approx(0.625)
    assert s.autoscaling.saving_usd_per_year == pytest.approx(1_656.77, abs=0.01)
    assert t.energy_usd_per_year == pytest.approx(15_201.0, abs=0.5)
    assert t.total_usd == pytest.approx(589_084, abs=1)
    assert t.usd_per_million_tokens == pytest.approx(0.93335, rel=1e-5)
    assert t.usd_per_million_tokens - s.usd_per_million_output_tokens == pytest.approx(0.47942, rel=1e-4)


def test_the_assumptions_say_where_the_utilisation_comes_from(catalog):
    notes = {a.field: a for a in _serving(catalog).assumptions}
    a = notes["constraints.utilization"]
    assert a.value == "0.62 (serving)"
    assert "mean 12.5 of peak 20 req/s" in a.reason and "1.5 replicas parked" in a.reason


def test_a_given_utilization_wins_over_the_curve(catalog):
    """``[constraints] utilization = 0.8`` given: the curve prices nothing; the figures are those
    of the profile without a curve (the peak for 80% of the hours: $0.3512 per million)."""
    s = _serving(catalog, "utilization = 0.8").serving
    assert s.tco.utilization == 0.8
    assert s.usd_per_million_output_tokens == pytest.approx((8.769678 + 1.344) / 28.8, rel=1e-6)
    flat = _serving(catalog, demand=False).serving
    assert (s.usd_per_million_output_tokens, s.tco) == (flat.usd_per_million_output_tokens, flat.tco)
    notes = {a.field: a for a in _serving(catalog, "utilization = 0.8").assumptions}
    assert notes["constraints.utilization"].value == "0.8"
    assert "0.62" in notes["constraints.utilization"].reason


def test_without_a_curve_nothing_moves(catalog):
    s = _serving(catalog, demand=False)
    assert s.serving.usd_per_million_output_tokens == pytest.approx(0.351169, rel=1e-5)
    assert s.serving.tco.utilization == 0.8
    assert not any(a.field == "constraints.utilization" for a in s.assumptions)


def test_without_a_curve_the_yearly_form_is_the_hourly_one(catalog):
    """tests/serving/test_fleet.py's fleet ($1,050,000, 30 kW, PUE 1.25, $0.10/kWh, 4 years, 80% of
    the hours loaded, 10,000 tokens/s): $1.1439 per million, whether priced an hour at a time (the
    planner's ranking) or a year at a time (the curve's form)."""
    from gpuplan.fabric.tco import CostBasis, Load, servers_usd_per_million_tokens

    basis = CostBasis(years=4.0, usd_per_kwh=0.10, utilization=0.8, given_pue=1.25, catalog=catalog)
    flat = Load(utilization=0.8, powered=0.8)
    assert servers_usd_per_million_tokens(1_050_000.0, 30.0, 1.25, 10_000.0, basis, flat) == pytest.approx(
        1.143932, rel=1e-5)


def test_the_chosen_fleets_figure_at_peak_is_the_alternatives_basis(catalog):
    """Priced on the curve, the plan keeps its figure on the alternatives' basis (the peak for 80% of
    the hours): the $0.3512 of the profile without a curve, by hand in the tests above, so the chosen
    fleet compares with its alternatives' column. Without a curve, or with a given utilization, the
    one figure is already that basis: no second one."""
    s = _serving(catalog).serving
    assert s.usd_per_million_output_tokens_at_target == pytest.approx(0.351169, rel=1e-5)
    assert _serving(catalog, demand=False).serving.usd_per_million_output_tokens_at_target is None
    assert _serving(catalog, "utilization = 0.8").serving.usd_per_million_output_tokens_at_target is None


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_two_figures_for_one_fleet_each_say_what_they_count(cli, fmt):
    """examples/chat-8b-finetune-fleet.toml: 6 x L40S priced on its curve (mean 18.6 of peak 40
    req/s) at $0.16 per million; at the peak for 80% of the hours, the alternatives' basis, $0.09
    (utilisation 0.465 against 0.8: $0.094 x 0.8 / 0.465 = $0.162, the energy of parked replicas
    aside). The header labels the curve's figure, the column and its note the peak's."""
    run = cli("recommend", "examples/chat-8b-finetune-fleet.toml", "-f", fmt, *(["-v"] if fmt == "table" else []))
    assert run.code == 0, run
    out = " ".join(run.out.split())
    assert "$0.16 ($0.14-$0.20) per million output tokens (servers + energy, on the demand curve; $0.09 at peak)" in out
    assert ("$/M tok at peak" if fmt == "table" else "$/M tokens at peak") in out
    assert "the chosen l40s-pcie-48gb: $0.09 at peak, $0.16 on the curve" in out
