"""Reading saved plans back: the schema_version window, one-line errors, and the committed schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.core.errors import InputError
from gpuplan.core.contract import SCHEMA_VERSION
from gpuplan.planning.saved import MIN_SCHEMA_VERSION, is_plan_file, load_plan, locate, profile_lines
from gpuplan.render import render
from tests.render.fixtures import ROOT, synthetic_plan


def _write(tmp_path: Path, data: object, name: str = "plan.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_saved_plan_reads_back_equal(tmp_path):
    plan = synthetic_plan()
    path = _write(tmp_path, render(plan, "json"))
    loaded = load_plan(path)
    assert loaded.training.gpus == 1024 and loaded.serving.roofline.ridge_flops_per_byte == 590.746
    for fmt in ("json", "markdown", "sarif", "tfvars"):
        assert render(loaded, fmt) == render(plan, fmt)


@pytest.mark.parametrize("version", ["1.2", "3.0", "0.9", "1.999", "9"])
def test_versions_outside_the_window_are_refused(tmp_path, version):
    data = json.loads(render(synthetic_plan(), "json"))
    data["schema_version"] = version
    with pytest.raises(InputError) as err:
        load_plan(_write(tmp_path, data))
    assert f"plan schema_version {version} is not supported" in str(err.value)
    assert f"{MIN_SCHEMA_VERSION} <= schema_version <= {SCHEMA_VERSION}" in str(err.value)


@pytest.mark.parametrize("data, message", [
    ({"hello": 1}, "not a gpuplan plan: schema_version missing or malformed"),
    ([1, 2], "not a gpuplan plan: expected a JSON object"),
    ('{"schema_version": "1.0", "schema_version": "1.0"}', "duplicate key 'schema_version'"),
    ("{not json", "JSON syntax error"),
    ({"schema_version": "1.0", "gates": [], "cluster": {}}, "a 'gpuplan check' result, not a saved plan"),
    ({"schema_version": "1.0", "phases": [], "base": "a", "new": "b"}, "a 'gpuplan diff' result, not a saved plan"),
])
def test_malformed_plans_fail_in_one_line(tmp_path, data, message):
    with pytest.raises(InputError) as err:
        load_plan(_write(tmp_path, data))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_invalid_field_names_the_path(tmp_path):
    data = json.loads(render(synthetic_plan(), "json"))
    data["training"]["gpus"] = "many"
    with pytest.raises(InputError, match=r"plan.json: training.gpus: "):
        load_plan(_write(tmp_path, data))


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity"])
def test_a_number_written_as_nan_is_one_line_input_error(tmp_path, value):
    data = json.loads(render(synthetic_plan(), "json"))
    data["training"]["step_time_s"] = value
    with pytest.raises(InputError, match="not finite"):
        load_plan(_write(tmp_path, data))


def test_plan_or_profile_by_content_then_extension(tmp_path):
    assert is_plan_file(_write(tmp_path, "{}", "x.json"))
    assert not is_plan_file(_write(tmp_path, "[model]\n", "x.toml"))
    assert is_plan_file(_write(tmp_path, ' {"a": 1}', "saved.plan"))
    assert not is_plan_file(_write(tmp_path, "name = 'x'", "workload.txt"))
    # the content wins over a wrong extension; a .json that is neither goes to the plan reader's error
    assert not is_plan_file(_write(tmp_path, '[model]\npreset = "llama-2-7b"\n', "profile.json"))
    assert is_plan_file(_write(tmp_path, '{"schema_version": "2.2"}', "plan.toml"))
    assert is_plan_file(_write(tmp_path, "", "empty.json"))


def test_locate_falls_back_to_the_parent_table():
    lines = {"serving": 12, "serving.qps": 13, "constraints": 19}
    assert locate("serving.qps", lines) == 13
    assert locate("serving.ttft_ms", lines) == 12  # a default: point at its table
    assert locate("constraints.allow_gpus[0]", lines) == 19
    assert locate("training.deadline_days", lines) is None and locate(None, lines) is None


def test_profile_lines_need_the_same_file(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert profile_lines(synthetic_plan())["constraints.budget_usd"] == 25
    assert profile_lines(synthetic_plan(profile=str(tmp_path / "gone.toml"))) == {}


def test_committed_schema_is_the_generated_one():
    out = subprocess.run([sys.executable, "-m", "gpuplan", "schema"], capture_output=True, text=True, check=True).stdout
    committed = (ROOT / "schema" / "plan.schema.json").read_text(encoding="utf-8")
    assert committed == out, "schema/plan.schema.json is stale: run 'gpuplan schema > schema/plan.schema.json'"
    schema = json.loads(out)
    assert schema["title"] == "Plan" and "schema_version" in schema["required"]


@pytest.mark.parametrize("phase, field", [("serving", "ridge_flops_per_byte"), ("training", "mem_bw_tb_per_s"),
                                          ("serving", "peak_tflops")])
def test_a_roofline_figure_at_zero_is_refused_not_divided_by(tmp_path, phase, field):
    """Renderers divide by the ridge and the peak: a saved plan must carry them above zero."""
    data = json.loads(render(synthetic_plan(), "json"))
    data[phase]["roofline"][field] = 0
    with pytest.raises(InputError, match=rf"plan.json: {phase}.roofline.{field}: input should be greater than 0"):
        load_plan(_write(tmp_path, data))


@pytest.mark.parametrize("run_from", ["repo", "repo/infra", "elsewhere"])
def test_annotation_paths_are_relative_to_the_repository_root(tmp_path, monkeypatch, run_from):
    """A job that runs from a subdirectory (working-directory:) must still name the file as the
    repository does, or the annotations attach to nothing."""
    from gpuplan.planning.saved import repo_path

    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "infra" / "workloads").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    profile = tmp_path / "repo" / "infra" / "workloads" / "p.toml"
    profile.write_text("x = 1\n")
    monkeypatch.chdir(tmp_path / run_from)
    assert repo_path(str(profile)) == "infra/workloads/p.toml"
    assert repo_path(os.path.relpath(profile)) == "infra/workloads/p.toml"


def test_github_workspace_is_the_root_when_set(tmp_path, monkeypatch):
    from gpuplan.planning.saved import repo_path

    (tmp_path / "ws" / "a").mkdir(parents=True)
    (tmp_path / "ws" / "a" / "p.toml").write_text("x = 1\n")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.chdir(tmp_path / "ws" / "a")
    assert repo_path("p.toml") == "a/p.toml"
    assert repo_path("missing.toml") == "missing.toml"  # not on disk: as given
