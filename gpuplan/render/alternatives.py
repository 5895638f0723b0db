"""The alternatives tables of a phase (the other GPU types, ranked), one set of columns for the
Markdown and the HTML reports: the HTML carries everything the Markdown does (docs/report.md)."""

from __future__ import annotations

from collections.abc import Sequence

from gpuplan.core.contract import ServingOption, ServingPlan, TrainingOption
from gpuplan.render.text import num, option_cost, pct, per_token_basis, serving_option_cost, sized, usd

TRAINING_HEADERS = ["GPU", "GPUs", "nodes", "layout", "days", "MFU", "cost", "meets target", "bound"]
TRAINING_RIGHT = {1, 2, 4, 5, 6}
SERVING_HEADERS = ["GPU", "GPUs", "replicas", "layout", "TTFT p99 ms", "TPOT ms", "max req/s", "cost", "$/M tokens",
                   "meets target", "note"]
SERVING_RIGHT = {1, 2, 4, 5, 6, 7, 8}


def serving_headers(s: ServingPlan) -> list[str]:
    """SERVING_HEADERS with the $/M tokens column labelled by what it counts for this plan."""
    return [per_token_header(s) if h == "$/M tokens" else h for h in SERVING_HEADERS]


def training_rows(options: Sequence[TrainingOption], pricing: str) -> list[list[str]]:
    """One row per training alternative: size, layout, days, MFU, cost in the pricing's terms, bound."""
    return [[a.gpu, sized(a, f"{a.gpus:,}"), sized(a, f"{a.nodes:,}"), f"TP{a.layout.tp} PP{a.layout.pp} DP{a.layout.dp}",
             sized(a, num(a.wall_clock_days)), sized(a, pct(a.mfu)), sized(a, option_cost(a, pricing)),
             "yes" if a.meets_target else "no", a.bound] for a in options]


def serving_rows(options: Sequence[ServingOption], pricing: str) -> list[list[str]]:
    """One row per serving alternative: size, layout, latencies, capacity, cost, $ per million tokens."""
    return [[a.gpu, sized(a, f"{a.gpus:,}"), sized(a, a.replicas), f"TP{a.layout.tp} PP{a.layout.pp}",
             sized(a, num(a.ttft_ms_p99)), sized(a, num(a.tpot_ms)), sized(a, num(a.max_qps)),
             sized(a, serving_option_cost(a, pricing)), sized(a, usd(a.usd_per_million_output_tokens)),
             "yes" if a.meets_target else "no", a.reason] for a in options]


def per_token_header(s: ServingPlan, label: str = "$/M tokens") -> str:
    """The serving table's $/M tokens column, "at peak" when the chosen fleet's own figure is on its
    daily demand curve (planning/demand_cost.py): the alternatives are priced at the target QPS."""
    return f"{label} at peak" if s.usd_per_million_output_tokens_at_target is not None else label


def per_token_note(s: ServingPlan, pricing: str, label: str = "$/M tokens") -> str:
    """What the serving table's $/M tokens column counts; on a demand curve, the chosen fleet's
    figure on the column's basis beside the curve's, so the rows compare with it."""
    note = f"{per_token_header(s, label)}: per million output tokens at the target QPS"
    if s.usd_per_million_output_tokens_at_target is None:
        return f"{note} ({per_token_basis(pricing)})"
    return (f"{note}, the sizing load, not the daily demand curve ({per_token_basis(pricing)}); the chosen {s.gpu}: "
            f"{usd(s.usd_per_million_output_tokens_at_target)} at peak, "
            f"{usd(s.usd_per_million_output_tokens)} on the curve")
