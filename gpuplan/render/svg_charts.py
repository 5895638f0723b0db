"""Pictures of a phase for the HTML report, beside html.py's roofline and topology: the rack
elevation (racks with their servers and switches, kW per rack, air or liquid; from the plan's BOM)
and the serving throughput-latency frontier (plan.serving.frontier). Inline SVG, no script."""

from __future__ import annotations

import math
from html import escape

from gpuplan.core.contract import Bom, FrontierPoint
from gpuplan.render.text import num

SVG = {"xmlns": "http://www.w3.org/2000/svg", "role": "img"}
#: Racks drawn before the rest are counted in the caption.
MAX_RACKS = 12
COOLING_FILL = {"liquid": "#ddf4ff", "rear-door": "#fff8c5", "air": "#f6f8fa", None: "#f6f8fa"}


def _el(tag: str, attrs: dict[str, object] | None = None, *children: str) -> str:
    """One SVG element (html.py's ``el`` for the SVG tags, kept here so html.py alone imports this)."""
    a = "".join(f' {k}="{escape(str(v), quote=True)}"' for k, v in (attrs or {}).items() if v is not None)
    if not children:
        return f"<{tag}{a}/>"
    if tag in ("svg", "g"):
        return f"<{tag}{a}>\n" + "\n".join(children) + f"\n</{tag}>"
    return f"<{tag}{a}>{''.join(children)}</{tag}>"


def _t(text: object) -> str:
    return escape(str(text), quote=False)


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def rack_svg(bom: Bom, *, servers: int, title: str, width: int = 640) -> str:
    """Rack elevation: one column per compute rack (its servers as slots, its peak kW, its cooling),
    then one network rack with the switches of the BOM by tier."""
    per_rack = max(1, bom.servers_per_rack or math.ceil(servers / max(1, bom.racks)))
    compute_racks = max(1, math.ceil(servers / per_rack))
    switches: dict[str, int] = {}
    for item in bom.items:
        if item.category == "switch":
            switches[item.tier or "switch"] = switches.get(item.tier or "switch", 0) + item.quantity
    drawn = min(compute_racks, MAX_RACKS)
    columns = drawn + (1 if switches else 0)
    top, rack_h, gap, left = 46, 220, 8, 10
    rack_w = min(60.0, (width - 2 * left) / max(1, columns) - gap)
    height = top + rack_h + 50 + (16 if switches else 0)
    fill = COOLING_FILL.get(bom.cooling, "#f6f8fa")
    parts = [_el("text", {"x": 10, "y": 18, "font-weight": "bold"}, _t(title)),
             _el("text", {"x": 10, "y": 36}, _t(
                 f"{compute_racks:,} compute rack{'s' if compute_racks != 1 else ''} of {per_rack} servers, "
                 f"{bom.cooling or 'air'} cooled"
                 + (f", up to {num(bom.rack_power_kw)} kW per rack" if bom.rack_power_kw is not None else "")
                 + (f"; {compute_racks - drawn:,} more not drawn" if compute_racks > drawn else "")))]
    for i in range(drawn):
        x = left + i * (rack_w + gap)
        in_rack = min(per_rack, servers - i * per_rack)
        slot = (rack_h - 8) / per_rack
        slots = [_el("rect", {"x": _f(x + 4), "y": _f(top + 4 + j * slot), "width": _f(rack_w - 8),
                              "height": _f(max(1.0, slot - 1.5)), "fill": "#1a7f37" if j < in_rack else "#eaeef2"})
                 for j in range(per_rack)]
        kw = bom.rack_power_kw * in_rack / per_rack if bom.rack_power_kw is not None else None
        parts.append(_el("g", {"class": "rack", "data-servers": in_rack, "data-kw": _f(kw or 0),
                               "data-cooling": bom.cooling or "air"},
                         _el("rect", {"x": _f(x), "y": top, "width": _f(rack_w), "height": rack_h, "fill": fill,
                                      "stroke": "#57606a"}), *slots,
                         _el("text", {"x": _f(x + rack_w / 2), "y": top + rack_h + 16, "text-anchor": "middle",
                                      "font-size": "11"}, _t(f"{num(kw)} kW" if kw is not None else "-"))))
    if switches:
        parts.append(_el("text", {"x": 10, "y": top + rack_h + 38}, _t(
            "network rack: " + ", ".join(f"{count:,} {tier}" for tier, count in switches.items())
            + (" switches" if sum(switches.values()) != 1 else " switch"))))
    if switches:
        x = left + drawn * (rack_w + gap)
        rows = [_el("rect", {"x": _f(x), "y": top, "width": _f(rack_w), "height": rack_h, "fill": "#f6f8fa",
                             "stroke": "#57606a"})]
        y = top + 6
        for count in switches.values():  # the tiers are named in the caption, not in the narrow rack
            for _ in range(min(count, 8)):
                rows.append(_el("rect", {"x": _f(x + 4), "y": _f(y), "width": _f(rack_w - 8), "height": 5,
                                         "fill": "#0969da"}))
                y += 7
            y += 8
        rows.append(_el("text", {"x": _f(x + rack_w / 2), "y": top + rack_h + 16, "text-anchor": "middle",
                                 "font-size": "11"}, _t("network")))
        parts.append(_el("g", {"class": "network-rack", "data-switches": sum(switches.values())}, *rows))
    return _el("svg", {**SVG, "class": "racks", "width": width, "height": height,
                       "viewBox": f"0 0 {width} {height}", "aria-label": title}, *parts)


def frontier_svg(points: list[FrontierPoint], *, title: str, width: int = 640, height: int = 340) -> str:
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

    parts = [_el("text", {"x": left, "y": 18, "font-weight": "bold"}, _t(title)),
             _el("line", {"x1": left, "y1": height - bottom, "x2": width - right, "y2": height - bottom,
                          "stroke": "#57606a"}),
             _el("line", {"x1": left, "y1": top, "x2": left, "y2": height - bottom, "stroke": "#57606a"}),
             _el("text", {"x": _f((left + width - right) / 2), "y": height - 12, "text-anchor": "middle"},
                 _t("output tokens/s per user")),
             _el("text", {"x": 16, "y": _f((top + height - bottom) / 2), "text-anchor": "middle",
                          "transform": f"rotate(-90 16 {_f((top + height - bottom) / 2)})"}, _t("tokens/s per GPU"))]
    for frac in (0.5, 1.0):
        parts.append(_el("text", {"x": _f(px(x_hi * frac)), "y": height - bottom + 16, "text-anchor": "middle"},
                         _t(num(x_hi * frac))))
        parts.append(_el("text", {"x": left - 6, "y": _f(py(y_hi * frac) + 4), "text-anchor": "end"},
                         _t(num(y_hi * frac))))
    palette = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#57606a")
    layouts = list(dict.fromkeys(p.layout for p in points))
    for index, layout in enumerate(layouts[:len(palette)]):
        colour = palette[index]
        mine = sorted((p for p in points if p.layout == layout), key=lambda p: p.tokens_per_s_per_user)
        dots = [_el("circle", {"cx": _f(px(p.tokens_per_s_per_user)), "cy": _f(py(p.tokens_per_s_per_gpu)), "r": 3.5,
                               "fill": colour if p.meets_targets else "white", "stroke": colour})
                for p in mine]
        line = _el("polyline", {"fill": "none", "stroke": colour, "stroke-width": 1.5, "points": " ".join(
            f"{_f(px(p.tokens_per_s_per_user))},{_f(py(p.tokens_per_s_per_gpu))}" for p in mine)})
        key_y = top + 14 + index * 18  # the legend sits right of the plot: labels never overlap the lines
        legend = [_el("rect", {"x": width - right + 12, "y": key_y - 9, "width": 10, "height": 10, "fill": colour}),
                  _el("text", {"x": width - right + 28, "y": key_y}, _t(layout))]
        parts.append(_el("g", {"class": "frontier-layout", "data-layout": layout}, line, *dots, *legend))
    parts.append(_el("text", {"x": width - right + 12, "y": height - bottom, "font-size": "11"},
                     _t("filled: meets targets")))
    return _el("svg", {**SVG, "class": "frontier", "width": width, "height": height,
                       "viewBox": f"0 0 {width} {height}", "aria-label": title}, *parts)
