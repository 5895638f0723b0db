"""Cost of ownership of a phase and of the whole plan (docs/bom.md, "Cost of ownership").

Over ``horizon_years`` (H), with the settings of ``[constraints]`` or the defaults of
``catalog/calibration/bom.toml``:

* capex = the BOM's capex;
* energy per year = facility kW (IT kW x PUE) x 8,766 h x ``usd_per_kwh`` x ``utilization``; a
  serving fleet with a daily demand curve (:class:`Load`) draws power every hour, less what its
  parked replicas do not draw (the autoscaler's hourly replicas, docs/fleet-model.md);
* support and maintenance per year = capex x ``support_fraction_per_year``;
* colocation per year = IT kW x ``colocation_usd_per_kw_month`` x 12, only when given (an owned
  hall's building cost is outside the plan);
* total = capex + H x opex per year;
* per GPU-hour = total / (installed GPUs x 8,766 h x H x utilization): the hours that do work;
  per training run = that x the run's GPU-hours; per million tokens = total / the output tokens
  the fleet carries at its planned load over the same hours (with a demand curve, ``utilization``
  is the curve's mean over the planned rate: the tokens the curve carries);
* the same GPUs rented: the catalog's on-demand $/GPU-hour x (1 - ``reserved_discount``) x the
  GPUs a cloud bills x 8,766 h x H (a reservation is paid whether used or not);
* break-even: the first month m where capex + m x opex/12 <= m x the monthly rent.
"""

from __future__ import annotations

import math

from gpuplan.core.memo import memo
from gpuplan.core.records import dataclass
from gpuplan.fabric.facility import default_pue, rack_plan
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.core.cost_contract import PlanTco, Tco
from gpuplan.core.contract import Bom
from gpuplan.core.units import HOURS_PER_YEAR



def settings(given: tuple[tuple[str, float], ...], catalog: Catalog) -> dict[str, float]:
    """The cost-of-ownership settings: the profile's, else the catalog defaults (pue stays None:
    it defaults by the cooling)."""
    cal = catalog.table("bom")
    out: dict[str, float] = {"horizon_years": cal.horizon_years, "usd_per_kwh": cal.usd_per_kwh,
                             "utilization": cal.utilization, "colocation_usd_per_kw_month": 0.0,
                             "reserved_discount": cal.reserved_discount,
                             "support_fraction_per_year": cal.support_fraction_per_year}
    out.update(dict(given))
    return out


@dataclass(frozen=True)
class CostBasis:
    """The plan's own cost-of-ownership figures, as they price an hour of a fleet outside the TCO
    (serving's $ per million tokens, the autoscaler's saving, the fleet strategies' year): the
    same horizon, $/kWh, utilization and PUE as :func:`phase_tco`, so one plan has one basis."""

    years: float
    usd_per_kwh: float
    utilization: float
    #: ``[constraints] pue``; None: the default of the cooling the fleet's racks need.
    given_pue: float | None
    catalog: Catalog

    def pue(self, gpu: Gpu, nodes: int) -> float:
        """Facility over IT power of ``nodes`` servers of ``gpu``: the profile's, else by the cooling
        of their racks (the BOM's rule, gpuplan/fabric/bom.py; memoised in :data:`_PUES`)."""
        if self.given_pue is not None:
            return self.given_pue
        key = (id(self), id(gpu), nodes)
        hit = _PUES.get(key)
        if hit is None:
            if len(_PUES) >= 4096:
                _PUES.clear()
            hit = _PUES[key] = (self, gpu, default_pue(rack_plan(gpu, max(1, nodes), self.catalog).cooling,
                                                        self.catalog))
        return hit[2]

    def phase_pue(self, bom: Bom | None, gpu: Gpu, nodes: int) -> float:
        """A phase's PUE: that of its bill of materials, else :meth:`pue` of its ``nodes`` servers."""
        return bom.pue if bom is not None and bom.pue is not None else self.pue(gpu, nodes)

    def owned_usd_per_hour(self, capex_usd: float, power_kw: float, pue: float) -> float:
        """An owned fleet's cost per hour it carries its load: capex over the horizon's loaded hours
        (``years x 8,766 h x utilization``, the hours the TCO's per-GPU-hour and per-token figures
        count) plus the energy of an hour at full power (``power x PUE x $/kWh``; the TCO's energy
        is that over the same loaded hours)."""
        return capex_usd / (self.years * HOURS_PER_YEAR * self.utilization) + power_kw * pue * self.usd_per_kwh


#: :meth:`CostBasis.pue` by (basis, GPU, servers): a plan prices hundreds of fleets of a few server
#: counts per GPU. The basis (its catalog within) and the GPU are keyed by identity and held in the
#: entry, so their ids are not reused while it lives. Bounded: cleared when full.
_PUES: dict[tuple[int, int, int], tuple[CostBasis, Gpu, float]] = memo()


@dataclass(frozen=True)
class Load:
    """How a fleet's hours are loaded over the horizon: what the TCO and serving's $ per million
    tokens count as work and as energy (docs/bom.md, "Cost of ownership").

    Without a demand curve (or with ``[constraints] utilization`` given) the fleet carries its
    planned load in ``utilization`` of the hours and draws nothing in the others: ``utilization =
    powered``, ``saved_kw = 0``. With a daily curve it serves every hour (``powered = 1``) and
    carries the curve's mean: ``utilization = mean(hourly_qps) / planned qps``; the replicas the
    autoscaler parks draw ``idle_power_fraction`` of their power, so ``saved_kw`` = their mean IT kW
    x ``(1 - idle_power_fraction)``."""

    #: Share of the planned load carried on average: tokens and GPU-hours count at that share.
    utilization: float
    #: Share of the hours the fleet draws power.
    powered: float
    #: IT kW the parked replicas do not draw, averaged over the powered hours.
    saved_kw: float = 0.0
    #: Where ``utilization`` comes from, in words (None: the basis's).
    note: str | None = None

    def tokens_per_year(self, output_tokens_per_s: float) -> float:
        """Output tokens a year at this load: planned tokens/s x 3,600 x 8,766 h x ``utilization``."""
        return output_tokens_per_s * 3600.0 * HOURS_PER_YEAR * self.utilization

    def energy_usd_per_year(self, it_kw: float, pue: float, usd_per_kwh: float) -> float:
        """``(it_kw x powered - saved_kw) x PUE x $/kWh x 8,766 h``."""
        full = it_kw * pue * HOURS_PER_YEAR * usd_per_kwh * self.powered
        return full - self.saved_kw * pue * HOURS_PER_YEAR * usd_per_kwh if self.saved_kw else full


def servers_usd_per_million_tokens(capex_usd: float, power_kw: float, pue: float, output_tokens_per_s: float,
                                   basis: CostBasis, load: Load) -> float | None:
    """Serving's own $ per million output tokens, "(servers + energy)", on the TCO's basis: the
    servers' capex over the horizon plus their energy in a year, over the output tokens of a year
    (planned tokens/s x 3,600 x 8,766 h x ``load.utilization``). With the basis's load it is
    :meth:`CostBasis.owned_usd_per_hour` over an hour of planned output."""
    tokens = load.tokens_per_year(output_tokens_per_s)
    if tokens <= 0:
        return None
    per_year = capex_usd / basis.years + load.energy_usd_per_year(power_kw, pue, basis.usd_per_kwh)
    return per_year / tokens * 1e6


#: One basis per (given settings, catalog): the fleet memos key on its identity.
_BASES: dict[tuple[object, ...], CostBasis] = memo()


def cost_basis(given: tuple[tuple[str, float], ...], catalog: Catalog) -> CostBasis:
    """The :class:`CostBasis` of a profile's ``[constraints]`` cost keys (``Workload.constraints.tco``)."""
    key = (given, id(catalog))
    hit = _BASES.get(key)
    if hit is None or hit.catalog is not catalog:
        s = settings(given, catalog)
        pue = s.get("pue")
        hit = _BASES[key] = CostBasis(years=s["horizon_years"], usd_per_kwh=s["usd_per_kwh"],
                                      utilization=s["utilization"], given_pue=None if pue is None else float(pue),
                                      catalog=catalog)
        if len(_BASES) > 64:
            _BASES.clear()
            _BASES[key] = hit
    return hit


def phase_tco(bom: Bom, gpu: Gpu, gpus: int, given: tuple[tuple[str, float], ...], catalog: Catalog, *,
              run_gpu_hours: float | None = None, output_tokens_per_s: float | None = None,
              load: Load | None = None) -> Tco:
    """The phase's cost of ownership; ``load``: how its hours are loaded (a serving fleet's demand
    curve), else ``utilization`` of them at the planned load."""
    s = settings(given, catalog)
    years = s["horizon_years"]
    load = load or Load(utilization=s["utilization"], powered=s["utilization"])
    util = load.utilization
    pue = float(bom.pue) if bom.pue is not None else float(s.get("pue", 1.0))
    facility_kw = bom.power_kw * pue
    energy = load.energy_usd_per_year(bom.power_kw, pue, s["usd_per_kwh"])
    support = bom.capex_usd * s["support_fraction_per_year"]
    colo = bom.power_kw * s["colocation_usd_per_kw_month"] * 12
    opex = energy + support + colo
    total = bom.capex_usd + years * opex
    installed = sum(i.quantity for i in bom.items if i.tier == "inside-server") or gpus  # every pool's servers
    work_hours = installed * HOURS_PER_YEAR * years * util
    per_gpu_hour = total / work_hours if work_hours > 0 else None
    per_run = per_gpu_hour * run_gpu_hours if per_gpu_hour is not None and run_gpu_hours else None
    per_mtok = None
    if output_tokens_per_s:
        tokens = output_tokens_per_s * 3600 * HOURS_PER_YEAR * years * util
        per_mtok = total / (tokens / 1e6) if tokens > 0 else None
    discount = s["reserved_discount"]
    cloud_total = breakeven = None
    if gpu.cloud_usd_per_gpu_hour:
        monthly_rent = gpu.billed_gpus(gpus) * gpu.cloud_usd_per_gpu_hour * (1 - discount) * HOURS_PER_YEAR / 12
        cloud_total = monthly_rent * 12 * years
        margin = monthly_rent - opex / 12
        if margin > 0:
            breakeven = max(1, math.ceil(bom.capex_usd / margin - 1e-9))
    return Tco(horizon_years=years, capex_usd=bom.capex_usd, opex_usd_per_year=opex, energy_usd_per_year=energy,
               support_usd_per_year=support, colocation_usd_per_year=colo, total_usd=total,
               usd_per_gpu_hour=per_gpu_hour, usd_per_training_run=per_run, usd_per_million_tokens=per_mtok,
               utilization=util, pue=pue, facility_power_kw=facility_kw, cloud_total_usd=cloud_total,
               cloud_reserved_discount=discount, breakeven_months=breakeven)


def plan_tco(*phases: Tco | None) -> PlanTco | None:
    """Both phases summed (the cloud total only when every phase has one)."""
    found = [t for t in phases if t is not None]
    if not found:
        return None
    clouds = [t.cloud_total_usd for t in found]
    return PlanTco(horizon_years=found[0].horizon_years, capex_usd=sum(t.capex_usd for t in found),
                   opex_usd_per_year=sum(t.opex_usd_per_year for t in found), total_usd=sum(t.total_usd for t in found),
                   cloud_total_usd=None if any(c is None for c in clouds) else sum(c or 0.0 for c in clouds))


__all__ = ["HOURS_PER_YEAR", "CostBasis", "Load", "cost_basis", "phase_tco", "plan_tco",
           "servers_usd_per_million_tokens", "settings"]
