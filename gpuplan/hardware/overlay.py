"""Catalog overlays: how an overlay's tables merge into the shipped catalog, and the check that an
overlay calibration table only replaces shipped constants with values of the same kind."""

from __future__ import annotations

import math
from typing import Any

from gpuplan.core.errors import InputError, did_you_mean


def value_kind(value: Any) -> str:
    """A TOML value's kind, as an error message names it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "table"}.get(type(value), "date or time")


def check_calibration(stem: str, table: dict[str, Any], shipped: dict[str, dict[str, Any]], file: str) -> None:
    """An overlay calibration table may only replace shipped constants, each with a value of the
    same kind (numbers finite and, like every shipped constant, not negative): the planners read
    these tables directly, so a string or a NaN must not reach them. Ranges are theirs to check."""
    if stem not in shipped:
        raise InputError(f"unknown calibration table{did_you_mean(stem, shipped)}; expected one of "
                         f"{', '.join(sorted(shipped))}", file=file)
    same_shape(table, shipped[stem], file, "")


def same_shape(over: Any, base: Any, file: str, field: str) -> None:
    """``over`` has the kind of ``base`` at every key (``field`` names where, for the error)."""
    want, got = value_kind(base), value_kind(over)
    if want != got:
        raise InputError(f"expected a {want}, got a {got}", file=file, field=field or None)
    if got == "number":
        if not math.isfinite(over) or (base >= 0 and over < 0):
            raise InputError(f"expected a finite number >= 0, got {over!r}"[:120], file=file, field=field or None)
    elif got == "table":
        for key, value in over.items():
            path = f"{field}.{key}" if field else key
            if key not in base:
                raise InputError(f"unknown calibration key{did_you_mean(key, base)}", file=file, field=path)
            same_shape(value, base[key], file, path)
    elif got == "array" and base:
        for i, value in enumerate(over):
            same_shape(value, base[0], file, f"{field}[{i}]")


def merge_tables(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into ``base`` key by key (tables recursively; anything else replaced)."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_tables(out[k], v)
        else:
            out[k] = v
    return out
