"""The roofline picture of a phase (Williams, Waterman and Patterson, CACM 2009): the roof
``min(peak, bandwidth x intensity)`` through the plan's own peak and bandwidth, the ridge, and per
kernel class the point the plan achieves, below the roof, with a dashed drop from the roof.

Achieved points come from the plan: serving prefill and decode at their steps' FLOPs over the
steps' modelled time (``Roofline.prefill_achieved_tflops`` / ``decode_achieved_tflops``), the
training layer GEMMs at the plan's model TFLOP/s per GPU (MFU x peak, averaged over the whole
step). A point the plan has no achieved figure for is a hollow marker on the roof (its bound).
The only arithmetic here is geometry.
"""

from __future__ import annotations

import math

from gpuplan.core.contract import Roofline, ServingPlan, TrainingPlan, TrainingRoofline
from gpuplan.render.svg import PALETTE, Labels, el, f, fit, heading, svg
from gpuplan.render.text import num, roofline_rows

WIDTH, PLOT_H = 720, 340
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 30, 46


def achieved_points(phase: TrainingPlan | ServingPlan) -> dict[str, tuple[float, str]]:
    """Point name -> (achieved TFLOP/s per GPU, what it is) from the plan."""
    rf = phase.roofline
    if isinstance(rf, Roofline):
        out = {}
        for name, got in (("prefill", rf.prefill_achieved_tflops), ("decode", rf.decode_achieved_tflops)):
            if got:
                out[name] = (got, f"{name} step FLOPs / modelled step time")
        return out
    if isinstance(rf, TrainingRoofline) and rf.points and isinstance(phase, TrainingPlan) and phase.model_tflops_per_gpu:
        return {rf.points[0].name: (phase.model_tflops_per_gpu, "model FLOP/s per GPU over the step")}
    return {}


def _short(name: str) -> str:
    return name.split(" (")[0]


def roofline_svg(rf: Roofline | TrainingRoofline, *, title: str,
                 achieved: dict[str, tuple[float, str]] | None = None) -> str:
    """Log-log roofline with the plan's achieved points and a legend below the plot."""
    achieved = achieved or {}
    points = [(name, ai, bnd) for name, ai, bnd in roofline_rows(rf) if ai > 0 and math.isfinite(ai)]

    def roof(ai: float) -> float:
        return min(rf.peak_tflops, rf.mem_bw_tbps * ai)

    xs = [ai for _, ai, _ in points] + [rf.ridge_flops_per_byte]
    x_lo, x_hi = math.floor(math.log10(min(xs) / 2)), math.ceil(math.log10(max(xs) * 2))
    lows = [roof(10 ** x_lo)] + [got for got, _ in achieved.values() if got > 0]
    y_lo, y_hi = math.floor(math.log10(min(lows))), math.ceil(math.log10(rf.peak_tflops * 1.5))
    height = PLOT_H + 20 + 30 * len(points)
    labels = Labels(WIDTH, height)

    def px(ai: float) -> float:
        return LEFT + (math.log10(ai) - x_lo) / (x_hi - x_lo) * (WIDTH - LEFT - RIGHT)

    def py(tflops: float) -> float:
        return TOP + (y_hi - math.log10(tflops)) / (y_hi - y_lo) * (PLOT_H - TOP - BOTTOM)

    base = PLOT_H - BOTTOM
    parts = [heading(labels, title, LEFT, 18, WIDTH - LEFT - 10)]
    axes = []
    for d in range(x_lo, x_hi + 1):
        axes.append(el("line", {"x1": f(px(10 ** d)), "y1": TOP, "x2": f(px(10 ** d)), "y2": f(base), "stroke": "#eaeef2"}))
        axes.append(labels.place(f"{10 ** d:g}", [(px(10 ** d), base + 16, "middle")]))
    for d in range(y_lo, y_hi + 1):
        axes.append(el("line", {"x1": LEFT, "y1": f(py(10 ** d)), "x2": WIDTH - RIGHT, "y2": f(py(10 ** d)),
                                "stroke": "#eaeef2"}))
        axes.append(labels.place(f"{10 ** d:g}", [(LEFT - 6, py(10 ** d) + 4, "end")]))
    axes.append(labels.place("arithmetic intensity (FLOP/byte)", [((LEFT + WIDTH - RIGHT) / 2, PLOT_H - 10, "middle")],
                             required=True))
    mid = (TOP + base) / 2
    axes.append(el("text", {"x": 16, "y": f(mid), "text-anchor": "middle", "transform": f"rotate(-90 16 {f(mid)})"},
                   "TFLOP/s per GPU"))
    parts.append(el("g", {"class": "axes"}, *axes))
    roof_pts = [(10 ** x_lo, roof(10 ** x_lo)), (rf.ridge_flops_per_byte, rf.peak_tflops), (10 ** x_hi, rf.peak_tflops)]
    parts.append(el("polyline", {"class": "roof", "fill": "none", "stroke": "#1b1f24", "stroke-width": 2,
                                 "points": " ".join(f"{f(px(a))},{f(py(b))}" for a, b in roof_pts)}))
    # markers first (their areas are kept free of labels), then the labels that name them
    markers, spots = [], []
    for index, (name, ai, bnd) in enumerate(points):
        colour = PALETTE[index % len(PALETTE)]
        got = achieved.get(name, (None, ""))[0]
        mx, top_y = px(ai), py(roof(ai))
        my = py(got) if got else top_y
        labels.reserve((mx - 7, min(my, top_y) - 7, mx + 7, max(my, top_y) + 7))
        shapes = [el("circle", {"cx": f(mx), "cy": f(my), "r": 6, "fill": colour if got else "white",
                                "stroke": colour, "stroke-width": 2, "class": "achieved" if got else "bound"})]
        if got:
            shapes = [el("line", {"x1": f(mx), "y1": f(top_y), "x2": f(mx), "y2": f(my), "stroke": colour,
                                  "stroke-dasharray": "3 2"}),
                      el("circle", {"cx": f(mx), "cy": f(top_y), "r": 3, "fill": "white", "stroke": colour,
                                    "class": "roof-point"})] + shapes
        markers.append(el("g", {"class": "marker", "data-phase": name, "data-flops-per-byte": f"{ai:g}",
                                "data-bound": bnd, "data-roof-tflops": f"{roof(ai):.6g}",
                                "data-achieved-tflops": f"{got:.6g}" if got else None}, *shapes))
        spots.append((name, mx, my, colour))
    rx, ry = px(rf.ridge_flops_per_byte), py(rf.peak_tflops)
    labels.reserve((rx - 5, ry - 5, rx + 5, ry + 5))
    parts += markers
    ridge_text = f"ridge {num(rf.ridge_flops_per_byte)} FLOP/byte, {num(rf.peak_tflops)} TFLOP/s"
    parts.append(el("g", {"class": "ridge", "data-flops-per-byte": f"{rf.ridge_flops_per_byte:g}",
                          "data-peak-tflops": f"{rf.peak_tflops:g}", "data-mem-bw-tbps": f"{rf.mem_bw_tbps:g}"},
                    el("line", {"x1": f(rx), "y1": f(ry), "x2": f(rx), "y2": f(base), "stroke": "#8c959f",
                                "stroke-dasharray": "4 3"}),
                    el("circle", {"cx": f(rx), "cy": f(ry), "r": 4, "fill": "#8c959f"}),
                    labels.place(ridge_text, [(rx + 6, ry - 8, "start"), (rx - 6, ry - 8, "end"),
                                              (rx + 6, ry + 16, "start"), (rx - 6, ry + 16, "end")], required=True)))
    for name, mx, my, colour in spots:
        parts.append(labels.place(_short(name), [(mx + 10, my + 4, "start"), (mx - 10, my + 4, "end"),
                                                 (mx, my + 20, "middle"), (mx, my - 12, "middle")],
                                  fill=colour, **{"font-weight": "bold", "class": "point-label"}))
    parts.append(_legend(points, achieved, roof, labels))
    return svg("roofline", WIDTH, height, title, *parts)


def _legend(points: list[tuple[str, float, str]], achieved: dict[str, tuple[float, str]], roof,
            labels: Labels) -> str:
    """One line per point under the plot: intensity, bound, achieved throughput and its share of the roof."""
    rows = []
    for index, (name, ai, bnd) in enumerate(points):
        colour = PALETTE[index % len(PALETTE)]
        y = PLOT_H + 14 + 30 * index
        got, what = achieved.get(name, (None, ""))
        head = f"{name}: {num(ai)} FLOP/byte, {bnd}-bound"
        tail = (f"achieves {num(got)} of the roof's {num(roof(ai))} TFLOP/s ({got / roof(ai):.0%}): {what}" if got
                else f"on the roof at {num(roof(ai))} TFLOP/s (its bound; the plan has no achieved figure)")
        rows += [el("circle", {"cx": LEFT - 12, "cy": f(y - 4), "r": 5, "fill": colour}),
                 labels.place(fit(head, WIDTH - LEFT - 10), [(LEFT, y, "start")], required=True),
                 labels.place(fit(tail, WIDTH - LEFT - 10), [(LEFT, y + 14, "start")], required=True,
                              fill="#57606a")]
    return el("g", {"class": "legend"}, *rows)
