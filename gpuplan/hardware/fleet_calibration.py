"""The fleet model's constants, read from ``catalog/calibration/fleet.toml``.

Validated once per catalog (unknown keys are errors); the values and their sources are in the TOML
file and in docs/fleet-model.md.
"""


from __future__ import annotations

from typing import Annotated

from pydantic import Field

from gpuplan.core.types import NonNegative
from gpuplan.hardware.record import Record


class Autoscaling(Record):
    server_start_s: NonNegative
    default_min_replicas: Annotated[int, Field(ge=1, le=1000, strict=True)]


class FleetCost(Record):
    idle_power_fraction: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    reserved_discount: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]


class FleetCalibration(Record):
    autoscaling: Autoscaling
    cost: FleetCost


def fleet_calibration(catalog: object) -> FleetCalibration:
    """The fleet constants of ``catalog`` (``calibration/fleet.toml``, validated at load)."""
    found = catalog.table("fleet")  # type: ignore[attr-defined]
    assert isinstance(found, FleetCalibration)
    return found
