"""The JSON contract's encoding: sorted, rounded, byte-stable JSON (docs/json.md).

One place for it: the JSON renderer, saved plans and ``diff`` all encode through these functions.
"""

from __future__ import annotations

import json
import math
import re
from json.encoder import encode_basestring as _quote  # json.dumps's own, with ensure_ascii=False
from typing import Any

#: Floats are written with this many significant digits: stable across platforms, ample for planning.
SIGNIFICANT_DIGITS = 6


def is_money(key: str | None) -> bool:
    """A dollar amount's key: ending in ``_usd`` or holding ``_usd_per_``."""
    return key is not None and (key.endswith("_usd") or "_usd_per_" in key)


def rounded(value: float, key: str | None = None) -> float:
    """The one rounding rule of the JSON: a dollar amount (:func:`is_money` ``key``) to the cent,
    any other float (and a dollar amount under a cent) to SIGNIFICANT_DIGITS; 0.0 for zero of
    either sign. A non-finite number is a ValueError."""
    if not math.isfinite(value):
        raise ValueError("non-finite number in plan")
    if value == 0:
        return 0.0
    if abs(value) >= 0.01 and is_money(key):
        return round(value, 2)
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def stable(value: Any, key: str | None = None) -> Any:
    """Floats :func:`rounded` (integers stay integers), recursively; the entries of a dict under a
    dollar key (``capex_by_category_usd``) are dollars too, unless their own key says otherwise."""
    kind = type(value)  # the plain types of a dumped plan first, as the general case below treats them
    if kind is dict:
        out = {}
        money = is_money(key)
        for k, v in value.items():
            kind = type(v)
            if kind is str or kind is int or kind is bool or v is None:
                out[k] = v
            else:
                out[k] = stable(v, key if money and not is_money(k) else k)
        return out
    if kind is float:
        return rounded(value, key)
    if kind is list:
        return [stable(v, key) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return rounded(value, key)
    if isinstance(value, dict):
        money = is_money(key)
        return {k: stable(v, key if money and not is_money(k) else k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [stable(v, key) for v in value]
    return value


#: Characters JSON allows raw that still end a line or reorder text somewhere (C1 controls, DEL,
#: U+2028/U+2029, bidirectional overrides): written as ``\uXXXX`` in every JSON output (compiled when
#: a non-ASCII text first needs it).
_JSON_RAW = "[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"


def escape_json_raw(text: str) -> str:
    """JSON text with the separators JSON allows raw escaped (the value is unchanged once parsed).
    ASCII text holds none of them but DEL (a plan's JSON is ASCII: it is returned as it is)."""
    if text.isascii() and "\x7f" not in text:
        return text
    return re.sub(_JSON_RAW, lambda m: f"\\u{ord(m.group()):04x}", text)


def to_json(obj: Any) -> str:
    """``obj`` (a plan, a pydantic model or JSON data) as :func:`stable` JSON text, two-space
    indented (``json.dumps(stable(data), indent=2, ensure_ascii=False)``, written in one pass by
    :func:`_encode`)."""
    dump = getattr(obj, "model_dump", None)
    data = dump(mode="json", by_alias=True) if dump is not None else obj
    out: list[str] = []
    try:
        _encode(data, None, "\n", out)
        text = "".join(out) + "\n"
    except _Unusual:  # a key or a value json.dumps writes its own way
        text = json.dumps(stable(data), indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n"
    return escape_json_raw(text)


class _Unusual(Exception):
    """Raised by :func:`_encode` on what it does not write itself (``to_json`` then calls json.dumps)."""


def _encode(value: Any, key: str | None, newline: str, out: list[str]) -> None:
    """Append :func:`stable`'s ``value`` (under ``key``) as json.dumps writes it at ``indent=2``
    (``newline``: a line break and the current indent), without building the rounded copy: a plan
    is ~100 kB of JSON, and json.dumps indents it in pure Python."""
    if isinstance(value, str):
        out.append(_quote(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(float.__repr__(rounded(value, key)))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        money = is_money(key)
        out.append("{")
        sep = inner
        for k, v in value.items():
            if not isinstance(k, str):
                raise _Unusual
            out.append(sep)
            out.append(_quote(k))
            out.append(": ")
            _encode(v, key if money and not is_money(k) else k, inner, out)
            sep = "," + inner
        out.append(newline)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        out.append("[")
        sep = inner
        for v in value:
            out.append(sep)
            _encode(v, key, inner, out)
            sep = "," + inner
        out.append(newline)
        out.append("]")
    else:
        raise _Unusual
