"""README: the Quickstart is two commands, the sample output is a real run, every example runs.

``pytest --update-golden`` rewrites the sample block from a fresh run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SAMPLE_LINES = 14
BEGIN, END = "<!-- sample:begin -->\n", "<!-- sample:end -->\n"


def _blocks(text: str) -> list[list[str]]:
    return [b.strip("\n").splitlines() for b in re.findall(r"```sh\n(.*?)```", text, re.S)]


def _recommend_default() -> str:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "gpuplan", "recommend"], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_quickstart_is_two_commands_and_ci_runs_the_second():
    quick = _blocks(README.read_text(encoding="utf-8"))[0]
    assert len(quick) == 2
    assert "gpuplan recommend" in quick[0] and quick[0].rstrip().endswith("gpuplan recommend")
    assert "'.[test]'" in quick[1] and "pytest" in quick[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == quick[1]


def test_the_sample_output_is_a_real_run(request):
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN)
    sample, tail = rest.split(END)
    fresh = "".join(_recommend_default().splitlines(keepends=True)[:SAMPLE_LINES])
    want = f"```text\n{fresh}...\n```\n"
    if request.config.getoption("--update-golden"):
        README.write_text(head + BEGIN + want + END + tail, encoding="utf-8")
        return
    assert sample == want, "README sample output is stale: run pytest --update-golden tests/test_readme.py"


def test_every_readme_example_runs_from_a_clean_copy(tmp_path):
    """Without ../shared: the copy holds only the repository's tracked files."""
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    work = tmp_path / "clone"
    for rel in files:
        if rel.startswith(("examples/", "catalog/")):
            dst = work / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes((ROOT / rel).read_bytes())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gpuplan").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpuplan "$@"\n')
    (bin_dir / "gpuplan").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "100",
           "PYTHONPATH": str(ROOT)}
    commands = [c.split("  #")[0].strip() for c in _blocks(README.read_text(encoding="utf-8"))[1]]
    assert len(commands) >= 6
    for cmd in commands:
        proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=work, env=env, timeout=300)
        allowed = (0, 1) if shlex.split(cmd)[1] in ("validate", "check") else (0,)
        assert proc.returncode in allowed and "Traceback" not in proc.stderr, f"{cmd}: {proc.stderr[-400:]}"
