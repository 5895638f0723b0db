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
