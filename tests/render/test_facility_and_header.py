"""The facility line's racks (render/cost.py) and the model in every header. A rack count agrees in
number, and a fleet too small to fill a rack says how many servers its fullest rack holds, next to
that rack's kW."""

from __future__ import annotations

from gpuplan.render.cost import facility_line, fullest_rack_servers
from tests.conftest import EXAMPLES, plan_file
from tests.render.fixtures import serving_only_plan


def _plan(name: str, catalog, phase: str):
    return plan_file(EXAMPLES / name, catalog, phase)


def test_a_fleet_smaller_than_a_rack_names_the_servers_its_rack_holds(catalog):
    """moe-serving: 2 MI325X servers of 12.6 kW; a 41 kW rack holds floor(41 / 12.6) = 3 of them, so
    the one compute rack holds both, 2 x 12.6 = 25.2 kW (it read "3 servers per rack, 25.2 kW")."""
    bom = _plan("moe-serving.toml", catalog, "serving").serving.bom
    assert (bom.servers_per_rack, fullest_rack_servers(bom)) == (3, 2)
    assert facility_line(bom).startswith("2 racks (the fullest holds 2 servers, room for 3, 25.2 kW)")


def test_full_racks_keep_their_servers_per_rack(catalog):
    """llama-70b-480-h100: 60 DGX H100 four to a rack (RA-11333-001, 4 x 10.2 = 40.8 kW) in 15
    compute racks and one network rack."""
    bom = _plan("llama-70b-480-h100.toml", catalog, "training").training.bom
    assert fullest_rack_servers(bom) == 4
    assert facility_line(bom).startswith("16 racks (4 servers per rack, 40.8 kW)")


def test_one_rack_is_singular():
    assert facility_line(serving_only_plan().serving.bom).startswith("1 rack (")


def test_every_header_gives_a_mixture_of_experts_its_active_parameters(cli):
    """Mixtral 8x22B: 140.6B parameters, 39.2B active per token (Mistral AI, 2024). The table header
    said both; the Markdown and HTML headers only the total."""
    for fmt in ("table", "markdown", "html"):
        out = cli("recommend", "examples/moe-serving.toml", "--format", fmt, "-q").out
        assert "140.6B params, 39.2B active" in out, fmt


def test_a_partial_full_recompute_says_how_many_layers(catalog):
    """examples/llama-70b-480-h100.toml: the runner-up TP2 PP15x6 DP8 CP2 recomputes one layer of
    each stage (``recompute_layers`` 1 of 6: 1.53 s a step, about 28.8 s of compute / 3 for a
    forward / 6 layers = 1.6 s). The layouts table said "full", as if every layer were."""
    from gpuplan.render.numbers import recompute_text
    from gpuplan.render.text import layout_rows

    plan = _plan("llama-70b-480-h100.toml", catalog, "training").training
    rows = {r[0]: r for r in layout_rows(plan.layout_alternatives)}
    assert rows["TP2 PP15x6 DP8 CP2"][2] == "1 layer"
    partial = next(o for o in plan.layout_alternatives if o.layout.recompute_layers)
    assert 1.4 < partial.breakdown.recompute_s < 1.7
    assert recompute_text("full", 2) == "full (2 layers per stage)"
    assert recompute_text("full", 0) == "full" and recompute_text("none", 0) == "none"

