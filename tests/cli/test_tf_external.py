"""``gpuplan tf-external``: Terraform's external data source protocol, as the program itself."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from tests.cli.conftest import CATALOG, PROFILE, ROOT


def _run(cli, monkeypatch, query: str):
    monkeypatch.setattr(sys, "stdin", io.StringIO(query))
    return cli("tf-external")


def test_query_in_flat_strings_out(cli, planner, monkeypatch):
    r = _run(cli, monkeypatch, json.dumps({"profile": PROFILE, "phase": "training", "catalog": CATALOG}))
    assert r.code == 0 and r.err == ""
    out = json.loads(r.out)
    assert all(isinstance(v, str) for v in out.values())
    assert out["training_gpus"] == "1024" and out["training_gpu"] == "testgpu-80g"
    assert out["serving_planned"] == "false" and out["serving_gpus"] == ""
    assert out["workload"] == "cli-test-30b" and out["profile"] == PROFILE
    assert planner[-1].training is not None


def test_recommend_speaks_the_same_protocol(cli, planner, monkeypatch):
    via_program = json.loads(_run(cli, monkeypatch, json.dumps({"profile": PROFILE, "catalog": CATALOG})).out)
    via_format = json.loads(cli("recommend", PROFILE, "--catalog", CATALOG, "-f", "tf-external").out)
    assert via_program == via_format


@pytest.mark.parametrize("query, message", [
    ("", "expected a JSON object with the key profile"),
    ("[1]", "expected a JSON object with the key profile"),
    ("{bad", "JSON syntax error"),
    ('{"profile": "x.toml", "phse": "training"}', "phse: unknown query key (did you mean 'phase'?)"),
    ('{"profile": 3}', "profile: expected a string"),
    ('{"phase": "training"}', "profile: required key is missing"),
    ('{"profile": "nope.toml"}', "nope.toml: file not found"),
    (json.dumps({"profile": PROFILE, "phase": "train", "catalog": CATALOG}), "<stdin>: phase: expected training, serving or both, got 'train'"),
])
def test_errors_are_one_stderr_line_and_nonzero(cli, planner, monkeypatch, query, message):
    r = _run(cli, monkeypatch, query)
    assert r.code == 2 and r.out == ""
    assert r.err.count("\n") == 1 and message in r.err


def test_real_process_has_no_side_effects(tmp_path):
    """Run as Terraform runs it: a process, stdin closed after the query, in the module directory."""
    (tmp_path / "w.toml").write_text("[model]\nparams = 30e9\n[serving]\nqps = 1\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "gpuplan", "tf-external"], input='{"profile": "nope.toml"}',
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "gpuplan: error: nope.toml: file not found\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.toml"]


def test_terminal_stdin_is_refused(cli, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Tty(""))
    r = cli("tf-external")
    assert r.code == 2 and "expects the query JSON object on stdin" in r.err


def test_a_phase_the_profile_has_no_table_for_is_an_error_as_in_recommend(cli, monkeypatch):
    """Terraform asked for the training phase of a serving-only profile and got exit 0 and 60 empty
    strings (training_planned = "false"), where `recommend --phase training` exits 2."""
    q = json.dumps({"profile": "examples/chat-8b-serving.toml", "phase": "training"})
    r = _run(cli, monkeypatch, q)
    assert r.code == 2 and r.out == ""
    assert r.err == ("gpuplan: error: examples/chat-8b-serving.toml: phase: the profile has no [training] "
                     "table to plan\n")
    assert cli("recommend", "examples/chat-8b-serving.toml", "--phase", "training").code == 2
    both = _run(cli, monkeypatch, json.dumps({"profile": "examples/chat-8b-serving.toml"}))
    assert both.code == 0 and json.loads(both.out)["training_planned"] == "false"


def test_an_empty_phase_is_the_default_both_and_requires_no_table(cli, planner, monkeypatch):
    """``phase = ""`` (a Terraform variable left empty) planned both phases, as an absent key does, but
    still required every table: a serving-only profile failed with 'the profile has no [training]
    table to plan'. It is the default now, in what it plans and in what it requires."""
    q = {"profile": "examples/chat-8b-serving.toml"}
    empty = _run(cli, monkeypatch, json.dumps({**q, "phase": ""}))
    absent = _run(cli, monkeypatch, json.dumps(q))
    assert (empty.code, empty.err) == (0, "")
    out = json.loads(empty.out)
    assert out == json.loads(absent.out)
    assert out["training_planned"] == "false" and out["serving_planned"] == "true"
