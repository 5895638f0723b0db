"""The fleet model's constants, read from ``catalog/calibration/fleet.toml``.

Validated once per catalog (unknown keys are errors); the values and their sources are in the TOML
file and in docs/fleet-model.md.
"""


from pydantic import BaseModel, ConfigDict, Field

from gpuplan.core.types import NonNegative

_STRICT = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class Autoscaling(BaseModel):
    model_config = _STRICT
    server_start_s: NonNegative
    default_min_replicas: int = Field(ge=1, le=1000, strict=True)


class FleetCost(BaseModel):
    model_config = _STRICT
    idle_power_fraction: float = Field(ge=0, le=1, allow_inf_nan=False)
    reserved_discount: float = Field(ge=0, lt=1, allow_inf_nan=False)


class FleetCalibration(BaseModel):
    model_config = _STRICT
    autoscaling: Autoscaling
    cost: FleetCost


def fleet_calibration(catalog: object) -> FleetCalibration:
    """The fleet constants of ``catalog`` (``calibration/fleet.toml``, validated at load)."""
    found = catalog.table("fleet")  # type: ignore[attr-defined]
    assert isinstance(found, FleetCalibration)
    return found
