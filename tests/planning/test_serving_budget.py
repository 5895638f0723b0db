"""A serving budget against the whole bill: the planner fits the servers to it; when the rest of the
bill pushes the plan over and no plan with cheaper servers meets the targets, the gate says how the
bill splits (it read 'the only priced GPU type that meets the targets' and 'over budget' unexplained)."""

from __future__ import annotations

from gpuplan.hardware import load_catalog
from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload

#: 70B FP8 at 20 requests/s on H100, H200 or A100: only 16 H100 ($588,000 of servers, catalog node
#: price $294,000 x 2) meet the targets; the bill adds network, storage, management, racks, power.
PROFILE = """
[model]
preset = "llama-3.1-70b"
[serving]
qps = 20
prompt_tokens = 2000
output_tokens = 400
precision = "fp8"
ttft_ms = 2000
tpot_ms = 50
[constraints]
budget_usd = 650000
allow_gpus = ["h100-sxm-80gb", "h200-sxm-141gb", "a100-sxm-80gb"]
"""


def test_over_budget_gate_splits_servers_from_the_rest_of_the_bill():
    catalog = load_catalog()
    plan = plan_workload(load_profile_text(PROFILE, "p.toml", catalog), catalog, phases=("serving",))
    s = plan.serving
    assert s.feasible and s.gpu == "h100-sxm-80gb" and s.gpus == 16
    servers = s.bom.capex_by_category_usd["server"]
    assert servers == 588_000 < 650_000 < s.capex_usd
    gate = next(f for f in plan.findings if f.code == "serving-over-budget")
    assert gate.message == (f"serving capex ${s.capex_usd:,.0f} (servers $588,000 + the rest of the bill "
                            f"${s.capex_usd - 588_000:,.0f}) exceeds the budget $650,000")
