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
