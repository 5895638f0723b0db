"""A self-contained HTML report: the facts per phase and its pictures as inline SVG (roofline:
render/svg_roofline.py; topology: render/svg_topology.py; racks and the serving frontier:
render/svg_charts.py). No scripts, no external stylesheets or fonts, no network. The markup is
well-formed XML as well as HTML, so tests (and tools) can parse it with any XML parser.

The pictures place plan figures; the only arithmetic in them is geometry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from gpuplan.core.contract import (
    Bom,
    Plan,
    ServingPlan,
    TrainingPlan,
)
from gpuplan.render import RenderOptions
from gpuplan.render import alternatives as alt
from gpuplan.render.cost import line_total, line_unit, plan_tco_line
from gpuplan.render.numbers import params_text
from gpuplan.render.text import (
    LAYOUT_HEADERS,
    bom_summary,
    cost_basis_note,
    headline,
    layout_rows,
    num,
    plural,
    serving_facts,
    training_facts,
)

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1100px;color:#1b1f24;
padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.25rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2rem}
h3{font-size:1.05rem}table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right}.meta{color:#57606a}
.error{color:#cf222e}.warning{color:#9a6700}.note{color:#0969da}.ok{color:#1a7f37}
svg{background:#fff;border:1px solid #d0d7de;margin:.5rem 0;font-family:system-ui,sans-serif;font-size:11px;
fill:#1b1f24}
td.id{white-space:nowrap}
div.scroll{overflow-x:auto;max-width:100%}
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


def scroll(markup: str) -> str:
    """A table or picture wider than a narrow window scrolls in its own box, not past the page."""
    return el("div", {"class": "scroll"}, markup)


def html_table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, right: set[int] | None = None,
               ids: set[int] | None = None) -> str:
    """A table in its scrolling box; ``ids`` columns (GPU and part ids) never wrap at their hyphens."""
    right, ids = right or set(), ids or set()

    def cls(i: int) -> dict[str, object] | None:
        return {"class": "num"} if i in right else {"class": "id"} if i in ids else None

    head = el("tr", None, *(el("th", None, t(h)) for h in headers))
    body = [el("tr", None, *(el("td", cls(i), t("-" if c is None else c)) for i, c in enumerate(row))) for row in rows]
    return scroll(el("table", None, el("thead", None, head), el("tbody", None, *body)))


def facts_table(rows: list[tuple[str, str]]) -> str:
    return el("table", {"class": "facts"}, el("tbody", None, *(el("tr", None, el("th", None, t(k)), el("td", None, t(v)))
                                                               for k, v in rows)))


# ---------------------------------------------------------------------------------------------- page


def _bom(bom: Bom | None) -> str:
    if bom is None:
        return ""
    rows = [[i.category, i.tier or "", i.part_id, f"{i.quantity:,}",
             line_unit(i), line_total(i),  # as table and markdown
             num(None if i.total_power_w is None else i.total_power_w / 1000), i.source or "-"] for i in bom.items]
    summary = bom_summary(bom)
    return el("h3", None, t("Bill of materials")) + el("p", None, t(summary)) + html_table(
        ["category", "tier", "part", "qty", "unit", "total", "kW", "source"], rows, right={3, 4, 5, 6}, ids={2})


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
        from gpuplan.render.svg_roofline import achieved_points, roofline_svg

        body.append(el("h3", None, t("Roofline")))
        body.append(scroll(roofline_svg(phase.roofline, title=f"{phase.gpu} roofline ({phase.precision})",
                                        achieved=achieved_points(phase))))
    if phase.topology is not None and phase.topology.kind != "none":
        from gpuplan.render.svg_topology import topology_svg, topology_title

        body.append(el("h3", None, t("Topology")))
        body.append(scroll(topology_svg(phase.topology, phase.interconnect,
                                        title=topology_title(phase.topology, phase.interconnect))))
    body += _pictures(phase)
    if isinstance(phase, TrainingPlan) and phase.feasible and phase.layout_alternatives:
        body.append(el("h3", None, t(f"Next best layouts on {phase.gpu}")))
        body.append(html_table(LAYOUT_HEADERS, layout_rows(phase.layout_alternatives), right={1, 3, 4, 5, 6, 7, 8}))
    if phase.alternatives:
        body.append(el("h3", None, t("Alternatives")))
        if isinstance(phase, TrainingPlan):
            body.append(html_table(alt.TRAINING_HEADERS, alt.training_rows(phase.alternatives, pricing),
                                   right=alt.TRAINING_RIGHT, ids={0}))
        else:
            body.append(html_table(alt.serving_headers(phase), alt.serving_rows(phase.alternatives, pricing),
                                   right=alt.SERVING_RIGHT, ids={0}))
        note = cost_basis_note(phase.alternatives, pricing)
        if note:
            body.append(el("p", {"class": "note"}, t(note)))
        if isinstance(phase, ServingPlan):
            body.append(el("p", {"class": "note"}, t(alt.per_token_note(phase, pricing))))
    body.append(_bom(phase.bom))
    return el("section", {"id": name, "class": "phase"}, *body)


def _pictures(phase: TrainingPlan | ServingPlan) -> list[str]:
    """The rack elevation and (serving) the throughput-latency frontier (render/svg_charts.py)."""
    from gpuplan.render.svg_charts import frontier_svg, rack_svg

    out = []
    ic = phase.interconnect
    trays = ic.scaleup_switch_trays if ic is not None and ic.scaleup_domain_gpus > ic.gpus_per_node > 0 else 0
    if phase.feasible and phase.bom is not None and phase.nodes:
        out += [el("h3", None, t("Racks")), scroll(rack_svg(
            phase.bom, servers=phase.nodes, switch_trays=trays,
            title=f"Rack elevation: {plural(phase.nodes, 'server')} of {phase.gpu}"))]
    if isinstance(phase, ServingPlan) and phase.frontier:
        out += [el("h3", None, t("Throughput-latency frontier")),
                scroll(frontier_svg(phase.frontier, title=f"{phase.gpu}: every layout's operating points"))]
    return out


def render(plan: Plan, options: RenderOptions) -> str:
    m = plan.model
    head = el("head", None, el("meta", {"charset": "utf-8"}),
              el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
              el("title", None, t(f"gpuplan: {plan.workload}")), el("style", None, t(CSS)))
    body = [el("h1", None, t(f"gpuplan: {plan.workload}")),
            el("p", {"class": "meta"}, t(f"{m.name} ({params_text(m.total_params, m.active_params)}) · profile {plan.profile} · "
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
                       html_table(STRATEGY_HEADERS, strategy_rows(plan.fleet), right=STRATEGY_RIGHT, ids={0, 1}),
                       el("ul", None, *(el("li", None, t(line)) for line in fleet_lines(plan.fleet)))))
    findings = [el("li", {"class": f.severity}, t(f"{f.severity}: {f.code}: {f.message}"
                                                  + (f" ({f.field})" if f.field else ""))) for f in plan.findings]
    body.append(el("section", {"id": "findings"}, el("h2", None, t("Findings")),
                   el("ul", None, *findings) if findings else el("p", None, t("None."))))
    body.append(el("section", {"id": "assumptions"}, el("h2", None, t("Assumptions (defaults applied)")),
                   html_table(["field", "value", "reason"], [[a.field, a.value, a.reason] for a in plan.assumptions])))
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, el("body", None, *body)) + "\n"
