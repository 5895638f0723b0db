"""Result models of the whole bill: storage sizing and cost of ownership (docs/bom.md).

Part of the plan's JSON (``gpuplan.core.contract`` re-exports them) and of the profile (``TcoConstraints``): pure data, at the bottom layer.
"""


from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuplan.core.contract_base import _Out
from gpuplan.core.records import dataclass


@dataclass(frozen=True, kw_only=True)
class StorageSizing(_Out):
    """Shared storage of a phase (docs/bom.md, "Storage"): capacity and write bandwidth it needs."""

    role: Literal["training", "model-store"]
    dataset_tb: float
    checkpoint_tb: float
    checkpoints_kept: int
    usable_tb_needed: float
    #: Write bandwidth so that one checkpoint drains in checkpoint_write_fraction of the interval.
    write_gb_per_s_needed: float
    checkpoint_interval_min: float | None
    checkpoint_write_fraction: float
    part: str
    units: int
    usable_tb: float
    write_gb_per_s: float


@dataclass(frozen=True, kw_only=True)
class Tco(_Out):
    """Cost of ownership of a phase over ``horizon_years`` (docs/bom.md, "Cost of ownership")."""

    horizon_years: float
    capex_usd: float
    opex_usd_per_year: float
    energy_usd_per_year: float
    support_usd_per_year: float
    colocation_usd_per_year: float
    total_usd: float
    #: total_usd over the GPU-hours delivered in the horizon (installed GPUs x hours x utilization).
    usd_per_gpu_hour: float | None
    #: Training: usd_per_gpu_hour x the run's GPU-hours.
    usd_per_training_run: float | None = None
    #: Serving: total_usd over the output tokens carried in the horizon.
    usd_per_million_tokens: float | None = None
    utilization: float
    pue: float
    facility_power_kw: float
    #: The same GPUs rented for the horizon at the catalog's on-demand rate less the reserved discount.
    cloud_total_usd: float | None
    cloud_reserved_discount: float
    #: First month in which owning (capex + opex to date) costs no more than renting, which may lie
    #: past the horizon; None = never (the rent does not cover the owner's opex) or no cloud rate.
    breakeven_months: int | None


@dataclass(frozen=True, kw_only=True)
class PlanTco(_Out):
    """Both phases together."""

    horizon_years: float
    capex_usd: float
    opex_usd_per_year: float
    total_usd: float
    cloud_total_usd: float | None


def _num(**bounds: float) -> object:
    return Annotated[float, Field(allow_inf_nan=False, strict=True, **bounds)]  # type: ignore[call-overload]


Pue = _num(ge=1, le=3)
Years = _num(gt=0, le=20)
UsdPerKwh = _num(ge=0, le=10)
Share = _num(gt=0, le=1)
UsdPerKwMonth = _num(ge=0, le=1e5)
Discount = _num(ge=0, lt=1)
SupportShare = _num(ge=0, le=1)


class TcoConstraints(BaseModel):
    """The ``[constraints]`` keys of the cost of ownership (docs/bom.md); unset = the defaults of
    catalog/calibration/bom.toml (pue: by the cooling). Only a base: its validator is never built
    (the profile's ConstraintsSection, which builds its own, is what validates these keys)."""

    model_config = ConfigDict(defer_build=True)
    pue: Pue | None = None  # type: ignore[valid-type]
    horizon_years: Years | None = None  # type: ignore[valid-type]
    usd_per_kwh: UsdPerKwh | None = None  # type: ignore[valid-type]
    utilization: Share | None = None  # type: ignore[valid-type]
    colocation_usd_per_kw_month: UsdPerKwMonth | None = None  # type: ignore[valid-type]
    reserved_discount: Discount | None = None  # type: ignore[valid-type]
    support_fraction_per_year: SupportShare | None = None  # type: ignore[valid-type]


#: The [constraints] keys of the cost of ownership (gpuplan/fabric/tco.py).
TCO_FIELDS = tuple(TcoConstraints.model_fields)


__all__ = ["PlanTco", "StorageSizing", "TCO_FIELDS", "Tco", "TcoConstraints"]
