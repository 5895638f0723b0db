"""Pictures of a phase for the HTML report, beside html.py's roofline and topology: the rack
elevation (racks with their servers and switches, kW per rack, air or liquid; from the plan's BOM)
and the serving throughput-latency frontier (plan.serving.frontier). Inline SVG, no script."""

from __future__ import annotations

import math

from gpuplan.core.contract import Bom, FrontierPoint
from gpuplan.render.svg import PALETTE, Labels, fit, heading, svg, wrap
from gpuplan.render.svg import el as _el
from gpuplan.render.svg import f as _f
from gpuplan.render.svg import t as _t
from gpuplan.render.text import num, plural

#: Racks drawn before the rest are counted in the caption.
MAX_RACKS = 12
COOLING_FILL = {"liquid": "#ddf4ff", "rear-door": "#fff8c5", "air": "#f6f8fa", None: "#f6f8fa"}


def rack_svg(bom: Bom, *, servers: int, title: str, width: int = 720, switch_trays: int = 0) -> str:
    """Rack elevation: one column per compute rack (its servers as slots, a rack-scale system's
    NVLink switch trays in the middle, its peak kW, its cooling), then one network rack with the
    switches of the BOM by tier."""
    per_rack = max(1, bom.servers_per_rack or math.ceil(servers / max(1, bom.racks)))
    compute_racks = max(1, math.ceil(servers / per_rack))
    switches: dict[str, int] = {}
    for item in bom.items:
        if item.category == "switch":
            switches[item.tier or "switch"] = switches.get(item.tier or "switch", 0) + item.quantity
    drawn = min(compute_racks, MAX_RACKS)
    columns = drawn + (1 if switches else 0)
    fullest = min(per_rack, servers)  # the BOM's rack_power_kw is the fullest rack's peak draw
    held = (f"{plural(compute_racks, 'compute rack')} of {per_rack} servers" if servers >= per_rack
            else f"1 compute rack holding {plural(servers, 'server')} (room for {per_rack})")
    caption = (held
               + (f" and {switch_trays} NVLink switch trays" if switch_trays else "") + f", {bom.cooling or 'air'} cooled"
               + (f", up to {num(bom.rack_power_kw)} kW per rack" if bom.rack_power_kw is not None else "")
               + (f"; {compute_racks - drawn:,} more not drawn" if compute_racks > drawn else ""))
    lines = wrap(caption, width - 20)
    top, rack_h, gap, left = 30 + 16 * len(lines), 220, 8, 10
    rack_w = min(60.0, (width - 2 * left) / max(1, columns) - gap)
    network = wrap("network rack: " + ", ".join(f"{count:,} {tier}" for tier, count in switches.items())
                   + (" switches" if sum(switches.values()) != 1 else " switch"), width - 20) if switches else []
    height = top + rack_h + 34 + 16 * len(network)
    labels = Labels(width, height)
    fill = COOLING_FILL.get(bom.cooling, "#f6f8fa")
    parts = [heading(labels, title, 10, 18, width - 20)]
    parts += [labels.place(line, [(10, 36 + 16 * k, "start")], required=True) for k, line in enumerate(lines)]
    units = per_rack + (switch_trays * 0.8 if switch_trays else 0)  # a switch tray drawn 0.8 of a server slot
    slot = (rack_h - 8) / units
    for i in range(drawn):
        x = left + i * (rack_w + gap)
        in_rack = min(per_rack, servers - i * per_rack)
        slots, y = [], top + 4
        for j in range(per_rack):
            if switch_trays and j == (per_rack + 1) // 2:
                for _ in range(switch_trays):
                    slots.append(_el("rect", {"x": _f(x + 4), "y": _f(y), "width": _f(rack_w - 8),
                                              "height": _f(max(1.0, 0.8 * slot - 1.2)), "fill": "#0969da",
                                              "class": "nvswitch-tray"}))
                    y += 0.8 * slot
            slots.append(_el("rect", {"x": _f(x + 4), "y": _f(y), "width": _f(rack_w - 8),
                                      "height": _f(max(1.0, slot - 1.5)), "fill": "#1a7f37" if j < in_rack else "#eaeef2"}))
            y += slot
        kw = bom.rack_power_kw * in_rack / max(1, fullest) if bom.rack_power_kw is not None else None
        parts.append(_el("g", {"class": "rack", "data-servers": in_rack, "data-kw": _f(kw or 0),
                               "data-cooling": bom.cooling or "air"},
                         _el("rect", {"x": _f(x), "y": top, "width": _f(rack_w), "height": rack_h, "fill": fill,
                                      "stroke": "#57606a"}), *slots,
                         labels.place(f"{num(kw)} kW" if kw is not None else "-",
                                      [(x + rack_w / 2, top + rack_h + 16, "middle")], size=10)))
    if switches:
        x = left + drawn * (rack_w + gap)
        rows = [_el("rect", {"x": _f(x), "y": top, "width": _f(rack_w), "height": rack_h, "fill": "#f6f8fa",
                             "stroke": "#57606a"})]
        y = top + 6
        # the tiers are named in the caption, not in the narrow rack; each drawn up to what fits
        most = max(1, int((rack_h - 12 - 8 * len(switches)) / 7 / len(switches)))
        for count in switches.values():
            for _ in range(min(count, 8, most)):
                rows.append(_el("rect", {"x": _f(x + 4), "y": _f(y), "width": _f(rack_w - 8), "height": 5,
                                         "fill": "#0969da"}))
                y += 7
            y += 8
        rows.append(labels.place("network", [(x + rack_w / 2, top + rack_h + 16, "middle")], size=10))
        parts.append(_el("g", {"class": "network-rack", "data-switches": sum(switches.values())}, *rows))
        parts += [labels.place(line, [(10, top + rack_h + 36 + 16 * k, "start")], required=True)
                  for k, line in enumerate(network)]
    return svg("racks", width, height, title, *parts)


def frontier_svg(points: list[FrontierPoint], *, title: str, width: int = 720, height: int = 340) -> str:
    """Tokens/s per GPU (throughput) against tokens/s per user (speed), one line per layout; points
    that meet the targets filled, the others hollow."""
    left, right, top, bottom = 70, 150, 30, 50
    xs = [p.tokens_per_s_per_user for p in points if p.tokens_per_s_per_user > 0]
    ys = [p.tokens_per_s_per_gpu for p in points if p.tokens_per_s_per_gpu > 0]
    x_hi, y_hi = max(xs) * 1.05, max(ys) * 1.1

    def px(v: float) -> float:
        return left + v / x_hi * (width - left - right)

    def py(v: float) -> float:
        return top + (1 - v / y_hi) * (height - top - bottom)

    labels = Labels(width, height)
    mid = (top + height - bottom) / 2
    parts = [heading(labels, title, left, 18, width - left - 10),
             _el("line", {"x1": left, "y1": height - bottom, "x2": width - right, "y2": height - bottom,
                          "stroke": "#57606a"}),
             _el("line", {"x1": left, "y1": top, "x2": left, "y2": height - bottom, "stroke": "#57606a"}),
             labels.place("output tokens/s per user", [((left + width - right) / 2, height - 12, "middle")],
                          required=True),
             _el("text", {"x": 16, "y": _f(mid), "text-anchor": "middle", "transform": f"rotate(-90 16 {_f(mid)})"},
                 _t("tokens/s per GPU"))]
    for frac in (0.5, 1.0):
        parts.append(labels.place(num(x_hi * frac), [(px(x_hi * frac), height - bottom + 16, "middle")]))
        parts.append(labels.place(num(y_hi * frac), [(left - 6, py(y_hi * frac) + 4, "end")]))
    layouts = list(dict.fromkeys(p.layout for p in points))
    for index, layout in enumerate(layouts[:len(PALETTE)]):
        colour = PALETTE[index]
        mine = sorted((p for p in points if p.layout == layout), key=lambda p: p.tokens_per_s_per_user)
        dots = [_el("circle", {"cx": _f(px(p.tokens_per_s_per_user)), "cy": _f(py(p.tokens_per_s_per_gpu)), "r": 3.5,
                               "fill": colour if p.meets_targets else "white", "stroke": colour})
                for p in mine]
        line = _el("polyline", {"fill": "none", "stroke": colour, "stroke-width": 1.5, "points": " ".join(
            f"{_f(px(p.tokens_per_s_per_user))},{_f(py(p.tokens_per_s_per_gpu))}" for p in mine)})
        key_y = top + 14 + index * 18  # the legend sits right of the plot: labels never overlap the lines
        legend = [_el("rect", {"x": width - right + 12, "y": key_y - 9, "width": 10, "height": 10, "fill": colour}),
                  labels.place(fit(layout, right - 34), [(width - right + 28, key_y, "start")], required=True)]
        parts.append(_el("g", {"class": "frontier-layout", "data-layout": layout}, line, *dots, *legend))
    parts.append(labels.place("filled: meets targets", [(width - right + 12, height - bottom, "start")],
                              required=True))
    return svg("frontier", width, height, title, *parts)
