"""Renderers: thin functions from a :class:`~gpuplan.plan.Plan` to text. None recomputes anything.

Each format is registered in :data:`FORMATS` by name with the module that renders it; modules are
imported only when their format is asked for, so rich and friends stay off the start-up path.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from gpuplan.errors import InputError, did_you_mean


@dataclass(frozen=True)
class RenderOptions:
    color: bool = False
    verbose: int = 0
    width: int = 100


#: format name -> module under gpuplan.render exposing ``render(plan, options) -> str``
FORMATS: dict[str, str] = {
    "table": "table",
    "json": "json_",
}


def render(plan: object, fmt: str, options: RenderOptions | None = None) -> str:
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}{did_you_mean(fmt, FORMATS)}; expected one of {', '.join(FORMATS)}",
                         field="--format")
    module = importlib.import_module(f"gpuplan.render.{FORMATS[fmt]}")
    return module.render(plan, options or RenderOptions())
