"""Writing the output files of one run: all of them or none.

Every regular file target is first written in full to a temporary file beside it (same directory,
so the rename cannot cross file systems), flushed and synced. Only when every one of them has been
written are they renamed over their targets, one after the other. If any write fails (a full disk,
a read-only directory, a renderer bug), every temporary file is removed and every target is left
as it was. A device or pipe target (``/dev/null``, a named pipe) cannot be staged: it is written
in place, after the files are staged and before they are renamed.

Temporary files are named ``.gpuplan-NAME.XXXXXXXX.tmp`` (:data:`TEMP_PATTERN`). A run that was
killed (kill -9, a cancelled CI job) cannot remove its own, so each run removes, in the directories
it writes to, those that match the pattern, are regular files owned by the same user and are older
than :data:`STALE_AFTER_S`: never another run's file in progress.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

from gpuplan.core.errors import InputError

#: Temporary files of gpuplan: ``.gpuplan-`` + the target's name (cut) + mkstemp's 8 characters.
TEMP_PATTERN = re.compile(r"^\.gpuplan-.*\.[A-Za-z0-9_]{8}\.tmp$", re.DOTALL)
#: A temporary file older than this (seconds) is left over from a killed run and removed.
STALE_AFTER_S = 3600
#: Directory entries looked at for stale temporary files, per directory and run.
MAX_SCAN = 10_000


def refuse_inputs(path: str | os.PathLike[str], protect: list[str]) -> None:
    """Refuse an output ``path`` that is one of the run's inputs, or lies inside an input directory
    (a catalog overlay). Symlinks are resolved first, so a link to an input is refused too."""
    try:
        target = Path(path).resolve()
    except (OSError, RuntimeError):
        raise InputError("cannot resolve output path (symlink loop?)", file=str(path)) from None
    for p in protect:
        try:
            guarded = Path(p).resolve()
        except (OSError, RuntimeError):
            continue
        if target == guarded or (guarded.is_dir() and guarded in target.parents):
            raise InputError("refusing to overwrite an input file", file=str(path))


def check_output(path: str | os.PathLike[str], protect: list[str]) -> None:
    """Refuse an output ``path`` that cannot be written, before anything of the run is: an input of
    the run, a directory, a path in a missing or read-only directory."""
    refuse_inputs(path, protect)
    target = Path(path)
    if _is_stream(target):
        return
    directory = _file_directory(path)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError("cannot write file (Permission denied)", file=str(path))


def _file_directory(path: str | os.PathLike[str]) -> Path:
    """The existing directory a regular output file goes into; refuses a missing one or a
    ``path`` that is itself a directory."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("output directory does not exist", file=str(path))
    if target.is_dir():
        raise InputError("is a directory, expected a file path", file=str(path))
    return directory


def _is_stream(target: Path) -> bool:
    """An existing device, FIFO or socket (``/dev/null``, ``/dev/stdout``, a named pipe): written
    to in place, never replaced by a regular file."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def remove_stale(directory: Path, *, now: float | None = None) -> list[str]:
    """Remove this user's temporary files older than :data:`STALE_AFTER_S` from ``directory``;
    returns their names. Errors are ignored: cleaning up must never fail a run."""
    now = time.time() if now is None else now
    removed: list[str] = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        with os.scandir(directory) as entries:
            for i, entry in enumerate(entries):
                if i >= MAX_SCAN:
                    break
                if not TEMP_PATTERN.match(entry.name):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                    if (stat.S_ISREG(info.st_mode) and (uid is None or info.st_uid == uid)
                            and now - info.st_mtime > STALE_AFTER_S):
                        os.unlink(entry.path)
                        removed.append(entry.name)
                except OSError:
                    continue
    except OSError:
        pass
    return removed


def _stage(path: str, data: str) -> str:
    """Write ``data`` to a new temporary file beside ``path``; returns the temporary file's path."""
    target = Path(path)
    directory = _file_directory(path)
    import tempfile  # only when a file is written: a plan to stdout does without it

    fd, tmp = tempfile.mkstemp(prefix=f".gpuplan-{target.name[:100]}.", suffix=".tmp", dir=directory)
    try:
        if hasattr(os, "fchmod"):  # mkstemp makes 0600; an output file gets the usual umask mode
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_files(targets: list[tuple[str, str]], *, protect: list[str] | None = None) -> None:
    """Write every ``(path, text)`` of ``targets``, all or nothing (see the module docstring).

    Refuses, before anything is written, a target that is an input in ``protect`` or cannot be
    written. A write error is one :class:`InputError` line naming the target; any other exception
    (a bug) propagates, after the temporary files are removed.
    """
    for path, _ in targets:
        refuse_inputs(path, protect or [])
    streams = [(p, t) for p, t in targets if _is_stream(Path(p))]
    files = [(p, t) for p, t in targets if not _is_stream(Path(p))]
    for directory in dict.fromkeys(_file_directory(p) for p, _ in files):
        remove_stale(directory)
    staged: list[tuple[str, str]] = []
    current = ""
    try:
        for path, text in files:
            current = path
            staged.append((_stage(path, text), path))
        for path, text in streams:
            current = path
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        while staged:
            tmp, current = staged[0]
            os.replace(tmp, current)
            staged.pop(0)
    except BaseException as exc:
        for tmp, _ in staged:
            _unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(f"cannot write file ({exc.strerror or exc})", file=current) from None
        raise
