"""Summary first (issue 22): the default table report of the built-in default fits one screen,
and ``-v`` / ``--section NAME`` add the rest."""

from __future__ import annotations

import pytest

from gpuplan.render.sections import SECTIONS


@pytest.fixture(scope="module")
def default_plan_json(tmp_path_factory):
    from gpuplan.cli.app import main

    path = tmp_path_factory.mktemp("summary") / "plan.json"
    with pytest.raises(SystemExit) as exc:
        main(["recommend", "--format", "json", "-o", str(path), "-q"])
    assert exc.value.code in (0, 1)
    return path


def _show(cli, plan, *extra):
    r = cli("show", str(plan), *extra)
    assert r.code in (0, 1), r.err
    return r.out


def test_default_report_fits_60_lines_of_100_columns(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    r = cli("recommend", "-q")
    assert r.code in (0, 1), r.err
    lines = r.out.splitlines()
    assert len(lines) <= 60, r.out
    assert max(len(line) for line in lines) <= 100, r.out
    for part in ("TRAINING:", "SERVING:", "GPUs", "layout", "time", "latency", "cost", "TCO", "Why", "Findings"):
        assert part in r.out
    assert "Assumptions" not in r.out and "Bill of materials" not in r.out
    assert "--section" in lines[-2] + lines[-1]


def test_each_section_adds_its_part_and_v_adds_all(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    summary = cli("recommend", "-q").out
    wanted = {"assumptions": "Assumptions", "bom": "Bill of materials", "roofline": "Roofline",
              "alternatives": "Alternatives", "layouts": "Next best layouts", "network": "network: ",
              "fleet": "strategy"}
    for name, marker in wanted.items():
        assert name in SECTIONS
        out = cli("recommend", "-q", "--section", name).out
        assert marker in out and marker not in summary, name
    everything = cli("recommend", "-q", "-v").out
    assert all(marker in everything for marker in wanted.values())
    assert "more: -v" not in everything


def test_unknown_section_is_an_input_error(cli):
    r = cli("recommend", "-q", "--section", "bomm")
    assert r.code == 2 and "did you mean 'bom'" in r.err
