"""The capex re-rank plans the serving runners-up without their frontier (thrown away unless one
wins) and adds it to the one that wins: the winner's plan is the one planned in full (issue 21)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpuplan.model.profile import load_workload
from gpuplan.planning.memo import clear_memos
from gpuplan.serving.planner import plan_serving, with_frontier

ROOT = Path(__file__).resolve().parents[2]


def test_a_runner_up_planned_lean_and_finished_equals_its_full_plan(catalog):
    base = load_workload(ROOT / "examples" / "default.toml", catalog).for_phase("serving")
    for gpu in ("b200-sxm-180gb", "mi300x-oam-192gb"):  # two of the default plan's runners-up
        only = replace(base, constraints=replace(base.constraints, allow_gpus=(gpu,)))
        clear_memos()
        lean = plan_serving(only, catalog, frontier=False).plan
        assert lean.frontier == []
        finished = with_frontier(lean, only, catalog)
        clear_memos()
        full = plan_serving(only, catalog).plan
        assert len(full.frontier) > 10  # every layout's points on the GPU
        assert finished == full
