"""Fleet arithmetic (gpuplan/serving/fleet.py), each figure worked out by hand in the test."""

from __future__ import annotations

import pytest

from gpuplan.fabric.tco import CostBasis, cost_basis
from gpuplan.serving.fleet import (domain_fleet, domain_objective, fleet_cost, fleet_objective, nodes_for,
                                   usd_per_million_tokens)


@pytest.mark.parametrize("replicas, per_replica, per_node, unit, nodes", [
    (10, 2, 8, 1, 3),     # 4 replicas to a server: ceil(10 / 4) = 3
    (8, 8, 8, 1, 8),      # one replica per server
    (3, 16, 8, 1, 6),     # 16 GPUs take 2 servers each: 3 x 2
    (5, 3, 8, 1, 3),      # 3-GPU replicas: floor(8 / 3) = 2 to a server (2 GPUs idle), ceil(5 / 2) = 3
    (1, 8, 4, 18, 18),    # an 8-GPU replica on 4-GPU trays: 2 trays, bought as one 18-tray NVL72 rack
    (0, 8, 8, 1, 0),
])
def test_nodes_for(replicas, per_replica, per_node, unit, nodes):
    assert nodes_for(replicas, per_replica, per_node, unit) == nodes


def test_usd_per_million_tokens_by_hand():
    # $36/h at 10,000 tokens/s: 36 / 36,000,000 tokens x 1e6 = $1.00 per million.
    assert usd_per_million_tokens(36.0, 10_000.0) == pytest.approx(1.0)
    assert usd_per_million_tokens(None, 10_000.0) is None
    assert usd_per_million_tokens(36.0, 0.0) is None


def test_capex_fleet_cost_by_hand(catalog):
    gpu = catalog.gpus["h100-sxm-80gb"].model_copy(update={"node_price_usd": 350_000.0, "node_power_kw": 10.0})
    cost = CostBasis(years=4.0, usd_per_kwh=0.10, utilization=0.8, given_pue=1.25, catalog=catalog)
    f = fleet_cost(gpu, replicas=10, gpus_per_replica=2, pricing="capex", cost=cost)
    # 3 servers (4 two-GPU replicas each); capex 3 x $350,000; power 3 x 10 kW.
    assert (f.nodes, f.capex_usd, f.power_kw) == (3, 1_050_000.0, 30.0)
    assert f.objective == 1_050_000.0
    # An hour it carries its load: $1,050,000 / (4 years x 8,766 h x 0.8 of them loaded) = $37.4316/h,
    # plus 30 kW x 1.25 x $0.10 = $3.75/h.
    assert f.usd_per_hour == pytest.approx(37.4315537 + 3.75)
    # At 10,000 output tokens/s: $41.1816/h / 36 M tokens/h = $1.1439 per million.
    assert usd_per_million_tokens(f.usd_per_hour, 10_000.0) == pytest.approx(1.143932, rel=1e-5)


def test_the_plan_cost_basis_is_the_tco_one(catalog):
    """Serving's $/token reads the TCO's figures (catalog/calibration/bom.toml): 4 years, $0.08/kWh,
    80% of the hours loaded, PUE by the cooling (air 1.5, liquid 1.2); the profile's override them.
    It read 5 years, $0.081/kWh, PUE 1.3 and every hour loaded from a table of its own."""
    basis = cost_basis((), catalog)
    assert (basis.years, basis.usd_per_kwh, basis.utilization, basis.given_pue) == (4.0, 0.08, 0.8, None)
    assert basis.pue(catalog.gpus["h100-sxm-80gb"], 4) == 1.5      # 4 x 10.2 kW racks: rear-door, an air hall
    assert basis.pue(catalog.gpus["gb200-nvl72"], 18) == 1.2        # built for cold plates: liquid
    given = cost_basis((("horizon_years", 5.0), ("pue", 1.3), ("usd_per_kwh", 0.12), ("utilization", 0.5)), catalog)
    assert (given.years, given.usd_per_kwh, given.utilization) == (5.0, 0.12, 0.5)
    assert given.pue(catalog.gpus["gb200-nvl72"], 18) == 1.3


def test_cloud_fleet_rents_whole_servers(catalog):
    gpu = catalog.gpus["h100-sxm-80gb"].model_copy(update={"cloud_usd_per_gpu_hour": 3.0,
                                                           "cloud_instance_gpus": (8,)})
    cost = CostBasis(years=4.0, usd_per_kwh=0.10, utilization=0.8, given_pue=1.25, catalog=catalog)
    f = fleet_cost(gpu, replicas=5, gpus_per_replica=2, pricing="cloud", cost=cost)
    # 10 GPUs in use on 8-GPU instances: 2 instances = 16 GPUs billed x $3 = $48/h.
    assert f.cloud_usd_per_hour == 48.0
    assert f.objective == f.usd_per_hour == 48.0


def test_the_default_plans_token_cost_and_its_tco_share_one_basis(catalog):
    """examples/default.toml: one MI355X server ($246,000, 14 kW, liquid-cooled: PUE 1.2) serves
    20 QPS x 400 output tokens = 8,000 tokens/s. On the TCO's basis (4 years, 80% of the hours
    loaded, $0.08/kWh): $246,000 / (4 x 8,766 h x 0.8) = $8.7697 an hour, plus 14 kW x 1.2 x $0.08
    = $1.344; over 8,000 x 3,600 = 28.8 M tokens an hour, $0.3512 per million (it read $0.2461 on a
    basis of its own: 5 years, every hour loaded, PUE 1.3, $0.081/kWh). The whole-TCO figure beside
    it adds the rest of the bill and support on the same hours and rates."""
    from gpuplan.model.profile import load_workload
    from gpuplan.planning.compose import plan_workload

    s = plan_workload(load_workload("examples/default.toml", catalog), catalog, phases=("serving",)).serving
    assert (s.gpu, s.nodes, s.bom.capex_by_category_usd["server"]) == ("mi355x-oam-288gb", 1, 246_000.0)
    assert s.output_tokens_per_s == 8_000.0 and s.bom.pue == 1.2
    assert s.usd_per_million_output_tokens == pytest.approx((8.769678 + 1.344) / 28.8, rel=1e-6)
    t = s.tco
    assert (t.horizon_years, t.utilization, t.pue) == (4.0, 0.8, 1.2)
    tokens_m = 28.8 * 8_766 * 4 * 0.8  # millions of tokens the horizon's loaded hours carry
    servers_share = (246_000 + 14 * 1.2 * 0.08 * 8_766 * 4 * 0.8) / tokens_m
    assert servers_share == pytest.approx(s.usd_per_million_output_tokens, rel=1e-6)
    assert t.usd_per_million_tokens > s.usd_per_million_output_tokens


def test_a_fleets_objective_alone_is_the_fleets(catalog):
    """The searches' floors read the objective without the rest of the fleet (serving/fleet.py
    fleet_objective, domain_objective): by hand, 10 two-GPU H100 SXM replicas on 8-GPU servers are
    3 servers at $350,000; 5 of them rent 16 GPUs at $3/h; 3 one-domain groups of 6 GB200 GPUs (12 to
    an NVL72 rack, bought whole) are 2 racks. And the same value as the fleet's, everywhere."""
    h100 = catalog.gpus["h100-sxm-80gb"].model_copy(update={"node_price_usd": 350_000.0, "cloud_usd_per_gpu_hour": 3.0,
                                                            "cloud_instance_gpus": (8,)})
    assert fleet_objective(h100, 10, 2, "capex") == 1_050_000.0
    assert fleet_objective(h100, 5, 2, "cloud") == 48.0
    gb200 = catalog.gpus["gb200-nvl72"]
    rack = gb200.node_price_usd * 18
    assert domain_objective(gb200, 13, 6, 72, "capex") == 2 * rack
    cost = cost_basis((), catalog)
    for gid in ("h100-sxm-80gb", "gb200-nvl72", "a100-pcie-80gb", "mi355x-oam-288gb", "l4-pcie-24gb"):
        gpu = catalog.gpus[gid]
        for pricing in ("capex", "cloud"):
            for replicas in (1, 2, 3, 7, 40):
                for per in (1, 2, 4, 8):
                    assert fleet_objective(gpu, replicas, per, pricing) == fleet_cost(gpu, replicas, per, pricing,
                                                                                      cost).objective
                    for local in (8, 72):  # a domain within a server, and a rack bought whole
                        assert domain_objective(gpu, replicas, per, local, pricing) == domain_fleet(
                            gpu, replicas, per, local, pricing, cost).objective
