"""``[serving.demand]``: the request rate over a day, and how it grows.

``hourly_qps`` holds 24 request rates (requests/s), hour 0 to hour 23 of the day. Its peak is the
load the fleet is sized for (``[serving] qps`` may then be left out); the curve drives the
autoscaling bounds and the fleet strategies (docs/fleet-model.md). Without the table, demand is
constant at ``qps`` and the plan's assumptions say so.
"""

from typing import Annotated

from pydantic import BaseModel, Field, field_validator

from gpuplan.core.types import STRICT

HOURS_PER_DAY = 24
#: One hour's rate: 0 (a closed service) up to the profile's largest ``qps``.
HourQps = Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False, strict=True)]


class DemandSection(BaseModel):
    """``[serving.demand]``: 24 hourly request rates, and an optional yearly growth."""

    model_config = STRICT
    hourly_qps: list[HourQps] = Field(min_length=HOURS_PER_DAY, max_length=HOURS_PER_DAY)
    #: Demand growth per year as a fraction (0.5 = +50 % a year); -0.9 to +10.
    growth_per_year: Annotated[float, Field(ge=-0.9, le=10, allow_inf_nan=False, strict=True)] = 0.0

    @field_validator("hourly_qps", mode="before")
    @classmethod
    def _numbers(cls, v: object) -> object:
        if isinstance(v, list) and any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v):
            raise ValueError("expected 24 numbers (requests/s for hours 0 to 23)")
        if isinstance(v, list) and len(v) != HOURS_PER_DAY:
            raise ValueError(f"expected 24 numbers (requests/s for hours 0 to 23), got {len(v)}")
        return v

    @field_validator("hourly_qps")
    @classmethod
    def _some_demand(cls, v: list[float]) -> list[float]:
        if max(v) <= 0:
            raise ValueError("expected a peak above 0 requests/s")
        return v

    @property
    def peak(self) -> float:
        return max(self.hourly_qps)


def scaled_to_peak(hourly_qps: list[float], qps: float) -> list[float]:
    """The day's curve scaled by ``qps / peak``, so that its peak is ``qps`` and its shape is kept:
    a what-if on the request rate ("demand 2x") moves every hour alike (docs/profile.md). The
    peak hours are ``qps`` exactly and no hour exceeds it, whatever the rounding."""
    peak = max(hourly_qps)
    return [qps if h == peak else min(qps, h * (qps / peak)) for h in hourly_qps]
