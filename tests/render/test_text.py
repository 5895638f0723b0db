"""Shared text helpers of the renderers: numbers, dollars, plurals, costs in the profile's terms."""

from __future__ import annotations

import pytest

from gpuplan.render.text import num, plural, usd


@pytest.mark.parametrize("value,expected", [
    (None, "-"), (0.5, "0.5"), (12.345, "12.3"), (1234.5, "1,234"), (2_713_452.0, "2,713,452"),
    (3.14e23, "3.14e+23"), (1e15, "1e+15"),
])
def test_num(value, expected):
    assert num(value) == expected


def test_num_digits_for_the_validation_table():
    assert num(3.229e23, 4) == "3.229e+23" and num(1.511, 4) == "1.511"


@pytest.mark.parametrize("value,expected", [(None, "-"), (3.2, "$3.20"), (12_500, "$12,500"),
                                            (41_300_000, "$41.30M"), (-2_500, "-$2,500")])
def test_usd(value, expected):
    assert usd(value) == expected


def test_plural():
    assert (plural(1, "node"), plural(2, "node"), plural(1800, "node")) == ("1 node", "2 nodes", "1,800 nodes")


def test_the_two_per_token_costs_say_what_each_includes():
    """A new user read '$0.12 per million output tokens' and '$0.86 per million output tokens' in one
    report: the serving cost (servers + energy) and the TCO's (the whole bill over the horizon)."""
    from gpuplan.render.cost import tco_line
    from gpuplan.render.text import serving_facts
    from tests.render.fixtures import serving_plan

    s = serving_plan()
    cost = dict(serving_facts(s, "capex"))["cost"]
    assert "$2.49 per million output tokens (servers + energy)" in cost
    assert "per million output tokens (cloud rate)" in dict(serving_facts(s, "cloud"))["cost"]
    assert f"{usd(s.tco.usd_per_million_tokens)} per million output tokens (whole TCO)" in tco_line(s.tco)


def test_a_number_keeps_its_unit_on_its_line():
    """A new user saw 'end to end 9,354' with 'ms' on the next line in plain recommend."""
    from gpuplan.render import RenderOptions
    from gpuplan.render.table import _Report

    r = _Report(RenderOptions(width=40, color=False))
    r.facts([("latency", "TTFT 171 ms mean, 213 ms p99; TPOT 61.5 ms; end to end 15,492 ms")])
    r.bullets(["carry 10 QPS with TTFT p99 213 ms <= 3000 ms and TPOT 61.5 ms <= 80 ms at 6.33 kW"])
    lines = r.text().splitlines()
    assert not any(line.split()[0] in ("ms", "kW") for line in lines if line.strip()), lines
    assert "15,492 ms" in r.text() and "\ue000" not in r.text()


def test_replica_counts_have_separators_and_plurals():
    from gpuplan.render.text import serving_facts
    from tests.render.fixtures import serving_plan

    s = serving_plan().model_copy(update={"replicas": 25_803, "spare_replicas": 1})
    assert "25,803 replicas of" in dict(serving_facts(s, "capex"))["GPUs"]
    assert "(25,802 + 1 spare)" in dict(serving_facts(s, "capex"))["GPUs"]


def test_a_fraction_gate_shows_percentages_like_its_message():
    """The memory-headroom gate read '0.0997' in the value column and '10.0%' in its message."""
    from gpuplan.render.text import gate_value

    assert (gate_value(0.0997, "fraction"), gate_value(0.05, "fraction")) == ("10.0%", "5.0%")
    assert gate_value(74.9, "days") == "74.9" and gate_value(48_492_800, "USD") == "$48.49M"


def test_a_bill_line_priced_inside_its_server_says_so():
    """The GPUs of an HGX server are one bill line with no price of their own: 'in server', not
    'unpriced', which would tell a reader the capex misses them."""
    from gpuplan.core.contract import BomItem
    from gpuplan.render.cost import line_total

    unpriced = dict(unit_price_usd=None, unit_power_w=None, total_price_usd=None, total_power_w=None, source=None)
    gpus = BomItem(category="server", tier="inside-server", part_id="h100-sxm-80gb:gpu", description="GPUs",
                   quantity=1016, **unpriced)
    switch = BomItem(category="switch", tier="compute-leaf", part_id="x", description="x", quantity=2, **unpriced)
    assert line_total(gpus) == "in server"
    assert line_total(switch) == "unpriced" and line_total(switch, "**unpriced**") == "**unpriced**"
    priced = switch.model_copy(update={"unit_price_usd": 32870.0, "total_price_usd": 65740.0})
    assert line_total(priced) == "$65,740"


def test_a_gpu_with_its_own_scale_out_ports_is_not_0_x_none_per_node(cli):
    """params-only plans Gaudi 3 for training: 3 on-die 200 GbE ports per GPU, no NIC in the plan."""
    out = cli("recommend", "examples/params-only.toml", "--section", "facts", "-f", "markdown").out
    assert "0 x None" not in out and "None" not in out
    assert "ethernet-200g (ethernet), the GPU's own ports (no NIC), 600 Gb/s per GPU" in out


def test_one_node_has_no_bisection_line(cli):
    """chat-8b-serving fits one server: '0 Gb/s bisection' read as a fabric that carries nothing."""
    out = cli("recommend", "examples/chat-8b-serving.toml", "-f", "markdown").out
    topo = next(line for line in out.splitlines() if line.startswith("| topology |"))
    assert topo.endswith("1:1, 1 node |") and "bisection" not in topo
    big = cli("recommend", "examples/llama-70b-480-h100.toml", "-f", "markdown").out
    assert "60 nodes, 96,000 Gb/s bisection" in big
