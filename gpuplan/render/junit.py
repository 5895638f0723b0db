"""JUnit XML: one test suite per phase, one test case per gate.

For a plan: ``<phase>: plan`` fails when the phase is infeasible, and every finding is a test case
(errors fail; warnings and notes pass with the message in ``system-out``). For a check result: one
test case per gate. Test cases carry ``file`` and ``line`` of the field that causes them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from gpuplan.core.contract import Plan
from gpuplan.planning.saved import anchors, locate
from gpuplan.render import RenderOptions
from gpuplan.render.cost import tco_line

if TYPE_CHECKING:
    from gpuplan.ci.check import CheckResult

#: (name, passed, failure type, message, file, line, output)
Case = tuple[str, bool, str, str, "str | None", "int | None", "str | None"]


def _suite(parent: ET.Element, name: str, cases: list[Case]) -> tuple[int, int]:
    failures = sum(1 for c in cases if not c[1])
    suite = ET.SubElement(parent, "testsuite", {"name": name, "tests": str(len(cases)), "failures": str(failures),
                                                "errors": "0", "skipped": "0"})
    for case_name, passed, kind, message, file, line, output in cases:
        attrs = {"classname": name, "name": case_name}
        if file:
            attrs["file"] = file
        if file and line:
            attrs["line"] = str(line)
        case = ET.SubElement(suite, "testcase", attrs)
        if not passed:
            fail = ET.SubElement(case, "failure", {"type": kind, "message": message})
            fail.text = message
        if output:
            ET.SubElement(case, "system-out").text = output
    return len(cases), failures


#: Characters XML 1.0 forbids even escaped (a profile name or message could carry them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _document(name: str, suites: list[tuple[str, list[Case]]]) -> str:
    root = ET.Element("testsuites", {"name": name})
    tests = failures = 0
    for suite_name, cases in suites:
        t, f = _suite(root, suite_name, cases)
        tests, failures = tests + t, failures + f
    root.set("tests", str(tests))
    root.set("failures", str(failures))
    root.set("errors", "0")
    ET.indent(root)
    text = _NOT_XML.sub("\ufffd", ET.tostring(root, encoding="unicode"))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n"


def render(plan: Plan, options: RenderOptions) -> str:
    file, lines = anchors(plan, options.field_lines)
    suites = []
    for name in ("training", "serving", "profile"):
        phase = getattr(plan, name, None) if name != "profile" else None
        findings = [f for f in plan.findings if f.phase == name]
        if phase is None and not findings:
            continue
        cases: list[Case] = []
        if phase is not None:
            why = "; ".join(phase.infeasible) or "no feasible plan"
            cost = tco_line(phase.tco) if getattr(phase, "tco", None) is not None else None
            cases.append((f"{name}: plan", phase.feasible, f"{name}-infeasible", why, file,
                          locate(name, lines), f"cost of ownership: {cost}" if cost else None))
        for f in findings:
            at = locate(f.field, lines) if f.field else None
            cases.append((f"{name}: {f.code}", f.severity != "error", f.code, f.message, file if f.field else None,
                          at, None if f.severity == "error" else f"{f.severity}: {f.message}"))
        suites.append((f"gpuplan.{name}", cases))
    return _document(f"gpuplan {plan.workload}", suites)


def render_check(result: "CheckResult", options: RenderOptions) -> str:
    cases: list[Case] = []
    from gpuplan.ci.check import fails_check

    for g in result.gates:
        fails = fails_check(g, result.fail_on)
        output = None if fails else (f"warning: {g.message}" if not g.passed else g.message)
        cases.append((g.name, not fails, f"gate-{g.name}", g.message, g.file, g.line, output))
    return _document(f"gpuplan check {result.workload}", [(f"gpuplan.check.{result.cluster.phase}", cases)])
