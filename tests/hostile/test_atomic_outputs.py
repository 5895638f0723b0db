"""Output files: written atomically (temporary file in the same directory, then a rename), never
over an input, never half-finished, no temporary file left behind, one error line when the target
cannot be written.
"""

from __future__ import annotations

import errno
import json
import os

import pytest

from gpuplan.core.errors import InputError
from gpuplan.core.io import write_atomic
from tests.hostile.conftest import assert_outcome, run_cli

PROFILE = ('[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 5\ncontext_length = 8192\n'
           '[constraints]\nallow_gpus = ["h100"]\n')


@pytest.fixture
def work(tmp_path):
    (tmp_path / "p.toml").write_text(PROFILE)
    return tmp_path


def _snapshot(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _no_temporaries(path):
    left = [p.name for p in path.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".") and p.is_file()]
    assert not left, left


@pytest.mark.parametrize("flags", [
    lambda p: ["-o", str(p)],
    lambda p: ["--out", os.path.relpath(p)],
    lambda p: ["-o", str(p.parent / "." / p.name)],
    lambda p: ["--output", f"json:{p}"],
    lambda p: ["-o", str(p.parent / "plan.json"), "--output", f"markdown:{p}"],
], ids=["-o", "--out-relative", "-o-dot-path", "--output", "second-output"])
def test_output_over_the_profile_is_refused(work, flags, monkeypatch):
    monkeypatch.chdir(work)
    before = _snapshot(work)
    r = run_cli("recommend", str(work / "p.toml"), "--format", "json", *flags(work / "p.toml"), cwd=work)
    assert_outcome(r, allowed=(2,))
    assert "refusing to overwrite an input file" in r.err
    assert _snapshot(work) == before  # the profile intact, and no other output written either
    _no_temporaries(work)


def test_a_refused_run_writes_no_output_at_all(work):
    before = _snapshot(work)
    r = run_cli("recommend", str(work / "p.toml"), "--format", "json", "-o", str(work / "plan.json"),
                "--output", f"markdown:{work / 'p.toml'}", cwd=work)
    assert_outcome(r, allowed=(2,))
    assert "refusing to overwrite an input file" in r.err and "p.toml" in r.err, r
    assert _snapshot(work) == before  # plan.json, which comes first, is not written either
    _no_temporaries(work)


def test_output_through_a_symlink_to_the_profile_is_refused(work):
    (work / "link.json").symlink_to(work / "p.toml")
    r = run_cli("recommend", str(work / "p.toml"), "--format", "json", "-o", str(work / "link.json"), cwd=work)
    assert_outcome(r, allowed=(2,))
    assert (work / "p.toml").read_text() == PROFILE


def test_inputs_of_other_commands_are_protected(work):
    plan = work / "plan.json"
    assert_outcome(run_cli("recommend", str(work / "p.toml"), "--format", "json", "-o", str(plan), cwd=work),
                   allowed=(0, 1))
    (work / "cluster.toml").write_text('phase = "serving"\ngpu = "h100"\ngpus = 16\n')
    cases = [
        ["render", str(plan), "--format", "json", "-o", str(plan)],
        ["check", str(work / "p.toml"), "--against", str(work / "cluster.toml"), "-o", str(work / "cluster.toml")],
        ["check", str(work / "p.toml"), "--against", str(work / "cluster.toml"), "-o", str(work / "p.toml")],
        ["diff", str(plan), str(work / "p.toml"), "--format", "json", "--output", f"json:{plan}"],
        ["diff", str(plan), str(work / "p.toml"), "--format", "json", "-o", str(work / "p.toml")],
    ]
    before = _snapshot(work)
    for argv in cases:
        r = run_cli(*argv, cwd=work)
        assert_outcome(r, allowed=(2,))
        assert "refusing to overwrite an input file" in r.err, r
        assert _snapshot(work) == before, argv
    _no_temporaries(work)


def _hf_config_profile(tmp_path):
    """p.toml reading its model from config.json beside it; returns the config's path."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8}))
    (tmp_path / "p.toml").write_text('[model]\nhf_config = "config.json"\n[serving]\nqps = 1\n'
                                     '[constraints]\nallow_gpus = ["h100"]\n')
    return config


def test_output_over_the_hf_config_is_refused(tmp_path):
    config = _hf_config_profile(tmp_path)
    before = _snapshot(tmp_path)
    for flags in (["-o", str(config)], ["--output", "markdown:config.json"],
                  ["-o", str(tmp_path / "ok.json"), "--output", f"sarif:{config}"]):
        r = run_cli("recommend", str(tmp_path / "p.toml"), "--format", "json", *flags, cwd=tmp_path)
        assert_outcome(r, allowed=(2,))
        assert "refusing to overwrite an input file" in r.err, r
        assert _snapshot(tmp_path) == before, flags
    _no_temporaries(tmp_path)


OVERLAY = '[[gpu]]\nid = "h100-sxm-80gb"\nprice_usd = 25000.0\n'


@pytest.fixture
def overlay(work):
    """An overlay directory with one price file, and a subdirectory."""
    (work / "overlay" / "gpus").mkdir(parents=True)
    (work / "overlay" / "gpus" / "prices.toml").write_text(OVERLAY)
    return work / "overlay"


@pytest.mark.parametrize("target", [
    "overlay/gpus/prices.toml",   # over an overlay file
    "overlay/new.toml",           # a new file inside the overlay (it would be read on the next run)
    "overlay/gpus/new.json",      # ... in a subdirectory
    "overlay/../overlay/x.md",    # through ..
    "overlay",                    # the directory itself
], ids=["over-a-file", "new-file", "subdirectory", "dotdot", "the-directory"])
@pytest.mark.parametrize("how", ["flag", "env"])
def test_output_inside_a_catalog_overlay_is_refused(work, overlay, target, how):
    """An output may not land in a ``--catalog`` (or GPUPLAN_CATALOG) overlay directory: a CI job
    must never change the data the next step reads."""
    extra = ["--catalog", str(overlay)] if how == "flag" else []
    env = {"GPUPLAN_CATALOG": str(overlay)} if how == "env" else None
    before = _snapshot(work)
    for flags in (["-o", target], ["-o", "plan.json", "--output", f"markdown:{target}"]):
        r = run_cli("recommend", "p.toml", "--format", "json", *extra, *flags, cwd=work, env=env)
        assert_outcome(r, allowed=(2,))
        assert "refusing to overwrite an input file" in r.err, r
        assert _snapshot(work) == before, flags
    _no_temporaries(work)


def test_output_through_a_symlink_into_an_overlay_is_refused(work, overlay):
    (work / "link.json").symlink_to(overlay / "gpus" / "prices.toml")
    (work / "linkdir").symlink_to(overlay, target_is_directory=True)
    before = _snapshot(work)
    for target in ("link.json", "linkdir/new.json"):
        r = run_cli("recommend", "p.toml", "--format", "json", "--catalog", str(overlay), "-o", target, cwd=work)
        assert_outcome(r, allowed=(2,))
        assert "refusing to overwrite an input file" in r.err, r
    assert _snapshot(work) == before
    assert (overlay / "gpus" / "prices.toml").read_text() == OVERLAY


def test_other_commands_protect_the_overlay(work, overlay):
    plan = work / "plan.json"
    assert_outcome(run_cli("recommend", "p.toml", "--format", "json", "-o", str(plan), cwd=work), allowed=(0, 1))
    (work / "cluster.toml").write_text('phase = "serving"\ngpu = "h100"\ngpus = 16\n')
    before = _snapshot(work)
    for argv in (["check", "p.toml", "--against", "cluster.toml"], ["diff", "plan.json", "p.toml"]):
        r = run_cli(*argv, "--catalog", str(overlay), "-o", "overlay/out.md", cwd=work)
        assert_outcome(r, allowed=(2,))
        assert "refusing to overwrite an input file" in r.err, (argv, r)
        assert _snapshot(work) == before, argv


def test_output_next_to_an_overlay_is_allowed(work, overlay):
    """The guard is the overlay directory, not its parent: a sibling path is fine."""
    r = run_cli("recommend", "p.toml", "--format", "json", "--catalog", str(overlay), "-o", "overlay-plan.json",
                cwd=work)
    assert_outcome(r, allowed=(0, 1), json_out=True)
    assert r.out == "" and json.loads((work / "overlay-plan.json").read_text())["catalog_sha256"]


def test_a_failing_renderer_writes_nothing(work, monkeypatch):
    """All outputs are rendered before any is written: a renderer that fails leaves no file at all."""
    import gpuplan.render.sarif as sarif

    def broken(plan, options):
        raise InputError("renderer refused this plan", field="--format")

    monkeypatch.setattr(sarif, "render", broken)
    (work / "old.json").write_text("old")
    before = _snapshot(work)
    r = run_cli("recommend", str(work / "p.toml"), "--format", "json", "-o", str(work / "old.json"),
                "--output", f"markdown:{work / 'new.md'}", "--output", f"sarif:{work / 'new.sarif'}", cwd=work)
    assert_outcome(r, allowed=(2,))
    assert _snapshot(work) == before
    _no_temporaries(work)

    def crashing(plan, options):
        raise RuntimeError("boom")

    monkeypatch.setattr(sarif, "render", crashing)
    r = run_cli("recommend", str(work / "p.toml"), "--format", "sarif", "-o", str(work / "old.json"), cwd=work)
    assert r.code == 3 and "internal error" in r.err  # a bug is exit 3, and still writes nothing
    assert _snapshot(work) == before
    _no_temporaries(work)


@pytest.mark.parametrize("failing", ["fsync", "replace", "write"])
def test_a_failing_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, failing):
    target = tmp_path / "out.json"
    target.write_text("old complete content")

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    if failing == "write":
        real_fdopen = os.fdopen

        def fdopen(fd, *args, **kwargs):
            fh = real_fdopen(fd, *args, **kwargs)
            original = fh.write

            def write(data):
                original(data[: len(data) // 2])
                disk_full()

            fh.write = write  # type: ignore[method-assign]
            return fh

        monkeypatch.setattr("gpuplan.core.io.os.fdopen", fdopen)
    else:
        monkeypatch.setattr(f"gpuplan.core.io.os.{failing}", disk_full)
    with pytest.raises(InputError) as info:
        write_atomic(target, "new content " * 1000)
    assert "cannot write file (No space left on device)" in str(info.value)
    assert target.read_text() == "old complete content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_replace_is_atomic_for_readers(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with open(target) as old_reader:
        write_atomic(target, "new")
        assert old_reader.read() == "old"  # the old inode is intact: a reader never sees half a file
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_symlink_target_is_replaced_not_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me")
    (tmp_path / "out.json").symlink_to(elsewhere)
    write_atomic(tmp_path / "out.json", "new")
    assert elsewhere.read_text() == "keep me"
    assert not (tmp_path / "out.json").is_symlink() and (tmp_path / "out.json").read_text() == "new"


@pytest.mark.parametrize("target,expected", [
    ("missing-dir/out.json", "output directory does not exist"),
    (".", "is a directory"),
    ("sub", "is a directory"),
    ("", "is a directory"),
])
def test_unwritable_targets_are_one_line(tmp_path, target, expected, monkeypatch):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        write_atomic(target, "x")
    assert expected in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_directory_is_one_line(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(InputError, match="cannot write file"):
            write_atomic(ro / "out.json", "x")
    finally:
        ro.chmod(0o700)


def test_cli_write_errors_are_exit_2(tmp_path):
    from gpuplan.render.json_ import to_json
    from tests.render.fixtures import synthetic_plan

    (tmp_path / "plan.json").write_text(to_json(synthetic_plan()))
    for out in ("nope/x.md", ".", str(tmp_path)):
        r = run_cli("render", str(tmp_path / "plan.json"), "--format", "markdown", "-o", out, cwd=tmp_path)
        assert_outcome(r, allowed=(2,))
    _no_temporaries(tmp_path)


def test_a_missing_directory_in_a_later_output_writes_no_earlier_one(work):
    """Every target is checked (directory exists, is not a directory) before the first is written."""
    before = _snapshot(work)
    for bad in ("nodir/x.sarif", "."):
        r = run_cli("recommend", str(work / "p.toml"), "--format", "json", "-o", str(work / "plan.json"),
                    "--output", f"sarif:{bad}", cwd=work)
        assert_outcome(r, allowed=(2,))
        assert _snapshot(work) == before, bad
        assert r.out == ""


@pytest.mark.parametrize("flags", [
    ["-o", "same.json", "--output", "sarif:same.json"],
    ["--output", "json:-"],
    ["-o", "a.json", "--output", "sarif:./a.json"],
], ids=["same-file", "stdout-twice", "same-file-two-spellings"])
def test_two_outputs_to_one_place_are_refused(work, flags):
    before = _snapshot(work)
    r = run_cli("recommend", str(work / "p.toml"), "--format", "json", *flags, cwd=work)
    assert_outcome(r, allowed=(2,))
    assert "two outputs write to" in r.err
    assert _snapshot(work) == before and r.out == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_written_to_not_replaced(tmp_path):
    import threading

    from gpuplan.core.io import write_output

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_output(fifo, "through the pipe\n")
    reader.join(timeout=10)
    assert got == ["through the pipe\n"]
    assert not fifo.is_file() and fifo.exists()  # still the pipe


def test_dev_null_is_written_to_not_replaced():
    from gpuplan.core.io import write_output

    write_output("/dev/null", "discarded")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_diff_and_graph_protect_a_profiles_hf_config(tmp_path):
    _hf_config_profile(tmp_path)
    before = _snapshot(tmp_path)
    for argv in (["diff", "p.toml", "p.toml", "-f", "json", "-o", "config.json"],
                 ["graph", "p.toml", "--phase", "serving", "-o", "config.json"]):
        r = run_cli(*argv, cwd=tmp_path)
        assert_outcome(r, allowed=(2,))
        assert "refusing to overwrite an input file" in r.err, (argv, r)
        assert _snapshot(tmp_path) == before, argv
