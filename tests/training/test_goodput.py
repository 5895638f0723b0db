"""Goodput allowance: interruptions x restart cost, Young/Daly checkpointing, fixed downtime."""

from __future__ import annotations

import math

import pytest

from gpuplan.training.goodput import goodput


def test_llama3_scale_interruption_part_is_about_90_percent(cal):
    # Llama 3: 466 interruptions in 54 days on 16,384 H100, >90% effective training time.
    g = goodput(16384, cal)
    assert g.mtbi_hours == pytest.approx(54 * 24 / 466, rel=0.01)  # one every ~2.8 h
    interruptions_only = g.fraction / (1 - cal.fixed_downtime_fraction)
    assert 0.90 <= interruptions_only <= 0.94


def test_young_daly_interval_by_hand(cal):
    """Young (1974): checkpoint every T = sqrt(2 C M). 1,000 GPUs at 1e-4 interruptions per GPU-hour:
    one every M = 1 / (1e-4 x 1,000) = 10 h. A 3-minute (0.05 h) blocking save: T = sqrt(2 x 0.05 x 10)
    = sqrt(1) = 1 h. Waste = C / T + (R + T / 2) / M = 0.05 / 1 + (0.05 + 0.5) / 10 = 0.05 + 0.055 =
    0.105, so goodput = (1 - 0.10 fixed downtime) x (1 - 0.105) = 0.9 x 0.895 = 0.8055."""
    hand = cal.model_copy(update={"interruptions_per_gpu_hour": 1e-4, "checkpoint_save_hours": 0.05,
                                  "restart_hours": 0.05, "fixed_downtime_fraction": 0.10})
    g = goodput(1000, hand)
    assert g.mtbi_hours == pytest.approx(10.0)
    assert g.checkpoint_interval_hours == pytest.approx(1.0)
    assert g.fraction == pytest.approx(0.8055)
    # Four times the GPUs: a quarter of the MTBI (2.5 h), half the interval (sqrt(2 x 0.05 x 2.5) = 0.5 h).
    assert goodput(4000, hand).checkpoint_interval_hours == pytest.approx(0.5)


def test_goodput_falls_with_cluster_size(cal):
    values = [goodput(n, cal).fraction for n in (8, 512, 4096, 16384, 65536)]
    assert values == sorted(values, reverse=True)
    assert values[0] == pytest.approx(1 - cal.fixed_downtime_fraction, abs=0.01)


def test_no_interruptions_leaves_the_fixed_part(cal):
    g = goodput(1024, cal.model_copy(update={"interruptions_per_gpu_hour": 0.0}))
    assert g.fraction == pytest.approx(1 - cal.fixed_downtime_fraction)
    assert math.isinf(g.mtbi_hours)
