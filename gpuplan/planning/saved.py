"""Reading a saved plan JSON back (``gpuplan render``, ``gpuplan diff``) and finding profile lines.

A reader accepts plans whose ``schema_version`` lies in the window
``MIN_SCHEMA_VERSION <= x <= SCHEMA_VERSION`` (docs/json.md, "Versioning"); anything else fails
with one line that names the window, never with a pile of validation errors.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from gpuplan.core.documents import PLAN, refuse_other, toml_kind
from gpuplan.core.errors import InputError
from gpuplan.core.io import parse_json, pydantic_error, read_text
from gpuplan.core.contract import SCHEMA_VERSION, Plan

#: Oldest plan schema this gpuplan reads.
MIN_SCHEMA_VERSION = "2.0"


def _version(text: str) -> tuple[int, ...] | None:
    parts = text.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def check_schema_version(value: object, *, file: str) -> None:
    """Refuse a plan outside the supported version window, naming the window."""
    window = f"this gpuplan reads {MIN_SCHEMA_VERSION} <= schema_version <= {SCHEMA_VERSION}"
    if not isinstance(value, str) or _version(value) is None:
        raise InputError(f"not a gpuplan plan: schema_version missing or malformed ({window})", file=file,
                         field="schema_version")
    low, high = _version(MIN_SCHEMA_VERSION), _version(SCHEMA_VERSION)
    assert low is not None and high is not None
    if not low <= _version(value) <= high:  # type: ignore[operator]
        raise InputError(f"plan schema_version {value} is not supported; {window}", file=file,
                         field="schema_version")


def parse_plan(text: str, name: str) -> Plan:
    """A saved plan from its JSON text; a profile, a cluster file or a check or diff result is
    refused with one line naming what it is (read as JSON, a TOML profile failed with
    'line 1, column 1: JSON syntax error: Expecting value')."""
    if not text.strip():
        raise InputError(f"the file is empty, expected {PLAN}", file=name)
    if not text.lstrip().startswith("{") and (kind := toml_kind(text)) is not None:
        raise InputError(f"{kind}, not {PLAN}", file=name)
    data = parse_json(text, name)
    if not isinstance(data, dict):
        raise InputError("not a gpuplan plan: expected a JSON object", file=name)
    refuse_other(data, name, PLAN, toml=False)
    check_schema_version(data.get("schema_version"), file=name)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error(exc, file=name) from None
    try:  # a number given as the string "nan" or "inf" passes the model; no plan holds one
        as_published(plan)
    except ValueError:
        raise InputError("not a gpuplan plan: a number is not finite (nan or inf)", file=name) from None
    return plan


def as_published(plan: Plan) -> Plan:
    """The plan with the numbers its JSON publishes (6 significant digits, money to the cent), so
    that every format of one run, and a later ``gpuplan render`` of its JSON, show the same figures."""
    return plan.published()


def load_plan(path: str | os.PathLike[str]) -> Plan:
    """Read a plan written by ``gpuplan recommend --format json``."""
    return parse_plan(read_text(path), str(path))


def is_plan_file(path: str | os.PathLike[str]) -> bool:
    """A saved plan (JSON) rather than a profile (TOML), by content: a JSON object starts with ``{``,
    which no TOML document does. Only a ``.json`` file that is neither (empty, cut short) goes to
    the plan reader by its name, for that reader's error; a profile saved as ``.json`` is a profile,
    and a plan saved as ``.toml`` a plan (the extension decided, and the wrong parser said
    'line 1, column 1: ... syntax error')."""
    p = Path(path)
    text = read_text(p)
    if text.lstrip().startswith("{"):
        return True
    return p.suffix.lower() == ".json" and toml_kind(text) is None


def profile_file(plan: Plan) -> str | None:
    """The profile path as a repository-relative POSIX path, or None for the built-in default."""
    return repo_path(plan.profile)


def repo_path(name: str) -> str | None:
    """A path as annotations and SARIF want it: POSIX, relative to the repository root (the
    GitHub workspace, else the nearest directory holding ``.git``), so that a job run from a
    subdirectory still points at the right file; else relative to the working directory."""
    if not name or name.startswith("<"):
        return None
    p = Path(name)
    try:
        resolved = p.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte in a hostile plan's path
        resolved = None
    if resolved is not None:
        for root in _roots(resolved):
            try:
                return resolved.relative_to(root).as_posix()
            except ValueError:
                continue
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return p.as_posix()
    return p.as_posix()


def _roots(path: Path) -> list[Path]:
    """Candidate repository roots of ``path``: $GITHUB_WORKSPACE, then the nearest ``.git`` above it."""
    import os

    out = []
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        try:
            out.append(Path(workspace).resolve())
        except (OSError, RuntimeError):
            pass
    for parent in path.parents:
        if (parent / ".git").exists():
            out.append(parent)
            break
    return out


def profile_lines(plan: Plan) -> dict[str, int]:
    """``table.key`` -> line in the plan's profile, read only if the file is unchanged (same sha256)."""
    from gpuplan.model.profile import field_lines

    name = plan.profile
    if not name or name.startswith("<"):
        return {}
    try:
        text = read_text(name)
    except InputError:
        return {}
    if hashlib.sha256(text.encode()).hexdigest() != plan.input_sha256:
        return {}
    return field_lines(text)


def saved_profile_lines(plan: Plan, plan_file: str, *, allow_outside: bool = False) -> dict[str, int]:
    """``table.key`` -> line of the profile a saved plan names, for ``gpuplan render``.

    The ``profile`` field is resolved relative to the plan file and must stay inside its directory
    tree or git checkout; failing that (``recommend`` writes the path as given on its command
    line), relative to the working directory and inside its tree or checkout. A profile outside
    both is not read, unless ``allow_outside``. It is read only if it exists,
    and its lines are used only if it is unchanged (same sha256)."""
    from gpuplan.core.io import contained_path
    from gpuplan.model.profile import field_lines

    name = plan.profile
    if not name or name.startswith("<"):
        return {}
    for named_by in (plan_file, "<working directory>"):
        try:
            path = contained_path(name, named_by, field="profile", allow_outside=allow_outside)
        except InputError:  # outside: not read; the findings lose their line numbers, nothing else
            continue
        if _exists(path):
            break
    else:
        return {}
    text = read_text(path)
    if hashlib.sha256(text.encode()).hexdigest() != plan.input_sha256:
        return {}
    return field_lines(text)


def _exists(path: Path) -> bool:
    """Whether ``path`` names something; False for a name no file can have (NUL, too long)."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def locate(field: str | None, lines: Mapping[str, int]) -> int | None:
    """The line of a dotted field, else of its nearest written parent (``serving`` for a default)."""
    field = (field or "").split("[")[0]
    while field:
        if field in lines:
            return lines[field]
        field = field.rpartition(".")[0] if "." in field else ""
    return None


def anchors(plan: Plan, lines: Mapping[str, int] | None = None) -> tuple[str | None, Mapping[str, int]]:
    """The profile file findings point at and its ``field -> line`` map (read when not given)."""
    return profile_file(plan), (lines if lines is not None else profile_lines(plan))
