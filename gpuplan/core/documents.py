"""What kind of gpuplan document a parsed input is, so that a file given in the wrong place is
refused with one line naming what it is and what was expected, not with a syntax error of the other
format ("line 1, column 1: TOML syntax error") or an unknown field of it ("model: unknown field").

The kinds are told apart by their top-level keys, which no two of them share: a saved plan has
``schema_version``; a check result ``gates`` and ``cluster``; a diff result ``phases``, ``base`` and
``new``; a workload profile a ``[model]`` table; a proposed cluster ``gpu`` and ``gpus`` or ``nodes``.
"""

from __future__ import annotations

import tomllib
from typing import Any

from gpuplan.core.errors import InputError

PLAN = "a saved plan (the JSON of 'gpuplan recommend --format json')"
CHECK = "a 'gpuplan check' result"
DIFF = "a 'gpuplan diff' result"
PROFILE = "a workload profile (TOML with a [model] table)"
CLUSTER = "a proposed cluster (the file of 'gpuplan check --against')"


def document_kind(data: Any, *, toml: bool) -> str | None:
    """The kind of a parsed document (one of the constants above), or None when it is none of them.
    A profile is TOML only: a saved plan has a ``model`` object too, and one that lost its
    ``schema_version`` is a broken plan, not a profile."""
    if not isinstance(data, dict):
        return None
    if "gates" in data and "cluster" in data:
        return CHECK
    if all(k in data for k in ("phases", "base", "new")):
        return DIFF
    if "schema_version" in data:
        return PLAN
    if toml and isinstance(data.get("model"), dict):
        return PROFILE
    if "gpu" in data and ("gpus" in data or "nodes" in data):
        return CLUSTER
    return None


def toml_kind(text: str) -> str | None:
    """The kind of a TOML text, or None when it is not TOML or none of the kinds (a plan reader's
    question about a file that does not start with ``{``: a profile or cluster under any name)."""
    try:
        return document_kind(tomllib.loads(text), toml=True)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None


def refuse_other(data: Any, name: str, expected: str, *, toml: bool) -> None:
    """Raise one line when ``data`` is a known kind other than ``expected``: 'Y, not X'."""
    kind = document_kind(data, toml=toml)
    if kind is not None and kind != expected:
        raise InputError(f"{kind}, not {expected}", file=name)
