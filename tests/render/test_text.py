"""Shared text helpers of the renderers: numbers, dollars, plurals, costs in the profile's terms."""

from __future__ import annotations

import pytest

from gpuplan.render.text import num, plural, usd


@pytest.mark.parametrize("value,expected", [
    (None, "-"), (0.5, "0.5"), (12.345, "12.3"), (1234.5, "1,234"), (2_713_452.0, "2,713,452"),
    (3.14e23, "3.14e+23"), (1e15, "1e+15"),
])
def test_num(value, expected):
    assert num(value) == expected


def test_num_digits_for_the_validation_table():
    assert num(3.229e23, 4) == "3.229e+23" and num(1.511, 4) == "1.511"


@pytest.mark.parametrize("value,expected", [(None, "-"), (3.2, "$3.20"), (12_500, "$12,500"),
                                            (41_300_000, "$41.30M"), (-2_500, "-$2,500")])
def test_usd(value, expected):
    assert usd(value) == expected


def test_plural():
    assert (plural(1, "node"), plural(2, "node"), plural(1800, "node")) == ("1 node", "2 nodes", "1,800 nodes")


def test_the_two_per_token_costs_say_what_each_includes():
    """A new user read '$0.12 per million output tokens' and '$0.86 per million output tokens' in one
    report: the serving cost (servers + energy) and the TCO's (the whole bill over the horizon)."""
    from gpuplan.render.cost import tco_line
    from gpuplan.render.text import serving_facts
    from tests.render.fixtures import serving_plan

    s = serving_plan()
    cost = dict(serving_facts(s, "capex"))["cost"]
    assert "$2.49 per million output tokens (servers + energy)" in cost
    assert "per million output tokens (cloud rate)" in dict(serving_facts(s, "cloud"))["cost"]
    assert f"{usd(s.tco.usd_per_million_tokens)} per million output tokens (whole TCO)" in tco_line(s.tco)
