"""An infeasible phase leads with its closest fix: one constraint changed, found by re-planning."""

from __future__ import annotations

from dataclasses import replace

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload

PROFILE = """
[model]
preset = "llama-3.1-70b"
[serving]
qps = 2000
ttft_ms = 500
tpot_ms = 50
[constraints]
allow_gpus = ["h100-sxm-80gb"]
power_limit_kw = 200
"""


def test_serving_fix_is_the_qps_that_plans_feasibly(catalog):
    workload = load_profile_text(PROFILE, "p.toml", catalog)
    plan = plan_workload(workload, catalog, intervals=False)
    s = plan.serving
    assert s is not None and not s.feasible
    fix = s.closest_fix
    assert fix is not None and fix.constraint in ("serving.qps", "constraints.power_limit_kw")
    assert fix.message.startswith(("lower", "raise")) and fix.from_ != fix.to
    if fix.constraint == "serving.qps":  # re-planned at the fixed value: feasible
        qps = float(fix.to.split()[0].replace(",", ""))
        fixed = replace(workload, serving=replace(workload.serving, qps=qps))
        assert plan_workload(fixed, catalog, intervals=False).serving.feasible


def test_fix_is_first_in_the_report_and_in_the_json(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE)
    out = cli("recommend", str(path), "-q").out
    assert out.index("closest fix") < out.index("why ")
    assert '"closest_fix": {' in cli("recommend", str(path), "-q", "--format", "json").out


def test_feasible_plans_have_none(catalog):
    workload = load_profile_text(PROFILE.replace("2000", "5").replace("200\n", "2000\n"), "p.toml", catalog)
    assert plan_workload(workload, catalog, intervals=False).serving.closest_fix is None
