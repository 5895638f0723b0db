"""Reading input files safely and writing output files atomically.

All file access of gpuplan goes through here so that every failure becomes one
:class:`~gpuplan.core.errors.InputError` line: unreadable or missing files, wrong encodings, oversized
files, TOML/JSON syntax (with line and column), duplicate keys and non-finite numbers.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from gpuplan.core.errors import InputError, did_you_mean, expected_one_of, field_path, magnitude_hint, unit_hint
from gpuplan.core.outputs import (  # noqa: F401  (re-exported: the checks every output path gets)
    _file_directory,
    _is_stream,
    check_output,
    refuse_inputs,
    write_files,
)
from gpuplan.core.types import ID_PATTERN

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: Input files larger than this are refused (documented in docs/security.md).
MAX_INPUT_BYTES = 1_000_000
#: Nesting deeper than this is refused: no real profile, catalog or plan needs it.
MAX_NESTING = 32


def read_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """Read a UTF-8 text file (an optional byte-order mark is dropped).

    Regular files only: the file is opened without blocking (``O_NONBLOCK``, so a FIFO with no
    writer, or ``/dev/stdout`` on a pipe, cannot hang the run) and checked with ``fstat`` on the
    open descriptor (no race with a swap after a ``stat``); FIFOs, devices, sockets and
    directories are refused. At most ``max_bytes`` + 1 bytes are ever read, so a file that grows
    cannot exhaust memory.
    """
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError("file not found", file=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", file=name) from None
    except PermissionError:
        raise InputError("permission denied", file=name) from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # opening a socket, or a FIFO end that cannot be opened
            raise InputError("not a regular file (a socket); gpuplan reads regular files only", file=name) from None
        raise InputError(f"cannot read file ({exc.strerror or exc})", file=name) from None
    except ValueError as exc:  # a NUL byte in the path
        raise InputError(f"cannot read file ({exc})", file=name) from None
    try:
        data = _read_regular(fd, name, max_bytes)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise InputError(f"file is larger than the {max_bytes}-byte limit", file=name)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("file is UTF-16 encoded, expected UTF-8", file=name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", file=name) from None
    if "\x00" in text:
        raise InputError("file contains NUL bytes, expected text", file=name)
    return text


def _read_regular(fd: int, name: str, max_bytes: int) -> bytes:
    """At most ``max_bytes`` + 1 bytes of the open descriptor ``fd``, which must be a regular file."""
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("is a directory, expected a file", file=name)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"not a regular file ({_kind(info.st_mode)}); gpuplan reads regular files only",
                             file=name)
        if info.st_size > max_bytes:
            raise InputError(f"file is {info.st_size} bytes, larger than the {max_bytes}-byte limit", file=name)
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", file=name) from None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO or pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def contained_path(value: str, named_by: str, *, field: str, allow_outside: bool = False) -> Path:
    """A path ``value`` written in the file ``named_by`` (``model.hf_config``, a saved plan's
    ``profile``), relative to that file's directory. Unless ``allow_outside``, it must resolve
    (symlinks followed) inside that directory's tree or inside the git checkout holding it, so a
    pull request cannot make gpuplan read the runner's files."""
    base = Path.cwd() if named_by.startswith("<") else Path(named_by).parent
    path = Path(value)
    candidate = path if path.is_absolute() else base / path
    if allow_outside:
        return candidate
    try:
        root = base.resolve()
        target = candidate.resolve()
    except (OSError, RuntimeError, ValueError):
        raise InputError("cannot resolve the path (a symlink loop?)", file=named_by, field=field) from None
    checkout = next((d for d in (root, *root.parents) if (d / ".git").exists()), None)
    if not any(target == r or r in target.parents for r in (root, checkout) if r is not None):
        raise InputError(f"{_short(value)} is outside the directory of the file that names it and of its git "
                         "checkout; pass --allow-outside-paths to read it", file=named_by, field=field)
    return candidate


def _check_depth(value: Any, name: str, depth: int = 0) -> None:
    if depth > MAX_NESTING:
        raise InputError(f"nesting deeper than {MAX_NESTING} levels", file=name)
    if isinstance(value, dict):
        for v in value.values():
            _check_depth(v, name, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_depth(v, name, depth + 1)


def parse_toml(text: str, name: str) -> dict[str, Any]:
    """Parse TOML text; syntax errors name the line and column."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc).split(" (at ")[0]
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        if line is None:  # Python < 3.14 puts the position in the message only
            tail = str(exc).rsplit("(at line ", 1)
            if len(tail) == 2:
                pos = tail[1].rstrip(")").split(", column ")
                line, col = pos[0], (pos[1] if len(pos) > 1 else "?")
        where = f"line {line}, column {col}: " if line is not None else ""
        raise InputError(f"{where}TOML syntax error: {msg.lower()}", file=name) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_NESTING} levels", file=name) from None
    except ValueError as exc:  # e.g. an integer literal of more than 4300 digits
        raise InputError(f"TOML error: {_first_sentence(exc)}", file=name) from None
    _check_depth(data, name)
    return data


def _first_sentence(exc: BaseException) -> str:
    """An exception's message on one short line (without Python's int-limit advice)."""
    text = " ".join(str(exc).split()).split("; use sys.set_int_max_str_digits")[0] or type(exc).__name__
    text = text[0].lower() + text[1:]
    return text if len(text) <= 200 else text[:197] + "..."


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    return parse_toml(read_text(path), str(path))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {_short(key)}")
        out[key] = value
    return out


def _reject_constant(token: str) -> Any:
    raise ValueError(f"non-finite number {token} is not allowed")


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):  # 1e400 overflows to infinity
        raise ValueError(f"number {token[:40]} is out of range")
    return value


def parse_json(text: str, name: str) -> Any:
    """Parse JSON, refusing duplicate keys and NaN/Infinity."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant,
                          parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InputError(f"line {exc.lineno}, column {exc.colno}: JSON syntax error: {exc.msg}", file=name) from None
    except ValueError as exc:
        raise InputError(f"JSON error: {_first_sentence(exc)}", file=name) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_NESTING} levels", file=name) from None
    _check_depth(data, name)
    return data


def read_json(path: str | os.PathLike[str]) -> Any:
    return parse_json(read_text(path), str(path))


#: pydantic's error types for a dataclass (the plan's classes, core/contract_base.py) that mean what
#: a model's do: an unknown key, a value that is not a table.
_KINDS = {"unexpected_keyword_argument": "extra_forbidden", "dataclass_type": "model_type",
          "dataclass_exact_type": "model_type"}


def pydantic_error(exc: Any, *, file: str, prefix: str = "", known_fields: dict[str, list[str]] | None = None,
                   unit_hints: bool = False) -> InputError:
    """Turn the most telling pydantic ValidationError entry into one InputError line.

    An unknown key is reported before anything else: a misspelt required key (``qsp`` for
    ``qps``) is one mistake, and "unknown field qsp, did you mean qps" names it, where "qps is
    missing" would not. ``known_fields`` maps a dotted parent path to the field names allowed
    there, for "did you mean". ``unit_hints`` (profiles): a number written as a string with a unit
    (``qps = "10/s"``) says what to write instead (:func:`gpuplan.core.errors.unit_hint`).
    """
    errors = exc.errors(include_url=False)
    err = next((e for e in errors if _KINDS.get(e.get("type"), e.get("type")) == "extra_forbidden"), errors[0])
    loc = [x if isinstance(x, int) else clip(str(x)) for x in err.get("loc", ())
           if not (isinstance(x, str) and x.startswith("function-"))]
    path = field_path(([prefix] if prefix else []) + loc)
    kind = _KINDS.get(err.get("type", ""), err.get("type", ""))
    got = err.get("input")
    name = str(loc[-1]) if loc else ""
    if unit_hints and kind in ("float_type", "int_type", "float_parsing", "int_parsing") and isinstance(got, str):
        hint = unit_hint(name, got)
        if hint:
            return InputError(hint, file=file, field=path or None)
    if kind == "extra_forbidden":
        parent = field_path(([prefix] if prefix else []) + loc[:-1])
        hint = ""
        if known_fields is not None and parent in known_fields:
            hint = did_you_mean(loc[-1], known_fields[parent]) or expected_one_of(known_fields[parent])
        return InputError(f"unknown field{hint}", file=file, field=path)
    if kind == "missing":
        return InputError("required field is missing", file=file, field=path)
    if kind == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == ID_PATTERN:
        hint = f" (did you mean {got.lower()!r}?)" if isinstance(got, str) and re.match(ID_PATTERN, got.lower()) else ""
        return InputError(f"expected a lowercase id (a-z, 0-9, '.', '_', '-'), got {_short(got)}{hint}",
                          file=file, field=path)
    if kind in ("model_type", "dict_type"):  # pydantic names its class here: say what the file needs
        return InputError(f"expected a table, got {_type_name(got)}", file=file, field=path or None)
    msg = err.get("msg", "invalid value")
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if msg.startswith("Assertion failed, "):
        msg = msg[len("Assertion failed, "):]
    shown = _short(got)
    extra = magnitude_hint(name, got) if kind in ("greater_than", "greater_than_equal") else ""
    if kind == "literal_error" and isinstance(got, str):
        extra = did_you_mean(got, re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", ""))))[2:-1]
    if shown is not None and kind not in ("model_type", "dict_type"):
        msg = f"{msg} (got {shown}{'; ' + extra if extra else ''})"
    return InputError(msg[0].lower() + msg[1:] if msg else "invalid value", file=file, field=path or None)


def _type_name(value: Any) -> str:
    """The TOML/JSON kind of a value, for "expected a table, got ..."."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"a number ({_short(value)})"
    if isinstance(value, str):
        return f"a string ({_short(value)})"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def clip(text: str, limit: int = 60) -> str:
    """A key or name from the input, cut so that an error line stays one short line."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short(value: Any) -> str | None:
    if isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):  # as the file writes it (TOML and JSON), not Python's True
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def write_output(path: str | os.PathLike[str], data: str, *, protect: list[str] | None = None) -> None:
    """Write one output: a device or pipe in place, anything else with :func:`write_atomic`."""
    write_atomic(path, data, protect=protect)


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout as UTF-8 whatever the locale's encoding (reports use '·' and '→')."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()


def write_atomic(path: str | os.PathLike[str], data: str, *, protect: list[str] | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename
    (a device or pipe is written in place); see :func:`gpuplan.core.outputs.write_files`.

    Refuses to overwrite any path in ``protect`` (the inputs of the run). Either the complete new
    file is in place afterwards or the old one (or nothing) is, and no temporary file is left;
    an unwritable target is one :class:`InputError` line. A symlink at ``path`` is replaced by the
    file, never written through.
    """
    write_files([(str(path), data)], protect=protect)
