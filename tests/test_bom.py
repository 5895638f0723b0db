"""Bill of materials: RA-11333-001 Tables 7/8 counts, unpriced parts, and the 1,024-GPU comparison."""

from __future__ import annotations

import pytest

from gpuplan.fabric.bom import build_bom, network_cost_per_gpu, nodes_per_rack
from gpuplan.hardware import load_catalog
from gpuplan.fabric.interconnect import FabricDesign, design_fabric
from gpuplan.fabric.sizing import ClosSpec, size_clos
from gpuplan.fabric.topology import build_topology
from gpuplan.core.contract import Interconnect
from tests.fabric.helpers import PRICE_BOOK, serving_demand, training_demand

NETWORK = ("nic", "switch", "transceiver", "cable")


@pytest.fixture(scope="module")
def priced_catalog():
    """The shipped catalog plus the test price book (assumed prices, see its source note)."""
    return load_catalog([PRICE_BOOK])


def plan_bom(catalog, demand, **kw):
    gpu = catalog.gpu(demand.gpu)
    return build_bom(demand.phase, gpu, demand.gpus, design_fabric(demand, gpu, catalog, **kw), catalog)


def qty(bom, category=None, part=None, tier_prefix=None):
    return sum(i.quantity for i in bom.items if (category is None or i.category == category)
               and (part is None or i.part_id == part) and (tier_prefix is None or (i.tier or "").startswith(tier_prefix)))


def per_gpu_by_category(bom, gpus):
    out = {}
    for i in bom.items:
        if i.category in NETWORK and i.total_price_usd is not None:
            out[i.category] = out.get(i.category, 0.0) + i.total_price_usd / gpus
    return out


def test_superpod_4su_components(catalog):
    """T4: RA-11333-001 Table 7 (48 compute QM9700) and Table 8 (2,040 fibres, 1,536 + 508 OSFP)."""
    bom = plan_bom(catalog, training_demand(gpus=127 * 8), scalable_unit_nodes=32, reserved_node_slots=1)
    assert qty(bom, "server", "h100-sxm-80gb") == 127
    assert qty(bom, "nic", "cx7-400g") == 1016
    assert qty(bom, "switch", "qm9700", "compute-leaf") == 32
    assert qty(bom, "switch", "qm9700", "compute-spine") == 16
    switch_side = sum(i.quantity for i in bom.items if i.category == "transceiver"
                      and not (i.tier or "").startswith("compute-node"))
    assert switch_side == 1536
    assert qty(bom, "transceiver", tier_prefix="compute-node") == 508
    node_line = next(i for i in bom.items if i.tier == "compute-node:node-leaf")
    assert node_line.part_id == "osfp-800g-2xsr4-flt"  # flat-top twin-port module for DGX cages
    assert qty(bom, "cable", "fiber-mpo-12") == 2040
    assert nodes_per_rack(catalog.gpu("h100-sxm-80gb"), catalog) == 4
    assert qty(bom, "rack", tier_prefix="compute") == 32  # 127 DGX at 4 per rack
    # Table 7: 96 PDUs in the 32 compute racks (3 per 40.8 kW rack) and 4 management servers
    assert qty(bom, "power", "pdu-3ph-17kw", "compute") == 96
    assert qty(bom, "management", "head-node-2s") == 4
    # OOB ports: 127 DGX + 48 QM9700 + 100 PDUs (96 + 2 x 2 in the 2 network racks) + 4 head
    # nodes = 279 -> ceil(279 / 48) = 6 SN2201 (Table 7 has 8: it also wires storage, in-band
    # and UFM, which this fabric-only BOM does not have)
    assert qty(bom, "management", "sn2201") == 6
    assert qty(bom, "management", "cat6-patch") == 279


def test_parts_without_a_street_price_are_estimates_never_zero(catalog):
    # A100 with HDR: the ConnectX-6 and the 200G AOC have no citable street price; the catalog
    # estimates them by a sibling's price per Gb/s and the BOM marks the lines.
    bom = plan_bom(catalog, training_demand("a100-sxm-80gb"))
    nic = next(i for i in bom.items if i.part_id == "cx6-200g")
    assert nic.unit_price_usd == pytest.approx(1894 / 400 * 200)  # ConnectX-7 400G per Gb/s x 200 = $947
    assert nic.estimate and nic.price_uncertainty == 0.4
    aoc = next(i for i in bom.items if i.part_id == "aoc-200g")
    assert aoc.estimate and aoc.unit_price_usd == 418  # $2.09 per Gb/s between the 100G and 400G AOCs
    assert bom.unpriced_parts == []
    assert bom.estimated_capex_usd == pytest.approx(sum(i.total_price_usd for i in bom.items if i.estimate))
    assert not next(i for i in bom.items if i.part_id == "qm8700").estimate
    assert bom.capex_usd == pytest.approx(sum(i.total_price_usd or 0 for i in bom.items))
    network = [i for i in bom.items if i.category in ("nic", "switch", "transceiver", "cable")]
    assert bom.network_capex_usd == pytest.approx(sum(i.total_price_usd or 0 for i in network))
    assert all(i.total_price_usd is None or i.total_price_usd > 0 for i in bom.items)


def test_every_catalog_line_has_source_and_date(catalog):
    bom = plan_bom(catalog, training_demand())
    for item in bom.items:
        if item.category == "rack" or item.part_id.startswith("no-catalog-part") or item.tier == "inside-server":
            continue
        assert item.source and item.price_date, item


def test_power_cloud_and_racks(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    bom = plan_bom(catalog, training_demand())
    nic = next(i for i in bom.items if i.part_id == "cx7-400g")
    assert nic.total_power_w is None  # inside the server's 10.2 kW
    assert bom.cloud_usd_per_hour == pytest.approx(1024 * gpu.cloud_usd_per_gpu_hour)
    assert bom.rack_power_kw == pytest.approx(4 * 10.2)
    # servers + network + 32 rear doors x 0.8 kW (40.8 kW racks: above 20 kW of room air, below 60)
    # + 4 head nodes x 1.2 kW; the SN2201 has no power figure
    assert bom.cooling == "rear-door"
    assert bom.power_kw == pytest.approx(128 * 10.2 + bom.network_power_kw + 32 * 0.8 + 4 * 1.2)
    assert bom.pue == 1.5 and bom.facility_power_kw == pytest.approx(bom.power_kw * 1.5)
    assert "sn2201" in bom.unpowered_parts and "qm9700" not in bom.unpowered_parts
    leaf_spine = [i for i in bom.items if i.part_id == "qm9700"]
    assert sum(i.total_power_w for i in leaf_spine) == pytest.approx(48 * 747)  # typical, passive cables
    assert bom.racks == 32 + 2  # 48 x 1U QM9700 + 4 x 2U head nodes = 56 U -> 2 other racks


def test_nvl72_racks_hold_the_scale_up_domain(catalog):
    gpu = catalog.gpu("gb200-nvl72")
    bom = plan_bom(catalog, training_demand(gpu.id, gpus=1152, gpus_per_node=4))
    assert qty(bom, "rack", "nvl72-rack") == 16
    assert bom.rack_power_kw == pytest.approx(18 * gpu.node_power_kw)
    assert qty(bom, "transceiver", "osfp-400g-sr4") == 288 * 4  # one single-port module per tray NIC


def test_nvl72_rack_parts_read_in_rack_not_zero_dollars(catalog):
    """The NVL72 enclosure and power shelves are in the rack price (the catalog's price_usd = 0,
    gb200-nvl72-rack-price): their lines say so, as the GPUs inside a server do, in every format."""
    from gpuplan.render.cost import line_total, line_unit

    bom = plan_bom(catalog, training_demand("gb200-nvl72", gpus=1152, gpus_per_node=4))
    inside = {i.part_id: i for i in bom.items if i.part_id in ("nvl72-rack", "nvl72-power-shelf")}
    assert set(inside) == {"nvl72-rack", "nvl72-power-shelf"}
    for item in inside.values():
        assert item.tier == "inside-rack" and item.total_price_usd == 0.0
        assert (line_unit(item), line_total(item)) == ("-", "in rack")
    gpus = next(i for i in bom.items if i.tier == "inside-server")
    assert (line_unit(gpus), line_total(gpus)) == ("-", "in server")


def test_missing_catalog_parts_are_lines_not_silence(tmp_path):
    # An in-house 1.6T fabric added by overlay: the catalog stocks no 1.6T-per-link optics for it.
    (tmp_path / "fab.toml").write_text(
        '[[source]]\nid = "inhouse"\ntitle = "in-house"\ndate = "2026-11"\nconfidence = "D"\n'
        '[[switch]]\nid = "sw-1600"\nname = "1.6T switch"\nvendor = "x"\nkinds = ["ethernet"]\n'
        'radix_by_gbit = { "1600" = 64 }\ncages = 64\nlanes_per_cage = 1\nrack_units = 2\nsources = { default = "inhouse" }\n'
        '[[nic]]\nid = "nic-1600"\nname = "1.6T NIC"\nkinds = ["ethernet"]\nports = 1\nport_gbit = 1600\n'
        'sources = { default = "inhouse" }\n'
        '[[fabric]]\nid = "ethernet-1600g"\nname = "1.6T Ethernet"\nkind = "ethernet"\nport_gbit = 1600\n'
        'efficiency = 0.8\nhop_latency_us = 0.7\nbase_latency_us = 8\nin_network_reduction = false\n'
        'default_switch = "sw-1600"\ndefault_nic = "nic-1600"\nsources = { default = "inhouse" }\n'
        '[[gpu]]\nid = "mi355x-oam-288gb"\nreference_nic = "nic-1600"\nreference_scaleout_gbit_per_gpu = 1600.0\n')
    catalog = load_catalog([tmp_path])
    bom = plan_bom(catalog, training_demand("mi355x-oam-288gb", gpus=1024))
    missing = [p for p in bom.unpriced_parts if p.startswith("no-catalog-part:")]
    assert missing and all(qty(bom, part=p) > 0 for p in missing)
    assert all(i.total_price_usd is None for i in bom.items if i.part_id in missing)


def test_serving_with_east_west_fabric_also_gets_a_front_end(catalog):
    bom = plan_bom(catalog, serving_demand(gpus=256, groups=("ep",), need=150, frontend=20))
    assert qty(bom, "nic", "cx7-400g") == 256 and qty(bom, "nic", "cx6dx-100g") == 32
    assert qty(bom, "switch", tier_prefix="frontend-leaf") >= 1
    assert qty(bom, "switch", "qm9700") == 12  # 8 in-rack leaves + 4 spines
    assert qty(bom, "cable", "dac-800g") == 32 * 4  # in-rack twin-port DAC, 4 per DGX


def test_1024_gpu_training_vs_serving_network_cost(priced_catalog):
    """Training (400G IB, 1:1, rail-optimized) vs serving (100G Ethernet front end, 4:1), per GPU.

    With the shipped prices plus the test price book's SN4600C (tests/fabric/data/price_book): 11.7x
    with the dual-homed front end (17.3x when it was single-homed). A widely cited estimate says
    7-8x; docs/fabric-model.md explains the difference (it gives inference 2 x 100G per GPU).
    """
    train = plan_bom(priced_catalog, training_demand())
    serve = plan_bom(priced_catalog, serving_demand())
    assert per_gpu_by_category(train, 1024) == pytest.approx(
        {"nic": 1894.0, "switch": 1540.78125, "transceiver": 1943.0, "cable": 408.0})
    assert per_gpu_by_category(serve, 1024) == pytest.approx(
        {"nic": 171.875, "switch": 244.140625, "transceiver": 13.921875, "cable": 65.34375})
    t, s = network_cost_per_gpu(train, 1024), network_cost_per_gpu(serve, 1024)
    assert t == pytest.approx(5785.78125)
    assert s == pytest.approx(495.28125)  # both planes: 6 leaves + 4 spines, one dual-port NIC per node
    assert t / s == pytest.approx(11.68, abs=0.01)
    # every part of either is priced (racks and OOB switches by estimates, outside both figures)
    assert train.unpriced_parts == serve.unpriced_parts == []


def test_serving_across_nodes_costs_about_what_training_does(priced_catalog):
    """A serving replica over the network gets an east-west fabric plus its front end: ~1x."""
    train = network_cost_per_gpu(plan_bom(priced_catalog, training_demand()), 1024)
    serve = network_cost_per_gpu(plan_bom(priced_catalog, serving_demand(groups=("ep",), need=150,
                                                                            rail_aligned=True)), 1024)
    assert serve == pytest.approx(6281.0625)
    assert 0.9 < train / serve < 1.1


def _frontend_bom(catalog, ports_per_node):
    """A 1,024-GPU (128 DGX H100) 100G Ethernet leaf-spine at 4:1 with `ports_per_node` ports."""
    gpu = catalog.gpu("h100-sxm-80gb")
    design = size_clos(ClosSpec(radix=64, nodes=128, rails=ports_per_node, layout="fat-tree", oversubscription=4.0))
    topo = build_topology(design, switch="sn4600c", port_gbit=100, frontend=True)
    nic = catalog.nics["cx6dx-100g"]
    ic = Interconnect(scaleup_tech=gpu.scaleup_tech, scaleup_domain_gpus=gpu.scaleup_domain,
                      scaleup_uni_gb_per_s=gpu.scaleup_uni_gb_per_s, scaleout_fabric="ethernet-100g", scaleout_kind="ethernet",
                      nic=nic.id, nics_per_node=-(-ports_per_node // nic.ports),
                      nic_gbit_per_gpu=ports_per_node * 100 / gpu.gpus_per_node, required_gbit_per_gpu=0.0,
                      rails=ports_per_node, reasons=[])
    return design, build_bom("serving", gpu, 1024, FabricDesign(ic, topo, design), catalog)


def test_1024_gpu_ratio_under_the_reference_estimates_own_serving_bandwidth(priced_catalog):
    """The widely cited 1,024-GPU table ($14.8M training vs $1.9M inference, "7-8x") prices an
    inference network of 2 x 100G Ethernet per GPU at 4:1 (its NIC row), while its prose gives an
    8 x A100 inference server 2 x 100G in all (25 Gb/s per GPU). Same catalog prices as
    test_1024_gpu_training_vs_serving_network_cost; docs/fabric-model.md explains the spread."""
    train = network_cost_per_gpu(plan_bom(priced_catalog, training_demand()), 1024)
    assert train == pytest.approx(5785.78125)
    one, bom1 = _frontend_bom(priced_catalog, 1)
    assert network_cost_per_gpu(bom1, 1024) == pytest.approx(333.578125)  # gpuplan's traffic-sized choice
    assert (one.leaves, one.spines) == (3, 2)
    two, bom2 = _frontend_bom(priced_catalog, 2)       # the reference's prose: 2 x 100G per server
    assert (two.leaves, two.spines) == (6, 2)
    assert train / network_cost_per_gpu(bom2, 1024) == pytest.approx(12.96, abs=0.01)
    sixteen, bom16 = _frontend_bom(priced_catalog, 16)  # the reference's table: 2 x 100G per GPU
    assert (sixteen.leaves, sixteen.spines) == (43, 12)
    # 55 SN4600C at the price book's $25k = $1.375M (the reference: $1.2M of switches at 4:1).
    assert qty(bom16, "switch", "sn4600c") == 55
    assert network_cost_per_gpu(bom16, 1024) == pytest.approx(3028.34375)
    assert train / network_cost_per_gpu(bom16, 1024) == pytest.approx(1.91, abs=0.01)


def test_shipped_catalog_front_end_switch_is_an_estimate_not_zero(catalog):
    # The SN4600C has no citable street price: the catalog prices it per port of its sibling
    # SN5600 ($51,999 / 256 x 100G ports x 64 = $12,999.75, stored $13,000) and marks it.
    bom = plan_bom(catalog, serving_demand())
    lines = [i for i in bom.items if i.part_id == "sn4600c"]
    assert lines and all(i.unit_price_usd == 13000 and i.estimate for i in lines)
    assert bom.unpriced_parts == []
    assert bom.network_capex_usd == pytest.approx(sum(i.total_price_usd or 0 for i in bom.items
                                                      if i.category in NETWORK))
    assert network_cost_per_gpu(bom, 1024) == pytest.approx(bom.network_capex_usd / 1024)


def test_a_line_without_a_price_leaves_the_per_gpu_network_figure_out(tmp_path):
    # An overlay switch with no price: it is named in unpriced_parts and no per-GPU network figure
    # is given (it would compare an incomplete sum with complete ones).
    (tmp_path / "sw.toml").write_text(
        '[[switch]]\nid = "sn4600c"\nname = "in-house 100G"\nvendor = "x"\nkinds = ["ethernet"]\n'
        'radix_by_gbit = { "100" = 64 }\ncages = 64\nlanes_per_cage = 1\nrack_units = 2\n'
        'sources = { default = "nvidia-ra-11333-001" }\n')
    catalog = load_catalog([tmp_path])
    assert catalog.switches["sn4600c"].price_usd == 13000  # merged field by field: the price stays
    (tmp_path / "sw.toml").write_text(
        '[[switch]]\nid = "sw-unpriced"\nname = "in-house 100G"\nvendor = "x"\nkinds = ["ethernet"]\n'
        'radix_by_gbit = { "100" = 64 }\ncages = 64\nlanes_per_cage = 1\nrack_units = 2\n'
        'sources = { default = "nvidia-ra-11333-001" }\n'
        '[[fabric]]\nid = "ethernet-100g"\ndefault_switch = "sw-unpriced"\n')
    catalog = load_catalog([tmp_path])
    bom = plan_bom(catalog, serving_demand())
    assert "sw-unpriced" in bom.unpriced_parts
    assert network_cost_per_gpu(bom, 1024) is None


def test_a_site_overlay_sets_the_rack_power_budget(tmp_path):
    """calibration/bom.toml ships the RA-11333-001 budget (41 kW: four DGX H100); an overlay may change it."""
    shipped = load_catalog()
    assert nodes_per_rack(shipped.gpu("h100-sxm-80gb"), shipped) == 4       # RA-11333-001 layout
    assert nodes_per_rack(shipped.gpu("mi300x-oam-192gb"), shipped) == 3    # 41 // 10.6
    (tmp_path / "calibration").mkdir()
    (tmp_path / "calibration" / "bom.toml").write_text("rack_power_kw = 21.0\n")
    sparse = load_catalog([tmp_path])
    assert nodes_per_rack(sparse.gpu("mi300x-oam-192gb"), sparse) == 1    # 21 // 10.6
    assert nodes_per_rack(sparse.gpu("h100-sxm-80gb"), sparse) == 4       # the reference layout wins
    (tmp_path / "calibration" / "bom.toml").write_text("rack_power_kw = 120.0\n")
    dense = load_catalog([tmp_path])
    assert nodes_per_rack(dense.gpu("mi300x-oam-192gb"), dense) == 5      # 42 U / 8 U: space-bound


@pytest.mark.parametrize("profile", [
    # XDR (1.6T DR4 single-mode modules) on B300: the fibre must be single-mode
    '[model]\npreset = "llama-3.1-405b"\n[training]\ntokens = 15.6e12\nsequence_length = 8192\n'
    'global_batch_tokens = 16e6\ndeadline_days = 80\n[constraints]\nallow_gpus = ["b300-sxm-288gb"]\n',
    # HDR SR4 multimode modules on 1,024 A100: no single-mode fibre behind them
    '[model]\npreset = "gpt-3-175b"\n[training]\ntokens = 300e9\nsequence_length = 2048\nprecision = "fp16"\n'
    'global_batch_tokens = 3145728\ngpus = 1024\n[constraints]\nallow_gpus = ["a100-sxm-80gb"]\n',
])
def test_fibre_matches_the_mode_of_its_links_transceivers(catalog, profile):
    from gpuplan.planning.compose import plan_workload
    from gpuplan.model.profile import load_profile_text

    bom = plan_workload(load_profile_text(profile, "p.toml", catalog), catalog).training.bom
    optics = catalog.optics
    # keyed by fabric (compute, storage) and link tier: "compute-leaf:leaf-spine" / "compute:leaf-spine"
    modules = {(i.tier.split("-")[0], i.tier.split(":")[1]): optics[i.part_id].fiber_mode for i in bom.items
               if i.category == "transceiver" and i.part_id in optics}
    fibres = [((i.tier.split(":")[0]), i.tier.split(":")[1], optics[i.part_id].fiber_mode) for i in bom.items
              if i.category == "cable" and i.part_id in optics and optics[i.part_id].kind == "fiber"]
    assert fibres
    for fabric, link, mode in fibres:
        assert mode == modules[(fabric, link)], (fabric, link, mode, modules[(fabric, link)])


def test_every_transceiver_and_fibre_names_its_fibre_mode(catalog):
    for optic in catalog.optics.values():
        assert (optic.fiber_mode is not None) == (optic.kind in ("transceiver", "fiber")), optic.id
