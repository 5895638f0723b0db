"""``clear_memos`` empties every planning memo, so a benchmark that clears them times a plan from
scratch (benchmarks/README.md) and a long-lived process gets the memory back."""

from __future__ import annotations

from pathlib import Path

from gpuplan.model.profile import load_workload
from gpuplan.physics import queueing
from gpuplan.planning.compose import plan_workload
from gpuplan.planning.memo import clear_memos
from gpuplan.serving import disagg_workers
from gpuplan.serving import planner as serving_planner

ROOT = Path(__file__).resolve().parents[2]


def test_a_plan_fills_the_serving_memos_and_clear_memos_empties_them(catalog):
    plan_workload(load_workload(ROOT / "examples" / "default.toml", catalog), catalog)
    # the default profile's serving plan compares a disaggregated fleet and sizes replicas by queue tails
    assert disagg_workers.WORKERS and disagg_workers.RATES and serving_planner._REPLICAS
    assert queueing._tail_decay_rate.cache_info().currsize > 0
    clear_memos()
    assert not disagg_workers.WORKERS and not disagg_workers.RATES and not serving_planner._REPLICAS
    assert queueing._tail_decay_rate.cache_info().currsize == 0
