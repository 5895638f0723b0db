"""What the layout search reuses across searches (a plan's runners-up, a sweep's points) gives
what a fresh search gives; the cost floors that order and skip GPU types are floors."""

from __future__ import annotations

import math

import pytest

from gpuplan.planning.memo import clear_memos
from gpuplan.training.groups import deadline_cost_floor
from gpuplan.training.search import Fixed, Target, cost_usd, search

DEADLINES = (200.0, 140.0, 90.0, 61.0, 60.0, 45.0, 30.0, 60.0, 140.0)


def _fresh(make):
    """An Evaluator whose memoised parts nothing else has touched."""
    clear_memos()
    return make()


def _summary(found):
    return [(e.layout, e.step_time, e.wall_days, e.memory.total) for e in found.best], found.thinned


@pytest.mark.parametrize("gpu, pricing", [("h100-sxm-80gb", "capex"), ("mi300x-oam-192gb", "cloud")])
def test_memoised_deadline_searches_match_fresh_ones(evaluator, preset, gpu, pricing):
    arch = preset("llama-3.1-70b")

    def make():
        return evaluator(arch, gpu, seq=8192, batch=512, precision="bf16", tokens=2e12)

    # One Evaluator's parts across deadlines, loosest first and back (the interval memo, the
    # memoised evaluations), against a fresh search at each deadline.
    shared = _fresh(make)
    for deadline in DEADLINES:
        target = Target("deadline", deadline_days=deadline, pricing=pricing)
        again = search(shared, Fixed(), target, top=1)
        fresh = search(_fresh(make), Fixed(), target, top=1)
        assert _summary(again) == _summary(fresh), deadline
        if not fresh.best:  # the miss message reads the fastest plan found
            assert (again.fastest and again.fastest.layout) == (fresh.fastest and fresh.fastest.layout)
        shared = make()  # a new Evaluator on the same (memoised) parts, as the next plan makes


def test_a_cutoff_finds_the_best_plan_or_nothing(evaluator, preset):
    arch = preset("llama-3.1-70b")

    def make():
        return evaluator(arch, "h100-sxm-80gb", seq=8192, batch=512, precision="bf16", tokens=2e12)

    target = Target("deadline", deadline_days=60.0)
    ev = _fresh(make)
    best = search(ev, Fixed(), target).best[0]
    cost = cost_usd(ev.gpu, best.gpus, best.gpu_hours, "capex")
    assert search(_fresh(make), Fixed(), target, cutoff=cost).best[0].layout == best.layout  # at the cost: found
    ev = _fresh(make)
    below = search(ev, Fixed(), target, cutoff=cost - 1.0)
    assert not below.best  # below it: nothing (and plan_gpu explains no miss)
    # "Nothing within" is memoised for a tighter deadline and a lower cutoff only.
    assert not search(ev, Fixed(), Target("deadline", deadline_days=59.0), cutoff=cost - 2.0).best
    assert search(ev, Fixed(), target, cutoff=cost).best[0].layout == best.layout


@pytest.mark.parametrize("model, gpu", [("llama-3.1-70b", "h100-sxm-80gb"), ("llama-3.1-70b", "b200-sxm-180gb"),
                                        ("llama-3.1-8b", "a100-sxm-80gb"), ("mixtral-8x7b", "h100-sxm-80gb")])
@pytest.mark.parametrize("deadline", [20.0, 60.0, 150.0])
def test_the_cost_floor_is_below_the_best_plan(evaluator, preset, model, gpu, deadline):
    ev = _fresh(lambda: evaluator(preset(model), gpu, seq=8192, batch=512, precision="bf16", tokens=2e12))
    target = Target("deadline", deadline_days=deadline)
    floor = deadline_cost_floor(ev, Fixed(), target, 20_000)
    found = search(ev, Fixed(), target)
    assert floor is not None
    if found.best:
        e = found.best[0]
        cost = cost_usd(ev.gpu, e.gpus, e.gpu_hours, "capex")
        assert floor <= cost
        assert floor >= 0.5 * cost  # a floor worth ordering by: within 2x on these jobs
    else:
        assert floor == math.inf or floor > 0
