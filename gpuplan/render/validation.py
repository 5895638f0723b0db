"""Table of a validation report: one row per figure, then the summary."""

from __future__ import annotations

from gpuplan.render.safe import plain_text
from gpuplan.render.text import num, table
from gpuplan.ci.validate import Report


def render_report(report: Report) -> str:
    rows = []
    for case in report.cases:
        if not case.figures:
            rows.append([case.id, case.kind, "-", "-", "-", "-", "-", "-", case.status.upper() + ": " + case.message])
        for fig in case.figures:
            err = "-" if fig.error is None else f"{fig.error * 100:.1f}%"
            status = case.status if case.status in ("not_modelled", "error") else ("pass" if fig.passed else "FAIL")
            band = "-" if fig.low is None or fig.high is None else f"{num(fig.low, 3)}-{num(fig.high, 3)}"
            rows.append([case.id, case.kind, fig.name, num(fig.measured, 4), num(fig.predicted, 4), band, err,
                         f"{fig.tolerance * 100:g}%", status])
    s = report.summary
    level = f"{s.interval_level:.0%} interval" if s.interval_level else "interval"
    text = table(["case", "kind", "figure", "measured", "predicted", level, "error", "tolerance", "status"], rows,
                 right={3, 4, 5, 6, 7})
    med = "-" if s.median_error is None else f"{s.median_error * 100:.1f}%"
    worst = "-" if s.worst_error is None else f"{s.worst_error * 100:.1f}% ({s.worst_case})"
    text += (f"\n{s.passed}/{s.cases} cases pass, {s.failed} fail, {s.not_modelled} not modelled, "
             f"{s.errors} errors; median error {med}, worst {worst}\n")
    for kind, k in s.by_kind.items():
        if k.figures:
            cover = "" if k.coverage is None else f"; {k.coverage * 100:.0f}% inside their interval"
            text += (f"  {kind}: {k.figures} figures, median error {k.median_error * 100:.1f}%, "  # type: ignore[operator]
                     f"worst {k.worst_error * 100:.1f}% ({k.worst_case}){cover}\n")  # type: ignore[operator]
    return plain_text(text)
