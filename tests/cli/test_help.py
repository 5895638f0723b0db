"""Every command's --help is a golden file and starts with a runnable example; start-up stays light."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.cli.conftest import ROOT

def _commands() -> list[list[str]]:
    """Every command and sub-command of the app: a new command gets its help checked too."""
    import typer.main

    from gpuplan.cli.app import app

    root = typer.main.get_command(app)
    out: list[list[str]] = [[]]
    for name, command in sorted(root.commands.items()):
        out.append([name])
        out += [[name, sub] for sub in sorted(getattr(command, "commands", {}))]
    return out


COMMANDS = _commands()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "gpuplan")
def test_help_golden(cli, golden, command):
    r = cli(*command, "--help")
    assert r.code == 0 and r.err == ""
    golden(f"help/{'-'.join(command) or 'gpuplan'}.txt", r.out)
    first = r.out.split("\n\n")[1].strip()
    assert first.startswith("Example:  ")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "gpuplan")
def test_help_example_is_runnable(cli, command):
    """The example names a real command of gpuplan with flags it accepts."""
    r = cli(*command, "--help")
    example = r.out.split("\n\n")[1].strip().removeprefix("Example:  ").split("  |  ")[0]
    words = example.split("|")[-1].split() if "tf-external" in example else example.split()
    assert words[0] == "gpuplan"
    args = [w for w in words[1:] if not w.startswith("-")][:2]
    assert cli(*[a for a in args if a in {"recommend", "validate", "schema", "render", "check", "diff",
                                          "graph", "tf-external", "deploy", "catalog", "gpus", "fabrics", "switches", "nics", "optics",
                                          "models"}], "--help").code == 0
    flags = [w for w in words if w.startswith("-")]
    for flag in flags:
        assert flag.split("=")[0] in r.out, f"{flag} is not an option of {' '.join(command)}"


def test_help_and_version_import_nothing_heavy():
    code = """
import sys
from gpuplan.cli.app import main
for argv in (["--help"], ["--version"], ["check", "--help"], ["render", "--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
heavy = [m for m in sys.modules if m.startswith(("rich.console", "networkx", "gpuplan.training.planner",
         "gpuplan.serving.planner", "gpuplan.fabric.interconnect", "gpuplan.fabric.bom", "gpuplan.planning.compose",
         "gpuplan.render.table"))]
print(json_dumps(heavy))
""".replace("json_dumps", "__import__('json').dumps")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_version(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.startswith("gpuplan ")


def test_progress_stays_off_pipes():
    """The spinner only runs on a terminal: on a pipe it neither prints nor imports rich."""
    code = """
import sys
from gpuplan.render import progress
with progress("planning"):
    pass
print("rich.console" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "False" and proc.stderr == ""


@pytest.fixture(scope="module")
def example_workspace(tmp_path_factory):
    """A scratch copy of the repository root as the examples expect it: examples/ next to the
    working directory, ../shared/validation beside it, `gpuplan` on PATH (this interpreter), and
    the plan.json that the recommend example writes (render and graph read it)."""
    base = tmp_path_factory.mktemp("help-examples")
    work = base / "main"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    if (ROOT.parent / "shared").is_dir():
        (base / "shared").symlink_to(ROOT.parent / "shared")
    bin_dir = base / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "gpuplan"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpuplan "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPLAN_", "NO_COLOR", "FORCE_COLOR"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", COLUMNS="80")
    # The plan.json of recommend's own example, written here so that render's and graph's
    # examples pass on their own (alone, or on a test worker that never ran recommend's).
    for example in _help_examples(["recommend"]):
        subprocess.run(["bash", "-c", example], capture_output=True, text=True, cwd=work, env=env, timeout=300,
                       check=True)
    assert (work / "plan.json").is_file()
    return work, env


def _help_examples(command: list[str]) -> list[str]:
    """The example line(s) of a command's --help; alternatives are separated by a spaced-out '|'."""
    r = subprocess.run([sys.executable, "-m", "gpuplan", *command, "--help"], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    first = r.stdout.split("\n\n")[1].strip().removeprefix("Example:  ")
    return [" ".join(x.split()) for x in re.split(r"\s{2,}\|\s{2,}", first)]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "gpuplan")
def test_help_example_runs_verbatim(example_workspace, command):
    """Copy the example out of --help, paste it into a shell at the repository root: it works."""
    work, env = example_workspace
    for example in _help_examples(command):
        assert example.startswith(("gpuplan ", "echo ")), example
        if "../shared/validation" in example and not (work.parent / "shared").exists():
            pytest.skip("../shared/validation is not next to this checkout")
        proc = subprocess.run(["bash", "-c", example], capture_output=True, text=True, cwd=work, env=env, timeout=300)
        assert "Traceback" not in proc.stderr
        assert proc.returncode == 0, f"{example!r} exited {proc.returncode}: {proc.stderr[-500:]}"
