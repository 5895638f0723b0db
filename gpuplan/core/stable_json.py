"""The JSON contract's encoding: sorted, rounded, byte-stable JSON (docs/json.md).

One place for it: the JSON renderer, saved plans and ``diff`` all encode through these functions.
"""

from __future__ import annotations

import json
import math
import re
from json.encoder import encode_basestring as _quote  # json.dumps's own, with ensure_ascii=False
from typing import Any

from pydantic import BaseModel

#: Floats are written with this many significant digits: stable across platforms, ample for planning.
SIGNIFICANT_DIGITS = 6


def _is_money(key: str | None) -> bool:
    return key is not None and (key.endswith("_usd") or "_usd_per_" in key)


def stable(value: Any, key: str | None = None) -> Any:
    """Round floats (integers stay integers), recursively: dollar amounts (keys ending in ``_usd``
    or holding ``_usd_per_``) to the cent, everything else to SIGNIFICANT_DIGITS."""
    kind = type(value)  # the plain types of a dumped plan first, as the general case below treats them
    if kind is dict:
        out = {}
        money = key is not None and (key.endswith("_usd") or "_usd_per_" in key)
        for k, v in value.items():
            kind = type(v)
            if kind is str or kind is int or kind is bool or v is None:
                out[k] = v
            else:
                out[k] = stable(v, key if money and not _is_money(k) else k)
        return out
    if kind is float:
        if not math.isfinite(value):
            raise ValueError("non-finite number in plan")
        if value == 0:
            return 0.0
        if key is not None and (key.endswith("_usd") or "_usd_per_" in key) and abs(value) >= 0.01:
            return round(value, 2)
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if kind is list:
        return [stable(v, key) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite number in plan")
        if value == 0:
            return 0.0
        if _is_money(key) and abs(value) >= 0.01:
            return round(value, 2)
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, dict):  # a dollar map's entries (capex_by_category_usd) are dollars too
        return {k: stable(v, key if _is_money(key) and not _is_money(k) else k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [stable(v, key) for v in value]
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
    """``obj`` as :func:`stable` JSON text, two-space indented (``json.dumps(stable(data), indent=2,
    ensure_ascii=False)``, written in one pass by :func:`_encode`)."""
    data = obj.model_dump(mode="json", by_alias=True) if isinstance(obj, BaseModel) else obj
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
    elif isinstance(value, float):  # stable(value, key), inline
        if not math.isfinite(value):
            raise ValueError("non-finite number in plan")
        if value == 0:
            out.append("0.0")
        elif key is not None and (key.endswith("_usd") or "_usd_per_" in key) and abs(value) >= 0.01:
            out.append(float.__repr__(round(value, 2)))
        else:
            out.append(float.__repr__(float(f"{value:.{SIGNIFICANT_DIGITS}g}")))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        money = _is_money(key)
        out.append("{")
        sep = inner
        for k, v in value.items():
            if not isinstance(k, str):
                raise _Unusual
            out.append(sep)
            out.append(_quote(k))
            out.append(": ")
            _encode(v, key if money and not _is_money(k) else k, inner, out)
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
