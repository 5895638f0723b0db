"""Queueing formulas: Pollaczek-Khinchine means, Cramer-Lundberg tails, checked against exact
M/M/1 results and a simulated M/D/1 queue (Lindley's recursion, fixed seed)."""

from __future__ import annotations

import math
import random

import pytest

from gpuplan.physics.queueing import (
    md1_mean_wait_s,
    mg1_mean_wait_s,
    pollaczek_khinchine_wait_s,
    tail_decay_rate,
    wait_quantile_s,
    wait_s,
    wait_tail,
)


def _simulate_md1(rho: float, n: int = 200_000, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    w, out = 0.0, []
    for _ in range(n):
        w = max(0.0, w + 1.0 - rng.expovariate(rho))
        out.append(w)
    out.sort()
    return out


def test_pollaczek_khinchine_md1_and_mm1():
    # M/D/1, s = 1, rho = 0.5: rho s / (2 (1 - rho)) = 0.5
    assert md1_mean_wait_s(0.5, 1.0) == pytest.approx(0.5)
    # M/M/1 (E[S^2] = 2 s^2): rho / (mu - lam) = 1.0
    assert mg1_mean_wait_s(0.5, 1.0, scv=1.0) == pytest.approx(1.0)
    assert pollaczek_khinchine_wait_s(0.8, 1.0, 2.0) == pytest.approx(4.0)
    assert md1_mean_wait_s(1.0, 1.0) == math.inf


def test_mm1_tail_is_exact():
    lam, s = 0.7, 1.0
    assert tail_decay_rate(lam, s, scv=1.0) == pytest.approx(1 / s - lam, rel=1e-9)
    exact = math.log(0.7 / 0.01) / (1 - 0.7)  # P(W > t) = rho exp(-(mu - lam) t)
    assert wait_quantile_s(lam, s, 0.99, scv=1.0) == pytest.approx(exact, rel=1e-9)
    assert wait_tail(lam, s, 2.0, scv=1.0) == pytest.approx(0.7 * math.exp(-0.3 * 2.0), rel=1e-9)


def test_md1_decay_rate_solves_the_lundberg_equation():
    rho = 0.5
    delta = tail_decay_rate(rho, 1.0)
    assert rho * (math.exp(delta) - 1) == pytest.approx(delta, rel=1e-9)
    assert delta == pytest.approx(1.2564, abs=1e-4)


@pytest.mark.parametrize("rho", [0.3, 0.5, 0.8])
def test_md1_percentiles_against_simulation(rho):
    sim = _simulate_md1(rho)
    n = len(sim)
    assert md1_mean_wait_s(rho, 1.0) == pytest.approx(sum(sim) / n, rel=0.05)
    assert wait_quantile_s(rho, 1.0, 0.99) == pytest.approx(sim[int(0.99 * n)], rel=0.08)
    assert wait_quantile_s(rho, 1.0, 0.90) == pytest.approx(sim[int(0.90 * n)], rel=0.10)


def test_quantiles_grow_with_load_and_vanish_at_light_load():
    waits = [wait_s(lam, 1.0, "p99") for lam in (0.05, 0.2, 0.5, 0.8, 0.95)]
    assert waits == sorted(waits)
    assert wait_s(0.005, 1.0, "p99") == 0.0  # rho <= 1 - p: 99 % of arrivals find the server idle
    assert wait_s(0.5, 1.0, "p50") == 0.0
    assert wait_s(1.0, 1.0, "p99") == math.inf
    assert wait_s(0.5, 1.0, "mean") == pytest.approx(0.5)
    with pytest.raises(ValueError):
        wait_s(0.5, 1.0, "p42")
