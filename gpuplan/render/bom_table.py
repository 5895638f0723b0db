"""The bill of materials section of the human report (render/table.py): its totals, and with ``-v``
every line, its source where the width leaves room for it."""

from __future__ import annotations

from typing import Any

from gpuplan.core.contract import Bom
from gpuplan.render.cost import line_total, line_unit
from gpuplan.render.sections import shows
from gpuplan.render.text import num, usd

#: The narrowest source column shown: fewer columns cut every source to its first letters.
MIN_SOURCE_WIDTH = 24
#: What the table leaves between two columns (one space of padding on each side).
COLUMN_GAP = 2

HEADERS = ["category", "tier", "part", "qty", "unit $", "total $", "total kW"]


def _width(cells: list[str]) -> int:
    return max(len(line) for cell in cells for line in cell.split("\n"))


def room_for_sources(rows: list[list[str]], width: int) -> bool:
    """Whether a report ``width`` columns wide leaves at least MIN_SOURCE_WIDTH for the source
    column beside the other columns of ``rows`` (each as wide as its longest line or header)."""
    used = sum(_width([h] + [row[i] for row in rows]) + COLUMN_GAP for i, h in enumerate(HEADERS))
    return width - used >= MIN_SOURCE_WIDTH


def bom_section(r: Any, bom: Bom | None) -> None:
    """The BOM of a phase on report ``r`` (render/table.py's _Report)."""
    if bom is None or not shows(r.options, "bom"):
        return
    r.line()
    r.heading("Bill of materials")
    rack = f", fullest rack {num(bom.rack_power_kw)} kW" if bom.rack_power_kw is not None else ""
    r.facts([("capex", f"{usd(bom.capex_usd)} (network {usd(bom.network_capex_usd)})"),
             ("power", f"{num(bom.power_kw)} kW (network {num(bom.network_power_kw)} kW)"),
             ("racks", f"{bom.racks}{rack}")]
            + ([("by part", ", ".join(f"{k} {usd(v)}" for k, v in bom.capex_by_category_usd.items())
                 + (f"; {usd(bom.estimated_capex_usd)} by estimates" if bom.estimated_capex_usd else ""))]
               if bom.capex_by_category_usd else [])
            + ([("unpriced", ", ".join(bom.unpriced_parts) + " (not in capex)")] if bom.unpriced_parts else [])
            + ([("no power", ", ".join(bom.unpowered_parts) + " (not in power)")] if bom.unpowered_parts else []))
    if not r.options.verbose:
        r.line(f"{len(bom.items)} lines; -v lists them")
        return
    r.line()
    rows = [[i.category, (i.tier or "").replace(":", ":\n"), i.part_id, f"{i.quantity:,}", line_unit(i), line_total(i),
             num(None if i.total_power_w is None else i.total_power_w / 1000)] for i in bom.items]
    if room_for_sources(rows, r.options.width):
        r.table(HEADERS + ["source"], [row + [i.source or "-"] for row, i in zip(rows, bom.items)],
                right={3, 4, 5, 6}, no_wrap={1, 2, 3, 4, 5, 6}, fold={7})
    else:
        r.table(HEADERS, rows, right={3, 4, 5, 6}, no_wrap={1, 2, 3, 4, 5, 6})
        r.line(f"sources: too narrow for them at {r.options.width} columns; --format markdown, html or json lists "
               f"each line's source (or set COLUMNS wider)")
