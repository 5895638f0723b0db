"""gpuplan: plan GPU clusters for training and serving.

The public Python API (docs/api.md)::

    from gpuplan import load_catalog, load_profile, plan, Plan

Everything else is internal. The names are imported on first use, so that ``import gpuplan``
and the CLI's ``--help`` stay light.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start's 5 ms)

from gpuplan.core.version import __version__

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Plan", "__version__", "load_catalog", "load_profile", "plan"]


def __getattr__(name: str) -> Any:
    if name == "Plan":
        from gpuplan.core.contract import Plan

        return Plan
    if name in ("load_catalog", "load_profile", "plan"):
        from gpuplan.planning import api

        return getattr(api, name)
    raise AttributeError(f"module 'gpuplan' has no attribute {name!r}")
