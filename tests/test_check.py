"""gpuplan.check with the shipped catalog: the gates read the statistics the planner sized for."""

from __future__ import annotations

import pytest

from gpuplan.catalog import load_catalog
from gpuplan.check import run_check
from gpuplan.planner import plan_workload
from gpuplan.profile import load_profile_text

P50 = """
[model]
preset = "llama-3.1-8b"
[serving]
qps = 20
prompt_tokens = 4000
output_tokens = 200
precision = "fp8"
ttft_ms = 100
tpot_ms = 50
latency_percentile = "p50"
[constraints]
allow_gpus = ["h100-sxm-80gb"]
"""


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_ttft_gate_reads_the_profiles_percentile_not_p99(catalog):
    w = load_profile_text(P50, "p.toml", catalog)
    s = plan_workload(w, catalog).serving
    assert s.feasible and s.latency_percentile == "p50"
    assert s.nodes == 1 and s.ttft_ms_at_percentile <= 100 < s.ttft_ms_p99  # a p99 gate would fail it
    result = run_check(w, catalog, 'phase = "serving"\ngpu = "h100-sxm-80gb"\nnodes = 1\n', "c.toml")
    ttft = next(g for g in result.gates if g.name == "ttft")
    assert ttft.passed and ttft.limit == 100 and "TTFT p50" in ttft.message
    assert ttft.value <= 100


def test_an_unpriced_cluster_fails_a_budget_closed_as_recommend_does(unpriced_catalog):
    # h100-nvl-94gb without its server price (the shipped catalog estimates one)
    catalog = unpriced_catalog
    w = load_profile_text(P50.replace("h100-sxm-80gb", "h100-nvl-94gb").replace("ttft_ms = 100", "ttft_ms = 2000")
                          + "budget_usd = 1e9\n", "p.toml", catalog)
    result = run_check(w, catalog, 'phase = "serving"\ngpu = "h100-nvl-94gb"\nnodes = 1\n', "c.toml")
    budget = next(g for g in result.gates if g.name == "budget")
    assert not budget.passed and budget.severity == "error" and not result.passed
