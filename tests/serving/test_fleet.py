"""Fleet arithmetic (gpuplan/serving/fleet.py), each figure worked out by hand in the test."""

from __future__ import annotations

import pytest

from gpuplan.hardware.serving_calibration import Cost
from gpuplan.serving.fleet import fleet_cost, nodes_for, usd_per_million_tokens


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
    cost = Cost(amortisation_years=4.0, electricity_usd_per_kwh=0.10, pue=1.25)
    f = fleet_cost(gpu, replicas=10, gpus_per_replica=2, pricing="capex", cost=cost)
    # 3 servers (4 two-GPU replicas each); capex 3 x $350,000; power 3 x 10 kW.
    assert (f.nodes, f.capex_usd, f.power_kw) == (3, 1_050_000.0, 30.0)
    assert f.objective == 1_050_000.0
    # Hourly: $1,050,000 / (4 years x 8,766 h, years of 365.25 days) = $29.9452/h, plus 30 kW x 1.25 x
    # $0.10 = $3.75/h.
    assert f.usd_per_hour == pytest.approx(29.9452430 + 3.75)
    # At 10,000 output tokens/s: $33.6952/h / 36 M tokens/h = $0.9360 per million.
    assert usd_per_million_tokens(f.usd_per_hour, 10_000.0) == pytest.approx(0.935979, rel=1e-5)


def test_cloud_fleet_rents_whole_servers(catalog):
    gpu = catalog.gpus["h100-sxm-80gb"].model_copy(update={"cloud_usd_per_gpu_hour": 3.0,
                                                           "cloud_instance_gpus": (8,)})
    cost = Cost(amortisation_years=4.0, electricity_usd_per_kwh=0.10, pue=1.25)
    f = fleet_cost(gpu, replicas=5, gpus_per_replica=2, pricing="cloud", cost=cost)
    # 10 GPUs in use on 8-GPU instances: 2 instances = 16 GPUs billed x $3 = $48/h.
    assert f.cloud_usd_per_hour == 48.0
    assert f.objective == f.usd_per_hour == 48.0
