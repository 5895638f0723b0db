"""CLI basics: version, start-up imports, the built-in default, validate and catalog commands."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import EXAMPLES, ROOT, SHARED_VALIDATION


def test_version(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.strip() == "gpuplan 0.1.0" and r.err == ""


def test_help_imports_no_planner_and_no_networkx():
    code = ("import sys; from gpuplan.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "bad = sorted(m for m in sys.modules if m.startswith(('networkx', 'gpuplan.training', 'gpuplan.serving',"
            " 'gpuplan.fabric', 'gpuplan.bom', 'gpuplan.planner', 'rich.console')))\n"
            "print('LOADED', bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "LOADED []" in out


def test_builtin_default_is_the_example():
    packaged = (ROOT / "gpuplan" / "default_profile.toml").read_text()
    assert packaged == (EXAMPLES / "default.toml").read_text()


def test_unknown_command_and_bad_flag_are_one_line(cli):
    r = cli("recomend")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and "No such command" in r.err
    r = cli("recommend", "--format", "yaml", str(EXAMPLES / "default.toml"))
    assert r.code == 2 and "unknown format 'yaml'" in r.err and len(r.err.strip().splitlines()) == 1
    r = cli("recommend", "--phase", "inference")
    assert r.code == 2 and "--phase" in r.err


def test_validate_parses_every_shared_case_file(cli):
    files = sorted(str(p) for p in SHARED_VALIDATION.glob("*.toml"))
    assert files, "shared validation cases not found next to the repository"
    r = cli("validate", *files, "--format", "json")
    assert r.code in (0, 1), r.err
    report = json.loads(r.out)
    assert report["summary"]["cases"] == len(report["cases"]) >= 20
    assert all(c["status"] in ("pass", "fail", "not_modelled") for c in report["cases"]), \
        [c for c in report["cases"] if c["status"] == "error"]
    for case in report["cases"]:
        for fig in case["figures"]:
            assert set(fig) == {"name", "measured", "predicted", "error", "tolerance", "pass"}


def test_validate_bad_case_file(cli, tmp_path):
    bad = tmp_path / "cases.toml"
    bad.write_text('[[case]]\nid = "x"\nkind = "trianing"\nsource = "s"\ntolerance = 0.1\n[case.measured]\na = 1\n')
    r = cli("validate", str(bad))
    assert r.code == 2 and "case.0.kind" in r.err and str(bad) in r.err


def test_catalog_lists_gpus_with_sources(cli, catalog):
    r = cli("catalog", "gpus")
    assert r.code == 0
    for gid in ("a100-sxm-80gb", "h100-sxm-80gb", "gb200-nvl72", "mi355x-oam-288gb", "gaudi3-oam-128gb"):
        assert gid in r.out
    r = cli("catalog", "gpus", "h100", "--format", "json")
    data = json.loads(r.out)
    assert data["id"] == "h100-sxm-80gb" and data["sources_resolved"]["memory"]["date"]
    r = cli("catalog", "gpus", "h1000")
    assert r.code == 2 and "did you mean" in r.err
