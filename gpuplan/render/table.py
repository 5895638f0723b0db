"""The human report (rich): per phase the recommendation, why, alternatives, the roofline and the BOM.

Plain ASCII without colour unless ``options.color`` (the CLI sets it only for a terminal without
NO_COLOR / --no-color). ``-v`` adds the step-time and memory breakdowns and every BOM line.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuplan.core.contract import (
    Bom,
    Plan,
    Roofline,
    ServingPlan,
    TrainingPlan,
    TrainingRoofline,
)
from gpuplan.render import RenderOptions
from gpuplan.render.bom_table import bom_section
from gpuplan.render.changes import bom_change_usd, change_cell, change_delta
from gpuplan.render.cost import line_total, line_unit, plan_tco_line
from gpuplan.render.numbers import gib, params_text
from gpuplan.render.sections import hidden_note, one_line, shows, summary_facts, summary_reasons
from gpuplan.render.alternatives import per_token_header, per_token_note
from gpuplan.render.text import (
    FIELD_LABELS,
    LAYOUT_HEADERS,
    cost_basis_note,
    gate_value,
    headline,
    layout_rows,
    num,
    option_cost,
    pct,
    plural,
    roofline_rows,
    serving_facts,
    serving_option_cost,
    sized,
    signed,
    training_facts,
    usd,
)

if TYPE_CHECKING:
    from gpuplan.ci.check import CheckResult
    from gpuplan.ci.diff import DiffResult

#: rich's SIMPLE box drawn with ASCII only (CI logs, pipes, files).
PLAIN = box.Box("    \n    \n -- \n    \n    \n -- \n    \n    \n", ascii=True)

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "note": "cyan"}


class _Report:
    """A rich console writing into a string, with the few styles the report uses."""

    def __init__(self, options: RenderOptions):
        self.options = options
        self.buffer = io.StringIO()
        self.console = Console(file=self.buffer, width=options.width, force_terminal=options.color,
                               color_system="standard" if options.color else None, no_color=not options.color,
                               highlight=False, emoji=False, soft_wrap=False, legacy_windows=False)
        self.box = box.SIMPLE if options.color else PLAIN

    def line(self, text: str = "", style: str | None = None) -> None:
        self.console.print(Text(_UNIT.sub(_GLUE, text), style=style or ""), overflow="fold")

    def heading(self, text: str) -> None:
        self.console.print(Text(text, style="bold underline" if self.options.color else ""))

    def table(self, headers: list[str], rows: list[list[str]], *, right: set[int] | None = None,
              styles: list[str | None] | None = None, no_wrap: set[int] | None = None,
              fold: set[int] | None = None) -> None:
        """A table; a column in ``fold`` wraps long words (paths) instead of cutting them short."""
        t = Table(box=self.box, show_edge=False, pad_edge=False, padding=(0, 1), header_style="bold")
        for i, h in enumerate(headers):
            t.add_column(Text(h), justify="right" if i in (right or set()) else "left",
                         overflow="fold" if i in (fold or set()) else "ellipsis",
                         no_wrap=i == 0 or i in (no_wrap or set()))
        for i, row in enumerate(rows):
            t.add_row(*map(_plain, row), style=(styles[i] if styles else None) or "")
        self.console.print(t)

    def facts(self, rows: list[tuple[str, str]]) -> None:
        t = Table(box=None, show_header=False, show_edge=False, pad_edge=False, padding=(0, 1))
        t.add_column(style="bold" if self.options.color else "", no_wrap=True)
        t.add_column(overflow="fold")
        for label, value in rows:
            t.add_row(_plain(label), _plain(value))
        self.console.print(t)

    def bullets(self, items: list[str]) -> None:
        t = Table.grid(padding=(0, 1))
        t.add_column(no_wrap=True)
        t.add_column(overflow="fold")
        for item in items:
            t.add_row("-", _plain(item))
        self.console.print(t)

    def text(self) -> str:
        text = "\n".join(line.rstrip() for line in self.buffer.getvalue().splitlines()) + "\n"
        return text.replace(_GLUE, " ")


#: Stands for the space between a number and its unit while rich wraps (one cell wide, not
#: whitespace to rich, a private-use character no text carries): '203 ms' never splits.
_GLUE = "\ue000"
_UNIT = re.compile(r"(?<=\d) (?=(?:ms|us|s|kW|MW|W|GiB|GB|TB|PB|Gb/s|GB/s|Tb/s|TB/s|req/s|days|h|y|%)(?![\w/]))")


def _plain(cell: object) -> object:
    """A cell as literal text: rich would read ``[link=...]`` or ``[/x]`` in a name as markup; a
    number keeps its unit on its line."""
    return Text(_UNIT.sub(_GLUE, cell)) if isinstance(cell, str) else cell


def _ok(options: RenderOptions, passed: bool) -> str:
    return ("✔" if passed else "✘") if options.color else ("ok" if passed else "FAIL")


def _roofline(r: _Report, rf: Roofline | TrainingRoofline | None, gpu: str | None, precision: str) -> None:
    if rf is None or not shows(r.options, "roofline"):
        return
    r.line()
    r.heading(f"Roofline ({gpu}, {precision})")
    r.line(f"ridge point {num(rf.ridge_flops_per_byte)} FLOP/byte = {num(rf.peak_tflops)} TFLOP/s / "
           f"{num(rf.mem_bw_tb_per_s)} TB/s")
    r.table(["kernels", "FLOP/byte", "x ridge", "bound"],
            [[name, num(ai), f"{ai / rf.ridge_flops_per_byte:.2f}", bnd] for name, ai, bnd in roofline_rows(rf)],
            right={1, 2})


def _training(r: _Report, t: TrainingPlan, pricing: str) -> None:
    r.facts(summary_facts(training_facts(t, pricing), r.options))
    if not t.feasible:
        return
    r.line()
    r.heading("Why")
    why = summary_reasons(list(t.reasons), r.options)
    b = t.breakdown
    if b is not None and r.options.verbose:
        why.append(f"step {num(b.step_time_s)} s = compute {num(b.compute_s)} + recompute {num(b.recompute_s)} "
                   f"+ exposed comm (TP {num(b.tp_comm_s)}, PP {num(b.pp_comm_s)}, DP {num(b.dp_comm_s)}, "
                   f"EP {num(b.ep_comm_s)}, CP {num(b.cp_comm_s)}) + bubble {num(b.bubble_s)} "
                   f"+ optimizer {num(b.optimizer_s)} + host {num(b.host_overhead_s)}")
    m = t.memory
    if m is not None and r.options.verbose:
        why.append(f"memory {gib(m.total_gib)} of {gib(m.capacity_gib)} GiB per GPU "
                   f"({gib(m.headroom_gib)} GiB headroom)")
    if t.interconnect is not None and shows(r.options, "network"):
        why += [f"network: {reason}" for reason in t.interconnect.reasons]
    r.bullets(why)
    _roofline(r, t.roofline, t.gpu, t.precision)
    if r.options.verbose and b is not None and m is not None:
        r.line()
        terms = {k: v for k, v in b.model_dump().items() if k.endswith("_s") and k != "step_time_s"}
        r.table(["step term", "s"], [[k.removesuffix("_s").replace("_", " "), num(v)] for k, v in terms.items()]
                + [["step time (sum)", num(b.step_time_s)]], right={1})  # the host gap is a term of the step
        r.table(["memory per GPU", "GiB"], [[k.removesuffix("_gib"), num(v)] for k, v in m.model_dump().items()],
                right={1})
    if t.layout_alternatives and shows(r.options, "layouts"):
        r.line()
        r.heading(f"Next best layouts on {t.gpu}")
        r.table(LAYOUT_HEADERS, layout_rows(t.layout_alternatives), right={1, 3, 4, 5, 6, 7, 8})
    if t.alternatives and shows(r.options, "alternatives"):
        r.line()
        r.heading("Alternatives")
        shown = _shown(r, t.alternatives)
        r.table(["gpu", "gpus", "nodes", "layout", "days", "MFU", "cost", "meets", "bound"],
                [[a.gpu, sized(a, f"{a.gpus:,}"), sized(a, f"{a.nodes:,}"),
                  f"TP{a.layout.tp} PP{a.layout.pp} DP{a.layout.dp}", sized(a, num(a.wall_clock_days)),
                  sized(a, pct(a.mfu)), sized(a, option_cost(a, pricing)), "yes" if a.meets_target else "no", a.bound]
                 for a in shown], right={1, 2, 4, 5, 6}, no_wrap={1, 2, 3, 4, 5, 6, 7})
        _basis(r, shown, pricing)
        _more(r, t.alternatives, shown)
    bom_section(r, t.bom)


def _serving(r: _Report, s: ServingPlan, pricing: str) -> None:
    from gpuplan.render.fleet_view import autoscaling_facts

    r.facts(summary_facts(serving_facts(s, pricing) + autoscaling_facts(s.autoscaling), r.options))
    if not s.feasible:
        return
    r.line()
    r.heading("Why")
    why = summary_reasons(list(s.reasons), r.options)
    if s.interconnect is not None and shows(r.options, "network"):
        why += [f"network: {reason}" for reason in s.interconnect.reasons]
    r.bullets(why)
    _roofline(r, s.roofline, s.gpu, s.precision)
    if s.alternatives and shows(r.options, "alternatives"):
        r.line()
        r.heading("Alternatives")
        shown = _shown(r, s.alternatives)
        r.table(["gpu", "gpus", "layout", "TTFT p99", "TPOT", "req/s", "cost", per_token_header(s, "$/M tok"), "meets"],
                [[a.gpu, sized(a, f"{a.gpus:,}"),
                  f"TP{a.layout.tp} PP{a.layout.pp}" + (f" EP{a.layout.ep}" if a.layout.ep > 1 else ""),
                  sized(a, f"{num(a.ttft_ms_p99)} ms"), sized(a, f"{num(a.tpot_ms)} ms"), sized(a, num(a.max_qps)),
                  sized(a, serving_option_cost(a, pricing)), sized(a, usd(a.usd_per_million_output_tokens)),
                  "yes" if a.meets_target else "no"] for a in shown],
                right={1, 3, 4, 5, 6, 7}, no_wrap={1, 2, 3, 4, 5, 6, 7, 8})
        _basis(r, shown, pricing)
        r.line(per_token_note(s, pricing, "$/M tok"))
        if r.options.verbose:
            r.bullets([f"{a.gpu}: {a.reason}" for a in shown if a.reason])
        _more(r, s.alternatives, shown)
    bom_section(r, s.bom)


#: Alternatives listed without -v (the rest are counted).
ALTERNATIVES_SHOWN = 5


def _shown(r: _Report, options: list) -> list:
    return options if r.options.verbose else options[:ALTERNATIVES_SHOWN]


def _basis(r: _Report, shown: list, pricing: str) -> None:
    if note := cost_basis_note(shown, pricing):
        r.line(note)


def _more(r: _Report, options: list, shown: list) -> None:
    if len(options) > len(shown):
        r.line(f"{len(options) - len(shown)} more; -v lists them")


def render(plan: Plan, options: RenderOptions) -> str:
    r = _Report(options)
    m = plan.model
    r.line(f"gpuplan {plan.gpuplan_version}: {plan.workload} ({m.name}, {params_text(m.total_params, m.active_params)})",
           "bold")
    r.line(f"profile {plan.profile}; catalog {plan.catalog_version}; pricing {plan.pricing}")
    for name, phase in (("training", plan.training), ("serving", plan.serving)):
        if phase is None:
            continue
        r.line()
        _phase(r, name, phase, plan.pricing)
    whole = plan_tco_line(plan) if plan.training is not None and plan.serving is not None else None
    if whole:
        r.line()
        r.line(whole[0].upper() + whole[1:], "bold")
    if plan.fleet is not None:
        _fleet(r, plan)
    r.line()
    r.heading("Findings")
    if plan.findings and shows(r.options, "findings"):
        r.table(["severity", "code", "message", "field"],
                [[f.severity, f.code, f.message, f.field or "-"] for f in plan.findings],
                styles=[SEVERITY_STYLE[f.severity] for f in plan.findings])
    elif plan.findings:
        for f in plan.findings:  # one line each, errors whole; --section findings gives every message
            line = f"{f.severity:<8} {f.code}: {f.message}"
            r.line(line if f.severity == "error" else one_line(line, r.options.width),
                   SEVERITY_STYLE[f.severity] if r.options.color else None)
    else:
        r.line("none")
    if shows(r.options, "assumptions"):
        r.line()
        r.heading("Assumptions (defaults applied)")
        if plan.assumptions:
            r.table(["field", "value", "reason"], [[a.field, a.value, a.reason] for a in plan.assumptions])
        else:
            r.line("none")
    if more := hidden_note(r.options):
        r.line()
        r.line(more)
    return r.text()


def _phase(r: _Report, name: str, phase: TrainingPlan | ServingPlan, pricing: str) -> None:
    r.line(headline(name.upper(), phase, pricing), "bold green" if phase.feasible else "bold red")
    r.line()
    _training(r, phase, pricing) if isinstance(phase, TrainingPlan) else _serving(r, phase, pricing)


def _fleet(r: _Report, plan: Plan) -> None:
    from gpuplan.render.fleet_view import STRATEGY_HEADERS, STRATEGY_RIGHT, fleet_lines, strategy_rows

    assert plan.fleet is not None
    r.line()
    r.line(f"FLEET: {plan.fleet.recommended or 'no strategy'} recommended", "bold")
    if not shows(r.options, "fleet"):
        return
    r.line()
    if plan.fleet.strategies:
        r.table(STRATEGY_HEADERS, strategy_rows(plan.fleet), right=STRATEGY_RIGHT,
                no_wrap={0, 2, 3, 4, 5, 6, 7})
    r.bullets(fleet_lines(plan.fleet))


def render_check(result: "CheckResult", options: RenderOptions) -> str:
    r = _Report(options)
    c = result.cluster
    verdict = "PASSED" if result.passed else "FAILED"
    r.line(f"gpuplan check {verdict}: {result.workload} ({c.phase}), {plural(result.errors, 'error')}, "
           f"{plural(result.warnings, 'warning')}", "bold green" if result.passed else "bold red")
    r.line(f"cluster{' ' + repr(c.name) if c.name else ''}: {c.gpus:,} x {c.gpu} in {plural(c.nodes, 'node')}")
    r.line(f"profile file {result.profile}")
    r.line(f"cluster file {result.cluster_file}")
    if (planned := on_cluster_line(result)) is not None:
        r.line(planned)
    short = {result.profile: "profile", result.cluster_file: "cluster"}  # the files are named above
    r.line()
    r.table(["", "gate", "value", "limit", "unit", "message (where)"],  # the unit column as markdown's
            [[_ok(options, g.passed) if g.passed or g.severity == "error" else "warn", g.name,
              gate_value(g.value, g.unit), gate_value(g.limit, g.unit),
              "" if g.unit in (None, "USD", "fraction") else g.unit.replace("Gbit/s", "Gb/s"),
              g.message + (f" ({short.get(g.file, g.file)} line {g.line})" if g.file and g.line
                           else f" ({short.get(g.file, g.file)})" if g.file else "")]
             for g in result.gates],
            right={2, 3}, fold={5},
            styles=[None if g.passed else SEVERITY_STYLE[g.severity] for g in result.gates])
    if options.verbose and result.plan is not None and (phase := getattr(result.plan, c.phase)) is not None:
        r.line()  # -v: the report of the phase planned on the cluster, as recommend prints it
        _phase(r, c.phase, phase, result.plan.pricing)
    return r.text()


def on_cluster_line(result: "CheckResult") -> str | None:
    """'on the cluster: training: 480 x h100-sxm-80gb (60 nodes), 32.7 days, capex ..., 643 kW'; a
    serving fleet sized on the cluster's GPU to another count says what the plan needs beside what the
    cluster has: 'the plan needs: serving: 13 x l40s-pcie-48gb ...; the cluster has 8'."""
    if result.plan is None or (phase := getattr(result.plan, result.cluster.phase)) is None:
        return None
    line = headline(result.cluster.phase, phase, result.plan.pricing)
    if phase.feasible and phase.gpus != result.cluster.gpus:
        return f"the plan needs: {line}; the cluster has {plural(result.cluster.gpus, 'GPU')}"
    return "on the cluster: " + line


def render_diff(result: "DiffResult", options: RenderOptions) -> str:
    r = _Report(options)
    r.line(f"gpuplan diff: {result.base} -> {result.new}", "bold")
    if not result.changed:
        r.line("no change")
        return r.text()
    delta = result.capex_delta_usd
    change = "unpriced" if delta is None else signed(delta, usd(abs(delta)))
    r.line(f"capex {usd(result.capex_base_usd)} -> {usd(result.capex_new_usd)} ({change}); "
           f"power {num(result.power_base_kw)} -> {num(result.power_new_kw)} kW")
    for p in result.phases:
        r.line()
        r.heading(f"{p.phase}: {p.status}")
        if p.changes:
            r.table(["field", "base", "new", "change"],
                    [[FIELD_LABELS.get(c.field, c.field), change_cell(c.field, c.base), change_cell(c.field, c.new),
                      change_delta(c.field, c.delta, c.delta_ratio)] for c in p.changes],
                    right={1, 2, 3})
        if p.bom:
            if p.changes:
                r.line()
            r.table(["category", "tier", "part", "base qty", "new qty", "change $"],
                    [[b.category, b.tier or "", b.part_id, f"{b.base_quantity:,}", f"{b.new_quantity:,}",
                      bom_change_usd(b)]
                     for b in p.bom], right={3, 4, 5})
    for title, findings in (("new findings", result.findings_added), ("resolved findings", result.findings_resolved)):
        if findings:
            r.line()
            r.heading(title)
            for f in findings:
                r.line(f"{f.severity}: {f.phase}: {f.message}", SEVERITY_STYLE[f.severity])
    if result.findings_changed:
        r.line()
        r.heading("changed findings")
        for c in result.findings_changed:
            sev = c.new.severity if c.new.severity == c.base.severity else f"{c.base.severity} -> {c.new.severity}"
            r.line(f"{sev}: {c.new.phase}: {c.new.code}: {c.base.message} -> {c.new.message}",
                   SEVERITY_STYLE[c.new.severity])
    return r.text()

