"""``gpuplan check``: gates against a proposed cluster, exit codes, formats and anchors."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli.conftest import CATALOG, DATA, PROFILE

TRAIN = str(DATA / "cluster-train.toml")
SERVE = str(DATA / "cluster-serve.json")


def _normal(text: str) -> str:
    """The catalog digest and version move with the shipped catalog; pin them for goldens."""
    text = re.sub(r'"catalog_version": "[^"]*"', '"catalog_version": "<catalog-version>"', text)
    return text.replace(_catalog_sha(), "<catalog-sha256>")


def _catalog_sha() -> str:
    from gpuplan.hardware import load_catalog

    return load_catalog([CATALOG]).sha256


def _gates(out: str) -> dict[str, dict]:
    return {g["name"]: g for g in json.loads(out)["gates"]}


def test_training_cluster_misses_the_deadline(cli, planner):
    r = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "--format", "json")
    assert r.code == 1
    gates = _gates(r.out)
    # the planner was asked for exactly the cluster: its GPU and 128 x 8 GPUs, no deadline of its own
    assert planner[-1].training.gpus == 1024 and planner[-1].constraints.allow_gpus == ("testgpu-80g",)
    assert planner[-1].training.deadline_days is None
    assert gates["deadline"]["passed"] is False
    assert gates["deadline"]["value"] == pytest.approx(35.6892) and gates["deadline"]["limit"] == 30
    assert (gates["deadline"]["file"], gates["deadline"]["field"], gates["deadline"]["line"]) == \
        (PROFILE, "training.deadline_days", 10)
    assert gates["fits-memory"]["passed"] and gates["fits-memory"]["value"] == 53.96
    assert gates["network"]["passed"] and gates["network"]["value"] == 400 and gates["network"]["limit"] == 180
    assert gates["network"]["file"] == TRAIN and gates["network"]["line"] == 7
    assert gates["budget"]["passed"] and gates["budget"]["limit"] == 100e6
    power = [g for g in json.loads(r.out)["gates"] if g["name"] == "power"]
    assert [(g["limit"], g["file"]) for g in power] == [(2000, PROFILE), (1500, TRAIN)]
    # the days are computed on the cluster's own fabric: a fact of the figures, not a mismatch
    assert gates["fabric"]["passed"] and "computed on the cluster's" in gates["fabric"]["message"]
    assert "gpuplan: training deadline failed: 35.7 days" in r.err


def test_table_gates_carry_their_units(cli, planner):
    """The table's value and limit columns said '35.7  30' with no unit (markdown and JSON had it)."""
    out = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG).out
    rows = {line.split()[1]: line.split() for line in out.splitlines() if line.startswith(("ok ", "FAIL "))}
    assert rows["deadline"][2:5] == ["35.7", "30", "days"]
    assert rows["fits-memory"][2:5] == ["54", "79.1", "GiB"] and rows["network"][4] == "Gb/s"
    assert rows["budget"][3].startswith("$") and rows["budget"][4] != "USD"


def test_bigger_cluster_passes(cli, planner, tmp_path):
    cluster = tmp_path / "c.toml"
    cluster.write_text('phase = "training"\ngpu = "testgpu-80g"\nnodes = 160\nnic_gbit_per_gpu = 400\n')
    r = cli("check", PROFILE, "--against", str(cluster), "--catalog", CATALOG, "--format", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["passed"] is True and data["errors"] == 0 and data["warnings"] == 0
    assert data["cluster"] == {"name": None, "phase": "training", "gpu": "testgpu-80g", "gpus": 1280, "nodes": 160,
                               "fabric": None, "nic_gbit_per_gpu": 400.0, "oversubscription": 1.0,
                               "budget_usd": None, "power_limit_kw": None}
    assert _gates(r.out)["deadline"]["value"] == pytest.approx(28.5514)


def test_fail_on_warning_and_exit_zero(cli, planner, tmp_path):
    cluster = tmp_path / "c.toml"
    # a NIC too slow to hide communication: a warning (the exposed time is in the days)
    cluster.write_text('phase = "training"\ngpu = "testgpu-80g"\nnodes = 160\nfabric = "testfabric-400g"\n'
                       'nic_gbit_per_gpu = 100\n')
    assert cli("check", PROFILE, "--against", str(cluster), "--catalog", CATALOG, "-q").code == 0
    r = cli("check", PROFILE, "--against", str(cluster), "--catalog", CATALOG, "--fail-on", "warning")
    assert r.code == 1 and "gpuplan: training network warning:" in r.err
    assert cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "--exit-zero", "-q").code == 0


def test_fail_on_warning_reports_agree_with_the_exit_code(cli, planner, tmp_path):
    """A job that exits 1 under --fail-on warning must not show green reports."""
    import xml.etree.ElementTree as ET

    cluster = tmp_path / "c.toml"
    cluster.write_text('phase = "training"\ngpu = "testgpu-80g"\nnodes = 160\nfabric = "testfabric-400g"\n'
                       'nic_gbit_per_gpu = 100\n')
    base = ("check", PROFILE, "--against", str(cluster), "--catalog", CATALOG, "-q")
    for fail_on, passed, failures in (("error", True, "0"), ("warning", False, "1")):
        r = cli(*base, "--fail-on", fail_on, "-f", "json", "--exit-zero")
        data = json.loads(r.out)
        assert (data["fail_on"], data["passed"]) == (fail_on, passed)
        r = cli(*base, "--fail-on", fail_on, "-f", "junit", "--exit-zero")
        assert ET.fromstring(r.out).get("failures") == failures


def test_serving_cluster_too_small(cli, planner):
    r = cli("check", PROFILE, "--against", SERVE, "--catalog", CATALOG, "--format", "json")
    assert r.code == 1
    gates = _gates(r.out)
    assert gates["capacity"]["passed"] is False
    assert (gates["capacity"]["value"], gates["capacity"]["limit"]) == (16, 24)
    assert (gates["capacity"]["file"], gates["capacity"]["line"]) == (SERVE, 4)  # "gpus" in the JSON file
    assert gates["ttft"]["passed"] and gates["ttft"]["value"] == 1380 and gates["ttft"]["line"] == 16
    assert gates["tpot"]["passed"] and gates["tpot"]["limit"] == 50
    # cost scales with the cluster's own GPU count: 16/24 of the planned serving BOM
    budget = [g for g in json.loads(r.out)["gates"] if g["name"] == "budget" and g["file"] == SERVE][0]
    assert budget["value"] == pytest.approx(1_101_450 * 16 / 24) and budget["passed"]


def test_verbose_table_adds_the_phase_planned_on_the_cluster(cli, planner):
    """``-v`` prints, after the gates, the phase report recommend would print for the cluster's plan
    (its layout, fabric, why); without it the table stops at the gates."""
    plain = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "--no-color")
    loud = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "--no-color", "-v")
    assert plain.code == loud.code == 1
    assert "TRAINING: 1,024 x testgpu-80g" not in plain.out and "Why" not in plain.out
    assert loud.out.startswith(plain.out.rstrip("\n"))
    tail = loud.out[len(plain.out.rstrip("\n")):]
    assert "TRAINING: 1,024 x testgpu-80g (128 nodes), 35.7 days" in tail
    assert "\nlayout " in tail and "\nWhy\n" in tail


@pytest.mark.parametrize("cluster, message", [
    ('phase = "training"\ngpu = "nope-gpu"\nnodes = 2\n', "gpu: unknown GPU 'nope-gpu'"),
    ('phase = "training"\ngpu = "testgpu-80g"\nnodes = 2\ngpus = 16\n', "give exactly one of gpus or nodes"),
    ('gpu = "testgpu-80g"\nnodes = 2\n', "phase: the profile has training and serving; say which one"),
    ('phase = "training"\ngpu = "testgpu-80g"\nnodes = 2\nfabirc = "x"\n', "fabirc: unknown field (did you mean 'fabric'?)"),
    ('phase = "training"\ngpu = "testgpu-80g"\nnodes = 2\nfabric = "ib-xyz"\n', "fabric: unknown fabric 'ib-xyz'"),
    ('phase = "training"\ngpu = "testgpu-80g"\nnodes = 0\n', "nodes: input should be greater than or equal to 1"),
    ("phase = [", "TOML syntax error"),
])
def test_bad_cluster_is_exit_2_in_one_line(cli, planner, tmp_path, cluster, message):
    path = tmp_path / "c.toml"
    path.write_text(cluster)
    r = cli("check", PROFILE, "--against", str(path), "--catalog", CATALOG)
    assert r.code == 2, r.err
    assert r.out == "" and r.err.count("\n") == 1 and message in r.err
    assert not planner  # nothing was planned


@pytest.mark.parametrize("args, message", [
    (["--fail-on", "note"], "--fail-on: expected error or warning"),
    (["--format", "html"], "--format: unknown format 'html'"),
    (["--output", "tfvars:x.json"], "--output: unknown format 'tfvars'"),
])
def test_bad_flags_are_exit_2(cli, planner, args, message):
    r = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, *args)
    assert r.code == 2 and message in r.err and not planner


def test_missing_files_are_exit_2(cli, planner):
    assert cli("check", PROFILE, "--against", "no/such.toml", "--catalog", CATALOG).code == 2
    r = cli("check", "no/such.toml", "--against", TRAIN, "--catalog", CATALOG)
    assert r.code == 2 and "no/such.toml: file not found" in r.err


@pytest.mark.parametrize("fmt, ext", [("table", "txt"), ("json", "json"), ("markdown", "md"), ("sarif", "sarif"),
                                      ("junit", "xml"), ("github", "txt")])
def test_check_golden(cli, planner, golden, fmt, ext):
    r = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "--format", fmt, "-q")
    assert r.code == 1 and r.err == ""
    golden(f"cli/check-training.{fmt}.{ext}", _normal(r.out))


def test_check_sarif_and_github_point_at_the_lines(cli, planner):
    r = cli("check", PROFILE, "--against", SERVE, "--catalog", CATALOG, "--format", "sarif", "-q")
    results = json.loads(r.out)["runs"][0]["results"]
    assert [(x["ruleId"], x["locations"][0]["physicalLocation"]["region"]["startLine"]) for x in results] == \
        [("check-capacity", 4)]
    r = cli("check", PROFILE, "--against", SERVE, "--catalog", CATALOG, "--format", "github", "-q")
    assert "::error file=tests/cli/data/cluster-serve.json,line=4,title=gpuplan check capacity::" in r.out


def test_check_writes_several_outputs_and_never_an_input(cli, planner, tmp_path):
    r = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "-q", "-o", str(tmp_path / "c.json"),
            "--format", "json", "--output", f"junit:{tmp_path / 'c.xml'}")
    assert r.code == 1 and r.out == ""
    assert json.loads((tmp_path / "c.json").read_text())["errors"] == 1
    assert (tmp_path / "c.xml").read_text().startswith("<?xml")
    before = (DATA / "cluster-train.toml").read_text()
    r = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "-o", TRAIN)
    assert r.code == 2 and "refusing to overwrite an input file" in r.err
    assert (DATA / "cluster-train.toml").read_text() == before


def test_internal_error_is_exit_3_in_one_line(cli, monkeypatch):
    """A bug inside the planner is exit 3 (not 1 or 2): one line on stderr, no traceback, nothing on stdout."""
    import gpuplan.planning.compose

    def broken(*args, **kwargs):
        raise ZeroDivisionError("simulated planner bug")

    monkeypatch.setattr(gpuplan.planning.compose, "plan_workload", broken)
    r = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "--exit-zero")
    assert r.code == 3, r.err
    assert r.out == "" and r.err.count("\n") == 1 and "Traceback" not in r.err
    assert r.err.startswith("gpuplan: internal error: ZeroDivisionError: simulated planner bug")


def test_internal_error_with_debug_prints_the_traceback_and_is_still_exit_3(cli, monkeypatch):
    import gpuplan.planning.compose

    def broken(*args, **kwargs):
        raise ZeroDivisionError("simulated planner bug")

    monkeypatch.setattr(gpuplan.planning.compose, "plan_workload", broken)
    monkeypatch.setenv("GPUPLAN_DEBUG", "1")
    r = cli("check", PROFILE, "--against", TRAIN, "--catalog", CATALOG, "--exit-zero")
    assert r.code == 3  # a bug never reads as a failed gate (1)
    assert "Traceback" in r.err and "ZeroDivisionError: simulated planner bug" in r.err


def test_the_power_message_writes_the_kw_its_columns_do(cli):
    """examples/llama-70b-480-h100.toml on the 60-node cluster: 60 DGX H100 at 10.2 kW = 612 kW plus
    53 kW of network, storage, head nodes and rear doors = 665 kW (the BOM's total) against the
    cluster's 800 kW. The columns said "665  800", the message "665.1 kW against the 800.0 kW limit"."""
    out = json.loads(cli("check", "examples/llama-70b-480-h100.toml", "--against",
                         "examples/clusters/h100-60-nodes-ndr.toml", "--format", "json").out)
    power = next(g for g in out["gates"] if g["name"] == "power")
    assert round(power["value"]) == 665 and power["limit"] == 800
    assert power["message"] == "665 kW against the 800 kW limit"


def test_a_serving_header_says_what_the_plan_needs_beside_what_the_cluster_has(cli):
    """Llama-3.1-8B at 60 QPS against 8 L40S (a plan signer's files): the header said "on the cluster:
    13 x l40s-pcie-48gb" under "cluster: 8 x l40s-pcie-48gb"; the 13 is the fleet the plan sizes on
    the cluster's GPU, which the capacity gate compares with the 8 it has."""
    r = cli("check", "tests/serving/data/chat8b.toml", "--against", str(DATA / "serve-cluster-8-l40s.toml"))
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[1] == "cluster 'serve-pod': 8 x l40s-pcie-48gb in 1 node"
    assert " ".join(r.out.split("cluster file")[1].split("\n\n")[0].split("\n")[1:]) == (
        "the plan needs: serving: 13 x l40s-pcie-48gb (2 nodes, 3 idle), TTFT p99 112 ms, TPOT 29.4 ms, capex "
        "$309,338, 13.4 kW; the cluster has 8 GPUs")
    assert "on the cluster:" not in r.out
