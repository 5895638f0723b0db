"""The groups a capex deadline search leaves pending behind their cost floors (training/lazy_scan.py):
the search finds what it finds when every group is bounded first, and each floor is at most the
cost of its group's first bound."""

from __future__ import annotations

import heapq
import math

import pytest

import gpuplan.training.search as search_module
from gpuplan.planning.memo import clear_memos
from gpuplan.training.bounds import _bounds, _group_terms, _lower_scan
from gpuplan.training.groups import search_groups
from gpuplan.training.lazy_scan import pending, pending_terms
from gpuplan.training.search import MAX_GROUPS, Fixed, Target, search


def _eager(ev, fixed, target, outcome, cap, straggle):
    heap = _bounds(ev, fixed, target, outcome, cap, straggle)
    heapq.heapify(heap)
    return heap, None


def _outcome(found):
    return ([(e.layout, e.step_time, e.wall_days) for e in found.best], found.evaluated, found.bounded,
            found.fastest and found.fastest.layout, found.min_memory, found.min_memory_layout)


@pytest.mark.parametrize("gpu", ["h100-sxm-80gb", "gb200-nvl72", "gaudi3-oam-128gb"])
def test_lazy_searches_match_eager_ones(evaluator, preset, monkeypatch, gpu):
    arch = preset("llama-3.1-70b")

    def make():
        clear_memos()
        return evaluator(arch, gpu, seq=8192, batch=512, precision="bf16", tokens=2e12)

    for deadline in (20.0, 45.0, 60.0, 140.0, 400.0):
        for top, cutoff in ((1, None), (4, None), (1, 1.5e7)):
            target = Target("deadline", deadline_days=deadline)
            lazy = search(make(), Fixed(), target, top=top, cutoff=cutoff)
            with monkeypatch.context() as m:
                m.setattr(search_module, "first_bounds", _eager)
                eager = search(make(), Fixed(), target, top=top, cutoff=cutoff)
            assert _outcome(lazy) == _outcome(eager), (deadline, top, cutoff)


@pytest.mark.parametrize("gpu", ["h100-sxm-80gb", "gb200-nvl72", "gaudi3-oam-128gb"])
def test_floors_are_at_most_the_groups_first_bounds(evaluator, preset, gpu):
    clear_memos()
    ev = evaluator(preset("llama-3.1-70b"), gpu, seq=8192, batch=512, precision="bf16", tokens=2e12)
    for deadline, cap in ((30.0, math.inf), (60.0, math.inf), (60.0, 2.0e7)):
        target = Target("deadline", deadline_days=deadline)
        groups = search_groups(ev, Fixed(), target, MAX_GROUPS).groups
        first = {b.shape: b.key[0] for b in _lower_scan(ev, groups, target, cap, True)}
        for waiting in (pending(ev, groups, target, cap), pending_terms(ev, _group_terms(ev, groups), target, cap)):
            floors = {item[0]: floor for floor, items in waiting.items() for item in items}
            assert set(first) <= set(floors)  # every group the scan bounds is pending
            assert all(floors[shape] <= cost for shape, cost in first.items())
            assert len(floors) < len(groups)  # and some it drops are not
