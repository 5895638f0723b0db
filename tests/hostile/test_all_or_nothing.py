"""Several outputs of one run are written all or none (issue 14): each goes to a temporary file
beside its target, and all are renamed only after all were written. A failure of any write
removes every temporary file and leaves every target as it was. Temporary files left by a killed
run are recognisable and removed by a later run once they are stale.
"""

from __future__ import annotations

import errno
import os
import time

import pytest

from gpuplan.core.errors import InputError
from gpuplan.core.outputs import STALE_AFTER_S, TEMP_PATTERN, remove_stale, write_files
from tests.hostile.conftest import assert_outcome, run_cli
from tests.hostile.test_atomic_outputs import PROFILE, _no_temporaries, _snapshot


@pytest.fixture
def work(tmp_path):
    (tmp_path / "p.toml").write_text(PROFILE)
    (tmp_path / "a.json").write_text("old a")
    (tmp_path / "b.html").write_text("old b")
    return tmp_path


def _fail_on_nth_write(monkeypatch, n: int):
    """Patch os.fdopen so that the ``n``-th staged file (1-based) fails half-way (a full disk)."""
    real_fdopen = os.fdopen
    count = [0]

    def fdopen(fd, *args, **kwargs):
        fh = real_fdopen(fd, *args, **kwargs)
        count[0] += 1
        if count[0] == n:
            original = fh.write

            def write(data):
                original(data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "No space left on device")

            fh.write = write  # type: ignore[method-assign]
        return fh

    monkeypatch.setattr("gpuplan.core.outputs.os.fdopen", fdopen)


@pytest.mark.parametrize("failing", [1, 2])
def test_a_failing_output_leaves_every_target_untouched(work, monkeypatch, failing):
    """-o a.json --output html:b.html: when either write fails, neither file changes (exit 2)."""
    before = _snapshot(work)
    _fail_on_nth_write(monkeypatch, failing)
    r = run_cli("recommend", str(work / "p.toml"), "--format", "json", "-o", str(work / "a.json"),
                "--output", f"html:{work / 'b.html'}", cwd=work)
    assert_outcome(r, allowed=(2,))
    assert "cannot write file (No space left on device)" in r.err
    assert ("a.json" if failing == 1 else "b.html") in r.err
    assert _snapshot(work) == before
    _no_temporaries(work)


def test_a_failing_rename_removes_the_remaining_temporaries(tmp_path, monkeypatch):
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith("b.txt"):
            raise OSError(errno.EIO, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr("gpuplan.core.outputs.os.replace", replace)
    with pytest.raises(InputError, match="b.txt: cannot write file"):
        write_files([(str(tmp_path / "a.txt"), "a"), (str(tmp_path / "b.txt"), "b")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # renamed before; no temporary left


def test_all_outputs_are_written_when_all_succeed(work):
    r = run_cli("recommend", str(work / "p.toml"), "--format", "json", "-o", str(work / "a.json"),
                "--output", f"html:{work / 'b.html'}", "--output", f"markdown:{work / 'c.md'}", cwd=work)
    assert_outcome(r, allowed=(0, 1))
    assert (work / "a.json").read_text().startswith("{")
    assert "<html" in (work / "b.html").read_text()
    assert (work / "c.md").read_text().startswith("<!-- gpuplan-plan -->")
    _no_temporaries(work)


def test_temporary_names_are_recognisable(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def replace(src, dst):
        seen.append(os.path.basename(src))
        return real_replace(src, dst)

    monkeypatch.setattr("gpuplan.core.outputs.os.replace", replace)
    write_files([(str(tmp_path / "plan.json"), "{}")])
    assert len(seen) == 1 and seen[0].startswith(".gpuplan-plan.json.") and TEMP_PATTERN.match(seen[0])


def test_stale_temporaries_of_a_killed_run_are_removed(tmp_path):
    old = time.time() - STALE_AFTER_S - 60
    stale = tmp_path / ".gpuplan-plan.json.abcd1234.tmp"
    fresh = tmp_path / ".gpuplan-plan.json.efgh5678.tmp"  # another run may be writing it now
    foreign = tmp_path / ".plan.json.abcd1234.tmp"        # not ours: another tool's name
    for p in (stale, fresh, foreign):
        p.write_text("partial")
    os.utime(stale, (old, old))
    os.utime(foreign, (old, old))
    link = tmp_path / ".gpuplan-x.ijkl9012.tmp"
    link.symlink_to(tmp_path / "elsewhere")
    os.utime(link, (old, old), follow_symlinks=False)
    write_files([(str(tmp_path / "plan.json"), "{}")])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, foreign.name, link.name, "plan.json"])


def test_stale_files_of_another_user_are_kept(tmp_path, monkeypatch):
    stale = tmp_path / ".gpuplan-plan.json.abcd1234.tmp"
    stale.write_text("partial")
    old = time.time() - 2 * STALE_AFTER_S
    os.utime(stale, (old, old))
    if not hasattr(os, "getuid"):
        pytest.skip("no user ids")
    monkeypatch.setattr("gpuplan.core.outputs.os.getuid", lambda: os.stat(stale).st_uid + 1)
    assert remove_stale(tmp_path) == []
    assert stale.exists()
