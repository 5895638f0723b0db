"""Colour on a terminal, and none with NO_COLOR or --no-color: run gpuplan on a pseudo-terminal.

The in-process runner captures stdout and stderr (never a terminal), so these tests start gpuplan
in a subprocess whose stdout and stderr are the two ends of pseudo-terminals.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from gpuplan.render import render
from tests.cli.conftest import ROOT
from tests.render.fixtures import synthetic_plan

pty = pytest.importorskip("pty")

#: An SGR sequence that sets a colour or a style (cursor moves and line clears are not colour).
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _drain(fd: int, proc: subprocess.Popen, deadline: float) -> bytes:
    import select

    chunks = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the other end closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks)


def _on_tty(args: list[str], *, tty_stdout: bool = True, env_extra: dict[str, str] | None = None,
            stdout_path=None) -> tuple[int, str, str]:
    """Run ``python -m gpuplan ARGS`` with stderr (and stdout unless a path is given) on a terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPLAN_", "NO_COLOR", "FORCE_COLOR"))}
    env.update(TERM="xterm-256color", COLUMNS="100", **(env_extra or {}))
    err_master, err_slave = pty.openpty()
    if tty_stdout:
        out_master, out_slave = pty.openpty()
        out_target = out_slave
    else:
        out_master = None
        out_target = open(stdout_path, "wb")
    try:
        proc = subprocess.Popen([sys.executable, "-m", "gpuplan", *args], stdout=out_target, stderr=err_slave,
                                stdin=subprocess.DEVNULL, cwd=ROOT, env=env, close_fds=True)
    finally:
        os.close(err_slave)
        if tty_stdout:
            os.close(out_slave)
        else:
            out_target.close()
    deadline = time.monotonic() + 120
    out = b""
    if out_master is not None:
        out = _drain(out_master, proc, deadline)
    err = _drain(err_master, proc, deadline)
    code = proc.wait(timeout=120)
    for fd in (err_master, out_master):
        if fd is not None:
            os.close(fd)
    if stdout_path is not None:
        out = open(stdout_path, "rb").read()
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(render(synthetic_plan(), "json"), encoding="utf-8")
    return str(path)


def test_the_table_is_coloured_on_a_terminal(saved):
    code, out, _ = _on_tty(["render", saved])
    assert code == 0
    assert SGR.search(out), "no colour on a terminal: the NO_COLOR tests below would prove nothing"


@pytest.mark.parametrize("how", ["NO_COLOR", "--no-color"])
def test_no_color_gives_a_plain_table_on_a_terminal(saved, how):
    args = ["render", saved] + (["--no-color"] if how == "--no-color" else [])
    code, out, err = _on_tty(args, env_extra={"NO_COLOR": "1"} if how == "NO_COLOR" else None)
    assert code == 0 and out.strip()
    assert not SGR.search(out), f"colour codes with {how}: {SGR.findall(out)[:5]}"
    assert not SGR.search(err)


def test_quiet_prints_nothing_on_stderr_and_verbose_prints_more(saved):
    _, plain, _ = _on_tty(["render", saved, "--no-color"])
    _, verbose, _ = _on_tty(["render", saved, "--no-color", "-v"])
    assert len(verbose.splitlines()) > len(plain.splitlines())
    code, out, err = _on_tty(["recommend", "examples/chat-8b-serving.toml", "-q", "--no-color"])
    assert code == 0 and out.startswith("gpuplan ") and err == ""


def test_the_progress_spinner_obeys_no_color(tmp_path):
    code, out, err = _on_tty(["recommend", "examples/llama-70b-train-serve.toml", "--no-color"], tty_stdout=False,
                             stdout_path=tmp_path / "report.txt")
    assert code == 0 and out.startswith("gpuplan ")
    assert "planning" in err, "the spinner did not show: nothing to check"
    assert not SGR.search(err), f"colour codes in the spinner with --no-color: {SGR.findall(err)[:3]}"


def test_the_progress_spinner_obeys_no_color_env(tmp_path):
    code, out, err = _on_tty(["recommend", "examples/llama-70b-train-serve.toml"], tty_stdout=False,
                             stdout_path=tmp_path / "report.txt", env_extra={"NO_COLOR": "1"})
    assert code == 0 and out.startswith("gpuplan ") and not SGR.search(out)
    assert not SGR.search(err)
