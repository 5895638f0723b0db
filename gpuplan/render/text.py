"""Plain fixed-width text tables (no colour, no terminal probing: safe in CI logs and pipes)."""

from __future__ import annotations

from collections.abc import Sequence


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, right: set[int] | None = None) -> str:
    """Render rows under headers with aligned columns; numbers right-aligned by ``right`` index."""
    right = right or set()
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        parts = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)]
        return "  ".join(parts).rstrip()

    out = [line(cells[0]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells[1:]]
    return "\n".join(out) + "\n"


def num(value: float | None, digits: int = 3) -> str:
    """A compact human number: 3 significant digits, thousands separators for big values."""
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
