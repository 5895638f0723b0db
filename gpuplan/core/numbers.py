"""Numbers as every sentence and report of gpuplan writes them (the planners' reasons and the
renderers alike): one place, so that a figure reads the same wherever it is printed."""

from __future__ import annotations


def num(value: float | None, digits: int = 3) -> str:
    """A compact human number: 3 significant digits, thousands separators for big values and
    scientific notation from 1e15 up (a FLOP count reads 3.14e+23, not 24 digits of float noise)."""
    if value is None:
        return "-"
    if abs(value) >= 1e15:
        return f"{value:.{digits}g}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
