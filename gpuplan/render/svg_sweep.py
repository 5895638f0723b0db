"""The chart of a sweep (``gpuplan sweep --format html``): against the swept field, the recommended
GPU (SKU) as a band of coloured runs per phase, then the cost, the GPU count and the latency (serving
TTFT at the target percentile, training days) as panels per phase, each point in its GPU's colour;
a dashed line through the whole chart marks every point where the recommended SKU changes. One
cost basis per chart, labelled: capex where the points have it, else $/h (cloud pricing).

A single numeric field is a numeric axis (logarithmic when its values span a factor of 10 or more
and are all positive, as ``--log`` makes them); a grid of several fields is drawn point by point.
Inline SVG from render/svg.py, the same look as the report's pictures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from gpuplan.planning.sweep import SweepPoint, SweepResult
from gpuplan.render.svg import PALETTE, Labels, el, f, fit, heading, svg, text_width
from gpuplan.render.numbers import usd
from gpuplan.render.text import num

WIDTH, LEFT, RIGHT = 960, 110, 24
BAND_H, GAP = 22, 30
PHASE_COLOUR = {"training": "#0969da", "serving": "#cf222e"}
PHASES = ("training", "serving")


def phases_of(result: SweepResult) -> list[str]:
    return [p for p in PHASES if any(getattr(pt, p) is not None for pt in result.sweep)]


def value(point: SweepPoint, phase: str, attr: str) -> Any:
    """A phase's figure at a point; None where the phase is absent or infeasible (the GPU excepted)."""
    summary = getattr(point, phase)
    if summary is None or (not summary.feasible and attr != "gpu"):
        return None
    return getattr(summary, attr)


def gpu_at(point: SweepPoint, phase: str) -> str | None:
    summary = getattr(point, phase)
    return summary.gpu if summary is not None and summary.feasible else None


Panel = tuple[str, str, Callable[[SweepPoint, str], Any], Callable[[float], str]]


def _panels(result: SweepResult, phases: list[str]) -> list[Panel]:
    """(title, phase, figure, axis format) of each panel: cost, GPUs and latency per phase."""
    capex = any(value(pt, ph, "capex_usd") is not None for pt in result.sweep for ph in phases)
    attr = "capex_usd" if capex else "cloud_usd_per_hour"
    cost = "capex" if capex else "cloud cost per hour"
    out: list[Panel] = []
    for ph in phases:
        latency: Panel = (("serving: TTFT at the target percentile (ms)", ph,
                           lambda pt, p: value(pt, p, "ttft_ms_at_percentile"), num) if ph == "serving" else
                          ("training: time to train (days)", ph, lambda pt, p: value(pt, p, "wall_clock_days"), num))
        out += [(f"{ph}: {cost}", ph, lambda pt, p: value(pt, p, attr), usd),
                (f"{ph}: GPUs", ph, lambda pt, p: value(pt, p, "gpus"), lambda v: f"{v:,.0f}"), latency]
    return out


def _x_axis(result: SweepResult) -> tuple[list[float], list[str], bool]:
    """Positions in [0, 1] of the points, their tick texts, and whether the axis is logarithmic."""
    raw = [pt.values[result.fields[0]] for pt in result.sweep]
    n = len(raw)
    numeric = len(result.fields) == 1 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw)
    if numeric and n > 1 and max(raw) > min(raw):
        log = min(raw) > 0 and max(raw) / min(raw) >= 10
        lo, hi = (math.log10(min(raw)), math.log10(max(raw))) if log else (min(raw), max(raw))
        pos = [((math.log10(x) if log else x) - lo) / (hi - lo) for x in raw]
        return pos, [num(x) if isinstance(x, float) else f"{x:,}" for x in raw], log
    ticks = [", ".join(_word(pt.values[k]) for k in result.fields) for pt in result.sweep]
    return [i / (n - 1) if n > 1 else 0.5 for i in range(n)], ticks, False


def _word(v: Any) -> str:
    if isinstance(v, list):
        return "+".join(map(str, v))
    return num(v) if isinstance(v, float) else str(v)


def sweep_svg(result: SweepResult) -> str:
    phases = phases_of(result)
    pos, ticks, log = _x_axis(result)
    panels = _panels(result, phases)
    span = WIDTH - LEFT - RIGHT

    def px(i: int) -> float:
        return LEFT + pos[i] * span

    top = 34
    bands_y = {ph: top + k * (BAND_H + 6) for k, ph in enumerate(phases)}
    first_panel = top + len(phases) * (BAND_H + 6) + 20
    panel_h = 110 if len(panels) <= 3 else 80
    panel_y = [first_panel + k * (panel_h + GAP) for k in range(len(panels))]
    axis_y = panel_y[-1] + panel_h
    skus = list(dict.fromkeys(g for pt in result.sweep for ph in phases if (g := gpu_at(pt, ph))))
    colour = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(skus)}
    legend_lines = _legend_rows(skus)
    height = axis_y + 56 + 18 * len(legend_lines)
    labels = Labels(WIDTH, height)
    field = result.fields[0] if len(result.fields) == 1 else ", ".join(result.fields)
    parts = [heading(labels, f"{result.workload}: the recommended plan against {field}", 10, 18, WIDTH - 20)]
    n = len(result.sweep)
    edges = [LEFT] + [(px(i) + px(i + 1)) / 2 for i in range(n - 1)] + [LEFT + span]
    changes = []
    for ph in phases:  # the SKU band: one coloured run per recommended GPU
        y = bands_y[ph]
        gpus = [gpu_at(pt, ph) for pt in result.sweep]
        runs, start = [], 0
        for i in range(1, n + 1):
            if i == n or gpus[i] != gpus[start]:
                runs.append((start, i - 1, gpus[start]))
                start = i
        band = [labels.place(f"{ph} GPU", [(10, y + 15, "start")], required=True)]
        for a, b, g in runs:
            x0, x1 = edges[a], edges[b + 1]
            band.append(el("rect", {"x": f(x0), "y": f(y), "width": f(max(1.0, x1 - x0 - 1)), "height": BAND_H,
                                    "fill": colour[g] if g else "#eaeef2", "class": "sku", "data-gpu": g or "-",
                                    "data-phase": ph}))
            text = g or "infeasible"
            if text_width(text) <= x1 - x0 - 6:
                band.append(labels.place(text, [((x0 + x1) / 2, y + 15, "middle")],
                                         fill="#ffffff" if g else "#57606a"))
        for k in range(1, len(runs)):
            x = edges[runs[k][0]]
            changes.append(el("line", {"x1": f(x), "y1": f(y), "x2": f(x), "y2": f(axis_y), "stroke": PHASE_COLOUR[ph],
                                       "stroke-dasharray": "4 3", "class": "sku-change", "data-phase": ph,
                                       "data-from": runs[k - 1][2] or "-", "data-to": runs[k][2] or "-"}))
        parts.append(el("g", {"class": "sku-band", "data-phase": ph}, *band))
    for panel, y0 in zip(panels, panel_y):
        parts.append(_panel(result, panel, y0, panel_h, px, colour, labels))
    parts += changes
    parts.append(_x_ticks(ticks, px, axis_y, labels))
    parts.append(labels.place(f"{field}{' (log scale)' if log else ''}", [(LEFT + span / 2, axis_y + 34, "middle")],
                              required=True))
    for k, row in enumerate(legend_lines):
        x = LEFT
        for g in row:
            parts.append(el("rect", {"x": f(x), "y": f(axis_y + 46 + 18 * k), "width": 10, "height": 10,
                                     "fill": colour[g]}))
            parts.append(labels.place(g, [(x + 14, axis_y + 55 + 18 * k, "start")], required=True))
            x += 14 + text_width(g) + 18
    return svg("sweep", WIDTH, height, f"{result.workload} sweep over {field}", *parts, field=field,
               points=n, log=str(log).lower())


def _legend_rows(skus: list[str]) -> list[list[str]]:
    rows: list[list[str]] = [[]]
    room = WIDTH - LEFT - RIGHT
    used = 0.0
    for g in skus:
        w = 14 + text_width(g) + 18
        if rows[-1] and used + w > room:
            rows.append([])
            used = 0.0
        rows[-1].append(g)
        used += w
    return rows if skus else []


def _panel(result: SweepResult, panel: Panel, y0: float, h: float, px: Callable[[int], float],
           colour: dict[str, str], labels: Labels) -> str:
    """One figure of one phase against the field: a line, a dot per point in its GPU's colour."""
    title, ph, getter, fmt = panel
    values = [getter(pt, ph) for pt in result.sweep]
    hi = max((v for v in values if v is not None), default=1.0) or 1.0
    x1 = WIDTH - RIGHT

    def py(v: float) -> float:
        return y0 + h * (1 - v / (hi * 1.08))

    parts = [el("line", {"x1": LEFT, "y1": f(y0 + h), "x2": x1, "y2": f(y0 + h), "stroke": "#57606a"}),
             el("line", {"x1": LEFT, "y1": f(y0), "x2": LEFT, "y2": f(y0 + h), "stroke": "#57606a"}),
             labels.place(fit(title, x1 - LEFT - 10, bold=True), [(LEFT, y0 - 6, "start")], required=True,
                          **{"font-weight": "bold"})]
    for frac in (0.5, 1.0):
        parts.append(el("line", {"x1": LEFT, "y1": f(py(hi * frac)), "x2": x1, "y2": f(py(hi * frac)),
                                 "stroke": "#eaeef2"}))
        parts.append(labels.place(fmt(hi * frac), [(LEFT - 6, py(hi * frac) + 4, "end")]))
    parts.append(labels.place("0", [(LEFT - 6, y0 + h + 4, "end")]))
    pts = [(px(i), py(v), gpu_at(pt, ph)) for i, (pt, v) in enumerate(zip(result.sweep, values)) if v is not None]
    if len(pts) > 1:
        parts.append(el("polyline", {"points": " ".join(f"{f(x)},{f(y)}" for x, y, _ in pts), "fill": "none",
                                     "stroke": "#57606a", "stroke-width": 1.5}))
    parts += [el("circle", {"cx": f(x), "cy": f(y), "r": 4, "fill": colour.get(g or "", "#57606a"),
                            "stroke": "#ffffff"}) for x, y, g in pts]
    return el("g", {"class": "panel", "data-title": title, "data-phase": ph}, *parts)


def _x_ticks(ticks: list[str], px: Callable[[int], float], y: float, labels: Labels) -> str:
    """Tick texts under the last panel: the first, the last, then the others where they fit.

    The first and last ticks sit under the panels' corners, where the y axis's "0" is: each may
    also start at (or end on) its tick, away from that label."""
    last = len(ticks) - 1
    order = [0, last] + list(range(1, last))
    out = [el("line", {"x1": f(px(i)), "y1": f(y), "x2": f(px(i)), "y2": f(y + 4), "stroke": "#57606a"})
           for i in range(len(ticks))]
    for i in dict.fromkeys(order):
        spots = [(px(i), y + 16, "middle")]
        if i == 0:
            spots.append((px(i) - 2, y + 16, "start"))
        elif i == last:
            spots.append((px(i) + 2, y + 16, "end"))
        out.append(labels.place(fit(ticks[i], 160), spots))
    return el("g", {"class": "x-ticks"}, *out)
