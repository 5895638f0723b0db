"""The workload profile (TOML): loading, overrides and field lines; its schema is in
:mod:`gpuplan.model.profile_schema`, its resolution into a :class:`Workload` in :mod:`gpuplan.model.profile_resolve`.

The schema is the boundary: after :func:`load_workload` every value is typed, in range and
complete, and each default that was applied is listed in ``Workload.assumptions``.
Field reference with units and defaults: ``docs/profile.md``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuplan.core.documents import PROFILE, refuse_other
from gpuplan.core.errors import InputError
from gpuplan.core.io import parse_toml, pydantic_error, read_text
from gpuplan.model.demand import HOURS_PER_DAY, DemandSection, scaled_to_peak
from gpuplan.model.profile_resolve import (  # noqa: F401  (re-exported)
    DEFAULT_DEADLINE_DAYS, DEFAULT_SEQUENCE_LENGTH, DEFAULT_TPOT_MS, DEFAULT_TTFT_MS, MAX_DIMENSION, MAX_PARAMS,
    MAX_SLIDING_WINDOW, default_batch_tokens, resolve_profile,
)
from gpuplan.model.profile_schema import (  # noqa: F401  (re-exported)
    ConstraintsSection, KvPrecision, ModelSection, Profile, ServePrecision, ServingSection, TrainingSection,
    TrainPrecision, WorkloadCatalog,
)
from gpuplan.model.workload import (  # noqa: F401  (re-exported)
    Assumption, ClusterNetwork, Constraints, ServingSpec, TrainingSpec, Workload,
)


def field_lines(text: str) -> dict[str, int]:
    """Map ``table.key`` to the 1-based line where it is written (for SARIF/annotations)."""
    out: dict[str, int] = {}
    table = ""
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("[") and not line.startswith("[["):
            table = line.split("#")[0].strip().strip("[] ").strip()
            out.setdefault(table, no)
        elif "=" in line and not line.startswith("#"):
            key = line.split("=", 1)[0].strip().strip('"')
            out.setdefault(f"{table}.{key}" if table else key, no)
    return out


def default_profile_text() -> tuple[str, str]:
    """The built-in default profile (a copy of examples/default.toml) and the name it is reported under."""
    path = Path(__file__).with_name("default_profile.toml")
    return path.read_text(encoding="utf-8"), "<built-in default: default-llama-3.1-70b>"


def demand_scale(data: dict[str, Any], overrides: Mapping[str, Any]) -> float | None:
    """The factor an override of ``serving.qps`` scales the profile's ``[serving.demand]
    hourly_qps`` by (the new rate over the curve's peak), or None: no curve, no such override, the
    curve itself overridden, or values the schema is left to refuse."""
    qps = overrides.get("serving.qps")
    if any(k == "serving.demand" or k.startswith("serving.demand.hourly_qps") for k in overrides):
        return None
    serving = data.get("serving")
    demand = serving.get("demand") if isinstance(serving, dict) else None
    curve = demand.get("hourly_qps") if isinstance(demand, dict) else None
    if not (_rate(qps) and qps > 0 and isinstance(curve, list) and len(curve) == HOURS_PER_DAY
            and all(_rate(h) for h in curve) and max(curve) > 0):
        return None
    return qps / max(curve)


def _rate(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf")


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any], name: str) -> float | None:
    """Set dotted fields (``serving.qps``) of parsed profile ``data`` in place, before validation,
    so that an override is checked exactly as the same value written in the file; except that a
    new ``serving.qps`` scales a ``[serving.demand]`` curve to peak at it (a what-if on the rate
    keeps the day's shape). Returns that scale (:func:`demand_scale`)."""
    scale = demand_scale(data, overrides)
    for path, value in overrides.items():
        parts = path.split(".")
        table = data
        for i, part in enumerate(parts[:-1]):
            nxt = table.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise InputError("expected a table", file=name, field=".".join(parts[: i + 1]))
            table = nxt
        table[parts[-1]] = value
    if scale is not None:
        demand = data["serving"]["demand"]
        demand["hourly_qps"] = scaled_to_peak(demand["hourly_qps"], overrides["serving.qps"])
    return scale


def load_profile_text(text: str, name: str, catalog: WorkloadCatalog,
                      overrides: Mapping[str, Any] | None = None, *, allow_outside_paths: bool = False) -> Workload:
    """Parse, validate and resolve a profile given as text; ``overrides`` set dotted fields first
    (``allow_outside_paths``: docs/security.md)."""
    data = parse_toml(text, name)
    refuse_other(data, name, PROFILE, toml=True)  # a cluster file: not 'phase: unknown field'
    scale = None
    if overrides:
        scale = apply_overrides(data, overrides, name)
        text += "".join(f"\n# override {k} = {v!r}" for k, v in sorted(overrides.items()))
    known = {"": list(Profile.model_fields), "model": list(ModelSection.model_fields),
             "training": list(TrainingSection.model_fields), "serving": list(ServingSection.model_fields),
             "serving.demand": list(DemandSection.model_fields),
             "constraints": list(ConstraintsSection.model_fields)}
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error(exc, file=name, known_fields=known, unit_hints=True) from None
    digest = hashlib.sha256(text.encode()).hexdigest()
    workload = resolve_profile(profile, name, catalog, digest, allow_outside_paths=allow_outside_paths)
    if scale is not None and scale != 1:
        qps = overrides["serving.qps"]  # type: ignore[index]
        note = Assumption("serving.demand", f"hourly_qps x{scale:.4g}",
                          f"serving.qps set to {qps:g}: the daily curve (peak {qps / scale:.4g} requests/s) "
                          "scaled to peak there, its shape kept")
        object.__setattr__(workload, "assumptions", (*workload.assumptions, note))
    object.__setattr__(workload, "field_lines", field_lines(text))
    return workload


def load_workload(path: str | Path, catalog: WorkloadCatalog) -> Workload:
    return load_profile_text(read_text(path), str(path), catalog)
