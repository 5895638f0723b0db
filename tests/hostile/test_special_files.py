"""No hang in any input slot (issue 14): a FIFO, ``/dev/stdout``, ``/dev/stdin`` or
``/proc/self/fd/1`` while stdout is a pipe (as in CI) is refused with one line, exit 2.

Each case runs gpuplan in a subprocess under a timeout, with stdout and stdin pipes that nobody
writes to or closes, so a reader that blocks shows up as a timeout instead of hanging the suite.
Slots: the profile, ``model.hf_config``, ``check --against``, the inputs of ``render``, ``diff``
and ``graph``, the ``profile`` field of a saved plan, a catalog overlay file, a validation case
file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.conftest import ROOT
from tests.hostile.test_malformed_files import CASES, CLUSTER, HF_CONFIG, HF_PROFILE, SERVING_PROFILE, _plan_json

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/stdout").exists(),
                                reason="FIFOs and /dev/stdout are POSIX")

#: Seconds one run may take: a refusal is immediate, a hang is not.
TIMEOUT_S = 30


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPLAN_")}
    env["PYTHONPATH"] = str(ROOT)
    try:
        # stdin is a pipe nobody writes to and stdout a pipe: /dev/stdin and /dev/stdout would block
        return subprocess.run([sys.executable, "-m", "gpuplan", *args], cwd=cwd, env=env, timeout=TIMEOUT_S,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"gpuplan {' '.join(args)} hung for {TIMEOUT_S} s")


def _one_error_line(proc: subprocess.CompletedProcess, expected: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuplan: error: "), proc.stderr
    assert expected in lines[0], proc.stderr


def _setup(tmp: Path, special: str) -> Path:
    """The valid inputs of every slot in ``tmp``, and the special file at ``tmp/special`` (a FIFO,
    or a symlink to the device); returns the special path."""
    (tmp / "p.toml").write_text(SERVING_PROFILE)
    (tmp / "cluster.toml").write_text(CLUSTER)
    (tmp / "plan.json").write_text(_plan_json())
    (tmp / "cases.toml").write_text(CASES)
    (tmp / "config.json").write_text(HF_CONFIG)
    path = tmp / "special"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(special)
    return path


#: slot -> (files to write into the directory, argv). ``{s}`` is the special file's path.
def _slots(tmp: Path, s: Path) -> dict[str, list[str]]:
    p, plan = str(tmp / "p.toml"), str(tmp / "plan.json")
    return {
        "profile": ["recommend", str(s), "--format", "json"],
        "check-against": ["check", p, "--against", str(s), "--format", "json"],
        "render": ["render", str(s), "--format", "json"],
        "diff-base": ["diff", str(s), plan, "--format", "json"],
        "diff-new": ["diff", plan, str(s), "--format", "json"],
        "graph": ["graph", str(s), "--phase", "training"],
        "validate": ["validate", str(s), "--format", "json"],
    }


SPECIALS = ["fifo", "/dev/stdout", "/dev/stdin", "/proc/self/fd/1"]
SLOTS = ["profile", "check-against", "render", "diff-base", "diff-new", "graph", "validate"]


@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize("slot", SLOTS)
def test_a_special_file_in_a_command_slot_is_refused(tmp_path, slot, special):
    if special.startswith("/proc") and not Path("/proc/self/fd/1").exists():
        pytest.skip("no /proc")
    path = _setup(tmp_path, special)
    _one_error_line(_run(_slots(tmp_path, path)[slot], tmp_path), "not a regular file")


@pytest.mark.parametrize("special", ["fifo", "/dev/stdout", "/dev/stdin"])
def test_a_special_hf_config_is_refused(tmp_path, special):
    """``hf_config = "/dev/stdout"`` in a pull request: refused as outside the profile's directory;
    with --allow-outside-paths, and for a FIFO inside it, refused as not a regular file."""
    path = _setup(tmp_path, special)
    (tmp_path / "p.toml").write_text(HF_PROFILE.replace('"config.json"', json.dumps(special if special != "fifo"
                                                                                    else path.name)))
    proc = _run(["recommend", str(tmp_path / "p.toml"), "--format", "json"], tmp_path)
    _one_error_line(proc, "special: not a regular file" if special == "fifo"
                    else "p.toml: model.hf_config: " + repr(special) + " is outside the directory")
    proc = _run(["recommend", str(tmp_path / "p.toml"), "--format", "json", "--allow-outside-paths"], tmp_path)
    _one_error_line(proc, "not a regular file")


@pytest.mark.parametrize("special", ["fifo", "/dev/stdout", "/dev/stdin"])
def test_a_special_profile_named_by_a_saved_plan_is_never_read(tmp_path, special):
    """render follows a saved plan's ``profile`` field for line numbers: a FIFO beside the plan is
    refused with one line; a device outside the plan's directory is not even opened."""
    path = _setup(tmp_path, special)
    plan = json.loads(_plan_json())
    plan["profile"] = path.name if special == "fifo" else special
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    proc = _run(["render", str(tmp_path / "plan.json"), "--format", "sarif"], tmp_path)
    if special == "fifo":
        _one_error_line(proc, "not a regular file")
    else:
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        proc = _run(["render", str(tmp_path / "plan.json"), "--format", "sarif", "--allow-outside-paths"], tmp_path)
        _one_error_line(proc, "not a regular file")


@pytest.mark.parametrize("special", ["fifo", "/dev/stdout", "/dev/stdin"])
def test_a_special_file_in_a_catalog_overlay_is_refused(tmp_path, special):
    _setup(tmp_path, "fifo")
    overlay = tmp_path / "overlay" / "gpus"
    overlay.mkdir(parents=True)
    if special == "fifo":
        os.mkfifo(overlay / "x.toml")
    else:
        (overlay / "x.toml").symlink_to(special)
    proc = _run(["recommend", str(tmp_path / "p.toml"), "--format", "json", "--catalog", str(tmp_path / "overlay")],
                tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "x.toml" in proc.stderr


def test_a_profile_may_not_name_a_config_outside_its_tree(tmp_path):
    """``hf_config = "../../x/config.json"`` or an absolute path: refused unless --allow-outside-paths."""
    inner = tmp_path / "repo" / "profiles"
    inner.mkdir(parents=True)
    (tmp_path / "config.json").write_text(HF_CONFIG)
    for value in ("../../config.json", str(tmp_path / "config.json")):
        (inner / "p.toml").write_text(HF_PROFILE.replace('"config.json"', json.dumps(value)))
        proc = _run(["recommend", str(inner / "p.toml"), "--format", "json"], tmp_path)
        _one_error_line(proc, "is outside the directory of the file that names it")
        proc = _run(["recommend", str(inner / "p.toml"), "--format", "json", "--allow-outside-paths"], tmp_path)
        assert proc.returncode in (0, 1), proc.stderr


def test_a_config_in_the_git_checkout_of_the_profile_is_allowed(tmp_path):
    """Inside the checkout that holds the profile (a ``.git`` above it), a sibling directory is fine."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "profiles").mkdir()
    (tmp_path / "models" / "config.json").write_text(HF_CONFIG)
    (tmp_path / "profiles" / "p.toml").write_text(HF_PROFILE.replace('"config.json"', '"../models/config.json"'))
    proc = _run(["recommend", str(tmp_path / "profiles" / "p.toml"), "--format", "json"], tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
