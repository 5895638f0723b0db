"""The JSON contract's encoding: sorted, rounded, byte-stable JSON (docs/json.md).

One place for it: the JSON renderer, saved plans and ``diff`` all encode through these functions.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

from pydantic import BaseModel

#: Floats are written with this many significant digits: stable across platforms, ample for planning.
SIGNIFICANT_DIGITS = 6


def _is_money(key: object) -> bool:
    """A dollar amount's key (a key that is not a string is not one)."""
    return isinstance(key, str) and (key.endswith("_usd") or "_usd_per_" in key)


#: :func:`_is_money` of a plan's keys, of which there are a few hundred, each seen many times
_money_key = functools.lru_cache(maxsize=4096)(_is_money)


def stable(value: Any, key: str | None = None) -> Any:
    """Round floats (integers stay integers), recursively: dollar amounts (keys ending in ``_usd``
    or holding ``_usd_per_``) to the cent, everything else to SIGNIFICANT_DIGITS."""
    return _stable(value, _is_money(key))


_FLOAT_FORMAT = f".{SIGNIFICANT_DIGITS}g"


def _stable(value: Any, money: bool) -> Any:
    """:func:`stable` under a key that is a dollar amount (``money``) or not: all that the key
    decides. A dollar map's entries (capex_by_category_usd) are dollars too. The exact built-in
    types first (a plan's JSON data holds nothing else), by type rather than isinstance."""
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):
            raise ValueError("non-finite number in plan")
        if value == 0:
            return 0.0
        if money and abs(value) >= 0.01:
            return round(value, 2)
        return float(format(value, _FLOAT_FORMAT))
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        return {k: _stable(v, money or _money_key(k)) for k, v in value.items()}
    if kind is list:
        return [_stable(v, money) for v in value]
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return _stable(float(value), money)
    if isinstance(value, dict):
        return {k: _stable(v, money or _is_money(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stable(v, money) for v in value]
    return value


#: Characters JSON allows raw that still end a line or reorder text somewhere (C1 controls, DEL,
#: U+2028/U+2029, bidirectional overrides): written as ``\uXXXX`` in every JSON output.
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape_json_raw(text: str) -> str:
    """JSON text with the separators JSON allows raw escaped (the value is unchanged once parsed).
    ASCII text holds none of them but DEL (a plan's JSON is ASCII: it is returned as it is)."""
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def to_json(obj: BaseModel | dict[str, Any]) -> str:
    data = obj.model_dump(mode="json", by_alias=True) if isinstance(obj, BaseModel) else obj
    out: list[str] = []
    try:
        _write(data, False, "\n", out)
    except _NotPlain:  # a type a plan's JSON data does not hold: the general encoder
        return escape_json_raw(json.dumps(stable(data), indent=2, sort_keys=False, ensure_ascii=False,
                                          allow_nan=False) + "\n")
    out.append("\n")
    return escape_json_raw("".join(out))


class _NotPlain(Exception):
    """A value :func:`_write` leaves to :func:`json.dumps`."""


#: The string encoder of :func:`json.dumps` with ``ensure_ascii=False`` (C where built).
_STRING = json.encoder.encode_basestring


def _write(value: Any, money: bool, newline: str, out: list[str]) -> None:
    """``json.dumps(stable(value), indent=2, ensure_ascii=False, allow_nan=False)`` in one pass,
    appended to ``out``, for the exact built-in types (dicts with string keys); anything else
    raises :class:`_NotPlain`. ``newline`` is the line break and indent of the current level.
    :func:`json.dumps` formats an indented document in Python, one generator per level; this
    writes the same text with a fifth of the work (a plan's JSON, tests/render)."""
    kind = type(value)
    if kind is float:
        out.append(float.__repr__(_stable(value, money)))
    elif kind is str:
        out.append(_STRING(value))
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is bool:
        out.append("true" if value else "false")
    elif value is None:
        out.append("null")
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        sep = "{" + inner
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            out.append(sep)
            out.append(_STRING(k))
            out.append(": ")
            _write(v, money or _money_key(k), inner, out)
            sep = "," + inner
        out.append(newline + "}")
    elif kind is list:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        sep = "[" + inner
        for v in value:
            out.append(sep)
            _write(v, money, inner, out)
            sep = "," + inner
        out.append(newline + "]")
    else:
        raise _NotPlain
