"""``gpuplan render`` and the output path shared with ``recommend``: formats, files, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.render import FORMATS, RenderOptions, render
from tests.cli.conftest import CATALOG, PROFILE
from tests.render.fixtures import synthetic_plan


@pytest.fixture
def saved(tmp_path) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(render(synthetic_plan(), "json"))
    return path


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_render_reproduces_every_format(cli, saved, fmt):
    r = cli("render", str(saved), "--format", fmt)
    assert r.code == 0 and r.err == ""
    assert r.out == render(synthetic_plan(), fmt, RenderOptions(width=80))  # the 80-column terminal of the fixture


def test_render_writes_several_files_atomically(cli, saved, tmp_path):
    r = cli("render", str(saved), "-f", "markdown", "-o", str(tmp_path / "plan.md"),
            "--output", f"sarif:{tmp_path / 'plan.sarif'}", "--output", f"tfvars:{tmp_path / 'gpuplan.auto.tfvars.json'}",
            "--output", f"html:{tmp_path / 'plan.html'}")
    assert r.code == 0 and r.out == ""
    assert (tmp_path / "plan.md").read_text().startswith("<!-- gpuplan-plan -->")
    assert json.loads((tmp_path / "plan.sarif").read_text())["version"] == "2.1.0"
    assert json.loads((tmp_path / "gpuplan.auto.tfvars.json").read_text())["gpuplan_training"]["gpus"] == 1024
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpuplan.auto.tfvars.json", "plan.html", "plan.json",
                                                          "plan.md", "plan.sarif"]


def test_render_writes_nothing_when_one_format_is_bad(cli, saved, tmp_path):
    r = cli("render", str(saved), "-o", str(tmp_path / "a.txt"), "--output", f"yaml:{tmp_path / 'b.yaml'}")
    assert r.code == 2 and "unknown format 'yaml'" in r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


@pytest.mark.parametrize("args, message", [
    (["{saved}", "-o", "{saved}"], "refusing to overwrite an input file"),
    (["{tmp}/nope.json"], "nope.json: file not found"),
    (["{saved}", "--output", "json"], "--output: expected FORMAT:PATH"),
    (["{saved}", "-o", "{tmp}/no/dir/x.md"], "output directory does not exist"),
])
def test_render_bad_input_is_exit_2(cli, saved, tmp_path, args, message):
    before = saved.read_text()
    r = cli("render", *[a.format(saved=saved, tmp=tmp_path) for a in args])
    assert r.code == 2 and message in r.err and r.err.count("\n") == 1
    assert saved.read_text() == before


def test_render_refuses_other_schema_versions(cli, saved):
    from gpuplan.core.contract import SCHEMA_VERSION

    import re

    saved.write_text(re.sub(r'"schema_version": "[0-9.]+"', '"schema_version": "1.2"', saved.read_text(), count=1))
    r = cli("render", str(saved))
    assert r.code == 2
    assert r.err == (f"gpuplan: error: {saved}: schema_version: plan schema_version 1.2 is not supported; "
                     f"this gpuplan reads 2.0 <= schema_version <= {SCHEMA_VERSION}\n")


def test_table_on_a_pipe_is_plain(cli, saved, monkeypatch):
    assert "\x1b[" not in cli("render", str(saved)).out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in cli("render", str(saved)).out


def test_recommend_writes_every_output_and_gates(cli, planner, tmp_path):
    """recommend (the lead's command) through the synthetic planner: formats, files and exit codes."""
    outs = {fmt: tmp_path / f"out.{fmt}" for fmt in FORMATS}
    args = [f"{fmt}:{path}" for fmt, path in outs.items()]
    r = cli("recommend", PROFILE, "--catalog", CATALOG, "-f", "json", *[x for a in args for x in ("--output", a)])
    assert r.code == 0, r.err  # the synthetic plan is within this profile's budget
    plan = json.loads(r.out)
    assert plan["profile"] == PROFILE and plan["training"]["gpu"] == "testgpu-80g"
    assert json.loads(outs["json"].read_text()) == plan
    sarif = json.loads(outs["sarif"].read_text())
    assert sarif["runs"][0]["results"] == []
    assert outs["html"].read_text().startswith("<!DOCTYPE html>")
    tight = tmp_path / "tight.toml"
    tight.write_text(Path(PROFILE).read_text().replace("budget_usd = 100e6", "budget_usd = 10e6"))
    r = cli("recommend", str(tight), "--catalog", CATALOG, "-f", "github")
    assert r.code == 1
    assert f"::error file={tight.as_posix()},line=21,title=gpuplan training-over-budget::" in r.out
    assert cli("recommend", str(tight), "--catalog", CATALOG, "-f", "junit", "--exit-zero").code == 0
    r = cli("recommend", str(tight), "--catalog", CATALOG, "-o", str(tight))
    assert r.code == 2 and "refusing to overwrite an input file" in r.err
