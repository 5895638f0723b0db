"""End to end on the real example profiles: structural checks only (the numbers belong to the
planners' own tests and move with calibration)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpuplan.render import FORMATS

EXAMPLES = sorted(p.as_posix() for p in Path("examples").glob("*.toml"))


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """Each example planned once (recommend --format json), exit code kept."""
    from gpuplan.cli.app import main

    out = {}
    for example in EXAMPLES:
        path = tmp_path_factory.mktemp("plans") / "plan.json"
        try:
            main([ "recommend", example, "-f", "json", "-o", str(path), "-q"])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out[example] = (code, path)
    return out


@pytest.mark.parametrize("example", EXAMPLES)
def test_recommend_json_contract(plans, example):
    code, path = plans[example]
    assert code in (0, 1), f"recommend {example} exited {code}"
    data = json.loads(path.read_text())
    from gpuplan.core.contract import SCHEMA_VERSION

    assert data["schema_version"] == SCHEMA_VERSION and data["profile"] == example
    assert len(data["input_sha256"]) == 64 and len(data["catalog_sha256"]) == 64
    text = Path(example).read_text()
    assert (data["training"] is not None) == ("[training]" in text)
    assert (data["serving"] is not None) == ("[serving]" in text)
    errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert (code == 1) == bool(errors)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_format_renders_the_saved_plan(cli, plans, example):
    _, path = plans[example]
    for fmt in FORMATS:
        r = cli("render", str(path), "-f", fmt)
        assert r.code == 0 and r.out, (fmt, r.err)
        if fmt in ("json", "tfvars", "tf-external", "sarif"):
            json.loads(r.out)
        if fmt == "junit":
            ET.fromstring(r.out)
        if fmt == "html":
            ET.fromstring(r.out.split("\n", 1)[1])
    again = cli("render", str(path), "-f", "json").out
    assert again == path.read_text()  # byte-identical


@pytest.mark.parametrize("example", EXAMPLES)
def test_plan_is_deterministic_and_diffs_clean(cli, plans, example):
    _, path = plans[example]
    r = cli("recommend", example, "-f", "json", "-q", "--exit-zero")
    assert r.out == path.read_text()
    r = cli("diff", str(path), example, "-f", "json", "-q", "--exit-zero")
    assert r.code == 0 and json.loads(r.out)["changed"] is False


@pytest.mark.parametrize("example", EXAMPLES)
def test_check_against_the_recommended_cluster(cli, plans, example, tmp_path):
    data = json.loads(plans[example][1].read_text())
    for phase in ("training", "serving"):
        p = data[phase]
        if not p or not p["feasible"]:
            continue
        cluster = tmp_path / f"{phase}.toml"
        cluster.write_text(f'phase = "{phase}"\ngpu = "{p["gpu"]}"\ngpus = {p["gpus"]}\n')
        r = cli("check", example, "--against", str(cluster), "-f", "json", "-q")
        assert r.code in (0, 1), r.err
        result = json.loads(r.out)
        assert result["cluster"]["gpus"] == p["gpus"] and result["gates"]
        assert {g["name"] for g in result["gates"]} >= {"gpu-allowed", "fits-memory"}
