"""Numbers as the reports write them: compact figures, dollars, percentages (every text format)."""

from __future__ import annotations

from gpuplan.core.numbers import num  # noqa: F401 - the renderers read it from here too


def params_text(total: float, active: float) -> str:
    """A model's size as every header writes it: ``70.6B params``, a mixture of experts with its
    active share too (``140.6B params, 39.2B active``)."""
    return f"{total / 1e9:.1f}B params" + (f", {active / 1e9:.1f}B active" if active != total else "")


def recompute_text(recompute: str, layers: int, *, short: bool = False) -> str:
    """A training layout's recompute: ``full`` recomputes every layer of a stage unless ``layers``
    (``recompute_layers``, Megatron's --recompute-num-layers) names how many: ``full (1 layer per
    stage)``, ``short``: ``1 layer`` (a table column)."""
    if recompute != "full" or layers <= 0:
        return recompute
    count = f"{layers} layer{'s' if layers != 1 else ''}"
    return count if short else f"full ({count} per stage)"


def usd(value: float | None) -> str:
    """Dollars: ``$41.3M``, ``$12,500``, ``$3.20``; ``-`` when there is no price."""
    if value is None:
        return "-"
    sign = "-" if value < 0 else ""
    v = abs(value)
    if v >= 1e9:
        return f"{sign}${v / 1e9:,.2f}B"
    if v >= 1e6:
        return f"{sign}${v / 1e6:,.2f}M"
    if v >= 100:
        return f"{sign}${v:,.0f}"
    return f"{sign}${v:,.2f}"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def gib(value: float) -> str:
    """GiB to one decimal, as the planners' reasons write memory: '184.5', never '184'."""
    return f"{value:,.1f}"
