"""Every format over the synthetic plan: golden files plus assertions on the real values."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from gpuplan.core.contract import Plan
from gpuplan.render import FORMATS, RenderOptions, render
from gpuplan.render.github import command
from gpuplan.render.tf_external import flat
from gpuplan.render.tfvars import variables
from tests.render.fixtures import PROFILE, infeasible_plan, serving_only_plan, synthetic_plan

EXTENSION = {"table": "txt", "json": "json", "markdown": "md", "tfvars": "auto.tfvars.json",
             "tf-external": "json", "sarif": "sarif", "junit": "xml", "github": "txt", "html": "html"}
PLANS = {"synthetic": synthetic_plan, "serving-only": serving_only_plan, "infeasible": infeasible_plan}


def test_every_issue_format_is_registered():
    assert set(FORMATS) == {"table", "json", "markdown", "tfvars", "tf-external", "sarif", "junit", "github", "html"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("which", sorted(PLANS))
def test_golden(fmt, which, options, golden):
    text = render(PLANS[which](), fmt, options)
    golden(f"render/{which}.{EXTENSION[fmt]}" if fmt not in ("tf-external", "github", "table")
           else f"render/{which}.{fmt}.{EXTENSION[fmt]}", text)


def test_verbose_table_lists_every_bom_line(plan, options, golden):
    text = render(plan, "table", RenderOptions(verbose=1, field_lines=options.field_lines))
    golden("render/synthetic.table-verbose.txt", text)
    for item in plan.training.bom.items:
        assert item.part_id in text
    assert "unpriced" in text and "osfp-2x400g-sr8" in text


def test_two_fresh_processes_plan_the_same_bytes_in_every_format(tmp_path):
    """The same profile planned from scratch in two Python processes (different hash seeds, so set
    and dict orders that leak into an output would differ) gives byte-identical files in every
    format. Rendering one in-memory plan twice could not catch that; this can."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    profile = root / "examples" / "a100-train-t4-serve.toml"
    procs = []
    for seed in ("1", "2"):
        cwd = tmp_path / f"run-{seed}"
        cwd.mkdir()
        argv = [sys.executable, "-m", "gpuplan", "recommend", str(profile), "--exit-zero", "-q"]
        for fmt in sorted(FORMATS):
            argv += ["--output", f"{fmt}:out.{fmt}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPLAN_", "PYTHONHASHSEED", "NO_COLOR"))}
        env.update(PYTHONHASHSEED=seed, PYTHONPATH=str(root), COLUMNS="100", TERM="dumb")
        procs.append((cwd, subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    outputs = []
    for cwd, proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-2000:]
        outputs.append({"stdout": out, **{fmt: (cwd / f"out.{fmt}").read_bytes() for fmt in sorted(FORMATS)}})
    first, second = outputs
    assert all(first[fmt] for fmt in FORMATS)
    for name in first:
        assert first[name] == second[name], f"{name} differs between two fresh processes"


def test_json_is_the_plan_and_reads_back(plan):
    text = render(plan, "json")
    data = json.loads(text)
    assert list(data)[:6] == ["schema_version", "gpuplan_version", "catalog_version", "catalog_sha256",
                              "input_sha256", "profile"]
    assert data["training"]["gpus"] == 1024 and isinstance(data["training"]["gpus"], int)
    assert data["training"]["capex_usd"] == 48_492_800.0
    assert data["serving"]["roofline"]["ridge_flops_per_byte"] == 590.746
    again = Plan.model_validate_json(text)
    assert render(again, "json") == text  # a saved plan renders to the same bytes


def test_table_is_plain_ascii_without_color(plan, options):
    from gpuplan.render.sections import SECTIONS

    text = render(plan, "table", RenderOptions(sections=frozenset(SECTIONS)))
    assert "\x1b[" not in text
    assert text.isascii()
    assert "TRAINING: 1,024 x h100-sxm-80gb (128 nodes), 35.7 days, capex $48.49M, 1,436 kW" in text
    assert "ridge point 591 FLOP/byte = 1,979 TFLOP/s / 3.35 TB/s" in text
    assert "unpriced  osfp-2x400g-sr8 (not in capex)" in text


def test_table_uses_color_only_when_asked(plan):
    assert "\x1b[" in render(plan, "table", RenderOptions(color=True))


def test_table_says_why_with_numbers(plan, options):
    from gpuplan.render.sections import SECTIONS

    text = render(plan, "table", RenderOptions(sections=frozenset(SECTIONS)))
    assert "- 1,024 x h100-sxm-80gb finish 2T tokens in 35.7 days, inside the 60-day deadline" in text
    assert "bound     compute: matmuls at 41% MFU" in text
    verbose = render(plan, "table", RenderOptions(verbose=1))
    assert "step 5.82 s = compute 4.9 + recompute 0.35" in verbose
    assert "memory 54.0 of 79.1 GiB per GPU (25.1 GiB headroom)" in verbose
    assert "h200-sxm-141gb" in text and "l40s-48gb" in text  # alternatives of both phases
    for a in plan.assumptions:
        assert a.field in text


def test_markdown_has_marker_details_and_findings(plan, options):
    text = render(plan, "markdown", options)
    assert text.startswith("<!-- gpuplan-plan -->\n")
    assert text.count("<details>") == text.count("</details>") == 6  # alternatives x2, next best layouts, BOM x2, assumptions
    assert ":x: **error** `training-over-budget`" in text
    assert "| transceiver | leaf | `osfp-2x400g-sr8` | 1,536 | - | **unpriced** |" in text


def test_tfvars_are_typed(plan):
    data = json.loads(render(plan, "tfvars"))
    assert set(data) == {"gpuplan", "gpuplan_training", "gpuplan_serving"}
    t = data["gpuplan_training"]
    assert t["gpus"] == 1024 and t["nodes"] == 128 and t["feasible"] is True
    assert t["layout"] == {"tp": 8, "pp": 4, "dp": 32, "cp": 1, "ep": 1, "vp": 2, "micro_batch": 1,
                           "num_micro_batches": 16, "global_batch_sequences": 512, "zero": 1,
                           "recompute": "selective", "sequence_parallel": True}
    assert t["topology"]["leaf_switches"] == 32 and t["topology"]["spine_switches"] == 16
    assert t["capex_usd"] == 48_492_800.0 and t["unpriced_parts"] == ["osfp-2x400g-sr8"]
    assert [i["total_price_usd"] for i in t["bom"]].count(None) == 1
    assert data["gpuplan"]["errors"] == 1 and data["gpuplan"]["warnings"] == 1
    assert data["gpuplan_serving"]["gpus_per_replica"] == 4


def test_tfvars_keep_the_shape_for_absent_and_infeasible_phases():
    full = variables(synthetic_plan())
    infeasible = variables(infeasible_plan())
    assert infeasible["gpuplan_serving"] is None
    assert set(infeasible["gpuplan_training"]) == set(full["gpuplan_training"])
    assert infeasible["gpuplan_training"]["layout"] is None and infeasible["gpuplan_training"]["bom"] == []


def test_tf_external_is_flat_strings_with_a_stable_key_set(plan):
    out = json.loads(render(plan, "tf-external"))
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in out.items())
    assert out["training_gpus"] == "1024" and out["training_layout_tp"] == "8"
    assert out["training_capex_usd"] == "48492800" and out["serving_tpot_ms"] == "38.5"
    assert out["training_planned"] == "true" and out["serving_layout_disaggregated"] == "false"
    assert out["training_topology_scalable_unit_nodes"] == "32"
    assert json.loads(out["training_bom"])[4]["unit_price_usd"] is None
    for other in (serving_only_plan(), infeasible_plan()):
        keys = flat(other)
        assert set(keys) == set(out)
    assert flat(serving_only_plan())["training_planned"] == "false"
    assert flat(serving_only_plan())["training_gpus"] == ""


def test_sarif_points_at_the_profile_lines(plan, options):
    doc = json.loads(render(plan, "sarif", options))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "gpuplan"
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == sorted(rules) == ["serving-disaggregation", "training-over-budget", "training-unpriced"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    lines = options.field_lines
    loc = by_rule["training-over-budget"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == PROFILE
    assert loc["region"]["startLine"] == lines["constraints.budget_usd"] == 25
    assert by_rule["training-over-budget"]["level"] == "error"
    assert by_rule["training-unpriced"]["locations"][0]["physicalLocation"]["region"]["startLine"] == lines["training"]
    for r in run["results"]:
        assert rules[r["ruleIndex"]] == r["ruleId"]


def test_renderers_read_the_profile_lines_when_not_given(plan):
    # The plan's profile is a real file with the plan's input_sha256: lines come from it.
    doc = json.loads(render(plan, "sarif"))
    starts = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in doc["runs"][0]["results"]}
    assert starts["training-over-budget"] == 25
    # An edited profile (another sha256) is not trusted for lines: the results fall back to line 1.
    edited = plan.model_copy(update={"input_sha256": "0" * 64})
    starts = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
              for r in json.loads(render(edited, "sarif"))["runs"][0]["results"]}
    assert starts["training-over-budget"] == 1


def test_builtin_default_profile_has_no_locations(plan):
    builtin = plan.model_copy(update={"profile": "<built-in default: default-llama-3.1-70b>"})
    results = json.loads(render(builtin, "sarif"))["runs"][0]["results"]
    assert all(r["locations"] == [] for r in results)
    assert "file=" not in render(builtin, "github")


def test_junit_counts_and_anchors(plan, options):
    root = ET.fromstring(render(plan, "junit", options))
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "1"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"gpuplan.training", "gpuplan.serving"}
    failed = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["training: training-over-budget"]
    assert failed[0].get("file") == PROFILE and failed[0].get("line") == "25"
    infeasible = ET.fromstring(render(infeasible_plan(), "junit", options))
    plan_case = next(c for c in infeasible.iter("testcase") if c.get("name") == "training: plan")
    assert "cannot hold 70.6B parameters" in plan_case.find("failure").get("message")


def test_junit_stays_well_formed_with_control_characters_in_names(plan, options):
    """XML 1.0 forbids most control characters even escaped; a workload name may carry one."""
    root = ET.fromstring(render(plan.model_copy(update={"workload": "x\u0001y"}), "junit", options))
    assert root.get("name") == "gpuplan x\\x01y"  # shown escaped, as in every format


def test_github_annotations(plan, options):
    lines = render(plan, "github", options).splitlines()
    assert lines[2] == ("::error file=tests/render/data/synthetic-70b.toml,line=25,title=gpuplan training-over-budget"
                        "::training: training capex $48,492,800 exceeds the budget $45,000,000")
    assert lines[3].startswith("::warning file=tests/render/data/synthetic-70b.toml,line=7,")
    assert lines[4].startswith("::notice title=gpuplan serving-disaggregation::")
    assert all(line.startswith("::") for line in lines)


def test_github_escaping():
    assert command("error", "50% done\nnext", file="a,b:c.toml", line=3, title="x") == \
        "::error file=a%2Cb%3Ac.toml,line=3,title=x::50%25 done%0Anext\n"


def _svg(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter("{http://www.w3.org/2000/svg}svg") if e.get("class") == cls]


def test_html_is_self_contained_with_roofline_and_topology(plan, options):
    text = render(plan, "html", options)
    assert text.startswith("<!DOCTYPE html>\n")
    root = ET.fromstring(text.split("\n", 1)[1])  # well-formed XML
    assert root.tag == "html"
    # no scripts, no external resources, no network
    assert not list(root.iter("script")) and not list(root.iter("link")) and not list(root.iter("img"))
    assert all("src" not in e.attrib and "href" not in e.attrib for e in root.iter())
    assert "http" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    train_roof, roof = _svg(root, "roofline")  # one chart per phase
    ns = "{http://www.w3.org/2000/svg}"
    (gemms,) = [g for g in train_roof.iter(f"{ns}g") if g.get("class") == "marker"]
    assert gemms.get("data-phase").startswith("layer GEMMs") and gemms.get("data-bound") == "compute"
    assert float(gemms.get("data-flops-per-byte")) == 1530.2
    groups = list(roof.iter(f"{ns}g"))
    ridge = [g for g in groups if g.get("class") == "ridge"]
    assert len(ridge) == 1 and float(ridge[0].get("data-flops-per-byte")) == pytest.approx(590.746)
    markers = {g.get("data-phase"): g for g in groups if g.get("class") == "marker"}
    assert set(markers) == {"prefill", "decode"}  # one marker per phase
    assert float(markers["prefill"].get("data-flops-per-byte")) == 1850.0
    assert markers["decode"].get("data-bound") == "memory"
    # the marker sits on the roof: decode (memory-bound) left of the ridge, prefill right of it
    ridge_x = float(ridge[0].find(f"{ns}circle").get("cx"))
    assert float(markers["decode"].find(f"{ns}circle").get("cx")) < ridge_x < \
        float(markers["prefill"].find(f"{ns}circle").get("cx"))
    topologies = _svg(root, "topology")
    assert len(topologies) == 2  # training and serving
    train = topologies[0]
    tiers = {g.get("data-tier"): int(g.get("data-switches")) for g in train.iter(f"{ns}g") if g.get("class") == "tier"}
    assert tiers == {"spine": 16, "leaf": 32}
    assert len(tiers) == int(train.get("data-tiers")) == plan.training.topology.tiers
    nodes = [g for g in train.iter(f"{ns}g") if g.get("class") == "nodes"]
    assert nodes[0].get("data-count") == "128"
    serve_tiers = [g for g in topologies[1].iter(f"{ns}g") if g.get("class") == "tier"]
    assert [(g.get("data-tier"), g.get("data-switches")) for g in serve_tiers] == [("leaf", "1")]


def test_html_escapes_text(plan, options):
    odd = plan.model_copy(update={"workload": "<script>alert(1)</script> & co"})
    text = render(odd, "html", options)
    assert "<script>" not in text and "&lt;script&gt;" in text
    ET.fromstring(text.split("\n", 1)[1])


def test_unknown_format_suggests(plan):
    from gpuplan.core.errors import InputError

    with pytest.raises(InputError, match="did you mean 'markdown'"):
        render(plan, "markdwn")


def test_html_bom_marks_estimated_prices_as_the_table_and_markdown_do(cli):
    """The 480-GPU example prices its rear-door coolers by an estimate ($22,000 est. in the table
    and Markdown); the HTML wrote '$22,000' as if it were a quoted price."""
    import html as html_lib
    import re

    plan = json.loads(cli("recommend", "examples/llama-70b-480-h100.toml", "-f", "json").out)
    items = plan["training"]["bom"]["items"]
    page = html_lib.unescape(cli("recommend", "examples/llama-70b-480-h100.toml", "-f", "html").out)
    md = cli("recommend", "examples/llama-70b-480-h100.toml", "-f", "markdown").out
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in page.split("<tr>")]
    units = {r[2]: r[4] for r in rows if len(r) == 8}
    assert any(i["estimate"] for i in items) and any(not i["estimate"] for i in items)
    for i in items:
        if i["unit_price_usd"] is not None:
            assert units[i["part_id"]].endswith(" est.") == i["estimate"], i["part_id"]
    assert "| cooling | compute | `rdhx-60kw` | 15 | $22,000 est. |" in md and units["rdhx-60kw"] == "$22,000 est."


def test_verbose_bom_keeps_each_price_on_its_line(catalog):
    """At the report's 100 columns the -v bill printed 'in' / 'server' and '$150,000' / 'est.' on two
    lines each (the columns wrapped to make room for the sources), and holding them whole cut the
    quantities ('1,0…'); every number cell now holds whole and the source column gives way (a GB200 plan: GPUs inside the NVL72, its rack parts, estimates)."""
    from pathlib import Path

    from gpuplan.model.profile import load_profile_text
    from gpuplan.planning.compose import plan_workload

    path = Path(__file__).resolve().parents[2] / "examples" / "llama-70b-train-serve.toml"
    plan = plan_workload(load_profile_text(path.read_text(), str(path), catalog), catalog, phases=("training",))
    text = render(plan, "table", RenderOptions(verbose=1))
    lines = text.splitlines()
    assert any("gb200-nvl72:gpu" in line and " 936 " in line and "in server" in line for line in lines)
    assert any("nvl72-rack" in line and "in rack" in line for line in lines)
    assert any("nvme-pfs-block-2u" in line and "$150,000 est." in line for line in lines)


def test_html_lists_the_next_best_layouts_as_the_table_and_markdown_do(plan, options):
    """docs/report.md: the HTML carries everything, but it left out the runner-up layouts on the
    chosen GPU that `-v` and the Markdown list. The synthetic plan's one runner-up: TP8 PP8 DP16,
    selective recompute, 6.1 s (4.9 compute + 0.21 TP + 0.09 PP + 0.05 DP = 0.35 exposed comm,
    0.43 bubble), MFU 39.3%, 31.2 GiB free."""
    import re

    page = render(plan, "html", options)
    assert "<h3>Next best layouts on h100-sxm-80gb</h3>" in page
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in page.split("<tr>")]
    assert ["TP8 PP8 DP16", "1", "selective", "6.1", "39.3%", "4.9", "0.35", "0.43", "31.2"] in rows
