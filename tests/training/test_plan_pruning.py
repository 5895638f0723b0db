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


@pytest.mark.parametrize("preset, seq, gpu, none", [
    # 70B at 8K: the fullest pipeline stage of one DP rank needs ~51 GB on a 48 GB L40S (states
    # 18 B/param over 80 stages, activations of 80 micro-batches in flight): no plan anywhere.
    ("llama-3.1-70b", 8192, "l40s-pcie-48gb", True),
    ("llama-3.1-70b", 8192, "l4-pcie-24gb", True),
    # 70B at 2K and 8B at 8K fit a pipeline of PCIe cards at DP 1: the search is run.
    ("llama-3.1-70b", 2048, "l40s-pcie-48gb", False),
    ("llama-3.1-8b", 8192, "l4-pcie-24gb", False),
])
def test_a_gpu_type_without_scale_out_skips_searches_that_find_nothing(catalog, preset, seq, gpu, none):
    """candidates.no_plan proves what the search would find (nothing) only where it finds nothing,
    and the plan says so with the same words."""
    from gpuplan.training.candidates import no_plan, plan_gpu
    from gpuplan.training.search import Evaluator, Fixed, _search
    from gpuplan.training.sizing import search_network
    from gpuplan.hardware.training_calibration import calibration

    text = (f'[model]\npreset = "{preset}"\n[training]\ntokens = 1e10\nsequence_length = {seq}\n'
            f'precision = "bf16"\ndeadline_days = 30\n')
    w = load_profile_text(text, "t.toml", catalog)
    job, target, g = planner.job_of(w), planner.target_of(w), catalog.gpus[gpu]
    ev = Evaluator(job, g, search_network(w, g, catalog), calibration(catalog), headroom=w.constraints.memory_headroom)
    assert no_plan(ev, target) is none
    found = _search(ev, Fixed(), target)
    assert (not found.best and found.fastest is None) is none
    if none:
        cand, miss = plan_gpu(ev, target, w, catalog)
        assert cand is None and miss.kind == "isolated" and miss.domain == 1
