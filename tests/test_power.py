"""physics/power.py: the compute rate left under a power cap (cube of the clock)."""

from __future__ import annotations

import pytest

from gpuplan.physics.power import capped_clock_fraction


def test_a_cap_below_the_rating_slows_the_clock_by_the_cube_root():
    # Llama 2 34B ran A100s (400 W) at 350 W: (350 / 400) ** (1/3) = 0.9565.
    assert capped_clock_fraction(350, 400) == pytest.approx(0.9565, abs=1e-4)
    # Half the power leaves 0.794 of the clock, not half of it.
    assert capped_clock_fraction(350, 700) == pytest.approx(0.7937, abs=1e-4)


def test_no_cap_or_a_cap_at_or_above_the_rating_changes_nothing():
    assert capped_clock_fraction(None, 400) == 1.0
    assert capped_clock_fraction(400, 400) == 1.0
    assert capped_clock_fraction(1000, 700) == 1.0
    with pytest.raises(ValueError):
        capped_clock_fraction(0, 400)
