"""A small deterministic YAML emitter for plain data (dicts, lists, strings, numbers, booleans,
None), so that manifests need no YAML library at run time.

Keys keep their order. A string is written plain only when YAML 1.1 and 1.2 both read it back as
the same string; anything else is written as a JSON string, which is valid YAML.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")
#: Words YAML 1.1 reads as booleans or null.
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite number in YAML output")
        return repr(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text)


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        out = []
        for key, item in value.items():
            head = f"{pad}{scalar(str(key))}:"
            if isinstance(item, (dict, list)) and item:
                out.append(head)
                out += _lines(item, indent + (2 if isinstance(item, dict) else 0))
            else:
                out.append(f"{head} {_inline(item)}")
        return out
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        out = []
        for item in value:
            if isinstance(item, (dict, list)) and item:
                sub = _lines(item, indent + 2)
                out.append(f"{pad}- {sub[0].lstrip()}")
                out += sub[1:]
            else:
                out.append(f"{pad}- {_inline(item)}")
        return out
    return [pad + scalar(value)]


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return scalar(value)


def dump(value: Any) -> str:
    """One YAML document for ``value``, ending in a newline."""
    return "\n".join(_lines(value, 0)) + "\n"


def dump_all(values: list[Any]) -> str:
    """Several YAML documents, separated by ``---``."""
    return "---\n".join(dump(v) for v in values)
