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


def test_young_daly_interval(cal):
    g = goodput(4096, cal)
    assert g.checkpoint_interval_hours == pytest.approx(math.sqrt(2 * cal.checkpoint_save_hours * g.mtbi_hours))


def test_goodput_falls_with_cluster_size(cal):
    values = [goodput(n, cal).fraction for n in (8, 512, 4096, 16384, 65536)]
    assert values == sorted(values, reverse=True)
    assert values[0] == pytest.approx(1 - cal.fixed_downtime_fraction, abs=0.01)


def test_no_interruptions_leaves_the_fixed_part(cal):
    g = goodput(1024, cal.model_copy(update={"interruptions_per_gpu_hour": 0.0}))
    assert g.fraction == pytest.approx(1 - cal.fixed_downtime_fraction)
    assert math.isinf(g.mtbi_hours)
