"""A deadline search on servers bought by the rack (GB200 NVL72: 18 trays of 4 GPUs, one price
for 72 GPUs) returns the fastest plan of its price: several DPs of a shape cost the same."""

from __future__ import annotations

from dataclasses import replace

from gpuplan.hardware.training_calibration import calibration
from gpuplan.model.profile import load_workload
from gpuplan.training.bounds import _vp_shapes
from gpuplan.training.fit import _best_fit
from gpuplan.training.framework import constrain
from gpuplan.training.groups import search_groups
from gpuplan.training.planner import job_of, search_network, target_of
from gpuplan.training.search import (
    MAX_GROUPS,
    Evaluator,
    Fixed,
    SearchOutcome,
    _rank_key,
    search,
)


def test_a_rack_priced_deadline_plan_is_the_fastest_of_its_price(catalog):
    """examples/default.toml (Llama 3.1 70B) at a 250-day deadline on GB200 NVL72: every layout
    that meets it, fitted and ranked by brute force, against the search's plan. One rack ($2.86 M)
    buys 72 GPUs: TP1 PP9 CP2 DP4 (134.9 days, the first DP of its shape that meets the
    deadline) and TP2 PP9 DP4 (133.3 days) cost the same; the search returned the first."""
    workload = load_workload("examples/default.toml", catalog)
    gpu = catalog.gpus["gb200-nvl72"]
    target = replace(target_of(workload), deadline_days=250.0)

    def make():
        return Evaluator(job_of(workload), gpu, search_network(workload, gpu, catalog), calibration(catalog),
                         headroom=workload.constraints.memory_headroom)

    found = search(make(), Fixed(), target, top=1).best[0]
    ev = make()
    fixed = constrain(ev.framework, Fixed())
    seen = SearchOutcome(max_groups=MAX_GROUPS)
    every = []
    for group, scale in search_groups(ev, fixed, target, MAX_GROUPS).groups:
        for shape, _ in _vp_shapes(ev, group, fixed, target):
            for d in scale.dps:
                e = _best_fit(ev, shape._replace(dp=d), fixed, seen)
                if e is not None and e.wall_days <= 250.0:
                    every.append(e)
    best = min(every, key=lambda e: _rank_key(e, target, ev))
    assert _rank_key(found, target, ev) == _rank_key(best, target, ev)
    assert (found.layout.tp, found.layout.pp, found.layout.cp, found.layout.dp) == (2, 9, 1, 4)
    assert found.gpus == 72 and round(found.wall_days, 1) == 133.3
    assert ev.cost(72, 0.0, target.pricing) == 2_856_600.0
