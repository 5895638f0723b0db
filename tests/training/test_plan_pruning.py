"""A full training plan skips the GPU types it would not show (planner._beyond_shown): the plan
is the same as when every type is searched to the end."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.memo import clear_memos
from gpuplan.training import planner

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _workload(name, catalog, pricing=None):
    path = EXAMPLES / name
    w = load_profile_text(path.read_text(), str(path), catalog).for_phase("training")
    return w if pricing is None else replace(w, constraints=replace(w.constraints, pricing=pricing))


@pytest.mark.parametrize("name, pricing, unpriced", [("default.toml", None, False), ("default.toml", "cloud", False),
                                                     ("params-only.toml", None, False),
                                                     ("default.toml", None, True)])
def test_a_full_plan_skips_only_what_it_does_not_show(catalog, unpriced_catalog, monkeypatch, name, pricing,
                                                       unpriced):
    cat = unpriced_catalog if unpriced else catalog
    w = _workload(name, cat, pricing)
    probed = []
    probe = planner.meets_somewhere

    def counted(*args):
        probed.append(probe(*args))
        return probed[-1]

    monkeypatch.setattr(planner, "meets_somewhere", counted)
    clear_memos()
    pruned = planner.plan_training(w, cat)
    assert True in probed  # some GPU type was proven to meet the deadline and not searched to the end
    monkeypatch.setattr(planner, "SHOWN", 10**6)  # never nine shown: every type searched in full
    clear_memos()
    full = planner.plan_training(w, cat)
    assert pruned.plan.model_dump_json() == full.plan.model_dump_json()
    assert len(full.plan.alternatives) == planner.MAX_ALTERNATIVES
