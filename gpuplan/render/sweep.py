"""A sweep (``gpuplan sweep``) as a table, JSON, CSV or an HTML chart. Reads no files.

The HTML page is the report's style: the chart of render/svg_sweep.py (the recommended GPU per
phase as a band, then cost, GPU count and days or TTFT against the swept field, a dashed line where the
recommended GPU changes) above the table.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from gpuplan.core.stable_json import stable, to_json
from gpuplan.planning.sweep import SweepResult
from gpuplan.render.html import CSS, el, html_table, t
from gpuplan.render.svg_sweep import phases_of, sweep_svg, value
from gpuplan.render.text import plural

SWEEP_FORMATS = ("table", "json", "csv", "html")
#: (label, attribute) of the columns of the table and the CSV. The cost columns are the JSON's
#: names: 'usd_per_h' beside 'capex_usd' read as the fleet's own hourly cost; it is the cloud rate.
_COLUMNS = {
    "training": (("gpu", "gpu"), ("gpus", "gpus"), ("days", "wall_clock_days"), ("mfu", "mfu"),
                 ("capex_usd", "capex_usd"), ("cloud_usd_per_hour", "cloud_usd_per_hour"), ("power_kw", "power_kw")),
    "serving": (("gpu", "gpu"), ("gpus", "gpus"), ("replicas", "replicas"), ("ttft_ms_at_percentile", "ttft_ms_at_percentile"),
                ("tpot_ms", "tpot_ms"), ("max_qps", "max_qps"), ("capex_usd", "capex_usd"),
                ("cloud_usd_per_hour", "cloud_usd_per_hour"), ("power_kw", "power_kw")),
}


#: Said above the table when a swept ``serving.qps`` scaled the profile's daily demand curve.
_SCALE_NOTE = ("demand_scale: the profile's daily demand curve is scaled to peak at each point's serving.qps "
               "(x2: every hour doubled), as a full plan's autoscaling and $/token then read it.")


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, list):
        return ",".join(_fmt(x) for x in v)
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def _scaled(result: SweepResult) -> bool:
    """Whether a swept ``serving.qps`` scaled the profile's daily demand curve (a column says by how much)."""
    return any(pt.demand_scale is not None for pt in result.sweep)


def _rows(result: SweepResult) -> tuple[list[str], list[list[Any]]]:
    scaled = _scaled(result)
    header = list(result.fields) + (["demand_scale"] if scaled else [])
    phases = phases_of(result)
    for phase in phases:  # one phase: bare labels, so the table stays narrow
        header += [f"{phase}.{label}" if len(phases) > 1 else label for label, _ in _COLUMNS[phase]]
    rows = []
    for pt in result.sweep:
        row: list[Any] = [pt.values[f] for f in result.fields] + ([pt.demand_scale] if scaled else [])
        for phase in phases_of(result):
            row += [value(pt, phase, attr) for _, attr in _COLUMNS[phase]]
        rows.append(row)
    return header, rows


def render_table(result: SweepResult) -> str:
    header, rows = _rows(result)
    cells = [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    lines = [f"sweep of {result.workload}: {plural(len(rows), 'point')} over {', '.join(result.fields)}", ""]
    if _scaled(result):
        lines[-1:] = [_SCALE_NOTE, ""]
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


def render_html(result: SweepResult) -> str:
    """The report's page (render/html.py's style): a title, the chart (render/svg_sweep.py), the table."""
    header, rows = _rows(result)
    numeric = {i for i, h in enumerate(header) if not h.endswith("gpu") and i >= len(result.fields)}
    note = f" {_SCALE_NOTE}" if _scaled(result) else ""
    title = f"gpuplan sweep: {result.workload}"
    head = el("head", None, el("meta", {"charset": "utf-8"}),
              el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
              el("title", None, t(title)), el("style", None, t(CSS)))
    body = el("body", None, el("h1", None, t(title)),
              el("p", {"class": "meta"}, t(f"{plural(len(rows), 'point')} over {', '.join(result.fields)}; per point the "
                                           f"recommended GPU, its cost, GPU count and {_time_words(result)}; a dashed "
                                           f"line marks a change of the recommended GPU.{note}")),
              sweep_svg(result),
              html_table(header, [[_fmt(v) for v in row] for row in rows], right=numeric))
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, body) + "\n"


def _time_words(result: SweepResult) -> str:
    """What the last panel plots: training days, serving TTFT at the target percentile."""
    words = {"training": "days to train", "serving": "TTFT at the target percentile"}
    return " or ".join(words[p] for p in phases_of(result)) or "latency"


def render_sweep(result: SweepResult, fmt: str) -> str:
    return {"table": render_table, "json": render_json, "csv": render_csv, "html": render_html}[fmt](result)


__all__ = ["SWEEP_FORMATS", "render_sweep"]
