"""A file of the wrong kind in any argument of render, diff, graph, deploy, check and tf-external is one
line naming the file, what it is and what was expected, exit 2: a saved plan given as tf-external's
profile said 'line 1, column 1: TOML syntax error: invalid statement', a profile given to render
'JSON syntax error: Expecting value', a profile given as check's cluster 'model: unknown field (did you
mean 'nodes'?)'. A profile saved as .json is still a profile, and a plan JSON in either diff position
still a plan."""

from __future__ import annotations

import io
import json
import shutil
import sys

import pytest

from tests.cli.conftest import CATALOG, PROFILE

PLAN = "a saved plan (the JSON of 'gpuplan recommend --format json')"
PROFILE_KIND = "a workload profile (TOML with a [model] table)"
CLUSTER = "a proposed cluster (the file of 'gpuplan check --against')"
CHECK = "a 'gpuplan check' result"


@pytest.fixture
def files(tmp_path, cli, planner):
    """A saved plan, a profile, a profile saved as .json, a cluster file and a check result."""
    plan = tmp_path / "plan.json"
    assert cli("recommend", PROFILE, "--catalog", CATALOG, "-f", "json", "-o", str(plan), "-q").code == 0
    shutil.copy(PROFILE, tmp_path / "profile-as.json")
    shutil.copy("examples/clusters/h100-training.toml", tmp_path / "cluster.toml")
    (tmp_path / "check.json").write_text(json.dumps({"gates": [], "cluster": {}}))
    return {"plan": str(plan), "profile": PROFILE, "profile-as-json": str(tmp_path / "profile-as.json"),
            "cluster": str(tmp_path / "cluster.toml"), "check": str(tmp_path / "check.json")}


@pytest.mark.parametrize("args, wrong, given, expected", [
    (("render", "{x}"), "profile", PROFILE_KIND, PLAN),
    (("render", "{x}"), "profile-as-json", PROFILE_KIND, PLAN),
    (("render", "{x}"), "cluster", CLUSTER, PLAN),
    (("diff", "{x}", "{plan}"), "cluster", CLUSTER, PROFILE_KIND),
    (("diff", "{plan}", "{x}"), "cluster", CLUSTER, PROFILE_KIND),
    (("diff", "{plan}", "{x}"), "check", CHECK, PLAN),
    (("graph", "{x}", "--phase", "training"), "cluster", CLUSTER, PROFILE_KIND),
    (("check", "{profile}", "--against", "{x}"), "plan", PLAN, CLUSTER),
    (("check", "{profile}", "--against", "{x}"), "profile", PROFILE_KIND, CLUSTER),
    (("check", "{x}", "--against", "{cluster}"), "cluster", CLUSTER, PROFILE_KIND),
])
def test_a_file_of_the_wrong_kind_says_what_it_is_and_what_was_expected(cli, files, args, wrong, given, expected):
    catalog = () if args[0] == "render" else ("--catalog", CATALOG)
    r = cli(*[a.format(x=files[wrong], **files) for a in args], *catalog)
    assert (r.code, r.out) == (2, "")
    assert r.err == f"gpuplan: error: {files[wrong]}: {given}, not {expected}\n"


@pytest.mark.parametrize("wrong, given, hint", [
    ("plan", PLAN, " (a saved plan is re-rendered by 'gpuplan render PLAN.json')"),
    ("check", CHECK, ""),
])
def test_tf_external_refuses_a_json_document_as_its_profile_naming_its_kind(cli, files, monkeypatch, wrong, given,
                                                                            hint):
    """It said 'a JSON document' whatever the file was; it names the kind, as the other positions do."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"profile": files[wrong], "catalog": CATALOG})))
    r = cli("tf-external")
    assert (r.code, r.out) == (2, "")
    assert r.err == f"gpuplan: error: {files[wrong]}: {given}, not {PROFILE_KIND}; 'tf-external' plans a profile{hint}\n"


@pytest.mark.parametrize("document, given", [
    ({"phases": [], "base": {}, "new": {}}, "a 'gpuplan diff' result"),
    ({"gpu": "h100-sxm-80gb", "gpus": 8}, CLUSTER),
])
def test_recommend_names_a_diff_result_or_a_json_cluster_given_as_its_profile(cli, tmp_path, document, given):
    path = tmp_path / "given.json"
    path.write_text(json.dumps(document))
    r = cli("recommend", str(path), "--catalog", CATALOG)
    assert (r.code, r.out) == (2, "")
    assert r.err == f"gpuplan: error: {path}: {given}, not {PROFILE_KIND}; 'recommend' plans a profile\n"


def test_a_json_document_of_no_known_kind_is_still_called_one(cli, tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"x": 1}')
    r = cli("recommend", str(path), "--catalog", CATALOG)
    assert r.code == 2 and r.err == (f"gpuplan: error: {path}: a JSON document, not {PROFILE_KIND}; 'recommend' plans "
                                     "a profile (a saved plan is re-rendered by 'gpuplan render PLAN.json')\n")


def test_tf_external_refuses_a_cluster_file_as_its_profile(cli, files, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"profile": files["cluster"], "catalog": CATALOG})))
    r = cli("tf-external")
    assert r.code == 2 and r.err == f"gpuplan: error: {files['cluster']}: {CLUSTER}, not {PROFILE_KIND}\n"


def test_diff_reads_a_plan_in_either_position_and_a_profile_by_its_content(cli, files):
    """The right inputs still work: a plan JSON as base or new, and a profile saved under .json
    planned as the profile it is (it was read as JSON: 'JSON syntax error: Expecting value')."""
    one = cli("diff", files["plan"], PROFILE, "--catalog", CATALOG, "-f", "json")
    other = cli("diff", PROFILE, files["plan"], "--catalog", CATALOG, "-f", "json")
    renamed = cli("diff", files["plan"], files["profile-as-json"], "--catalog", CATALOG, "-f", "json")
    assert (one.code, other.code, renamed.code) == (0, 0, 0)
    assert json.loads(one.out)["phases"] == json.loads(other.out)["phases"] == json.loads(renamed.out)["phases"]


@pytest.mark.parametrize("content", ["", " \n\t\n"])
def test_an_empty_plan_file_says_it_is_empty(cli, tmp_path, content):
    """An empty (or blank) plan.json, as a CI step that failed before writing it leaves one, said
    'line 1, column 1: JSON syntax error: Expecting value'."""
    path = tmp_path / "plan.json"
    path.write_text(content)
    r = cli("render", str(path))
    assert (r.code, r.out) == (2, "")
    assert r.err == f"gpuplan: error: {path}: the file is empty, expected {PLAN}\n"
