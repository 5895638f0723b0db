"""Servers are bought whole, and rack-scale NVLink systems (GB200 NVL72) by the whole rack."""

from __future__ import annotations

import pytest

from gpuplan.hardware import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_nvl72_is_bought_by_the_rack(catalog):
    gb200 = catalog.gpu("gb200-nvl72")
    # RA-11338-001: one NVL72 rack = 18 compute trays of 4 GPUs (72 GPUs in one NVLink domain).
    assert gb200.purchase_unit_nodes == 18
    assert gb200.servers_for(72) == 18
    assert gb200.servers_for(73) == 36          # a 73rd GPU needs a second rack
    assert gb200.servers_for(7168) == 1800      # 99.6 racks -> 100 racks of 18 trays


def test_hgx_servers_are_bought_one_at_a_time(catalog):
    h100 = catalog.gpu("h100-sxm-80gb")
    assert h100.purchase_unit_nodes == 1
    assert [h100.servers_for(n) for n in (1, 8, 9, 1024)] == [1, 1, 2, 128]


def test_training_plan_prices_whole_racks(catalog):
    from gpuplan.planning.compose import plan_workload
    from gpuplan.model.profile import load_profile_text

    text = ('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 1e12\ngpus = 128\nsequence_length = 4096\n'
            '[constraints]\nallow_gpus = ["gb200-nvl72"]\n')
    plan = plan_workload(load_profile_text(text, "p.toml", catalog), catalog, phases=("training",)).training
    gb200 = catalog.gpu("gb200-nvl72")
    assert plan.gpus == 128 and plan.nodes == 36   # 32 trays in use, two racks bought
    servers = next(i for i in plan.bom.items if i.category == "server" and i.unit_price_usd)
    assert servers.quantity == 36 and servers.unit_price_usd == gb200.node_price_usd
    assert any("hot spares" in r for r in plan.reasons)


def test_clouds_bill_servers_not_racks(catalog):
    """Capex buys a whole NVL72 rack; a cloud rents tray-sized 4-GPU instances."""
    gb200, b200, l4 = (catalog.gpu(g) for g in ("gb200-nvl72", "b200-sxm-180gb", "l4-pcie-24gb"))
    assert gb200.billed_gpus(32) == 32 and gb200.billed_gpus(33) == 36
    assert b200.billed_gpus(12) == 16            # an 8-GPU baseboard is rented whole
    h100 = catalog.gpu("h100-sxm-80gb")          # ... unless the catalog lists smaller instances
    assert h100.cloud_instance_gpus == [1, 2, 4, 8]
    assert [h100.billed_gpus(n) for n in (1, 2, 3, 6, 12)] == [1, 2, 4, 8, 12]
    assert l4.billed_gpus(3) == 3                # PCIe cards one by one
