"""SVG building blocks of the HTML report's pictures (render/svg_*.py): elements, numbers, the
estimated size of a label, and a placer that keeps labels from overlapping one another.

Inline SVG, no script, no external font: a label's width is estimated from its character count
(:data:`CHAR_WIDTH` x font size per character: DejaVu Sans, the widest common system-ui face,
averages 0.56 em on these labels and 0.64 em on digits; bold adds :data:`BOLD`), so the placer and
the tests that check the pictures agree without a browser; tests/render/test_browser.py measures
the real boxes in chromium.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

SVG_NS = "http://www.w3.org/2000/svg"
#: Width of one character as a fraction of the font size, and the bold face's extra width.
CHAR_WIDTH, BOLD = 0.62, 1.08
FONT = 11
#: Colours of series, rails and GPUs, in order (GitHub Primer palette, readable on white).
PALETTE = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#1b7c83", "#bc4c00", "#57606a")

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def el(tag: str, attrs: dict[str, object] | None = None, *children: str) -> str:
    """One SVG element; ``children`` are markup (escape text with :func:`t`)."""
    a = "".join(f' {k}="{escape(str(v), quote=True)}"' for k, v in (attrs or {}).items() if v is not None)
    if not children:
        return f"<{tag}{a}/>"
    if tag in ("svg", "g"):
        return f"<{tag}{a}>\n" + "\n".join(children) + f"\n</{tag}>"
    return f"<{tag}{a}>{''.join(children)}</{tag}>"


def t(text: object) -> str:
    return escape(str(text), quote=False)


def f(x: float) -> str:
    """A coordinate with at most one decimal and no trailing zeros (stable, short)."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def svg(cls: str, width: float, height: float, title: str, *parts: str, **data: object) -> str:
    """The root of one picture: fixed size, a viewBox, an accessible name, ``data-*`` facts."""
    attrs: dict[str, object] = {"xmlns": SVG_NS, "class": cls, "width": f(width), "height": f(height),
                                "viewBox": f"0 0 {f(width)} {f(height)}", "role": "img", "aria-label": title}
    attrs.update({f"data-{k.replace('_', '-')}": v for k, v in data.items()})
    return el("svg", attrs, *parts)


def text_width(text: str, *, size: float = FONT, bold: bool = False) -> float:
    """Estimated width of a one-line label, px."""
    return len(text) * CHAR_WIDTH * size * (BOLD if bold else 1.0)


def text_box(x: float, y: float, text: str, *, size: float = FONT, anchor: str = "start", bold: bool = False) -> Box:
    """Estimated bounding box of a one-line label drawn at baseline ``y``."""
    w = len(text) * CHAR_WIDTH * size * (BOLD if bold else 1.0)
    x0 = x - w if anchor == "end" else x - w / 2 if anchor == "middle" else x
    return (x0, y - 0.8 * size, x0 + w, y + 0.25 * size)


def overlaps(a: Box, b: Box, pad: float = 0.0) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


class Labels:
    """Places labels where they overlap no label placed before and stay inside the picture.

    ``place`` tries the candidate positions in order and takes the first free one; when none is
    free it drops the label (a picture keeps its facts in ``data-*`` attributes and the tables)
    unless ``required``, where it takes the first candidate moved down until it is free."""

    def __init__(self, width: float, height: float) -> None:
        self.width, self.height = width, height
        self.boxes: list[Box] = []

    def reserve(self, box: Box) -> None:
        """Keep labels off an area (a marker, a legend swatch)."""
        self.boxes.append(box)

    def free(self, box: Box) -> bool:
        inside = box[0] >= 0 and box[2] <= self.width and box[1] >= 0 and box[3] <= self.height
        return inside and not any(overlaps(box, b, 1.0) for b in self.boxes)

    def place(self, text: str, candidates: Sequence[tuple[float, float, str]], *, size: float = FONT,
              required: bool = False, **attrs: object) -> str:
        """A <text> at the first free (x, y, anchor) of ``candidates``; "" if none is free."""
        bold = attrs.get("font-weight") == "bold"
        for x, y, anchor in candidates:
            box = text_box(x, y, text, size=size, anchor=anchor, bold=bold)
            if self.free(box):
                return self._put(text, x, y, anchor, size, box, attrs)
        if not required or not candidates:
            return ""
        x, y, anchor = candidates[0]
        box = text_box(x, y, text, size=size, anchor=anchor, bold=bold)
        # Slide down until free: a required label is never dropped nor overlapping.
        for dy in range(0, int(self.height), 4):
            moved = (box[0], box[1] + dy, box[2], box[3] + dy)
            if not any(overlaps(moved, b, 1.0) for b in self.boxes):
                return self._put(text, x, y + dy, anchor, size, moved, attrs)
        return ""

    def _put(self, text: str, x: float, y: float, anchor: str, size: float, box: Box,
             attrs: dict[str, object]) -> str:
        self.boxes.append(box)
        a: dict[str, object] = {"x": f(x), "y": f(y)}
        if anchor != "start":
            a["text-anchor"] = anchor
        if size != FONT:
            a["font-size"] = f(size)
        a.update(attrs)
        return el("text", a, t(text))


def fit(text: str, width: float, *, size: float = FONT, bold: bool = False) -> str:
    """``text`` cut with an ellipsis so it fits ``width`` pixels (estimated)."""
    most = max(1, int(width / (CHAR_WIDTH * size * (BOLD if bold else 1.0))))
    return text if len(text) <= most else text[:max(1, most - 1)].rstrip() + "\u2026"


def wrap(text: str, width: float, *, size: float = FONT) -> list[str]:
    """``text`` broken at spaces into lines that fit ``width`` pixels (estimated)."""
    most = max(1, int(width / (CHAR_WIDTH * size)))
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= most:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return [fit(line, width, size=size) for line in lines]


def heading(labels: Labels, text: str, x: float, y: float, width: float) -> str:
    """A picture's title: bold, 12 px, cut to ``width``."""
    return labels.place(fit(text, width, size=12, bold=True), [(x, y, "start")], size=12, required=True,
                        **{"font-weight": "bold"})
