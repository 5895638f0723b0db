"""A self-contained HTML report: the facts per phase, the roofline chart and the topology as inline
SVG. No scripts, no external stylesheets or fonts, no network. The markup is well-formed XML as well
as HTML, so tests (and tools) can parse it with any XML parser.

The charts place plan figures; the only arithmetic is geometry (log axes, the roof
``min(peak, bandwidth x intensity)`` through the plan's own peak and bandwidth).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape

from gpuplan.core.contract import (
    Bom,
    Plan,
    Roofline,
    ServingPlan,
    Topology,
    TrainingPlan,
    TrainingRoofline,
)
from gpuplan.render import RenderOptions
from gpuplan.render.cost import plan_tco_line
from gpuplan.render.text import (
    bom_summary,
    headline,
    num,
    roofline_rows,
    serving_facts,
    serving_option_cost,
    training_facts,
    usd,
)

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1100px;color:#1b1f24;
padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.25rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2rem}
h3{font-size:1.05rem}table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right}.meta{color:#57606a}
.error{color:#cf222e}.warning{color:#9a6700}.note{color:#0969da}.ok{color:#1a7f37}
svg{background:#fff;border:1px solid #d0d7de;margin:.5rem 0}
svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#1b1f24}
"""

VOID = frozenset({"meta", "br", "hr", "img", "link"})
#: Elements whose children go on lines of their own (a readable, diffable file).
BLOCK = frozenset({"html", "head", "body", "section", "table", "thead", "tbody", "tr", "ul", "svg", "g"})


def el(tag: str, attrs: dict[str, object] | None = None, *children: str) -> str:
    """One element; ``children`` are markup (escape text with :func:`t`)."""
    a = "".join(f' {k}="{escape(str(v), quote=True)}"' for k, v in (attrs or {}).items() if v is not None)
    if tag in VOID:
        return f"<{tag}{a}/>"
    if not children and tag in ("circle", "line", "rect", "polyline", "path"):
        return f"<{tag}{a}/>"
    if tag in BLOCK:
        return f"<{tag}{a}>\n" + "\n".join(children) + f"\n</{tag}>"
    return f"<{tag}{a}>{''.join(children)}</{tag}>"


def t(text: object) -> str:
    return escape(str(text), quote=False)


def _f(x: float) -> str:
    return f"{x:.1f}"


def html_table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, right: set[int] | None = None) -> str:
    right = right or set()
    head = el("tr", None, *(el("th", None, t(h)) for h in headers))
    body = [el("tr", None, *(el("td", {"class": "num"} if i in right else None, t("-" if c is None else c))
                             for i, c in enumerate(row))) for row in rows]
    return el("table", None, el("thead", None, head), el("tbody", None, *body))


def facts_table(rows: list[tuple[str, str]]) -> str:
    return el("table", {"class": "facts"}, el("tbody", None, *(el("tr", None, el("th", None, t(k)), el("td", None, t(v)))
                                                               for k, v in rows)))


# ---------------------------------------------------------------------------------------------- roofline


def roofline_svg(rf: Roofline | TrainingRoofline, *, title: str, width: int = 640, height: int = 380,
                 achieved: dict[str, float] | None = None) -> str:
    """Log-log roofline: the roof through the plan's peak and bandwidth, the ridge, a marker per point:
    at the throughput the plan achieves where ``achieved`` (point name -> TFLOP/s) has it, else a
    hollow marker at the roof (the bound)."""
    achieved = achieved or {}
    left, right, top, bottom = 70, 20, 30, 50
    points = {name: (ai, bnd) for name, ai, bnd in roofline_rows(rf)}
    xs = [v for v, _ in points.values() if v > 0] + [rf.ridge_flops_per_byte]
    x_lo = math.floor(math.log10(min(xs) / 2))
    x_hi = math.ceil(math.log10(max(xs) * 2))

    def roof(ai: float) -> float:
        return min(rf.peak_tflops, rf.mem_bw_tb_per_s * ai)

    y_lo = math.floor(math.log10(roof(10 ** x_lo)))
    y_hi = math.ceil(math.log10(rf.peak_tflops * 1.5))

    def px(ai: float) -> float:
        return left + (math.log10(ai) - x_lo) / (x_hi - x_lo) * (width - left - right)

    def py(tflops: float) -> float:
        return top + (y_hi - math.log10(tflops)) / (y_hi - y_lo) * (height - top - bottom)

    parts = [el("text", {"x": left, "y": 18, "font-weight": "bold"}, t(title))]
    axes = []
    for d in range(x_lo, x_hi + 1):
        x = px(10 ** d)
        axes.append(el("line", {"x1": _f(x), "y1": top, "x2": _f(x), "y2": height - bottom, "stroke": "#eaeef2"}))
        axes.append(el("text", {"x": _f(x), "y": height - bottom + 16, "text-anchor": "middle"}, t(f"{10 ** d:g}")))
    for d in range(y_lo, y_hi + 1):
        y = py(10 ** d)
        axes.append(el("line", {"x1": left, "y1": _f(y), "x2": width - right, "y2": _f(y), "stroke": "#eaeef2"}))
        axes.append(el("text", {"x": left - 6, "y": _f(y + 4), "text-anchor": "end"}, t(f"{10 ** d:g}")))
    axes.append(el("text", {"x": _f((left + width - right) / 2), "y": height - 12, "text-anchor": "middle"},
                   t("arithmetic intensity (FLOP/byte)")))
    axes.append(el("text", {"x": 16, "y": _f((top + height - bottom) / 2), "text-anchor": "middle",
                            "transform": f"rotate(-90 16 {_f((top + height - bottom) / 2)})"}, t("TFLOP/s")))
    parts.append(el("g", {"class": "axes"}, *axes))
    roof_points = [(10 ** x_lo, roof(10 ** x_lo)), (rf.ridge_flops_per_byte, rf.peak_tflops), (10 ** x_hi, rf.peak_tflops)]
    parts.append(el("polyline", {"class": "roof", "fill": "none", "stroke": "#1b1f24", "stroke-width": 2,
                                 "points": " ".join(f"{_f(px(a))},{_f(py(b))}" for a, b in roof_points)}))
    rx, ry = px(rf.ridge_flops_per_byte), py(rf.peak_tflops)
    parts.append(el("g", {"class": "ridge", "data-flops-per-byte": f"{rf.ridge_flops_per_byte:g}",
                          "data-peak-tflops": f"{rf.peak_tflops:g}", "data-mem-bw-tbps": f"{rf.mem_bw_tb_per_s:g}"},
                    el("line", {"x1": _f(rx), "y1": _f(ry), "x2": _f(rx), "y2": height - bottom,
                                "stroke": "#8c959f", "stroke-dasharray": "4 3"}),
                    el("circle", {"cx": _f(rx), "cy": _f(ry), "r": 4, "fill": "#8c959f"}),
                    el("text", {"x": _f(rx + 6), "y": _f(ry - 8)},
                       t(f"ridge {num(rf.ridge_flops_per_byte)} FLOP/byte, {num(rf.peak_tflops)} TFLOP/s"))))
    palette = ("#0969da", "#cf222e", "#1a7f37", "#8250df")
    for index, (name, (ai, bound)) in enumerate(points.items()):
        if ai <= 0:
            continue
        colour = palette[index % len(palette)]
        got = achieved.get(name)
        mx, my = px(ai), py(got if got else roof(ai))
        drop = ([el("line", {"x1": _f(mx), "y1": _f(py(roof(ai))), "x2": _f(mx), "y2": _f(my), "stroke": colour,
                             "stroke-dasharray": "3 2"}),
                 el("text", {"x": _f(mx - 8), "y": _f(my - 8), "text-anchor": "end"},
                    t(f"achieved {num(got)} TFLOP/s ({got / roof(ai):.0%} of the roof)"))] if got else [])
        parts.append(el("g", {"class": "marker", "data-phase": name, "data-flops-per-byte": f"{ai:g}",
                              "data-bound": bound, "data-achieved-tflops": f"{got:g}" if got else None}, *drop,
                        el("circle", {"cx": _f(mx), "cy": _f(my), "r": 6, "fill": colour if got else "white",
                                      "stroke": colour, "stroke-width": 2}),
                        el("text", {"x": _f(mx - 8), "y": _f(my + 18), "text-anchor": "end"} if mx > width * 0.6
                           else {"x": _f(mx + 8), "y": _f(my + 18)}, t(f"{name.split(' (')[0]}: {num(ai)} FLOP/byte ({bound})"))))
    return el("svg", {"xmlns": "http://www.w3.org/2000/svg", "class": "roofline", "width": width, "height": height,
                      "viewBox": f"0 0 {width} {height}", "role": "img", "aria-label": title}, *parts)


# ---------------------------------------------------------------------------------------------- topology

MAX_DRAWN = 16


def topology_svg(topo: Topology, *, title: str, width: int = 640) -> str:
    """Tiers top-down (core, spine, leaf) above the nodes; up to 16 boxes per row, counts in labels."""
    tiers = [(name, count) for name, count in (("core", topo.core_switches), ("spine", topo.spine_switches),
                                               ("leaf", topo.leaf_switches)) if count > 0]
    rows = tiers + [("nodes", topo.nodes)]
    links = {"spine": topo.spine_core_links, "leaf": topo.leaf_spine_links, "nodes": topo.node_leaf_links}
    row_h, top, left, right = 70, 40, 150, 110
    height = top + row_h * len(rows)
    span = width - left - right
    parts = [el("text", {"x": 10, "y": 20, "font-weight": "bold"}, t(title))]
    positions: list[list[float]] = []
    for i, (name, count) in enumerate(rows):
        drawn = min(count, MAX_DRAWN)
        xs = [left + span * (j + 0.5) / drawn for j in range(drawn)]
        positions.append(xs)
    for i in range(1, len(rows)):
        y1, y2 = top + row_h * (i - 1) + 24, top + row_h * i
        lines = [el("line", {"x1": _f(xa), "y1": y1, "x2": _f(xb), "y2": y2, "stroke": "#afb8c1",
                             "stroke-opacity": "0.6"})
                 for xa in positions[i - 1] for xb in positions[i]]
        name = rows[i][0]
        label = el("text", {"x": width - right + 8, "y": _f((y1 + y2) / 2 + 4)}, t(f"{links[name]:,} links"))
        parts.append(el("g", {"class": "links", "data-links": links[name]}, *lines, label))
    for i, (name, count) in enumerate(rows):
        y = top + row_h * i
        box_w = min(28.0, span / max(1, len(positions[i])) - 4)
        fill = "#ddf4ff" if name != "nodes" else "#dafbe1"
        shapes = [el("rect", {"x": _f(x - box_w / 2), "y": y, "width": _f(box_w), "height": 24, "rx": 3,
                              "fill": fill, "stroke": "#57606a"}) for x in positions[i]]
        if count > MAX_DRAWN:
            shapes.append(el("text", {"x": _f(left + span + 4), "y": y + 16}, t("...")))
        what = "nodes" if name == "nodes" else f"{name} switch{'es' if count != 1 else ''}"
        shapes.append(el("text", {"x": 10, "y": y + 16}, t(f"{count:,} {what}")))
        attrs = {"class": "tier" if name != "nodes" else "nodes", "data-tier": name, "data-count": count}
        if name != "nodes":
            attrs["data-switches"] = count
        parts.append(el("g", attrs, *shapes))
    return el("svg", {"xmlns": "http://www.w3.org/2000/svg", "class": "topology", "width": width,
                      "height": height, "viewBox": f"0 0 {width} {height}", "role": "img", "aria-label": title,
                      "data-kind": topo.kind, "data-tiers": topo.tiers}, *parts)


# ---------------------------------------------------------------------------------------------- page


def _bom(bom: Bom | None) -> str:
    if bom is None:
        return ""
    rows = [[i.category, i.tier or "", i.part_id, f"{i.quantity:,}", usd(i.unit_price_usd),
             usd(i.total_price_usd) if i.total_price_usd is not None else "unpriced",
             num(None if i.total_power_w is None else i.total_power_w / 1000), i.source or "-"] for i in bom.items]
    summary = bom_summary(bom)
    return el("h3", None, t("Bill of materials")) + el("p", None, t(summary)) + html_table(
        ["category", "tier", "part", "qty", "unit", "total", "kW", "source"], rows, right={3, 4, 5, 6})


def _phase(name: str, phase: TrainingPlan | ServingPlan, pricing: str) -> str:
    body = [el("h2", {"class": "ok" if phase.feasible else "error"}, t(headline(name.capitalize(), phase, pricing)))]
    facts = training_facts(phase, pricing) if isinstance(phase, TrainingPlan) else serving_facts(phase, pricing)
    if isinstance(phase, ServingPlan):
        from gpuplan.render.fleet_view import autoscaling_facts

        facts = facts + autoscaling_facts(phase.autoscaling)
    body.append(facts_table(facts))
    if phase.feasible:
        body.append(el("h3", None, t("Why")))
        body.append(el("ul", None, *(el("li", None, t(r)) for r in phase.reasons)))
    if phase.roofline is not None:
        body.append(el("h3", None, t("Roofline")))
        got = ({p.name: phase.model_tflops_per_gpu for p in phase.roofline.points[:1]}
               if isinstance(phase, TrainingPlan) and isinstance(phase.roofline, TrainingRoofline)
               and phase.model_tflops_per_gpu else None)  # the layer GEMMs run at the plan's model TFLOP/s
        body.append(roofline_svg(phase.roofline, title=f"{phase.gpu} roofline ({phase.precision})", achieved=got))
    if phase.topology is not None and phase.topology.kind != "none":
        body.append(el("h3", None, t("Topology")))
        body.append(topology_svg(phase.topology, title=f"{phase.topology.kind}, {phase.topology.tiers} tier"
                                 f"{'s' if phase.topology.tiers != 1 else ''}, {num(phase.topology.oversubscription)}:1"
                                 + (f", {phase.topology.switch}" if phase.topology.switch else "")))
    body += _pictures(phase)
    if phase.alternatives:
        body.append(el("h3", None, t("Alternatives")))
        if isinstance(phase, TrainingPlan):
            body.append(html_table(["GPU", "GPUs", "days", "cost", "meets target"],
                                   [[a.gpu, _q(a, f"{a.gpus:,}"), _q(a, num(a.wall_clock_days)), _q(a, usd(a.cost_usd)),
                                     "yes" if a.meets_target else "no"] for a in phase.alternatives],
                                   right={1, 2, 3}))
        else:
            body.append(html_table(["GPU", "GPUs", "TTFT p99 ms", "TPOT ms", "cost", "meets target", "note"],
                                   [[a.gpu, _q(a, f"{a.gpus:,}"), _q(a, num(a.ttft_ms_p99)), _q(a, num(a.tpot_ms)),
                                     _q(a, serving_option_cost(a, pricing)),
                                     "yes" if a.meets_target else "no", a.reason] for a in phase.alternatives],
                                   right={1, 2, 3, 4}))
    body.append(_bom(phase.bom))
    return el("section", {"id": name, "class": "phase"}, *body)


def _q(option: object, text: str) -> str:
    """An option with no layout (0 GPUs: it does not qualify) shows "-", not 0 GPUs or 0 ms."""
    return text if getattr(option, "gpus", 0) else "-"


def _pictures(phase: TrainingPlan | ServingPlan) -> list[str]:
    """The rack elevation and (serving) the throughput-latency frontier (render/svg_charts.py)."""
    from gpuplan.render.svg_charts import frontier_svg, rack_svg

    out = []
    if phase.feasible and phase.bom is not None and phase.nodes:
        out += [el("h3", None, t("Racks")), rack_svg(phase.bom, servers=phase.nodes,
                                                     title=f"Rack elevation: {phase.nodes:,} servers of {phase.gpu}")]
    if isinstance(phase, ServingPlan) and phase.frontier:
        out += [el("h3", None, t("Throughput-latency frontier")),
                frontier_svg(phase.frontier, title=f"{phase.gpu}: every layout's operating points")]
    return out


def render(plan: Plan, options: RenderOptions) -> str:
    m = plan.model
    head = el("head", None, el("meta", {"charset": "utf-8"}),
              el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
              el("title", None, t(f"gpuplan: {plan.workload}")), el("style", None, t(CSS)))
    body = [el("h1", None, t(f"gpuplan: {plan.workload}")),
            el("p", {"class": "meta"}, t(f"{m.name} ({m.total_params / 1e9:.1f}B params) · profile {plan.profile} · "
                                         f"catalog {plan.catalog_version} · pricing {plan.pricing} · "
                                         f"gpuplan {plan.gpuplan_version}"))]
    for name in ("training", "serving"):
        phase = getattr(plan, name)
        if phase is not None:
            body.append(_phase(name, phase, plan.pricing))
    whole = plan_tco_line(plan) if plan.training is not None and plan.serving is not None else None
    if whole:
        body.append(el("p", {"class": "tco"}, t(whole[0].upper() + whole[1:])))
    if plan.fleet is not None:
        from gpuplan.render.fleet_view import STRATEGY_HEADERS, STRATEGY_RIGHT, fleet_lines, strategy_rows

        body.append(el("section", {"id": "fleet"},
                       el("h2", None, t(f"Fleet: {plan.fleet.recommended or 'no strategy'} recommended")),
                       html_table(STRATEGY_HEADERS, strategy_rows(plan.fleet), right=STRATEGY_RIGHT),
                       el("ul", None, *(el("li", None, t(line)) for line in fleet_lines(plan.fleet)))))
    findings = [el("li", {"class": f.severity}, t(f"{f.severity}: {f.code}: {f.message}"
                                                  + (f" ({f.field})" if f.field else ""))) for f in plan.findings]
    body.append(el("section", {"id": "findings"}, el("h2", None, t("Findings")),
                   el("ul", None, *findings) if findings else el("p", None, t("None."))))
    body.append(el("section", {"id": "assumptions"}, el("h2", None, t("Assumptions (defaults applied)")),
                   html_table(["field", "value", "reason"], [[a.field, a.value, a.reason] for a in plan.assumptions])))
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, el("body", None, *body)) + "\n"
