"""Errors a user can cause, each rendered as one line on stderr with exit code 2.

Everything raised for bad input is an :class:`InputError`; it carries the file, the dotted field
path and what was expected, so the CLI can print ``FILE: FIELD: PROBLEM`` and nothing else.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class GpuplanError(Exception):
    """Base class of every error gpuplan raises on purpose."""

    exit_code = 3


class InputError(GpuplanError):
    """Bad input: a file, a field or a flag. Exit code 2."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None):
        self.file = file
        self.field = field
        self.message = message
        super().__init__(self.one_line())

    def one_line(self) -> str:
        parts = [p for p in (self.file, self.field) if p]
        text = " ".join(self.message.split())
        return ": ".join([*parts, text]) if parts else text


def expected_one_of(choices: Iterable[str], limit: int = 12) -> str:
    """A short ' (expected one of: a, b, ...)' suffix naming the allowed keys, cut at ``limit``."""
    names = sorted(set(choices))
    more = f", and {len(names) - limit} more" if len(names) > limit else ""
    return f" (expected one of: {', '.join(names[:limit])}{more})"


def did_you_mean(word: str, choices: Iterable[str], n: int = 3) -> str:
    """A short ' (did you mean X?)' suffix, or '' when nothing is close."""
    close = difflib.get_close_matches(word, sorted(set(choices)), n=n, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
