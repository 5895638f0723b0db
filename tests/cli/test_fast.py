"""The typer-free path of ``--version`` and ``recommend`` (gpuplan/cli/fast.py) reads every command
line it accepts exactly as typer does, and hands every other one to typer."""

from __future__ import annotations

import inspect

import pytest

from gpuplan.cli import fast

#: Command lines the plain path accepts: each must give run_recommend what typer gives it.
ACCEPTED = [
    ["recommend"],
    ["recommend", "examples/default.toml", "--format", "json"],
    ["recommend", "./examples/default.toml/", "-f", "markdown", "-q"],
    ["recommend", "--phase", "training", "x.toml", "--format=json"],
    ["recommend", "x.toml", "-o", "a.json", "--output", "json:b", "--output=html:c.html", "--catalog", "c",
     "--catalog", "d", "-q", "-v", "--verbose", "--section", "bom", "--section=fleet", "--no-color", "--exit-zero",
     "--allow-outside-paths", "--phase", "serving"],
    ["recommend", "--no-color", "--no-color", "~/x.toml", "--out=p"],
]
#: Plain sweeps: each must give run_sweep_command what typer gives it.
SWEEPS = [
    ["sweep", "examples/chat-8b-serving.toml", "--set", "serving.qps=5:200:50", "-f", "json"],
    ["sweep", "--set=training.deadline_days=30:180:20", "--log", "x.toml", "--phase", "training", "-j", "4",
     "--set", "serving.qps=1,2", "-o", "s.csv", "--catalog", "c", "-q", "--no-color", "--format=csv"],
    ["sweep", "--jobs", "0"],
    ["sweep"],
]
#: Command lines it hands to typer (help, errors, forms it does not read).
REFUSED = [
    [], ["--help"], ["--version", "x"], ["-h"], ["validate"], ["recommend", "--help"], ["recommend", "-h"],
    ["recommend", "a", "b"], ["recommend", "a", "--format"], ["recommend", "a", "--format", ""],
    ["recommend", "a", "--format="], ["recommend", "a", "--format", "-q"], ["recommend", "a", "-fjson"],
    ["recommend", "a", "-vv"], ["recommend", "a", "--quiet=1"], ["recommend", "a", "--ph", "x"],
    ["recommend", "a", "--confidence", "0.8"], ["recommend", "a", "--phase", "serving", "--phase", "both"],
    ["recommend", "a", "-o", "x", "--out", "y"], ["recommend", "--", "a"], ["recommend", "-"], ["recommend", ""],
    ["recommend", "a\0b"], ["recommend", "a", "--unknown"],
    ["sweep", "a", "--jobs", "04"], ["sweep", "a", "-j", "+4"], ["sweep", "a", "-j", "1e3"], ["sweep", "a", "-j", "٤"],
    ["sweep", "a", "-j", "1234567890"], ["sweep", "a", "-v"], ["sweep", "a", "--log=1"], ["sweep", "--help"],
]


def _typer_params(monkeypatch, argv: list[str]) -> dict:
    """What the typer command passes to run_recommend (run_sweep_command) for ``argv``."""
    import typer.main

    import gpuplan.cli.commands as commands
    import gpuplan.cli.sweep as sweep

    module, name = (sweep, "run_sweep_command") if argv[0] == "sweep" else (commands, "run_recommend")
    target, got = getattr(module, name), {}

    def spy(*args):
        got.update(zip(inspect.signature(target).parameters, args))
        return 0

    monkeypatch.setattr(module, name, spy)
    typer.main.get_command(commands.app).main(args=argv, prog_name="gpuplan", standalone_mode=False)
    return got


@pytest.mark.parametrize("argv", ACCEPTED + SWEEPS, ids=" ".join)
def test_plain_command_reads_as_typer(monkeypatch, argv):
    plain = fast.plain_command(argv)
    assert plain is not None and plain[0] == argv[0]
    typed = _typer_params(monkeypatch, argv)
    assert plain[1] == typed
    assert {k: type(v) for k, v in plain[1].items()} == {k: type(v) for k, v in typed.items()}


@pytest.mark.parametrize("argv", REFUSED, ids=repr)
def test_other_command_lines_go_to_typer(argv):
    assert fast.plain_command(argv) is None


def test_shell_completion_goes_to_typer(monkeypatch):
    monkeypatch.setenv(fast.COMPLETE_VAR, "bash_complete")
    assert fast.plain_command(["--version"]) is None
    assert fast.plain_command(["recommend", "x.toml"]) is None


def test_version_same_either_way(capsys):
    import typer.main

    from gpuplan.cli.commands import app

    assert fast.run_plain(fast.plain_command(["--version"])) == 0
    plain = capsys.readouterr().out
    assert typer.main.get_command(app).main(args=["--version"], prog_name="gpuplan", standalone_mode=False) == 0
    assert capsys.readouterr().out == plain and plain.startswith("gpuplan ")


def test_plain_version_and_recommend_import_no_typer():
    import subprocess
    import sys

    from tests.cli.conftest import ROOT

    code = ("import sys\nfrom gpuplan.cli.app import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "from gpuplan.cli.fast import plain_command\nplain_command(['recommend', 'a.toml', '-f', 'json'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'pydantic', 'rich')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_pydantic_asks_its_plugin_loader_for_get_plugins_only():
    """A plain recommend stands in for pydantic's plugin loader (cli/fast.py); that holds while
    pydantic imports nothing else from it."""
    import pathlib
    import re

    import pydantic.plugin

    root = pathlib.Path(pydantic.plugin.__file__).parent.parent
    uses = set()
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        uses.update(re.findall(r"from (?:\.|pydantic\.plugin\.)_loader import ([\w, ]+)", text))
        assert "import _loader" not in text and "plugin._loader import" not in text.replace("plugin._loader import get_plugins", "")
    assert {u.strip() for u in ",".join(uses).split(",")} == {"get_plugins"}


def test_recommend_loads_no_entry_points(tmp_path):
    """A cold recommend builds its models without importing importlib.metadata (the plugin search)."""
    import subprocess
    import sys

    from tests.cli.conftest import ROOT

    bad = tmp_path / "bad.toml"
    bad.write_text('[model]\nname = "x"\n[training]\ntokens = "15T"\n', encoding="utf-8")
    code = ("import sys\nfrom gpuplan.cli.app import main\ntry:\n    main(['recommend', sys.argv[1], '-f', 'json'])\n"
            "except SystemExit as e:\n    print(e.code, 'pydantic' in sys.modules, 'importlib.metadata' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, str(bad)], capture_output=True, text=True, cwd=ROOT, check=True)
    assert proc.stdout.split() == ["2", "True", "False"], proc.stderr
