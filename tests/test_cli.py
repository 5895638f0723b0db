"""CLI basics: version, start-up imports, the built-in default, validate and catalog commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT, SHARED_VALIDATION


def test_version(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.strip() == "gpuplan 0.1.0" and r.err == ""


def test_help_imports_no_planner_and_no_networkx():
    code = ("import sys; from gpuplan.cli.app import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "bad = sorted(m for m in sys.modules if m.startswith(('networkx', 'gpuplan.training', 'gpuplan.serving',"
            " 'gpuplan.fabric', 'gpuplan.fabric.bom', 'gpuplan.planning.compose', 'rich.console')))\n"
            "print('LOADED', bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "LOADED []" in out


def test_builtin_default_is_the_example():
    packaged = (ROOT / "gpuplan" / "model" / "default_profile.toml").read_text()
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
    if not files:
        pytest.skip("../shared/validation is not next to this checkout (CI has it)")
    r = cli("validate", *files, "--format", "json")
    assert r.code in (0, 1), r.err
    report = json.loads(r.out)
    assert report["summary"]["cases"] == len(report["cases"]) >= 20
    assert all(c["status"] in ("pass", "fail", "not_modelled") for c in report["cases"]), \
        [c for c in report["cases"] if c["status"] == "error"]
    for case in report["cases"]:
        for fig in case["figures"]:
            assert set(fig) == {"name", "measured", "predicted", "error", "tolerance", "pass", "low", "high"}


def test_validate_bad_case_file(cli, tmp_path):
    bad = tmp_path / "cases.toml"
    bad.write_text('[[case]]\nid = "x"\nkind = "trianing"\nsource = "s"\ntolerance = 0.1\n[case.measured]\na = 1\n')
    r = cli("validate", str(bad))
    assert r.code == 2 and "case[0].kind" in r.err and str(bad) in r.err


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


def test_catalog_gpus_prices_a_server_priced_gpu_from_its_server(cli):
    """The A10 has no GPU price, only its 4-GPU server's ($31,500): 31,500 / 4 = 7,875, marked."""
    r = cli("catalog", "gpus")
    row = next(line for line in r.out.splitlines() if line.startswith("a10-pcie-24gb"))
    assert " 7,875* " in row
    assert "* no GPU price in the catalog: the server's price over its GPUs (server included)" in r.out
    h100 = next(line for line in r.out.splitlines() if line.startswith("h100-sxm-80gb"))
    assert "*" not in h100  # a GPU with its own price shows it as it is


#: The GPU ids the catalog must carry (issue 2, section 3), and the alias the issue names.
REQUIRED_GPUS = ("a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-80gb", "h100-sxm-80gb", "h100-pcie-80gb",
                 "h100-nvl-94gb", "h800-sxm-80gb", "h200-sxm-141gb", "h200-nvl-141gb", "b200-sxm-180gb",
                 "gb200-nvl72", "b300-sxm-288gb", "l40s-pcie-48gb", "l4-pcie-24gb", "a10-pcie-24gb",
                 "t4-pcie-16gb", "mi300x-oam-192gb", "mi325x-oam-256gb", "mi355x-oam-288gb", "gaudi3-oam-128gb")


def test_catalog_gpus_lists_every_required_gpu_with_its_sources(cli):
    r = cli("catalog", "gpus")
    assert r.code == 0 and r.err == ""
    header, _rule, *rows = r.out.splitlines()
    assert header.split()[0] == "id" and header.split()[-1] == "sources"
    listed = {row.split()[0]: row.split()[-1] for row in rows if row.strip()}
    missing = [g for g in REQUIRED_GPUS if g not in listed]
    assert not missing, f"catalog gpus does not list {missing}"
    for gid in REQUIRED_GPUS:
        assert listed[gid] not in ("", "-"), f"{gid} is listed without sources"
    shown = json.loads(cli("catalog", "gpus", "h100", "--format", "json").out)
    assert shown["id"] == "h100-sxm-80gb"


def test_every_catalog_kind_lists_shows_and_refuses_an_unknown_id(cli):
    for kind in ("gpus", "fabrics", "switches", "nics", "optics", "models"):
        r = cli("catalog", kind)
        assert r.code == 0 and r.err == "" and r.out.startswith("id "), kind
        first = r.out.splitlines()[2].split()[0]
        shown = cli("catalog", kind, first)
        assert shown.code == 0 and first in shown.out and "source" in shown.out, kind
        bad = cli("catalog", kind, "no-such-part")
        assert bad.code == 2 and bad.out == "" and len(bad.err.strip().splitlines()) == 1, kind


def test_recommend_without_a_profile_plans_the_builtin_default(cli):
    r = cli("recommend")
    assert r.code == 0, r.err
    assert "planning the built-in default" in r.err and "examples/default.toml" in r.err
    assert r.out.startswith("gpuplan ") and "TRAINING:" in r.out and "SERVING:" in r.out
    assert "planning the built-in default" not in r.out  # notes stay on stderr


def test_installed_package_runs_from_another_directory(tmp_path):
    """From a directory without catalog/ or examples/, `python -m gpuplan` finds the shipped catalog
    (in .ci/run, where gpuplan is installed non-editable, this is the wheel's copy)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GPUPLAN_CATALOG", "PYTHONPATH")}
    r = subprocess.run([sys.executable, "-m", "gpuplan", "--version"], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    assert r.returncode == 0 and r.stdout.startswith("gpuplan ") and r.stderr == ""
    r = subprocess.run([sys.executable, "-m", "gpuplan", "catalog", "gpus", "h100", "--format", "json"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["id"] == "h100-sxm-80gb"


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


# The Quickstart and the README's sample output: tests/test_readme.py.


def test_readme_and_docs_links_resolve():
    import re

    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_a_phase_the_profile_does_not_have_is_bad_input(cli):
    r = cli("recommend", str(EXAMPLES / "chat-8b-serving.toml"), "--phase", "training")
    assert r.code == 2 and r.out == ""
    assert r.err.strip().endswith("--phase: the profile has no [training] table to plan")


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_reports_are_utf8_whatever_the_locale_encoding(fmt):
    """'·' and '→' in the reports must not crash an ASCII or cp1252 stdout (exit 3)."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "gpuplan", "recommend", str(EXAMPLES / "chat-8b-serving.toml"),
                        "--format", fmt, "-q"], capture_output=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode("utf-8")
    assert "chat" in text.lower() and r.stderr == b""


@pytest.mark.parametrize("value", ["nan", "2", "0.4"])
def test_confidence_out_of_range_names_the_range(cli, value):
    """'--confidence nan' had said 'less than or equal to 0.99'."""
    r = cli("recommend", "examples/chat-8b-serving.toml", "--confidence", value)
    assert r.code == 2
    assert r.err.strip() == f"gpuplan: error: --confidence: expected a probability from 0.5 to 0.99, got {value}"


def test_a_typer_value_error_says_input_in_lower_case(cli):
    r = cli("recommend", "examples/chat-8b-serving.toml", "--confidence", "abc")
    assert r.code == 2 and ": input should be a valid number" in r.err
