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


def _trace(found):
    """Everything a search tells, the count of layouts it evaluated included."""
    best = [(e.layout, e.step_time, e.wall_days) for e in found.best]
    fastest = found.fastest and (found.fastest.layout, found.fastest.step_time)
    return best, fastest, found.min_memory, found.min_memory_layout, found.evaluated


# The searches of one GPU type the planner runs: a deadline (capex, cloud; met or missed), the
# best few layouts, a cutoff, the capped probes for the fastest plan, a fixed count, a budget.
TARGETS = [
    (Target("deadline", deadline_days=60.0), {}),
    (Target("deadline", deadline_days=60.0, pricing="cloud"), {}),
    (Target("deadline", deadline_days=3.0), {}),
    (Target("deadline", deadline_days=90.0), {"top": 4}),
    (Target("deadline", deadline_days=45.0), {"cutoff": 3e7}),
    (Target("fastest"), {"limit": 1, "relax": False}),
    (Target("fastest"), {"limit": 64, "relax": False}),
    (Target("gpus", gpus=512, whole_nodes=False), {}),
    (Target("budget", budget_usd=2e7), {}),
]


@pytest.mark.parametrize("model, gpu", [("llama-3.1-70b", "h100-sxm-80gb"), ("llama-3.1-70b", "gb200-nvl72"),
                                        ("mixtral-8x7b", "mi300x-oam-192gb"), ("deepseek-v3", "b200-sxm-180gb")])
def test_groups_met_with_a_lower_bound_first_search_as_with_their_own(monkeypatch, evaluator, preset, model, gpu):
    """A group enters the heap with a lower bound of its stage time and gets its own when it
    reaches the top: the search meets the groups in the same order, so it evaluates the same
    layouts and tells the same, to the count of evaluations."""
    import gpuplan.training.bounds as bounds_module
    import gpuplan.training.search as search_module

    def make():
        return evaluator(preset(model), gpu, seq=4096, batch=1024, precision="bf16", tokens=1e12)

    for target, options in TARGETS:
        lazy = search_module._search(_fresh(make), Fixed(), target, straggle=False, **options)
        with monkeypatch.context() as m:
            m.setattr(bounds_module, "_lower_first", lambda ev, target: False)
            eager = search_module._search(_fresh(make), Fixed(), target, straggle=False, **options)
        assert _trace(lazy) == _trace(eager), (target, options)


@pytest.mark.parametrize("model, gpu", [("llama-3.1-70b", "h100-sxm-80gb"), ("llama-3.1-405b", "b200-sxm-180gb"),
                                        ("mixtral-8x7b", "mi300x-oam-192gb"), ("llama-3.1-8b", "a100-sxm-80gb")])
@pytest.mark.parametrize("deadline, top", [(20.0, 1), (60.0, 1), (60.0, 4), (150.0, 1), (2.0, 1)])
def test_the_straggler_bound_finds_the_same_plans_with_fewer_evaluations(monkeypatch, evaluator, preset, model, gpu,
                                                                         deadline, top):
    import gpuplan.training.search as search_module

    def make():
        return evaluator(preset(model), gpu, seq=8192, batch=512, precision="bf16", tokens=2e12)

    target = Target("deadline", deadline_days=deadline)
    tight = search_module._search(_fresh(make), Fixed(), target, top=top)
    loose = search_module._search(_fresh(make), Fixed(), target, top=top, straggle=False)
    assert [(e.layout, e.wall_days) for e in tight.best] == [(e.layout, e.wall_days) for e in loose.best]
    if not loose.best:  # what a search that finds nothing tells is the same too
        assert _trace(tight) == _trace(loose)
    # The count of evaluations, of the straggler bound alone: the DP values above the incumbent's
    # cost are cut (_evaluate_shape's ``above``) at another point of each search's order.
    whole = search_module._evaluate_shape
    monkeypatch.setattr(search_module, "_evaluate_shape", lambda ev, b, fixed, target, outcome, above=math.inf:
                        whole(ev, b, fixed, target, outcome))
    tight = search_module._search(_fresh(make), Fixed(), target, top=top)
    loose = search_module._search(_fresh(make), Fixed(), target, top=top, straggle=False)
    assert tight.evaluated <= loose.evaluated


@pytest.mark.parametrize("model, gpu", [("llama-3.1-70b", "h100-sxm-80gb"), ("llama-3.1-405b", "b200-sxm-180gb"),
                                        ("mixtral-8x7b", "mi300x-oam-192gb"), ("llama-3.1-70b", "gb200-nvl72")])
@pytest.mark.parametrize("deadline, top, cutoff", [(60.0, 1, None), (60.0, 4, None), (150.0, 1, None),
                                                   (60.0, 1, 3e7), (2.0, 1, None)])
def test_dp_values_above_the_incumbent_cost_are_not_evaluated(monkeypatch, evaluator, preset, model, gpu, deadline,
                                                              top, cutoff):
    """A capex deadline search skips a shape's DP values that cost more than the incumbent (or the
    cutoff): the same plans, in fewer evaluations; a search that ends without a plan had no
    incumbent to cut by and tells the same."""
    import gpuplan.training.search as search_module

    def make():
        return evaluator(preset(model), gpu, seq=8192, batch=512, precision="bf16", tokens=2e12)

    target = Target("deadline", deadline_days=deadline)
    cut = search_module._search(_fresh(make), Fixed(), target, top=top, cutoff=cutoff)
    whole = search_module._evaluate_shape
    monkeypatch.setattr(search_module, "_evaluate_shape", lambda ev, b, fixed, target, outcome, above=math.inf:
                        whole(ev, b, fixed, target, outcome))
    every = search_module._search(_fresh(make), Fixed(), target, top=top, cutoff=cutoff)
    assert [(e.layout, e.wall_days) for e in cut.best] == [(e.layout, e.wall_days) for e in every.best]
    assert cut.evaluated <= every.evaluated
    if not every.best:
        assert _trace(cut) == _trace(every)


@pytest.mark.parametrize("model, gpu, deadline", [("llama-3.1-405b", "h100-nvl-94gb", 80.0),
                                                  ("llama-3.1-405b", "a100-sxm-80gb", 80.0),
                                                  ("llama-3.1-70b", "l4-pcie-24gb", 60.0),
                                                  ("llama-3.1-70b", "h100-sxm-80gb", 2.0)])
def test_a_missed_deadline_without_the_least_memory_tells_the_same_miss(evaluator, preset, model, gpu, deadline):
    """``memory=False`` (planning: the least memory is read only when no fastest plan is found
    either) skips the search without the straggler share when the relaxed search finds a plan:
    the same fastest plan, and the same least memory when it finds none."""
    def make():
        return evaluator(preset(model), gpu, seq=8192, batch=2048, precision="bf16", tokens=15.6e12)

    target = Target("deadline", deadline_days=deadline)
    lean = search(_fresh(make), Fixed(), target, memory=False)
    full = search(_fresh(make), Fixed(), target)
    assert not full.best and not lean.best
    assert (lean.fastest and (lean.fastest.layout, lean.fastest.wall_days)) == \
        (full.fastest and (full.fastest.layout, full.fastest.wall_days))
    if full.fastest is None:
        assert (lean.min_memory, lean.min_memory_layout) == (full.min_memory, full.min_memory_layout)


@pytest.mark.parametrize("model", ["llama-3.1-70b", "llama-3.1-405b", "mixtral-8x22b", "deepseek-v3"])
@pytest.mark.parametrize("gpu", ["h100-sxm-80gb", "gb200-nvl72", "mi355x-oam-288gb", "l40s-pcie-48gb"])
def test_the_least_seconds_per_sequence_is_that_of_every_group(evaluator, preset, model, gpu):
    """The floor's families bounded cheapest first give the least over every group's stage time."""
    from gpuplan.training.groups import search_groups, seconds_per_sequence

    target = Target("deadline", deadline_days=60.0)
    ev = _fresh(lambda: evaluator(preset(model), gpu, seq=8192, batch=1024, precision="bf16", tokens=2e12))
    least = seconds_per_sequence(ev, Fixed(), target, 20_000)
    groups = search_groups(ev, Fixed(), target, 20_000).groups
    every = min((ev.stage_time_any_vp(shape) * scale.mp / shape.micro_batch for shape, scale in groups),
                default=math.inf)
    assert least == every
