"""GitHub Actions workflow commands: ``::error file=...,line=...::message`` per finding or failed gate.

Run in a workflow step, each line becomes an annotation on the profile (or cluster) line that causes
it; one ``::notice`` per phase carries the recommendation itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplan.core.contract import Plan
from gpuplan.planning.saved import anchors, locate
from gpuplan.render import RenderOptions
from gpuplan.render.cost import tco_line
from gpuplan.render.text import headline

if TYPE_CHECKING:
    from gpuplan.ci.check import CheckResult

COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, *, file: str | None = None, line: int | None = None,
            title: str | None = None) -> str:
    props = [f"{k}={escape_property(str(v))}" for k, v in (("file", file), ("line", line), ("title", title))
             if v is not None and v != ""]
    return f"::{kind}{' ' + ','.join(props) if props else ''}::{escape_data(message)}\n"


def render(plan: Plan, options: RenderOptions) -> str:
    file, lines = anchors(plan, options.field_lines)
    out = []
    for name, phase in (("training", plan.training), ("serving", plan.serving)):
        if phase is not None:
            out.append(command("notice", headline(name, phase, plan.pricing), file=file, title=f"gpuplan {name}"))
    for f in plan.findings:
        line = locate(f.field, lines)
        out.append(command(COMMAND[f.severity], f"{f.phase}: {f.message}", file=file if f.field else None,
                           line=line if f.field else None, title=f"gpuplan {f.code}"))
    for name, phase in (("training", plan.training), ("serving", plan.serving)):  # the short cost block
        if phase is not None and phase.tco is not None:
            out.append(command("notice", f"{name} cost of ownership: {tco_line(phase.tco)}", file=file,
                               title=f"gpuplan {name} cost"))
    return "".join(out)


def render_check(result: "CheckResult", options: RenderOptions) -> str:
    c = result.cluster
    passed = sum(1 for g in result.gates if g.passed)
    out = [command("notice", f"{'passed' if result.passed else 'failed'}: {passed}/{len(result.gates)} gates pass "
                   f"for {result.workload} ({c.phase}) on {c.gpus:,} x {c.gpu}", file=result.cluster_file,
                   title="gpuplan check")]
    out += [command(COMMAND[g.severity], f"{g.phase}: {g.message}", file=g.file, line=g.line,
                    title=f"gpuplan check {g.name}") for g in result.gates if not g.passed]
    return "".join(out)
