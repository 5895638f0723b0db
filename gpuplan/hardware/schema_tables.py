"""The pydantic schemas of the calibration tables: ``calibration/serving.toml``, ``training.toml``
(with its frameworks), ``fleet.toml`` and ``residuals.toml``.

Each schema derives from its record (hardware/serving_calibration.py, training_calibration.py,
training_frameworks.py, fleet_calibration.py, intervals.py), whose annotations and defaults are its
fields: here only the configuration and the validators (a nested record's schema is its own, through
:meth:`Record.__get_pydantic_core_schema__`). Imported only where TOML is validated
(hardware/schemas.py).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from gpuplan.hardware import fleet_calibration as fleet
from gpuplan.hardware import intervals
from gpuplan.hardware import serving_calibration as serving
from gpuplan.hardware import training_calibration as training
from gpuplan.hardware.serving_calibration import ENGINE_NAMES
from gpuplan.hardware.training_frameworks import FRAMEWORKS, Framework as FrameworkRecord

#: Unknown keys are errors; built on first use.
_STRICT = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# -- calibration/serving.toml ---------------------------------------------------------------------

class ScaleBits(BaseModel, serving.ScaleBits):
    model_config = _STRICT


class WeightOnly(BaseModel, serving.WeightOnly):
    model_config = _STRICT


class Engine(BaseModel, serving.Engine):
    model_config = _STRICT


class Moe(BaseModel, serving.Moe):
    model_config = _STRICT


class AllReduceFit(BaseModel, serving.AllReduceFit):
    model_config = _STRICT


class AllReduce(BaseModel, serving.AllReduce):
    model_config = _STRICT


class Queueing(BaseModel, serving.Queueing):
    model_config = _STRICT


class Frontend(BaseModel, serving.Frontend):
    model_config = _STRICT


class EngineRelease(BaseModel, serving.EngineRelease):
    model_config = _STRICT


class Engines(BaseModel, serving.Engines):
    model_config = _STRICT

    @model_validator(mode="after")
    def _every_engine(self) -> Engines:
        missing = [e for e in ENGINE_NAMES if not any(r.engine == e for r in self.release)]
        if missing:
            raise ValueError(f"no release for engine(s) {', '.join(missing)}")
        return self


class ServingConstants(BaseModel, serving.ServingConstants):
    model_config = _STRICT


# -- calibration/training.toml --------------------------------------------------------------------

class Framework(BaseModel, FrameworkRecord):
    model_config = _STRICT


class TrainingCalibration(BaseModel, training.TrainingCalibration):
    model_config = _STRICT

    @field_validator("gemm_size_curve", "collective_size_curve")
    @classmethod
    def _curve(cls, v: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
        if len(v) < 2:
            raise ValueError("needs at least two [size, fraction] points")
        pts = sorted(v)
        if any(g <= 0 or not (0 < f <= 1) for g, f in pts):
            raise ValueError("points must be [size > 0, 0 < fraction <= 1]")
        return tuple(pts)

    @field_validator("frameworks")
    @classmethod
    def _frameworks(cls, v: dict[str, FrameworkRecord]) -> dict[str, FrameworkRecord]:
        missing = set(FRAMEWORKS) - set(v)
        unknown = set(v) - set(FRAMEWORKS)
        if missing or unknown:
            raise ValueError(f"needs exactly {', '.join(FRAMEWORKS)}"
                             + (f" (missing {', '.join(sorted(missing))})" if missing else "")
                             + (f" (unknown {', '.join(sorted(unknown))})" if unknown else ""))
        return v

    @field_validator("default_framework")
    @classmethod
    def _default(cls, v: str) -> str:
        if v not in FRAMEWORKS:
            raise ValueError(f"must be one of {', '.join(FRAMEWORKS)}")
        return v


# -- calibration/fleet.toml -----------------------------------------------------------------------

class Autoscaling(BaseModel, fleet.Autoscaling):
    model_config = _STRICT


class FleetCost(BaseModel, fleet.FleetCost):
    model_config = _STRICT


class FleetCalibration(BaseModel, fleet.FleetCalibration):
    model_config = _STRICT


# -- calibration/residuals.toml -------------------------------------------------------------------

class Regime(BaseModel, intervals.Regime):
    model_config = _STRICT


class ResidualTable(BaseModel, intervals.ResidualTable):
    model_config = _STRICT
