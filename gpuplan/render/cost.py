"""The short cost block every renderer shows: facility and cost of ownership (docs/bom.md)."""

from __future__ import annotations

from typing import Any

from gpuplan.core.contract import Bom, BomItem, Plan, Tco
from gpuplan.render.numbers import num, pct, usd

#: The ``tco`` keys of the JSON contract (docs/json.md), in reading order.
TCO_KEYS = ("horizon_years", "capex_usd", "opex_usd_per_year", "total_usd", "usd_per_gpu_hour", "cloud_total_usd",
            "breakeven_months")


def facility_line(bom: Bom | None) -> str:
    """Racks, their density and cooling, PUE and the site's draw."""
    if bom is None or bom.cooling is None:
        return "-"
    per = ""
    if bom.servers_per_rack:
        held = fullest_rack_servers(bom)
        per = (f"{bom.servers_per_rack} servers per rack, " if held == bom.servers_per_rack else
               f"the fullest holds {held} server{'' if held == 1 else 's'}, room for {bom.servers_per_rack}, ")
    racks = f"{bom.racks:,} rack{'' if bom.racks == 1 else 's'}"
    text = (f"{racks} ({per}{num(bom.rack_power_kw)} kW), {bom.cooling} cooling, PUE {num(bom.pue)}, "
            f"{num(bom.facility_power_kw)} kW at the site")
    if bom.estimated_capex_usd:
        text += f"; {usd(bom.estimated_capex_usd)} of capex priced by estimates"
    return text


def fullest_rack_servers(bom: Bom) -> int | None:
    """Servers in the fullest compute rack. A rack holds ``servers_per_rack``; a pool of fewer servers
    fills one rack with all of them, and ``rack_power_kw`` is that rack's draw (fabric/facility.py,
    ``rack_plan``: min(per rack, servers) x server kW), so the count is the rack's kW over a server's."""
    per = bom.servers_per_rack
    if not per or not bom.rack_power_kw:
        return per
    for item in bom.items:
        if item.category == "server" and item.tier is None and item.unit_power_w:
            held = bom.rack_power_kw * 1000 / item.unit_power_w
            if 1 <= round(held) <= per and abs(held - round(held)) < 1e-6 * held:
                return round(held)
    return per


def tco_line(tco: Tco | None) -> str:
    """Capex, opex per year, total over the horizon, per GPU-hour / run / million tokens, vs renting."""
    if tco is None:
        return "-"
    years = num(tco.horizon_years)
    text = (f"{years} y: capex {usd(tco.capex_usd)} + opex {usd(tco.opex_usd_per_year)}/y (energy "
            f"{usd(tco.energy_usd_per_year)}, support {usd(tco.support_usd_per_year)}"
            + (f", colocation {usd(tco.colocation_usd_per_year)}" if tco.colocation_usd_per_year else "")
            + f") = {usd(tco.total_usd)}; {usd(tco.usd_per_gpu_hour)}/GPU-hour at {pct(tco.utilization)} use")
    if tco.usd_per_training_run is not None:
        text += f", {usd(tco.usd_per_training_run)} per run"
    if tco.usd_per_million_tokens is not None:
        text += f", {usd(tco.usd_per_million_tokens)} per million output tokens (whole TCO)"
    if tco.cloud_total_usd is None:
        return text + "; no cloud rate to compare"
    month = tco.breakeven_months
    if month is None:
        even = "renting stays cheaper"
    elif month > tco.horizon_years * 12:  # past the horizon the total above compares against
        even = f"renting stays cheaper over {years} y (owning breaks even in month {month:,})"
    else:
        even = f"break-even in month {month}"
    return text + (f"; rented (reserved, -{pct(tco.cloud_reserved_discount)}) {usd(tco.cloud_total_usd)}, {even}")


def tco_object(tco: Tco | None) -> dict[str, Any] | None:
    """The contract's ``tco`` keys only (SARIF properties, tfvars)."""
    return None if tco is None else {k: getattr(tco, k) for k in TCO_KEYS}


def plan_tco_line(plan: Plan) -> str | None:
    t = plan.tco
    if t is None:
        return None
    cloud = f"; rented {usd(t.cloud_total_usd)}" if t.cloud_total_usd is not None else ""
    return (f"whole plan over {num(t.horizon_years)} y: capex {usd(t.capex_usd)} + opex {usd(t.opex_usd_per_year)}/y"
            f" = {usd(t.total_usd)}{cloud}")


__all__ = ["PRICED_INSIDE", "TCO_KEYS", "facility_line", "fullest_rack_servers", "line_total", "line_unit", "plan_tco_line", "tco_line",
           "tco_object"]


#: BOM tiers whose price is in another line, and how their price cells read.
PRICED_INSIDE = {"inside-server": "in server", "inside-rack": "in rack"}


def line_total(item: BomItem, unpriced: str = "unpriced") -> str:
    """A bill line's total: its price, "in server" / "in rack" for a part whose price is the
    server's or the rack-scale system's (an ``inside-server`` or ``inside-rack`` line), else
    ``unpriced``."""
    if item.tier in PRICED_INSIDE:
        return PRICED_INSIDE[item.tier]
    if item.total_price_usd is not None:
        return usd(item.total_price_usd)
    return unpriced


def line_unit(item: BomItem) -> str:
    """A bill line's unit price ("-" where it is in another line's), with "est." for estimates."""
    if item.tier in PRICED_INSIDE:
        return "-"
    return usd(item.unit_price_usd) + (" est." if item.estimate else "")
