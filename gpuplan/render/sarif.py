"""SARIF 2.1.0: findings (or failed check gates) as code-scanning results on the profile's lines.

Each finding code is a rule; each finding a result whose location is the profile line of the field
that causes it (GitHub code scanning shows it on the pull request's diff). Only files get locations:
a plan of the built-in default profile has results without locations.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gpuplan.core.version import __version__
from gpuplan.core.contract import Plan
from gpuplan.planning.saved import anchors, locate
from gpuplan.render import RenderOptions
from gpuplan.render.cost import tco_object
from gpuplan.render.json_ import stable

if TYPE_CHECKING:
    from gpuplan.ci.check import CheckResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "note": "note"}


def _location(file: str | None, line: int | None) -> list[dict[str, Any]]:
    if not file:
        return []
    return [{"physicalLocation": {"artifactLocation": {"uri": file},
                                  "region": {"startLine": line or 1}}}]


def _log(results: list[tuple[str, str, str, str | None, int | None]], properties: dict[str, Any],
         tool_version: str) -> str:
    """results: (rule id, level, message, file, line)."""
    rules = sorted({(rule, level) for rule, level, _, _, _ in results})
    ids = sorted({rule for rule, _ in rules})
    default_level = {rule: level for rule, level in rules}
    driver = {"name": "gpuplan", "semanticVersion": tool_version, "version": tool_version,
              "rules": [{"id": rule, "name": rule, "shortDescription": {"text": rule.replace("-", " ")},
                         "defaultConfiguration": {"level": default_level[rule]}} for rule in ids]}
    out = [{"ruleId": rule, "ruleIndex": ids.index(rule), "level": level, "message": {"text": message},
            "locations": _location(file, line)} for rule, level, message, file, line in results]
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
           "runs": [{"tool": {"driver": driver}, "results": out, "properties": properties,
                     "columnKind": "unicodeCodePoints"}]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render(plan: Plan, options: RenderOptions) -> str:
    file, lines = anchors(plan, options.field_lines)
    results = [(f.code, LEVEL[f.severity], f"{f.phase}: {f.message}", file, locate(f.field, lines))
               for f in plan.findings]
    props = {"schema_version": plan.schema_version, "workload": plan.workload, "profile": plan.profile,
             "input_sha256": plan.input_sha256, "catalog_version": plan.catalog_version,
             "tco": stable({name: tco_object(phase.tco) for name, phase
                            in (("training", plan.training), ("serving", plan.serving)) if phase is not None})}
    return _log(results, props, plan.gpuplan_version)


def render_check(result: "CheckResult", options: RenderOptions) -> str:
    results = [(f"check-{g.name}", LEVEL[g.severity], f"{g.phase}: {g.message}", g.file, g.line)
               for g in result.gates if not g.passed]
    props = {"schema_version": result.schema_version, "workload": result.workload, "profile": result.profile,
             "cluster_file": result.cluster_file, "passed": result.passed}
    return _log(results, props, result.gpuplan_version or __version__)
