"""``gpuplan diff``: deltas between plans or profiles, the PR comment, and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.ci.diff import diff_plans
from gpuplan.render import RenderOptions, render
from gpuplan.render.markdown import MAX_COMMENT_CHARS, render_diff
from gpuplan.core.contract import BomItem
from tests.cli.conftest import CATALOG, PROFILE
from tests.render.fixtures import synthetic_plan, training_plan, variant_plan


@pytest.fixture
def plans(tmp_path, monkeypatch):
    """base.json and new.json in a temporary working directory (relative paths: stable goldens)."""
    monkeypatch.chdir(tmp_path)
    paths = {}
    for name, plan in (("base", synthetic_plan()), ("new", variant_plan())):
        paths[name] = Path(f"{name}.json")
        paths[name].write_text(render(plan, "json"))
    return paths


def test_deltas_are_real_values():
    d = diff_plans(synthetic_plan(), variant_plan(), base_name="a", new_name="b")
    assert d.changed and d.new_errors == 0
    assert d.capex_base_usd == 48_492_800 + 1_101_450 and d.capex_new_usd == 60_616_000 + 1_101_450
    assert d.capex_delta_usd == 12_123_200 and d.capex_delta_ratio == pytest.approx(12_123_200 / 49_594_250)
    train, serve = d.phases
    assert (train.status, serve.status) == ("changed", "unchanged")
    changes = {c.field: c for c in train.changes}
    assert (changes["gpus"].base, changes["gpus"].new, changes["gpus"].delta) == (1024, 1280, 256)
    assert changes["nodes"].delta_ratio == pytest.approx(0.25)
    assert "gpu" not in changes  # same SKU
    bom = {(b.part_id, b.tier): b for b in train.bom}
    assert bom[("dgx-h100", None)].delta_quantity == 32 and bom[("dgx-h100", None)].delta_usd == 11_200_000
    assert bom[("osfp-2x400g-sr8", "leaf")].delta_usd is None  # unpriced: never $0
    assert [f.code for f in d.findings_resolved] == ["training-over-budget", "serving-disaggregation"]


def test_same_plan_is_no_change_even_after_a_json_round_trip(plans):
    from gpuplan.planning.saved import load_plan

    d = diff_plans(synthetic_plan(), load_plan(plans["base"]), base_name="a", new_name="b")
    assert not d.changed and all(p.status == "unchanged" for p in d.phases) and d.capex_delta_usd == 0


def test_an_infeasible_phase_makes_total_capex_unknown_not_zero():
    base = synthetic_plan()
    new = synthetic_plan(serving=base.serving.model_copy(update={"feasible": False, "capex_usd": None}))
    d = diff_plans(base, new, base_name="a", new_name="b")
    assert d.capex_base_usd == 48_492_800 + 1_101_450
    assert d.capex_new_usd is None and d.capex_delta_usd is None and d.capex_delta_ratio is None
    assert "$0" not in render(d, "markdown")


def test_capex_threshold_with_no_capex_on_either_side_does_not_block(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = synthetic_plan()
    unpriced = plan.model_copy(update={"training": plan.training.model_copy(update={"capex_usd": None}),
                                       "findings": []})
    Path("u.json").write_text(render(unpriced, "json"))
    r = cli("diff", "u.json", "u.json", "--max-capex-increase-pct", "10")
    assert r.code == 0 and "capex is unknown in both plans" in r.err
    # one side priced, the other not: the growth cannot be computed, so it fails closed
    Path("p.json").write_text(render(plan.model_copy(update={"findings": []}), "json"))
    r = cli("diff", "p.json", "u.json", "--max-capex-increase-pct", "10")
    assert r.code == 1 and "fails closed" in r.err


def test_sku_change_is_shown():
    new = synthetic_plan(training=training_plan(gpu="h200-sxm-141gb"))
    d = diff_plans(synthetic_plan(), new, base_name="a", new_name="b")
    gpu = next(c for c in d.phases[0].changes if c.field == "gpu")
    assert (gpu.base, gpu.new, gpu.delta) == ("h100-sxm-80gb", "h200-sxm-141gb", None)
    assert "| gpu | `h100-sxm-80gb` | `h200-sxm-141gb` | changed |" in render(d, "markdown")


def test_run_cost_is_labelled_as_what_it_is():
    """run_cost_usd is the servers' price under capex pricing (1,024 -> 1,280 GPUs: 128 -> 160
    servers at $350,000), not a run's cost: the diff says so; the JSON keeps the field's name."""
    def servers_priced(nodes):  # what the planner stores under capex pricing (training/evaluator.cost_usd)
        t = training_plan(nodes=nodes)
        return synthetic_plan(training=t.model_copy(update={"run_cost_usd": nodes * 350_000.0}))

    d = diff_plans(servers_priced(128), servers_priced(160), base_name="a", new_name="b")
    run = next(c for c in d.phases[0].changes if c.field == "run_cost_usd")
    assert (run.base, run.new) == (44_800_000, 56_000_000)
    assert "| run_cost_usd (servers, or cloud rent) | $44.80M | $56.00M |" in render(d, "markdown")
    assert "run_cost_usd (servers, or cloud rent)" in render(d, "table")


def test_phase_added_and_removed():
    d = diff_plans(synthetic_plan(training=None), synthetic_plan(), base_name="a", new_name="b")
    assert d.phases[0].phase == "training" and d.phases[0].status == "added"
    d = diff_plans(synthetic_plan(), synthetic_plan(serving=None), base_name="a", new_name="b")
    assert d.phases[1].status == "removed"


def test_pr_comment_stays_under_the_github_limit():
    items = [BomItem(category="cable", tier="leaf", part_id=f"cable-{i:05d}", description="x", quantity=i + 1,
                     unit_price_usd=10.0, unit_power_w=None, total_price_usd=10.0 * (i + 1), total_power_w=None,
                     source="s") for i in range(5000)]
    big = training_plan().bom.model_copy(update={"items": items})
    new = synthetic_plan(training=training_plan().model_copy(update={"bom": big}))
    d = diff_plans(synthetic_plan(), new, base_name="base.json", new_name="new.json")
    assert len(d.phases[0].bom) > 5000
    text = render_diff(d, RenderOptions())
    assert len(text) <= MAX_COMMENT_CHARS
    assert text.startswith("<!-- gpuplan-diff -->\n") and "more BOM lines not shown" in text
    assert text.count("<details>") == text.count("</details>")
    small = render_diff(d, RenderOptions(), limit=4000)
    assert len(small) <= 4000 and "#### Training: changed" in small


@pytest.mark.parametrize("fmt, ext", [("table", "txt"), ("json", "json"), ("markdown", "md")])
def test_diff_golden(cli, plans, golden, fmt, ext, tmp_path):
    r = cli("diff", str(plans["base"]), str(plans["new"]), "--format", fmt)
    assert r.code == 0, r.err
    golden(f"cli/diff.{fmt}.{ext}", r.out)


def test_diff_exit_codes(cli, plans, tmp_path):
    assert cli("diff", str(plans["base"]), str(plans["new"]), "-q").code == 0
    # the new plan fails a gate (error finding): exit 1, or 0 with --exit-zero
    r = cli("diff", str(plans["new"]), str(plans["base"]))
    assert r.code == 1 and "the new plan has 1 error finding" in r.err
    assert cli("diff", str(plans["new"]), str(plans["base"]), "--exit-zero").code == 0
    # capex threshold: +24.4% is over 10% and under 30%
    r = cli("diff", str(plans["base"]), str(plans["new"]), "--max-capex-increase-pct", "10")
    assert r.code == 1 and "capex grew 24.4%" in r.err
    assert cli("diff", str(plans["base"]), str(plans["new"]), "--max-capex-increase-pct", "30").code == 0


@pytest.mark.parametrize("args, message", [
    (["missing.json", "{new}"], "missing.json: file not found"),
    (["{base}", "{new}", "--format", "sarif"], "--format: unknown format 'sarif'"),
    (["{base}", "{new}", "--phase", "both-ish"], "--phase: expected training, serving or both"),
    (["{bad}", "{new}"], "schema_version 7.0 is not supported"),
])
def test_diff_bad_input_is_exit_2(cli, plans, tmp_path, args, message):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads(plans["base"].read_text()), "schema_version": "7.0"}))
    r = cli("diff", *[a.format(base=plans["base"], new=plans["new"], bad=bad) for a in args])
    assert r.code == 2 and message in r.err and r.err.count("\n") == 1 and r.out == ""


def test_diff_of_profiles_plans_both(cli, planner, tmp_path):
    new = tmp_path / "new.toml"
    new.write_text(Path(PROFILE).read_text().replace("deadline_days = 30", "gpus = 1280"))
    r = cli("diff", PROFILE, str(new), "--catalog", CATALOG, "--phase", "training", "--format", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert len(planner) == 2 and [p["phase"] for p in data["phases"]] == ["training"]
    gpus = next(c for c in data["phases"][0]["changes"] if c["field"] == "gpus")
    assert (gpus["base"], gpus["new"]) == (1024, 1280)


def test_diff_phase_compares_only_that_phase_of_saved_plans(cli, plans):
    """--phase serving on two plan JSONs: the training change (1,024 -> 1,280 GPUs) and its findings
    are left out; capex is the serving phase's alone ($1,101,450 on both sides)."""
    r = cli("diff", str(plans["base"]), str(plans["new"]), "--phase", "serving", "--format", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert [(p["phase"], p["status"]) for p in data["phases"]] == [("serving", "unchanged")]
    assert data["capex_base_usd"] == data["capex_new_usd"] == 1_101_450 and data["capex_delta_usd"] == 0
    assert [f["code"] for f in data["findings_resolved"]] == ["serving-disaggregation"]
    r = cli("diff", str(plans["base"]), str(plans["new"]), "--phase", "training", "--format", "json")
    assert [p["phase"] for p in json.loads(r.out)["phases"]] == ["training"]
    assert json.loads(r.out)["capex_delta_usd"] == 12_123_200


def test_diff_writes_the_comment_atomically(cli, plans, tmp_path):
    out = tmp_path / "comment.md"
    r = cli("diff", str(plans["base"]), str(plans["new"]), "--format", "markdown", "-o", str(out))
    assert r.code == 0 and r.out == ""
    assert out.read_text().startswith("<!-- gpuplan-diff -->")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json", "comment.md", "new.json"]  # no temp files
    r = cli("diff", str(plans["base"]), str(plans["new"]), "-o", str(plans["new"]))
    assert r.code == 2 and "refusing to overwrite an input file" in r.err


def test_diff_internal_error_is_exit_3(cli, monkeypatch, tmp_path):
    import gpuplan.planning.compose

    def broken(*args, **kwargs):
        raise ZeroDivisionError("simulated planner bug")

    monkeypatch.setattr(gpuplan.planning.compose, "plan_workload", broken)
    new = tmp_path / "new.toml"
    new.write_text(Path(PROFILE).read_text())
    r = cli("diff", PROFILE, str(new), "--catalog", CATALOG, "--exit-zero")
    assert r.code == 3 and r.out == "" and r.err.count("\n") == 1 and "internal error" in r.err


def test_mfu_is_a_percentage_and_gpus_in_a_server_are_in_server():
    """The diff wrote MFU as '0.412 -> 0.43, +0.018' where every report writes 41.2%, and the GPUs
    of a server line as 'unpriced' where the plan's own BOM says 'in server' (their price is the
    server's)."""
    def with_gpus(plan, mfu, servers):
        t = plan.training
        gpus = BomItem(category="server", tier="inside-server", part_id="h100-sxm-80gb:gpu", description="GPUs",
                       quantity=8 * servers, unit_price_usd=None, unit_power_w=None, total_price_usd=None,
                       total_power_w=None, source=None)
        bom = t.bom.model_copy(update={"items": [*t.bom.items, gpus]})
        return plan.model_copy(update={"training": t.model_copy(update={"mfu": mfu, "bom": bom})})

    d = diff_plans(with_gpus(synthetic_plan(), 0.412, 128), with_gpus(variant_plan(), 0.43, 160),
                   base_name="a", new_name="b")
    md, table = render(d, "markdown"), render(d, "table")
    assert "| mfu | 41.2% | 43.0% | +1.8 pts (+4.4%) |" in md
    assert "mfu" in table and "41.2%" in table and "+1.8 pts (+4.4%)" in table
    assert "| server | inside-server | `h100-sxm-80gb:gpu` | 1,024 | 1,280 | +256 | in server |" in md
    row = next(line for line in table.splitlines() if "h100-sxm-80gb:gpu" in line)
    assert row.split()[-2:] == ["in", "server"]


def test_a_reworded_finding_is_listed_once_as_changed():
    """A finding whose code and phase stay while its message moves (here the single-server warning's
    replica count) was listed under both "new findings" and "resolved findings"; it is one change."""
    from gpuplan.core.contract import Finding

    base = synthetic_plan()
    old = Finding(severity="warning", code="serving-single-server", phase="serving", field="serving",
                  message="all 3 replicas share one server")
    new = old.model_copy(update={"message": "all 4 replicas share one server"})
    d = diff_plans(base.model_copy(update={"findings": [*base.findings, old]}),
                   base.model_copy(update={"findings": [*base.findings, new]}), base_name="a", new_name="b")
    assert d.changed and d.findings_added == [] and d.findings_resolved == []
    assert [(c.base.message, c.new.message) for c in d.findings_changed] == [
        ("all 3 replicas share one server", "all 4 replicas share one server")]
    text = render_diff(d, RenderOptions())
    assert ("- :warning: **warning** `serving-single-server`: all 3 replicas share one server &rarr; all 4 "
            "replicas share one server\n") in text
    assert "New findings" not in text and "Resolved findings" not in text
    from gpuplan.render.table import render_diff as table_diff

    plain = table_diff(d, RenderOptions())
    assert ("changed findings warning: serving: serving-single-server: all 3 replicas share one server -> all 4 "
            "replicas share one server") in " ".join(plain.split())
    assert "new findings" not in plain and "resolved findings" not in plain
