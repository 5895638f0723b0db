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


def test_step_terms_add_up_to_the_step_time_printed_last(cli):
    """The -v step-term table of the 480-GPU example lists the host gap (2.74 s of its 33.8 s step)
    after the terms it sums, not below a 'step time' row it is part of."""
    import json

    plan = json.loads(cli("recommend", "examples/llama-70b-480-h100.toml", "-f", "json").out)
    b = plan["training"]["breakdown"]
    out = cli("recommend", "examples/llama-70b-480-h100.toml", "-v").out
    rows = out.split("step term")[1].split("memory per GPU")[0].splitlines()[2:]
    cells = [r.rsplit(maxsplit=1) for r in rows if r.strip()]
    assert cells[-1][0] == "step time (sum)" and "host overhead" in dict(cells)
    assert sum(float(v) for _, v in cells[:-1]) == pytest.approx(b["step_time_s"], rel=0.01)
    assert b["host_overhead_s"] > 1.0


def test_the_memory_line_agrees_with_the_memory_reason(cli):
    """frontier-405b on GB200: the reason said '172.9 of 184.5 GiB', the line under it '173 of
    184 GiB' (three significant digits, 184.5 rounded to even)."""
    out = cli("recommend", "examples/frontier-405b-training.toml", "-v").out
    assert "- memory: 172.9 of 184.5 GiB per GPU" in out
    assert "- memory 172.9 of 184.5 GiB per GPU (11.6 GiB headroom)" in out
