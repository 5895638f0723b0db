"""Errors a user can cause, each rendered as one line on stderr with exit code 2.

Everything raised for bad input is an :class:`InputError`; it carries the file, the dotted field
path and what was expected, so the CLI can print ``FILE: FIELD: PROBLEM`` and nothing else.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

#: Characters that end a line somewhere (a terminal, a CI log, a browser, Python's ``splitlines``)
#: or steer a terminal: C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
#: Also the bidirectional overrides, which reorder what a reader sees.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Terminal control sequences: CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL`` or ``ESC \\``),
#: and any other two-byte ``ESC x``; also their 8-bit forms (``\x9b``, ``\x9d``).
_TERMINAL = re.compile("(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b\\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)?"
                       "|\x1b[@-Z\\\\^_]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\f": "\\f"}


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: object, *, drop_terminal: bool = False) -> str:
    """A user-controlled string made safe to print on one line: the one sanitiser of gpuplan.

    Every control character, line or paragraph separator (``\\n``, ``\\v``, ``\\f``,
    ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029), escape character and bidirectional override is
    shown escaped (``\\n``, ``\\x1b``, ``\\u2028``), so the text can neither split a line (and
    start one with ``::`` in a CI log) nor drive a terminal. ``drop_terminal`` removes whole
    terminal control sequences (colour, retitle, clear) first, for the table and text reports.
    A backslash is left as it is: the result is for reading, not for parsing back.
    """
    text = str(text)
    if drop_terminal:
        text = _TERMINAL.sub("", text)
    return _UNSAFE.sub(lambda m: _escape(m.group()), text)


def one_line(text: object, *, limit: int | None = None) -> str:
    """``text`` (an exception's message, say) as one sanitised line, cut at ``limit`` characters."""
    line = " ".join(safe_text(text).split())
    return line if limit is None or len(line) <= limit else line[: limit - 3] + "..."


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
        parts = [safe_text(p) for p in (self.file, self.field) if p]
        text = one_line(self.message)
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
