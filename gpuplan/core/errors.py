"""Errors a user can cause, each rendered as one line on stderr with exit code 2.

Everything raised for bad input is an :class:`InputError`; it carries the file, the dotted field
path and what was expected, so the CLI can print ``FILE: FIELD: PROBLEM`` and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Characters that end a line somewhere (a terminal, a CI log, a browser, Python's ``splitlines``)
#: or steer a terminal: C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
#: Also the bidirectional overrides, which reorder what a reader sees. The patterns of this module are
#: compiled when first used (``re``'s own cache), not at import: most runs print no message.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
#: Terminal control sequences: CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL`` or ``ESC \\``),
#: and any other two-byte ``ESC x``; also their 8-bit forms (``\x9b``, ``\x9d``).
_TERMINAL = ("(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b\\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)?"
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
        text = re.sub(_TERMINAL, "", text)
    return re.sub(_UNSAFE, lambda m: _escape(m.group()), text)


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
    import difflib  # only for a message: every start imports this module

    close = difflib.get_close_matches(word, sorted(set(choices)), n=n, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def field_path(parts: Iterable[object]) -> str:
    """One notation for every message: ``constraints.allow_gpus[0].id``, never ``allow_gpus.0``."""
    out = ""
    for part in parts:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


#: What a profile field counts, by its name: (words for the message, {unit: multiplier to the field's unit}).
_UNITS: list[tuple[str, str, dict[str, float]]] = [
    ("_ms", "milliseconds", {"ms": 1, "s": 1e3, "sec": 1e3, "min": 6e4, "us": 1e-3, "µs": 1e-3}),
    ("_days", "days", {"d": 1, "day": 1, "days": 1, "h": 1 / 24, "w": 7, "week": 7, "weeks": 7}),
    ("_kw", "kilowatts", {"kw": 1, "mw": 1e3, "w": 1e-3}),
    ("_w", "watts", {"w": 1, "kw": 1e3}),
    ("_usd", "US dollars", {"$": 1, "usd": 1}),
    ("qps", "requests per second", {"/s": 1, "qps": 1, "rps": 1, "req/s": 1, "requests/s": 1, "/sec": 1,
                                    "/min": 1 / 60, "rpm": 1 / 60, "/h": 1 / 3600}),
    ("tokens", "tokens", {"tokens": 1, "tok": 1}),
    ("params", "parameters", {"params": 1, "parameters": 1}),
    ("_length", "tokens", {"tokens": 1, "tok": 1}),
]
_SI = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "b": 1e9, "T": 1e12, "t": 1e12, "P": 1e15}
_NUMBER_UNIT = r"\s*\$?\s*((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([^\d\s].*?)?\s*"


def unit_hint(field: str, value: str) -> str | None:
    """For a number written as a string with a unit (``qps = "10/s"``, ``ttft_ms = "2s"``): what
    the field expects, and the number to write. None when ``value`` does not start with a number."""
    m = re.fullmatch(_NUMBER_UNIT, value)
    if not m:
        return None
    number, unit = float(m.group(1)), (m.group(2) or "").strip()
    words, units = next(((w, u) for suffix, w, u in _UNITS if field.endswith(suffix)), ("", {}))
    what = f"a number of {words}" if words else "a number"
    si = ""
    if unit[:1] in _SI and words in ("tokens", "parameters", "US dollars"):
        si, unit = unit[:1], unit[1:].strip()
    scale = units.get(unit.lower()) if unit else 1.0
    if scale is None:
        known = ", ".join(sorted(k for k in units if k != "$"))
        return f"expected {what}, got {value!r}" + (f" (units it converts: {known})" if known else "")
    if field.endswith(("_length", "prompt_tokens", "output_tokens")) and si in ("k", "K"):
        return (f"expected {what}, got {value!r}: write {field} = {number * 1024:g} or {number * 1000:g} "
                "(a length has no suffix: 'k' may mean 1000 or 1024)")
    result = number * (_SI[si] if si else 1.0) * scale
    return f"expected {what}, got {value!r}: write {field} = {_plain(result)} (a number, no quotes)"


def _plain(x: float) -> str:
    """A number as a profile would write it: 2000, 0.5, 5e6 (not 5e+06)."""
    return f"{x:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def magnitude_hint(field: str, value: object) -> str:
    """``params = 70`` -> 'did you mean 70e9 or "70B"?': a count written in billions or trillions."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e6:
        return ""
    if field == "params":
        return f'did you mean {value:g}e9 or "{value:g}B"?'
    if field == "tokens":
        return f'did you mean {value:g}e12 ("{value:g}T") or {value:g}e9 ("{value:g}B")?'
    if field == "global_batch_tokens" and value < 1e3:
        return f'did you mean {value:g}e6 or "{value:g}M"?'
    return ""
