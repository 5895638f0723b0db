"""The HTML report's alternatives tables carry the Markdown's columns (docs/report.md: the HTML
carries everything): serving had no layout, replicas, max req/s or $/M tokens, training no
nodes, MFU or bound."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpuplan.render import RenderOptions, render
from tests.render.fixtures import synthetic_plan


def _html_alternatives(page: str) -> list[list[list[str]]]:
    body = ET.fromstring(page.removeprefix("<!DOCTYPE html>\n")).find("body")
    tables = []
    for section in body.iter("section"):
        kids = list(section)
        for h3, table in zip(kids, kids[1:]):
            if h3.tag == "h3" and h3.text == "Alternatives":
                tables.append([["".join(c.itertext()) for c in tr] for tr in table.iter("tr")])
    return tables


def _markdown_alternatives(text: str) -> list[list[list[str]]]:
    tables = []
    for block in re.findall(r"<summary>Alternatives \(\d+\)</summary>\n\n(.*?)\n\n", text, flags=re.S):
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines()]
        tables.append([rows[0]] + rows[2:])  # without the |---| line
    return tables


def test_html_alternatives_have_the_markdown_columns_and_cells():
    plan = synthetic_plan()
    html = _html_alternatives(render(plan, "html", RenderOptions()))
    md = _markdown_alternatives(render(plan, "markdown", RenderOptions()))
    assert [t[0] for t in html] == [
        ["GPU", "GPUs", "nodes", "layout", "days", "MFU", "cost", "meets target", "bound"],
        ["GPU", "GPUs", "replicas", "layout", "TTFT p99 ms", "TPOT ms", "max req/s", "cost", "$/M tokens",
         "meets target", "note"]]
    assert html == md
    # the fixture's serving alternative on H200: 16 GPUs as 4 replicas of TP4, 22.5 req/s, $2.61/M tokens
    assert html[1][1][:9] == ["h200-sxm-141gb", "16", "4", "TP4 PP1", "1,210", "31", "22.5", "$1.31M*", "$2.61"]
