"""A sweep (``gpuplan sweep``) as a table, JSON, CSV or an HTML chart. Reads no files.

The HTML chart plots, against the first swept field, the cost (capex, or $/h under cloud pricing),
the GPU count and the latency (serving TTFT at the target percentile) or time to train, one panel
each, and marks with a dashed line every point where the recommended GPU changes.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from gpuplan.core.stable_json import stable, to_json
from gpuplan.planning.sweep import SweepPoint, SweepResult
from gpuplan.render.html import CSS, el, t

SWEEP_FORMATS = ("table", "json", "csv", "html")
_PHASES = ("training", "serving")
#: (label, attribute, phase or None for both) of the columns of the table and the CSV.
_COLUMNS = {
    "training": (("gpu", "gpu"), ("gpus", "gpus"), ("days", "wall_clock_days"), ("mfu", "mfu"),
                 ("capex_usd", "capex_usd"), ("usd_per_h", "cloud_usd_per_hour"), ("kw", "power_kw")),
    "serving": (("gpu", "gpu"), ("gpus", "gpus"), ("replicas", "replicas"), ("ttft_ms", "ttft_ms_at_percentile"),
                ("tpot_ms", "tpot_ms"), ("max_qps", "max_qps"), ("capex_usd", "capex_usd"),
                ("usd_per_h", "cloud_usd_per_hour"), ("kw", "power_kw")),
}


def _phases(result: SweepResult) -> list[str]:
    return [p for p in _PHASES if any(getattr(pt, p) is not None for pt in result.sweep)]


def _value(point: SweepPoint, phase: str, attr: str) -> Any:
    summary = getattr(point, phase)
    if summary is None:
        return None
    if not summary.feasible and attr not in ("gpu",):
        return None
    return getattr(summary, attr)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, list):
        return ",".join(_fmt(x) for x in v)
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def _rows(result: SweepResult) -> tuple[list[str], list[list[Any]]]:
    header = list(result.fields)
    phases = _phases(result)
    for phase in phases:  # one phase: bare labels, so the table stays narrow
        header += [f"{phase}.{label}" if len(phases) > 1 else label for label, _ in _COLUMNS[phase]]
    rows = []
    for pt in result.sweep:
        row: list[Any] = [pt.values[f] for f in result.fields]
        for phase in _phases(result):
            row += [_value(pt, phase, attr) for _, attr in _COLUMNS[phase]]
        rows.append(row)
    return header, rows


def render_table(result: SweepResult) -> str:
    header, rows = _rows(result)
    cells = [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    lines = [f"sweep of {result.workload}: {len(rows)} points over {', '.join(result.fields)}", ""]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(c.rjust(w) if c[:1].isdigit() or c == "-" else c.ljust(w)
                               for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines) + "\n"


def render_csv(result: SweepResult) -> str:
    header, rows = _rows(result)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else ",".join(map(str, v)) if isinstance(v, list) else stable(v)
                         for v in row])
    return buf.getvalue()


def render_json(result: SweepResult) -> str:
    return to_json(result)


def _cost(point: SweepPoint, phase: str) -> float | None:
    return _value(point, phase, "capex_usd") or _value(point, phase, "cloud_usd_per_hour")


_PANELS = (
    ("cost", _cost),
    ("GPUs", lambda pt, ph: _value(pt, ph, "gpus")),
    ("latency / time", lambda pt, ph: _value(pt, ph, "ttft_ms_at_percentile" if ph == "serving" else "wall_clock_days")),
)
_COLOURS = {"training": "#0969da", "serving": "#cf222e"}


def _panel(result: SweepResult, title: str, getter: Any, width: int = 760, height: int = 170) -> str:
    xs_raw = [pt.values[result.fields[0]] for pt in result.sweep]
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs_raw)
    n = len(xs_raw)
    left, right, top, bottom = 70, 20, 24, 34
    pw, ph = width - left - right, height - top - bottom

    def xpos(i: int) -> float:
        if numeric and n > 1 and max(xs_raw) > min(xs_raw):
            return left + pw * (xs_raw[i] - min(xs_raw)) / (max(xs_raw) - min(xs_raw))
        return left + (pw * i / (n - 1) if n > 1 else pw / 2)

    series = {phase: [getter(pt, phase) for pt in result.sweep] for phase in _phases(result)}
    values = [v for vs in series.values() for v in vs if v is not None]
    hi = max(values) if values else 1.0
    hi = hi if hi > 0 else 1.0

    def ypos(v: float) -> float:
        return top + ph * (1 - v / hi)

    parts = [el("text", {"x": left, "y": 15}, t(title)),
             el("line", {"x1": left, "y1": top + ph, "x2": left + pw, "y2": top + ph, "stroke": "#57606a"}),
             el("line", {"x1": left, "y1": top, "x2": left, "y2": top + ph, "stroke": "#57606a"}),
             el("text", {"x": 4, "y": top + 4}, t(_fmt(hi))), el("text", {"x": 4, "y": top + ph}, "0")]
    for i in {0, n - 1, n // 2}:
        parts.append(el("text", {"x": round(xpos(i), 1), "y": height - 18, "text-anchor": "middle"},
                        t(_fmt(xs_raw[i]))))
    parts.append(el("text", {"x": left + pw / 2, "y": height - 4, "text-anchor": "middle"}, t(result.fields[0])))
    for phase, vs in series.items():
        pts = [(xpos(i), ypos(v)) for i, v in enumerate(vs) if v is not None]
        if len(pts) > 1:
            parts.append(el("polyline", {"points": " ".join(f"{x:.1f},{y:.1f}" for x, y in pts), "fill": "none",
                                         "stroke": _COLOURS[phase], "stroke-width": 2}))
        parts += [el("circle", {"cx": f"{x:.1f}", "cy": f"{y:.1f}", "r": 2.5, "fill": _COLOURS[phase]}) for x, y in pts]
        gpus = [pt_gpu(pt, phase) for pt in result.sweep]
        for i in range(1, n):
            if gpus[i] != gpus[i - 1] and gpus[i] is not None:
                x = (xpos(i - 1) + xpos(i)) / 2
                parts.append(el("line", {"x1": f"{x:.1f}", "y1": top, "x2": f"{x:.1f}", "y2": top + ph,
                                         "stroke": _COLOURS[phase], "stroke-dasharray": "4 3"}))
                parts.append(el("text", {"x": f"{x + 3:.1f}", "y": top + 10 + 12 * _PHASES.index(phase)},
                                t(f"{phase}: {gpus[i]}")))
    return el("svg", {"width": width, "height": height, "viewBox": f"0 0 {width} {height}", "role": "img",
                      "aria-label": f"{title} against {result.fields[0]}"}, *parts)


def pt_gpu(point: SweepPoint, phase: str) -> str | None:
    summary = getattr(point, phase)
    return summary.gpu if summary is not None and summary.feasible else None


def render_html(result: SweepResult) -> str:
    header, rows = _rows(result)
    legend = ", ".join(f'<span style="color:{_COLOURS[p]}">{p}</span>' for p in _phases(result))
    table = el("table", None, el("tr", None, *(el("th", None, t(h)) for h in header)),
               *(el("tr", None, *(el("td", None, t(_fmt(v))) for v in row)) for row in rows))
    body = el("body", None, el("h1", None, t(f"gpuplan sweep: {result.workload}")),
              el("p", {"class": "meta"}, t(f"{len(rows)} points over {', '.join(result.fields)}; "),
                 legend, t("; dashed lines mark a change of the recommended GPU.")),
              *(_panel(result, title, getter) for title, getter in _PANELS), table)
    head = el("head", None, el("meta", {"charset": "utf-8"}), el("title", None, t(f"gpuplan sweep: {result.workload}")),
              el("style", None, t(CSS)))
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, body)


def render_sweep(result: SweepResult, fmt: str) -> str:
    return {"table": render_table, "json": render_json, "csv": render_csv, "html": render_html}[fmt](result)


__all__ = ["SWEEP_FORMATS", "render_sweep"]
