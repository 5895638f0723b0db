"""Plain fixed-width text tables and the wording shared by the human formats (no colour, no terminal
probing: safe in CI logs and pipes).

The ``*_facts`` helpers turn plan fields into labelled strings once, so the table, Markdown, HTML
and GitHub renderers say the same thing the same way. They format; they never compute physics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gpuplan.render.numbers import num, pct, recompute_text, usd  # noqa: F401  (re-exported)
from gpuplan.core.contract import (
    Bom, Interconnect, Roofline, ServingLayout, ServingOption, ServingPlan, Topology, TrainingLayout,
    TrainingLayoutOption, TrainingOption, TrainingPlan, TrainingRoofline,
)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, right: set[int] | None = None,
          width: int | None = None, fold: int | None = None) -> str:
    """Render rows under headers with aligned columns; numbers right-aligned by ``right`` index.

    With ``width``, every line fits it: the ``fold`` column (a long list, such as sources) moves
    under its row as ``header: value`` when the table is too wide, then text columns (not the
    first, not the right-aligned numbers) narrow; cells wrap at whole words, and a word longer
    than its column is cut with '…'."""
    right = right or set()
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    folded: list[str] = []
    if width is not None and fold is not None and sum(widths) + 2 * (len(widths) - 1) > width:
        folded = [r.pop(fold) for r in cells]
        widths.pop(fold)
        right = {i - (i > fold) for i in right if i != fold}
    if width is not None:
        widths = _fit(cells, widths, right, width)

    def block(row: list[str]) -> list[str]:
        cols = [_wrap(c, widths[i]) for i, c in enumerate(row)]
        lines = []
        for k in range(max(len(c) for c in cols)):
            parts = [(c[k] if k < len(c) else "") for c in cols]
            lines.append("  ".join(p.rjust(widths[i]) if i in right else p.ljust(widths[i])
                                   for i, p in enumerate(parts)).rstrip())
        return lines

    out = block(cells[0]) + ["  ".join("-" * w for w in widths)]
    for n, r in enumerate(cells[1:], start=1):
        out += block(r)
        if folded and folded[n]:
            out += ["  " + line for line in _wrap(f"{folded[0]}: {folded[n]}", max(1, (width or 0) - 2))]
    return "\n".join(out) + "\n"


#: Narrowest a text column gets before lines are allowed past the width.
MIN_TEXT_COLUMN = 6


def _fit(cells: list[list[str]], widths: list[int], right: set[int], width: int) -> list[int]:
    """Narrow columns one character at a time, always the one with the most to give, until the
    row fits ``width``: a number or the first column down to its widest value (its header wraps),
    a text column down to its longest word, then (still too wide) to :data:`MIN_TEXT_COLUMN`."""
    widths = list(widths)
    gap = 2 * (len(widths) - 1)
    words = [max((len(w) for r in cells for w in r[i].split()), default=1) for i in range(len(widths))]
    header_words = [max((len(w) for w in cells[0][i].split()), default=1) for i in range(len(widths))]
    fixed = {i: max([header_words[i], *(len(r[i]) for r in cells[1:])]) for i in range(len(widths))
             if i == 0 or i in right}
    for text_floor in (lambda i: min(widths[i], max(words[i], MIN_TEXT_COLUMN)),
                       lambda i: min(widths[i], max(header_words[i], MIN_TEXT_COLUMN))):
        floors = [fixed.get(i, text_floor(i)) for i in range(len(widths))]
        while sum(widths) + gap > width:
            i = max(range(len(widths)), key=lambda c: (widths[c] - floors[c], widths[c]))
            if widths[i] <= floors[i]:
                break
            widths[i] -= 1
    return widths


def _wrap(text: str, width: int) -> list[str]:
    """A cell as lines of at most ``width``: whole words, or a word cut with '…' when it is longer."""
    if len(text) <= width:
        return [text]
    import textwrap

    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]
    return [line if len(line) <= width else line[: max(1, width - 1)] + "…" for line in lines]


def signed(value: float, text: str) -> str:
    """Prefix a formatted magnitude with + or - (``text`` is the formatted absolute value)."""
    if value > 0:
        return "+" + text
    if value < 0:
        return "-" + text.lstrip("-")
    return text


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


#: Diffed fields whose name alone misleads: run_cost_usd is the servers' price under capex pricing.
FIELD_LABELS = {"run_cost_usd": "run_cost_usd (servers, or cloud rent)"}


def change_value(field: str, value: object) -> str:
    """A value of a diffed field: dollars for ``*_usd``, yes/no, numbers with separators."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and (field.endswith("_usd") or field.startswith("usd_")):
        return usd(float(value))
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return num(value)
    return str(value)


def gate_value(value: float | None, unit: str | None) -> str:
    """A check gate's value or limit in its unit's style (dollars for USD, a fraction as a percentage)."""
    if unit == "fraction" and value is not None:
        return pct(value)
    return usd(value) if unit == "USD" else num(value)


LAYOUT_HEADERS = ["layout", "mb", "rc", "step s", "MFU", "compute", "exposed comm", "bubble", "headroom GiB"]


def layout_rows(options: Sequence[TrainingLayoutOption]) -> list[list[str]]:
    """One row per runner-up layout: shape, micro-batch, recompute, step time and its main terms."""
    rows = []
    for o in options:
        lay, b = o.layout, o.breakdown
        comm = b.tp_comm_s + b.pp_comm_s + b.dp_comm_s + b.ep_comm_s + b.cp_comm_s
        shape = " ".join([f"TP{lay.tp}", f"PP{lay.pp}" + (f"x{lay.vp}" if lay.vp > 1 else ""), f"DP{lay.dp}"]
                         + [f"{n}{v}" for n, v in (("CP", lay.cp), ("EP", lay.ep)) if v > 1])
        rows.append([shape, str(lay.micro_batch), recompute_text(lay.recompute, lay.recompute_layers, short=True), num(o.step_time_s), pct(o.mfu), num(b.compute_s),
                     num(comm), num(b.bubble_s), num(o.memory_headroom_gib)])
    return rows


def training_layout(layout: TrainingLayout | None) -> str:
    if layout is None:
        return "-"
    parts = [f"TP{layout.tp}", f"PP{layout.pp}" + (f" (v{layout.vp})" if layout.vp > 1 else ""), f"DP{layout.dp}"]
    parts += [f"{name}{value}" for name, value in (("CP", layout.cp), ("EP", layout.ep)) if value > 1]
    extras = [f"micro-batch {layout.micro_batch} x {layout.num_micro_batches}",
              f"global batch {layout.global_batch_sequences:,} seq", f"ZeRO-{layout.zero}",
              f"recompute {recompute_text(layout.recompute, layout.recompute_layers)}"]
    if layout.sequence_parallel:
        extras.append("sequence parallel")
    return " x ".join(parts) + "; " + ", ".join(extras)


def serving_layout(layout: ServingLayout | None) -> str:
    if layout is None:
        return "-"
    parts = [f"TP{layout.tp}", f"PP{layout.pp}"] + ([f"EP{layout.ep}"] if layout.ep > 1 else [])
    text = " x ".join(parts) + f"; batch {layout.concurrency} sequences at the target load"
    return text + ("; disaggregated prefill/decode" if layout.disaggregated else "")


def fabric(ic: Interconnect | None) -> str:
    if ic is None:
        return "-"
    up = f"{ic.scaleup_tech} x{ic.scaleup_domain_gpus} ({num(ic.scaleup_uni_gb_per_s)} GB/s per GPU per direction)"
    front = f"; front end {ic.frontend_fabric}" if ic.frontend_fabric else ""
    if ic.scaleout_fabric is None:
        return up + "; no scale-out fabric" + front
    nics = f"{ic.nics_per_node} x {ic.nic} per node" if ic.nic else "the GPU's own ports (no NIC)"  # Gaudi 3
    out = (f"{ic.scaleout_fabric} ({ic.scaleout_kind}), {nics}, "
           f"{num(ic.nic_gbit_per_gpu)} Gb/s per GPU (needs {num(ic.required_gbit_per_gpu)})")
    return up + "; " + out + front


def topology(topo: Topology | None) -> str:
    if topo is None or topo.kind == "none":
        return "-"
    switches = [f"{n} {name}" for name, n in (("leaf", topo.leaf_switches), ("spine", topo.spine_switches),
                                              ("core", topo.core_switches)) if n]
    planes = topo.clos.planes if topo.clos is not None else 1
    text = (f"{planes} planes of " if planes > 1 else "") + f"{topo.kind}, {topo.tiers} tier"
    text += "s" if topo.tiers != 1 else ""
    if topo.switch:
        text += f" of {topo.switch}"
    text += f" ({', '.join(switches) or 'no switches'}), {num(topo.oversubscription)}:1"
    bisection = f", {num(topo.bisection_gbit)} Gb/s bisection" if topo.nodes > 1 else ""  # one node: no cut
    return text + f", {plural(topo.nodes, 'node')}{bisection}"


def bom_summary(bom: Bom | None) -> str:
    if bom is None:
        return "-"
    text = (f"capex {usd(bom.capex_usd)} (network {usd(bom.network_capex_usd)}), {num(bom.power_kw)} kW "
            f"(network {num(bom.network_power_kw)} kW), {plural(bom.racks, 'rack')}, {plural(len(bom.items), 'line')}")
    if bom.unpriced_parts:
        text += f"; unpriced, not in capex: {', '.join(bom.unpriced_parts)}"
    if bom.unpowered_parts:
        text += f"; no power figure, not in power: {', '.join(bom.unpowered_parts)}"
    return text


def rng(phase: TrainingPlan | ServingPlan, figure: str, fmt: Any = None) -> str:
    """`` (55-66)``: the interval of a figure at the plan's level, or "" when the plan has none."""
    pair = phase.intervals.get(figure)
    if not pair:
        return ""
    low, high = ((fmt or _two)(v) for v in pair)
    return "" if low == high else f" ({low}-{high})"


def _two(value: float) -> str:
    """Two significant digits, never an exponent: an interval's ends are not precise to more."""
    if value <= 0 or not math.isfinite(value):
        return num(value)
    rounded = round(value, 1 - math.floor(math.log10(value)))
    return f"{rounded:,.0f}" if rounded >= 10 else f"{rounded:.2g}"


def interval_line(phase: TrainingPlan | ServingPlan) -> list[tuple[str, str]]:
    """The level and the basis of the intervals (a fact row), when the plan has them."""
    if not phase.intervals or phase.interval_level is None:
        return []
    return [("intervals", f"{phase.interval_level:.0%} intervals in parentheses: {phase.interval_basis}")]


def training_facts(t: TrainingPlan, pricing: str) -> list[tuple[str, str]]:
    """Label/value rows of the training recommendation, in reading order."""
    if not t.feasible:
        return [("verdict", "infeasible"), *_fix(t), ("why", "; ".join(t.infeasible) or "-")]
    return [
        ("GPUs", f"{t.gpus:,} x {t.gpu} in {plural(t.nodes, 'node')}{_idle(t)}"),
        ("layout", training_layout(t.layout)),
        ("time", f"{num(t.wall_clock_days)} days{rng(t, 'wall_clock_days')} wall clock "
                 f"({num(t.steady_state_days)} steady state, goodput {pct(t.goodput)})"),
        ("step", f"{num(t.step_time_s)} s{rng(t, 'step_time_s')}; MFU {pct(t.mfu)}{rng(t, 'mfu', pct)}, "
                 f"{num(t.model_tflops_per_gpu)} TFLOP/s per GPU, "
                 f"{num(t.tokens_per_s)} tokens/s, {t.precision}"),
        ("bound", t.bound),
        ("fabric", fabric(t.interconnect)),
        ("topology", topology(t.topology)),
        ("cost", _training_cost(t, pricing)),
        ("power", f"{num(t.power_kw)} kW"),
        *_cost_rows(t.bom, t.tco),
        *interval_line(t),
    ]


def _training_cost(t: TrainingPlan, pricing: str) -> str:
    """Capex first under capex pricing (the run is the cluster); the run's rental under cloud pricing."""
    capex = f"capex {usd(t.capex_usd)}" if t.capex_usd is not None else "capex unpriced"
    rate = f"; cluster {usd(t.cloud_usd_per_hour)}/h in the cloud" if t.cloud_usd_per_hour is not None else ""
    hours = f"{num(t.gpu_hours)}{rng(t, 'gpu_hours')} GPU-hours"
    if pricing == "cloud":
        run = usd(t.run_cost_usd) + rng(t, "run_cost_usd", usd) if t.run_cost_usd is not None else "unpriced"
        return f"run {run} ({hours}){rate}; {capex}"
    return f"{capex}; {hours}{rate}"


def serving_facts(s: ServingPlan, pricing: str) -> list[tuple[str, str]]:
    """Label/value rows of the serving recommendation, in reading order."""
    if not s.feasible:
        return [("verdict", "infeasible"), *_fix(s), ("why", "; ".join(s.infeasible) or "-")]
    from gpuplan.render import disagg_view

    split = disagg_view.chosen(s)
    spares = f" ({s.replicas - s.spare_replicas:,} + {s.spare_replicas:,} spare)" if s.spare_replicas else ""
    groups = (f"{plural(s.replicas, 'replica')} of {s.gpus_per_replica}{spares}" if split is None
              else disagg_view.shape(split))
    return [
        ("GPUs", f"{disagg_view.gpu_label(s)} in {plural(s.nodes, 'node')}{_idle(s)}: {groups}"),
        ("layout", serving_layout(s.layout)),
        *disagg_view.facts(s, pricing),
        ("latency", f"TTFT {num(s.ttft_ms_mean)} ms{rng(s, 'ttft_ms_mean')} mean, "
                    + ("" if s.latency_percentile in ("mean", "p99") else
                       f"{num(s.ttft_ms_at_percentile)} ms{rng(s, 'ttft_ms_at_percentile')} {s.latency_percentile}, ")
                    + f"{num(s.ttft_ms_p99)} ms{rng(s, 'ttft_ms_p99')} p99; TPOT {num(s.tpot_ms)} ms{rng(s, 'tpot_ms')}; "
                    f"end to end {num(s.e2e_ms_mean)} ms"),
        ("throughput", f"{num(s.max_qps)} req/s max{rng(s, 'max_qps')} ({num(s.qps_per_replica)} per replica), "
                       f"{num(s.output_tokens_per_s)} output tokens/s at the target QPS{rng(s, 'output_tokens_per_s')}, "
                       f"utilization {pct(s.utilization)}"),
        ("memory", f"{num(s.weights_gib_per_gpu)} GiB weights + {num(s.kv_gib_per_gpu)} GiB KV per GPU "
                   f"(KV capacity {s.max_sequences_per_replica:,} sequences per replica), {s.precision} / KV {s.kv_precision}"
                   + (f", {s.compute_dtype} math" if s.compute_dtype and s.compute_dtype != s.precision else "")),
        ("bound", s.bound),
        ("fabric", fabric(s.interconnect)),
        ("topology", topology(s.topology)),
        ("cost", _serving_cost(s, pricing)),
        ("power", f"{num(s.power_kw)} kW"),
        *_cost_rows(s.bom, s.tco),
        *interval_line(s),
    ]


def _cost_rows(bom: Bom | None, tco: Any) -> list[tuple[str, str]]:
    """The short cost block: facility (racks, cooling, PUE) and cost of ownership (render/cost.py)."""
    from gpuplan.render.cost import facility_line, tco_line

    rows = [("facility", facility_line(bom))] if bom is not None and bom.cooling is not None else []
    return rows + ([("TCO", tco_line(tco))] if tco is not None else [])


def per_token_basis(pricing: str) -> str:
    """What a serving option's $ per million output tokens counts: the cloud rate, or the servers'
    amortised price and energy; never the TCO's whole bill (support, facility)."""
    return "cloud rate" if pricing == "cloud" else "servers + energy"


def _on_curve(s: ServingPlan) -> str:
    """The label of a $ per million tokens priced on the daily demand curve, with the figure at the
    target QPS the alternatives' column shows (planning/demand_cost.py)."""
    at = s.usd_per_million_output_tokens_at_target
    return "" if at is None else f", on the demand curve; {usd(at)} at peak"


def _serving_cost(s: ServingPlan, pricing: str) -> str:
    """The pricing's own figure first (capex, or the cloud rate), then $ per million tokens."""
    capex = f"capex {usd(s.capex_usd)}{rng(s, 'capex_usd', usd)}"
    per_token = (f"{usd(s.usd_per_million_output_tokens)}{rng(s, 'usd_per_million_output_tokens', usd)} "
                 f"per million output tokens ({per_token_basis(pricing)}{_on_curve(s)})")
    cloud = f"cloud {usd(s.cloud_usd_per_hour)}/h" if s.cloud_usd_per_hour is not None else ""
    if pricing == "cloud":
        return "; ".join(p for p in (cloud or "cloud unpriced", per_token, capex))
    return "; ".join(p for p in (capex, per_token, cloud) if p)


def roofline_rows(rf: Roofline | TrainingRoofline) -> list[tuple[str, float, str]]:
    """(name, FLOP per byte, bound) of each point of a serving or training roofline."""
    if isinstance(rf, TrainingRoofline):
        return [(p.name, p.flops_per_byte, p.bound) for p in rf.points]
    return [("prefill", rf.prefill_flops_per_byte, rf.prefill_bound),
            ("decode", rf.decode_flops_per_byte, rf.decode_bound)]


def _fix(phase: TrainingPlan | ServingPlan) -> list[tuple[str, str]]:
    """The closest fix of an infeasible phase, first (planning/closest_fix.py computes it)."""
    fix = getattr(phase, "closest_fix", None)
    return [("closest fix", fix.message)] if fix is not None else []


def _idle(phase: TrainingPlan | ServingPlan) -> str:
    return f" ({phase.gpus_idle:,} idle)" if phase.gpus_idle else ""


def headline(name: str, phase: TrainingPlan | ServingPlan, pricing: str) -> str:
    """One verdict line per phase: what to buy and what it costs under the profile's pricing."""
    if not phase.feasible:
        return f"{name}: infeasible"
    extra = (f"{num(phase.wall_clock_days)} days" if isinstance(phase, TrainingPlan)
             else f"TTFT p99 {num(phase.ttft_ms_p99)} ms, TPOT {num(phase.tpot_ms)} ms")
    idle = f", {phase.gpus_idle:,} idle" if phase.gpus_idle else ""
    what = f"{phase.gpus:,} x {phase.gpu}"
    if isinstance(phase, ServingPlan):
        from gpuplan.render.disagg_view import gpu_label

        what = gpu_label(phase)
    return (f"{name}: {what} ({plural(phase.nodes, 'node')}{idle}), {extra}, "
            f"{phase_cost(phase, pricing)}, {num(phase.power_kw)} kW")


def phase_cost(phase: TrainingPlan | ServingPlan, pricing: str) -> str:
    """The phase's cost in the profile's terms: cloud $/h, or capex ("unpriced" without a server price)."""
    if pricing == "cloud":
        return f"cloud {usd(phase.cloud_usd_per_hour)}/h" if phase.cloud_usd_per_hour is not None else "cloud unpriced"
    return f"capex {usd(phase.capex_usd)}" if phase.capex_usd is not None else "capex unpriced"


def sized(option: object, text: str) -> str:
    """A figure of an alternative, or "-" where the option has no sized layout (0 GPUs: it does not
    qualify), so no table shows 0 GPUs or 0 ms for it."""
    return text if getattr(option, "gpus", 0) else "-"


def serving_option_cost(option: ServingOption, pricing: str) -> str:
    """A serving alternative's cost in the terms it was ranked on (cloud $/h or capex)."""
    if pricing == "cloud":
        return f"{usd(option.cloud_usd_per_hour)}/h" if option.cloud_usd_per_hour is not None else "-"
    return option_cost(option, pricing)


def option_cost(option: TrainingOption | ServingOption, pricing: str) -> str:
    """An alternative's ``cost_usd``; a capex of the servers only (no own network) marked ``*``."""
    if option.cost_usd is None or pricing == "cloud":
        return usd(option.cost_usd)
    return usd(option.cost_usd) + ("" if option.network_included else "*")


def cost_basis_note(options: Sequence[TrainingOption | ServingOption], pricing: str) -> str | None:
    """The footnote of a ``*`` capex, when an alternatives table has one."""
    if pricing == "cloud" or all(o.network_included or o.cost_usd is None for o in options):
        return None
    return "* servers only, without their network; the options priced with their network rank first"
