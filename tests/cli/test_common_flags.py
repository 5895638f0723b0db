"""Options that mean the same in every command: -q/--quiet, --no-color, -o/--out, --output FORMAT:PATH."""

from __future__ import annotations

import pytest

#: The commands that write a report: each takes -q/--quiet and --no-color.
REPORTING = ("recommend", "render", "check", "diff", "validate", "sweep")


def _options() -> dict[str, dict[str, tuple[str, ...]]]:
    """command -> {option name: every spelling of that option} of the typer app."""
    import typer.main

    from gpuplan.cli.app import app

    root = typer.main.get_command(app)
    out = {}
    for name, command in root.commands.items():
        out[name] = {o: tuple(p.opts) for p in command.params for o in p.opts}
    return out


@pytest.mark.parametrize("command", REPORTING)
def test_every_reporting_command_takes_quiet_and_no_color(command):
    opts = _options()[command]
    assert opts["-q"] == opts["--quiet"] and "--no-color" in opts


def test_validate_quiet_silences_the_leave_one_out_notes(cli):
    r = cli("validate", "--kind", "serving", "--residuals")
    assert r.code == 0 and "gpuplan: leave-one-out serving: " in r.err
    quiet = cli("validate", "--kind", "serving", "--residuals", "-q", "--no-color")
    assert quiet.code == 0 and quiet.err == "" and quiet.out == r.out


def test_render_takes_quiet(cli, tmp_path):
    from tests.render.fixtures import synthetic_plan
    from gpuplan.render import render

    saved = tmp_path / "plan.json"
    saved.write_text(render(synthetic_plan(), "json"))
    r = cli("render", str(saved), "-q", "-f", "json")
    assert r.code == 0 and r.err == "" and r.out == saved.read_text()


def test_minus_o_is_out_in_every_command():
    """-o is always --out (one output PATH); a visible --output is always the repeatable FORMAT:PATH."""
    import typer.main

    from gpuplan.cli.app import app

    for name, command in typer.main.get_command(app).commands.items():
        for p in command.params:
            if "-o" in p.opts:
                assert "--out" in p.opts, (name, p.opts)
            if "--output" in p.opts:
                assert p.multiple or p.hidden, (name, p.opts)


def test_validate_writes_its_report_with_out(cli, tmp_path):
    shown = cli("validate", "--kind", "fabric")
    for flag, fmt in (("-o", "table"), ("--out", "table"), ("-o", "json")):
        path = tmp_path / f"report.{fmt}"
        r = cli("validate", "--kind", "fabric", "-f", fmt, flag, str(path))
        assert r.code == 0 and r.out == "" and r.err == ""
        assert path.read_text() == cli("validate", "--kind", "fabric", "-f", fmt).out
    assert (tmp_path / "report.table").read_text() == shown.out
    assert "10/10 cases pass" in shown.out


def test_validate_residuals_keeps_its_old_output_spelling(cli, tmp_path):
    """docs, CI and residuals.toml's header write `--residuals -o FILE`; `--output FILE` still works."""
    new, old = tmp_path / "new.toml", tmp_path / "old.toml"
    assert cli("validate", "--kind", "fabric", "--residuals", "-o", str(new)).code == 0
    r = cli("validate", "--kind", "fabric", "--residuals", "--output", str(old))
    assert r.code == 0 and "--output PATH is the old spelling of -o/--out" in r.err
    assert old.read_text() == new.read_text() and new.read_text().startswith("# Validation residuals per regime")
    r = cli("validate", "--kind", "fabric", "--residuals", "--output", str(old), "-o", str(new))
    assert r.code == 2 and r.err.count("\n") == 1 and r.err.startswith("gpuplan: error: --output: give the output")
    # FORMAT:PATH, as recommend and check take --output, is not a file name here: one line, nothing written
    r = cli("validate", "--kind", "fabric", "--output", f"json:{tmp_path / 'x.json'}")
    assert r.code == 2 and r.err == (f"gpuplan: error: --output: this command writes one report: expected --format "
                                     f"json -o {tmp_path / 'x.json'}, got --output json:{tmp_path / 'x.json'}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.toml", "old.toml"]


def test_calibrate_takes_out_and_its_old_spelling(cli, tmp_path):
    from tests.ci.test_calibrate import DATA

    case = str(DATA / "h100-nemo-fp8.toml")
    r = cli("calibrate", case)
    assert r.code == 2 and r.err == ("gpuplan: error: --out: missing; expected -o DIR, the directory of the catalog "
                                     "overlay to write\n")
    new, old = tmp_path / "new", tmp_path / "old"
    assert cli("calibrate", case, "--out", str(new)).code == 0
    r = cli("calibrate", case, "--output", str(old), "-q")
    assert r.code == 0 and r.err == ""
    assert sorted(p.name for p in old.rglob("*.toml")) == sorted(p.name for p in new.rglob("*.toml")) != []
    assert (old / "calibrated.toml").read_text() == (new / "calibrated.toml").read_text()


def test_verbose_and_section_say_they_shape_the_table_only(cli, planner, tmp_path):
    from tests.cli.conftest import CATALOG, PROFILE

    base = ("recommend", PROFILE, "--catalog", CATALOG)
    plain = cli(*base, "-f", "json")
    r = cli(*base, "-f", "json", "-v", "--section", "bom")
    assert r.code == plain.code == 0 and r.out == plain.out  # the JSON does not change
    assert r.err == "gpuplan: -v and --section apply to the table format only; ignored with --format json\n"
    r = cli(*base, "-f", "markdown", "--section", "bom")
    assert r.err == "gpuplan: --section applies to the table format only; ignored with --format markdown\n"
    assert cli(*base, "-f", "markdown", "--section", "bom", "-q").err == ""
    # a table among the outputs takes them: nothing to say
    assert cli(*base, "-f", "json", "-v", "--output", f"table:{tmp_path / 'plan.txt'}").err == ""
    saved = tmp_path / "plan.json"
    saved.write_text(plain.out)
    r = cli("render", str(saved), "-f", "markdown", "-v")
    assert r.code == 0 and r.err == "gpuplan: -v applies to the table format only; ignored with --format markdown\n"
