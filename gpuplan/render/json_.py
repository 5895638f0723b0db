"""The JSON format: the plan (or a check or diff result) in the byte-stable encoding of
:mod:`gpuplan.core.stable_json`."""

from __future__ import annotations

from typing import Any

from gpuplan.core.stable_json import SIGNIFICANT_DIGITS, stable, to_json

__all__ = ["SIGNIFICANT_DIGITS", "render", "render_check", "render_diff", "stable", "to_json"]


def render(plan: Any, options: object) -> str:
    return to_json(plan)


#: Check and diff results (pydantic models): the same encoding, the same stability.
render_check = render_diff = render
