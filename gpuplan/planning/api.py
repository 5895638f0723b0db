"""The public Python API (docs/api.md): load a catalog and a profile, plan, read the typed Plan.

    from gpuplan import load_catalog, load_profile, plan, Plan

These three functions are the supported surface; every other module is internal and may move.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from gpuplan.core.contract import Plan
from gpuplan.core.io import read_text
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.loader import load_catalog as _load_catalog
from gpuplan.model.profile import Workload, default_profile_text, load_profile_text
from gpuplan.planning.compose import plan_workload

__all__ = ["Catalog", "Plan", "Workload", "load_catalog", "load_profile", "plan"]

_PHASES = ("training", "serving")


def load_catalog(*overlays: str | os.PathLike[str]) -> Catalog:
    """The built-in catalog, with each overlay directory applied in order (``--catalog DIR``)."""
    return _load_catalog(overlays)


def load_profile(path: str | os.PathLike[str] | None = None, catalog: Catalog | None = None, *,
                 overrides: Mapping[str, Any] | None = None) -> Workload:
    """The workload of a profile file (the built-in default when ``path`` is None), resolved against
    ``catalog`` (the built-in one when None). ``overrides`` sets dotted fields before validation,
    e.g. ``{"serving.qps": 40}``: an invalid value raises ``gpuplan.core.errors.InputError``."""
    if path is None:
        text, name = default_profile_text()
    else:
        text, name = read_text(path), os.fspath(path)
    return load_profile_text(text, name, catalog or load_catalog(), overrides=overrides)


def plan(workload: Workload, catalog: Catalog | None = None, *, phases: Iterable[str] = _PHASES,
         confidence: float | None = None) -> Plan:
    """Plan ``workload``: the same :class:`Plan` that ``gpuplan recommend --format json`` writes
    (``confidence``: as ``--confidence``, the targets hold at that probability; docs/calibration.md)."""
    wanted = tuple(p for p in _PHASES if p in set(phases))
    cat = catalog or load_catalog()
    if confidence is None:
        return plan_workload(workload, cat, phases=wanted)
    from functools import partial

    from gpuplan.planning.intervals import plan_at_confidence, with_intervals

    if not 0.5 <= confidence <= 0.99:
        raise ValueError("confidence must be between 0.5 and 0.99")
    result = plan_at_confidence(workload, cat, phases=wanted, level=confidence,
                                planner=partial(plan_workload, intervals=False))
    return with_intervals(result, workload, cat, confidence=confidence)
