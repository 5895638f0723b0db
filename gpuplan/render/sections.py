"""Which parts of the table report print: a summary by default, the rest by ``-v`` or ``--section``.

The summary of a phase is its headline, the facts people decide on (GPUs, layout, time or latency,
power and one cost block), the three reasons that matter most, and one line per finding. Every other
part is a named section (:data:`SECTIONS`): ``--section NAME`` (repeatable) adds it, ``-v`` adds all.
"""

from __future__ import annotations

from gpuplan.render import RenderOptions

#: section name -> what it adds to the summary (docs/report.md lists the same).
SECTIONS: dict[str, str] = {
    "facts": "every fact of each phase (step, bound, fabric, topology, facility, intervals, autoscaling)",
    "reasons": "every reason of each phase, not only the first three",
    "network": "the network reasons (scale-up, scale-out, topology)",
    "roofline": "the roofline table of each phase",
    "layouts": "the next best layouts on the recommended GPU (training)",
    "alternatives": "the other GPU types, ranked",
    "bom": "the bill of materials summary",
    "fleet": "the fleet strategies over both phases",
    "findings": "the findings table with full messages",
    "assumptions": "the defaults applied",
}

#: Facts of a feasible phase that the summary keeps (the rest are the ``facts`` section).
SUMMARY_FACTS = {"GPUs", "layout", "pools", "time", "latency", "throughput", "cost", "power", "TCO"}

#: Reasons the summary keeps per phase.
SUMMARY_REASONS = 3


def shows(options: RenderOptions, name: str) -> bool:
    """True when section ``name`` prints: ``-v``, or asked for by ``--section``."""
    return bool(options.verbose) or name in options.sections


def summary_facts(rows: list[tuple[str, str]], options: RenderOptions) -> list[tuple[str, str]]:
    if shows(options, "facts"):
        return rows
    return [(label, value) for label, value in rows if label in SUMMARY_FACTS or label in ("verdict", "closest fix", "why")]


def summary_reasons(reasons: list[str], options: RenderOptions) -> list[str]:
    return reasons if shows(options, "reasons") else reasons[:SUMMARY_REASONS]


def one_line(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters at a word, with an ASCII ellipsis when anything was cut."""
    if len(text) <= width:
        return text
    cut = text[: width - 3].rsplit(" ", 1)[0].rstrip(" ,;:(")
    return cut + "..."


def hidden_note(options: RenderOptions) -> str | None:
    """The last line of a summary: how to see the rest."""
    if options.verbose or set(SECTIONS) <= set(options.sections):
        return None
    rest = [name for name in SECTIONS if name not in options.sections]
    return f"more: -v for all, or --section NAME for one of: {', '.join(rest)}"
