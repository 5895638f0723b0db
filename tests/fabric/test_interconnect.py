"""design_fabric: the engineer's defaults and the reasons in numbers."""

from __future__ import annotations

import pytest

from gpuplan.core.errors import InputError
from gpuplan.fabric.interconnect import design_fabric

from .helpers import serving_demand, training_demand


def _design(*args, **kw):
    d = design_fabric(*args, **kw)
    return d.interconnect, d.topology


def test_h100_training_defaults(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    ic, topo = _design(training_demand(), gpu, catalog)
    assert (ic.scaleout_fabric, ic.scaleout_kind, ic.nic) == ("ib-ndr", "infiniband", "cx7-400g")
    assert (ic.nics_per_node, ic.rails, ic.nic_gbit_per_gpu) == (8, 8, 400)
    assert (ic.scaleup_tech, ic.scaleup_domain_gpus) == ("nvlink4", 8)
    assert topo.kind == "rail-optimized-fat-tree" and topo.switch == "qm9700"
    assert (topo.leaf_switches, topo.spine_switches, topo.core_switches) == (32, 16, 0)
    assert topo.oversubscription == 1.0 and topo.scalable_unit_nodes == 32
    assert topo.graph_checked and topo.bisection_gbit == 1024 * 400 / 2
    text = " ".join(ic.reasons)
    assert "2.1 GB per GPU per step, over the pipeline's 4.3 s" in text
    # 2.1 GB of gradient sync in its 2.1 s overlap window = 8 Gb/s, at the demand's 100% efficiency.
    assert "must fit its 2.1 s overlap window (8 Gb/s)" in text and "needs 8 Gb/s of line rate per GPU" in text
    assert "46.5x headroom" in text  # 400 x 0.93 / 8


def test_a_need_beyond_the_host_link_is_reported_as_a_shortfall(catalog):
    """H100's PCIe Gen5 x16 host link (64 GB/s = 512 Gb/s) feeds at most one 400G port per GPU."""
    ic, _ = _design(training_demand(need=1147.0), catalog.gpu("h100-sxm-80gb"), catalog)
    text = " ".join(ic.reasons)
    assert "needs 1,147 Gb/s of line rate per GPU" in text
    assert "achievable 372 Gb/s at 93% efficiency = 3.1x short of the 1,147 Gb/s needed" in text  # 1147 / 372
    assert "Shortfall: the layout needs 1,147 Gb/s per GPU" in text


def test_amd_gets_roce_ethernet(catalog):
    gpu = catalog.gpu("mi300x-oam-192gb")
    ic, topo = _design(training_demand(gpu.id), gpu, catalog)
    assert ic.scaleout_kind == "ethernet" and ic.scaleout_fabric == "ethernet-400g"
    assert topo.switch == catalog.fabrics["ethernet-400g"].default_switch


def test_speed_rises_only_when_the_reference_falls_short(catalog):
    gpu = catalog.gpu("a100-sxm-80gb")  # reference 200G HDR
    ic, _ = _design(training_demand(gpu.id, need=150), gpu, catalog)
    assert ic.scaleout_fabric == "ib-hdr"
    ic, _ = _design(training_demand(gpu.id, need=250), gpu, catalog)
    assert ic.scaleout_fabric == "ib-hdr"  # NDR 400G would exceed PCIe4 x16 (256 Gb/s): shortfall
    assert any("Shortfall" in r for r in ic.reasons)
    pcie5 = catalog.gpu("h100-pcie-80gb")  # reference 200G, PCIe5 x16 feeds 512 Gb/s
    ic, _ = _design(training_demand(pcie5.id, need=250), pcie5, catalog)
    assert ic.scaleout_fabric == "ib-ndr"  # the smallest speed that meets 250 Gb/s
    assert ic.nic_gbit_per_gpu * catalog.fabrics["ib-ndr"].efficiency >= 250


def test_never_above_what_the_host_link_feeds(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")  # PCIe5 x16 = 512 Gb/s; XDR 800G would not be fed
    ic, _ = _design(training_demand(need=600), gpu, catalog)
    assert ic.scaleout_fabric == "ib-ndr"
    assert any("Shortfall" in r for r in ic.reasons)


def test_oversubscription_is_exposed_for_the_step_time(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    ic, topo = _design(training_demand(), gpu, catalog, oversubscription=2.0)
    assert topo.oversubscription == 2.0
    assert (topo.leaf_switches, topo.spine_switches) == (32, 8)
    assert any("re-evaluated" in r for r in ic.reasons)


def test_rail_only_option(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    _, topo = _design(training_demand(gpus=512), gpu, catalog, topology="rail-only")
    assert topo.kind == "rail-only"
    assert topo.leaf_switches + topo.spine_switches == 8  # one 64-port switch per rail (64 nodes)
    pcie = catalog.gpu("l40s-pcie-48gb")
    with pytest.raises(InputError, match="rail-only"):
        design_fabric(training_demand(pcie.id, gpus=64), pcie, catalog, topology="rail-only")
    with pytest.raises(InputError, match="unknown topology"):
        design_fabric(training_demand(), gpu, catalog, topology="torus")


def test_serving_in_one_node_gets_only_a_front_end(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    ic, topo = _design(serving_demand(), gpu, catalog)
    assert (ic.scaleout_fabric, ic.scaleout_kind, ic.nic, ic.rails) == ("ethernet-100g", "ethernet", "cx6dx-100g", 1)
    assert ic.frontend_fabric is None and ic.frontend_gbit_per_node == 5.0
    assert topo.kind == "leaf-spine" and topo.switch == "sn4600c"
    assert topo.oversubscription == 4.0
    # dual-homed: two independent planes of 3 leaves + 2 spines, one port of a dual-port NIC in each
    assert (topo.leaf_switches, topo.spine_switches, topo.leaf_spine_links) == (6, 4, 72)
    assert topo.clos.planes == 2 and ic.nics_per_node == 1 and ic.nic_gbit_per_gpu == 25.0
    assert any("no east-west fabric" in r for r in ic.reasons)
    assert any(r.startswith("Dual-homed") for r in ic.reasons)


def test_front_end_ratio_and_speed_follow_the_traffic(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    _, topo = _design(serving_demand(frontend=25.0), gpu, catalog)
    assert topo.oversubscription == 3.0  # 25 x 4 > 80 Gb/s achievable, 25 x 3 fits
    ic, topo = _design(serving_demand(frontend=120.0), gpu, catalog)
    assert ic.scaleout_fabric == "ethernet-200g" and topo.port_gbit == 200


def test_serving_across_nodes_adds_an_east_west_fabric(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    ic, topo = _design(serving_demand(gpus=256, groups=("ep",), need=150, frontend=20), gpu, catalog)
    assert ic.scaleout_fabric == "ib-ndr" and ic.frontend_fabric == "ethernet-100g"
    assert topo.kind == "fat-tree" and topo.oversubscription == 1.0
    ic, topo = _design(serving_demand(gpus=256, kv=50, frontend=20, rail_aligned=True), gpu, catalog)
    assert ic.required_gbit_per_gpu == 50 and topo.kind == "rail-optimized-fat-tree"


def test_one_scale_up_domain_needs_no_fabric(catalog):
    gpu = catalog.gpu("gb200-nvl72")
    ic, topo = _design(training_demand(gpu.id, gpus=72, gpus_per_node=4), gpu, catalog)
    assert topo.kind == "none" and ic.scaleout_fabric is None
    ic, topo = _design(training_demand(gpu.id, gpus=576, gpus_per_node=4), gpu, catalog)
    assert ic.rails == 4 and topo.nodes == 144
    assert "8 rack-scale domains of 18 trays" in ic.reasons[0]


def test_beyond_three_tiers_of_ndr_falls_back_to_ethernet(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    ic, topo = _design(training_demand(gpus=131072), gpu, catalog)
    assert ic.scaleout_fabric == "ethernet-400g" and topo.tiers == 3
    assert (topo.leaf_switches, topo.spine_switches, topo.core_switches) == (2048, 2048, 1024)
    assert not topo.graph_checked  # above GRAPH_CHECK_LIMIT the graph runs on request


def test_deterministic(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    assert design_fabric(training_demand(), gpu, catalog) == design_fabric(training_demand(), gpu, catalog)
