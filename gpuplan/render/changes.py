"""The cells of a ``gpuplan diff`` table, shared by the table and Markdown renderers so that both
write a change the same way: MFU as a percentage and its change in points, and the GPUs of a
server (an ``inside-server`` BOM line) as ``in server``, as the plan's own bill of materials does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplan.render.cost import PRICED_INSIDE
from gpuplan.render.numbers import pct
from gpuplan.render.text import change_value, signed, usd

if TYPE_CHECKING:
    from gpuplan.ci.diff import BomChange

#: Diffed fields that are fractions (0.468), written as percentages (46.8%) as every report does.
FRACTIONS = frozenset({"mfu"})


def change_cell(field: str, value: object) -> str:
    """A base or new value of a diffed field."""
    if field in FRACTIONS and isinstance(value, float):
        return pct(value)
    return change_value(field, value)


def change_delta(field: str, change: float | None, ratio: float | None) -> str:
    """'+$37.89M (+523.2%)'; a fraction's change in percentage points: '+4.2 pts (+9.8%)'."""
    if change is None:
        return "changed"
    size = f"{abs(change) * 100:.1f} pts" if field in FRACTIONS else change_value(field, abs(change))
    return signed(change, size) + (f" ({signed(ratio, f'{abs(ratio) * 100:.1f}%')})" if ratio is not None else "")


def bom_change_usd(b: BomChange) -> str:
    """A BOM line's change in dollars; 'in server' for GPUs priced in their server, else 'unpriced'."""
    if b.tier in PRICED_INSIDE:
        return PRICED_INSIDE[b.tier]
    if b.delta_usd is not None:
        return signed(b.delta_usd, usd(abs(b.delta_usd)))
    return "unpriced"
