"""GitHub-flavoured Markdown: a report per phase, a check summary, and the pull-request diff comment.

Each document starts with a hidden marker line (``<!-- gpuplan-plan -->``, ``<!-- gpuplan-check -->``,
``<!-- gpuplan-diff -->``) so a CI job can find and update its own comment. Details go in
``<details>`` blocks; the diff comment is cut to :data:`MAX_COMMENT_CHARS` by dropping detail rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuplan.core.contract import (
    Bom,
    Finding,
    Plan,
    Roofline,
    ServingPlan,
    TrainingPlan,
    TrainingRoofline,
)
from gpuplan.render import RenderOptions
from gpuplan.render import alternatives as alt
from gpuplan.render.changes import bom_change_usd, change_cell, change_delta
from gpuplan.render.cost import line_total, line_unit, plan_tco_line
from gpuplan.render.numbers import gib, params_text
from gpuplan.render.table import on_cluster_line
from gpuplan.render.text import (
    FIELD_LABELS,
    LAYOUT_HEADERS,
    cost_basis_note,
    gate_value,
    headline,
    layout_rows,
    num,
    plural,
    roofline_rows,
    serving_facts,
    signed,
    training_facts,
    usd,
)

if TYPE_CHECKING:
    from gpuplan.ci.check import CheckResult
    from gpuplan.ci.diff import BomChange, Change, DiffResult

#: GitHub rejects comment bodies over 65,536 characters; stay clear of it.
MAX_COMMENT_CHARS = 65_000

ICON = {"error": ":x:", "warning": ":warning:", "note": ":information_source:"}


def cell(value: object) -> str:
    text = "-" if value is None else str(value)
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, right: set[int] | None = None) -> str:
    right = right or set()
    out = ["| " + " | ".join(cell(h) for h in headers) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n"


def _findings(findings: list[Finding]) -> str:
    if not findings:
        return "No findings.\n"
    return "".join(f"- {ICON[f.severity]} **{f.severity}** `{f.code}`: {f.message}"
                   + (f" (`{f.field}`)" if f.field else "") + "\n" for f in findings)


def _bom(bom: Bom | None) -> str:
    if bom is None:
        return ""
    summary = (f"Bill of materials: capex {usd(bom.capex_usd)} (network {usd(bom.network_capex_usd)}), "
               f"{num(bom.power_kw)} kW, {plural(bom.racks, 'rack')}, {plural(len(bom.items), 'line')}")
    notes = []
    if bom.rack_power_kw is not None:
        notes.append(f"Fullest rack: {num(bom.rack_power_kw)} kW.")
    rows = [[i.category, i.tier, f"`{i.part_id}`", f"{i.quantity:,}", line_unit(i),
             line_total(i, "**unpriced**"),
             num(None if i.total_power_w is None else i.total_power_w / 1000), i.source] for i in bom.items]
    body = md_table(["category", "tier", "part", "qty", "unit", "total", "kW", "source"], rows, right={3, 4, 5, 6})
    if bom.capex_by_category_usd:
        notes.append("Capex by category: " + ", ".join(f"{k} {usd(v)}" for k, v in bom.capex_by_category_usd.items())
                     + (f"; {usd(bom.estimated_capex_usd)} of it priced by estimates (est.)."
                        if bom.estimated_capex_usd else "."))
    if bom.unpriced_parts:
        notes.append(f"Not priced (not in capex): {', '.join(f'`{p}`' for p in bom.unpriced_parts)}.")
    if bom.unpowered_parts:
        notes.append(f"No power figure (not in power): {', '.join(f'`{p}`' for p in bom.unpowered_parts)}.")
    if notes:
        body += "\n" + " ".join(notes) + "\n"
    return details(summary, body)


def _roofline(rf: Roofline | TrainingRoofline | None, gpu: str | None, precision: str) -> str:
    if rf is None:
        return ""
    return (f"\n**Roofline** ({gpu}, {precision}): ridge point {num(rf.ridge_flops_per_byte)} FLOP/byte "
            f"({num(rf.peak_tflops)} TFLOP/s / {num(rf.mem_bw_tb_per_s)} TB/s)\n\n"
            + md_table(["kernels", "FLOP/byte", "x ridge", "bound"],
                       [[name, num(ai), f"{ai / rf.ridge_flops_per_byte:.2f}", bnd]
                        for name, ai, bnd in roofline_rows(rf)], right={1, 2}))


def _training(t: TrainingPlan, pricing: str) -> str:
    out = md_table(["", "training"], training_facts(t, pricing))
    if not t.feasible:
        return out
    out += "\n**Why**\n\n" + "".join(f"- {r}\n" for r in t.reasons)
    b, m = t.breakdown, t.memory
    if b is not None:
        out += (f"- step {num(b.step_time_s)} s = compute {num(b.compute_s)} + recompute {num(b.recompute_s)} + "
                f"exposed comm (TP {num(b.tp_comm_s)}, PP {num(b.pp_comm_s)}, DP {num(b.dp_comm_s)}, "
                f"EP {num(b.ep_comm_s)}, CP {num(b.cp_comm_s)}) + bubble {num(b.bubble_s)} + "
                f"optimizer {num(b.optimizer_s)} + host {num(b.host_overhead_s)}\n")
    if m is not None:
        out += (f"- memory {gib(m.total_gib)} of {gib(m.capacity_gib)} GiB per GPU "
                f"({gib(m.headroom_gib)} GiB headroom)\n")
    out += _roofline(t.roofline, t.gpu, t.precision)
    if t.layout_alternatives:
        out += "\n" + details(f"Next best layouts on {t.gpu} ({len(t.layout_alternatives)})",
                              md_table(LAYOUT_HEADERS, layout_rows(t.layout_alternatives), right={1, 3, 4, 5, 6, 7, 8}))
    if t.alternatives:
        out += "\n" + details(f"Alternatives ({len(t.alternatives)})",
                              md_table(alt.TRAINING_HEADERS, alt.training_rows(t.alternatives, pricing),
                                       right=alt.TRAINING_RIGHT) + _basis(t.alternatives, pricing))
    return out + "\n" + _bom(t.bom)


def _basis(options: list, pricing: str) -> str:
    note = cost_basis_note(options, pricing)
    return f"\n{note}\n" if note else ""


def _serving(s: ServingPlan, pricing: str) -> str:
    from gpuplan.render.fleet_view import autoscaling_facts

    out = md_table(["", "serving"], serving_facts(s, pricing) + autoscaling_facts(s.autoscaling))
    if not s.feasible:
        return out
    out += "\n**Why**\n\n" + "".join(f"- {r}\n" for r in s.reasons)
    out += _roofline(s.roofline, s.gpu, s.precision)
    if s.alternatives:
        out += "\n" + details(f"Alternatives ({len(s.alternatives)})",
                              md_table(alt.serving_headers(s), alt.serving_rows(s.alternatives, pricing),
                                       right=alt.SERVING_RIGHT) + _basis(s.alternatives, pricing)
                              + f"\n{alt.per_token_note(s, pricing)}\n")
    return out + "\n" + _bom(s.bom)


def render(plan: Plan, options: RenderOptions) -> str:
    m = plan.model
    out = ["<!-- gpuplan-plan -->\n", f"## gpuplan: {plan.workload}\n\n",
           f"{m.name} ({params_text(m.total_params, m.active_params)}) · profile `{plan.profile}` · catalog "
           f"{plan.catalog_version} · pricing {plan.pricing} · gpuplan {plan.gpuplan_version}\n\n"]
    phases = [(n, p) for n, p in (("training", plan.training), ("serving", plan.serving)) if p is not None]
    out += [f"- **{headline(n, p, plan.pricing)}**\n" for n, p in phases]
    whole = plan_tco_line(plan) if len(phases) == 2 else None
    if whole:
        out.append(f"- {whole[0].upper() + whole[1:]}\n")
    out.append("\n" + _findings(plan.findings))
    for name, phase in phases:
        out.append(f"\n### {name.capitalize()}\n\n")
        out.append(_training(phase, plan.pricing) if isinstance(phase, TrainingPlan) else _serving(phase, plan.pricing))  # type: ignore[arg-type]
    if plan.fleet is not None:
        from gpuplan.render.fleet_view import STRATEGY_HEADERS, STRATEGY_RIGHT, fleet_lines, strategy_rows

        out.append(f"\n### Fleet: {plan.fleet.recommended or 'no strategy'} recommended\n\n")
        if plan.fleet.strategies:
            out.append(md_table(STRATEGY_HEADERS, strategy_rows(plan.fleet), right=STRATEGY_RIGHT) + "\n")
        out.append("".join(f"- {cell(line)}\n" for line in fleet_lines(plan.fleet)))
    rows = [[f"`{a.field}`", a.value, a.reason] for a in plan.assumptions]
    out.append("\n" + details(f"Assumptions: {len(rows)} defaults applied",
                              md_table(["field", "value", "reason"], rows) if rows else "None.\n"))
    return "".join(out)


def render_check(result: "CheckResult", options: RenderOptions) -> str:
    c = result.cluster
    verdict = ":white_check_mark: passed" if result.passed else ":x: failed"
    out = ["<!-- gpuplan-check -->\n",
           f"### gpuplan check {verdict}: {result.workload} ({c.phase})\n\n",
           f"Cluster `{result.cluster_file}`{' (' + c.name + ')' if c.name else ''}: {c.gpus:,} x {c.gpu} in "
           f"{plural(c.nodes, 'node')}; {plural(result.errors, 'error')}, {plural(result.warnings, 'warning')}.\n\n"]
    if (planned := on_cluster_line(result)) is not None:
        out.append(planned[0].upper() + planned[1:] + ".\n\n")
    rows = []
    for g in result.gates:
        mark = ":white_check_mark:" if g.passed else ICON[g.severity]
        where = f"`{g.file}:{g.line}`" if g.file and g.line else (f"`{g.file}`" if g.file else "-")
        rows.append([mark, f"`{g.name}`", gate_value(g.value, g.unit), gate_value(g.limit, g.unit), g.unit, g.message,
                     where])
    out.append(md_table(["", "gate", "value", "limit", "unit", "message", "where"], rows, right={2, 3}))
    return "".join(out)


def _value(field: str, v: object) -> str:
    text = change_cell(field, v)
    return f"`{text}`" if isinstance(v, str) else text


def _delta(c: "Change") -> str:
    return change_delta(c.field, c.delta, c.delta_ratio)


def _bom_rows(lines: "list[BomChange]") -> list[list[object]]:
    return [[b.category, b.tier, f"`{b.part_id}`", f"{b.base_quantity:,}", f"{b.new_quantity:,}",
             signed(b.delta_quantity, f"{abs(b.delta_quantity):,}"),
             bom_change_usd(b)] for b in lines]


def _diff_verdict(result: "DiffResult") -> str:
    if not result.changed:
        return "no change"
    if result.capex_delta_usd is None:
        cost = "capex not comparable (unpriced)"
    elif result.capex_delta_usd == 0:
        cost = "capex unchanged"
    else:
        ratio = f" ({signed(result.capex_delta_ratio, f'{abs(result.capex_delta_ratio) * 100:.1f}%')})" \
            if result.capex_delta_ratio is not None else ""
        cost = f"capex {'up' if result.capex_delta_usd > 0 else 'down'} {usd(abs(result.capex_delta_usd))}{ratio}"
    power = signed(result.power_delta_kw, f"{num(abs(result.power_delta_kw))} kW")
    return f"{cost}, power {power}"


def render_diff(result: "DiffResult", options: RenderOptions, *, limit: int = MAX_COMMENT_CHARS) -> str:
    """The pull-request comment; detail rows are dropped (and counted) until it fits in ``limit``."""
    keep = max((len(p.bom) for p in result.phases), default=0)
    while True:
        text = _diff_text(result, keep)
        if len(text) <= limit or keep == 0:
            return text
        keep = keep // 2 if keep > 8 else keep - 1


def _diff_text(result: "DiffResult", keep: int) -> str:
    out = ["<!-- gpuplan-diff -->\n", f"### gpuplan diff: {_diff_verdict(result)}\n\n",
           f"`{result.base}` → `{result.new}`\n\n"]
    if not result.changed:
        return "".join(out)
    out.append(md_table(["", "base", "new", "change"], [
        ["capex", usd(result.capex_base_usd), usd(result.capex_new_usd),
         "unpriced" if result.capex_delta_usd is None else signed(result.capex_delta_usd,
                                                                   usd(abs(result.capex_delta_usd)))],
        ["power", f"{num(result.power_base_kw)} kW", f"{num(result.power_new_kw)} kW",
         signed(result.power_delta_kw, f"{num(abs(result.power_delta_kw))} kW")]], right={1, 2, 3}))
    if result.new_errors:
        out.append(f"\n:x: The new plan has {result.new_errors} error finding{'s' if result.new_errors != 1 else ''}.\n")
    for p in result.phases:
        gpu = p.new_gpu or p.base_gpu or "-"
        out.append(f"\n#### {p.phase.capitalize()}: {p.status} ({gpu})\n\n")
        if p.changes:
            out.append(md_table(["", "base", "new", "change"],
                                [[FIELD_LABELS.get(c.field, c.field), _value(c.field, c.base), _value(c.field, c.new), _delta(c)] for c in p.changes],
                                right={1, 2, 3}))
        if p.bom:
            shown = p.bom[:keep]
            body = md_table(["category", "tier", "part", "base qty", "new qty", "change", "change $"],
                            _bom_rows(shown), right={3, 4, 5, 6})
            if len(p.bom) > len(shown):
                body += f"\n{len(p.bom) - len(shown)} more BOM lines not shown (see the JSON diff).\n"
            out.append("\n" + details(f"BOM changes ({len(p.bom)} lines)", body))
    for title, findings in (("New findings", result.findings_added), ("Resolved findings", result.findings_resolved)):
        if findings:
            out.append("\n" + details(f"{title} ({len(findings)})", _findings(findings)))
    if result.findings_changed:
        out.append("\n" + details(f"Changed findings ({len(result.findings_changed)})", "".join(
            f"- {ICON[c.new.severity]} **{c.new.severity}** `{c.new.code}`: {c.base.message} &rarr; {c.new.message}\n"
            for c in result.findings_changed)))
    return "".join(out)
