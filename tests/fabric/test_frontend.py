"""The serving front end (gpuplan/fabric/frontend.py) and the catalog parts of a fabric
(gpuplan/fabric/parts.py), each figure worked out by hand.

Catalog figures used: Ethernet at 100/200/400/800G runs at 80 % of line rate (fabrics.toml);
SN4600C has 64 x 100G ports, SN5600 128 x 400G, QM9700 64 x NDR400; ConnectX-6 Dx is a dual-port
100G NIC."""

from __future__ import annotations

import pytest

from gpuplan.fabric.frontend import FRONTEND_PLANES, frontend_design, frontend_nics
from gpuplan.fabric.parts import choose_frontend, down_ports, frontend_ratio, pick_nic, switch_for
from gpuplan.fabric.sizing import SizingError
from tests.conftest import plan_file


@pytest.mark.parametrize("gbit, fabric, ports", [
    (20.0, "ethernet-100g", 1),    # never below 100G (fabric.md 1.9: the RAs' 100 GbE front ends)
    (80.0, "ethernet-100g", 1),    # 100G x 0.8 = 80 Gb/s achievable: just enough
    (81.0, "ethernet-200g", 1),    # 1 Gb/s more: the next speed, 200G x 0.8 = 160
    (170.0, "ethernet-400g", 1),   # 200G gives 160 < 170
    (700.0, "ethernet-800g", 2),   # the fastest, 800G x 0.8 = 640 < 700: ceil(700 / 640) = 2 ports
])
def test_the_smallest_ethernet_that_carries_the_node(catalog, gbit, fabric, ports):
    chosen, n = choose_frontend(gbit, catalog)
    assert (chosen.id, n) == (fabric, ports)


@pytest.mark.parametrize("gbit, ratio", [
    (20.0, 4.0),   # 4 x 20 = 80 <= 80 Gb/s achievable: the Juniper JVD's 4:1
    (25.0, 3.0),   # 4 x 25 = 100 > 80, 3 x 25 = 75 <= 80
    (30.0, 2.0),   # 3 x 30 = 90 > 80, 2 x 30 = 60 <= 80
    (79.0, 1.0),   # only a non-blocking leaf carries it
])
def test_frontend_oversubscription_is_the_largest_the_traffic_allows(catalog, gbit, ratio):
    assert frontend_ratio(gbit, catalog.fabrics["ethernet-100g"], 1) == ratio


def test_leaf_down_ports_by_ratio():
    # 64 ports: 1:1 = 32 down; 2:1 = 42 down / 21 up; 3:1 = 48 / 16; 4:1 = 48 / 12 with 4 spare
    # (fabric.md 3.2).
    assert [down_ports(64, r) for r in (1.0, 2.0, 3.0, 4.0)] == [32, 42, 48, 48]


def test_a_dual_homed_front_end_for_128_servers(catalog):
    """128 servers (1,024 H100) sending 20 Gb/s each: one 100G port per plane at 4:1. A 64-port
    SN4600C leaf at 4:1 has 48 down, 12 up: ceil(128 / 48) = 3 leaves per plane; their 36 uplinks
    fit one spine by ports, but a leaf-spine gets at least two spines (so no switch carries all
    cross-leaf traffic) and 2 divides 12. Two independent planes: 6 leaves + 4 spines. One
    dual-port ConnectX-6 Dx per server homes it to both planes."""
    fe = frontend_design(20.0, 128, catalog)
    assert (fe.fabric.id, fe.ports, fe.ratio, fe.switch_id) == ("ethernet-100g", 1, 4.0, "sn4600c")
    assert (fe.design.leaves, fe.design.spines) == (3, 2)
    assert FRONTEND_PLANES == 2
    assert (fe.design.leaf_switches, fe.design.spine_switches) == (6, 4)
    assert fe.nic is not None and fe.nic.id == "cx6dx-100g" and fe.nics_per_node == 1
    # every server has a port in each plane: 128 node-leaf links per plane
    assert fe.design.node_leaf_links == 2 * 128


def test_front_end_nics_per_server(catalog):
    dual = catalog.nics["cx6dx-100g"]
    assert dual.ports == 2
    assert frontend_nics(dual, 1) == 1   # 1 port in each of 2 planes: one dual-port NIC
    assert frontend_nics(dual, 2) == 2   # 4 ports: two
    assert frontend_nics(None, 1) == 0


def test_the_reference_nic_of_a_fabric(catalog):
    h100 = catalog.gpu("h100-sxm-80gb")
    assert pick_nic(catalog, catalog.fabrics["ib-ndr"], gpu=h100, ports=1).id == "cx7-400g"  # DGX H100
    assert pick_nic(catalog, catalog.fabrics["ethernet-100g"], gpu=None, ports=2).id == "cx6dx-100g"


def test_switch_for_takes_the_default_until_three_tiers_run_out(catalog):
    # A 64-port switch holds 64^3 / 4 = 65,536 endpoints non-blocking in three tiers (Al-Fares).
    assert switch_for(catalog.fabrics["ib-ndr"], catalog, 1024, 1.0) == ("qm9700", 64)
    assert switch_for(catalog.fabrics["ib-ndr"], catalog, 65_536, 1.0) == ("qm9700", 64)
    # One more endpoint needs a larger radix; at 400G no InfiniBand switch in the catalog has one.
    with pytest.raises(SizingError, match="exceed three tiers"):
        switch_for(catalog.fabrics["ib-ndr"], catalog, 65_537, 1.0)
    # At 100G the 512-port Tomahawk 5 box takes over from the 64-port SN4600C.
    assert switch_for(catalog.fabrics["ethernet-100g"], catalog, 65_536, 1.0) == ("sn4600c", 64)
    assert switch_for(catalog.fabrics["ethernet-100g"], catalog, 65_537, 1.0) == ("th5-51t2", 512)


def test_topology_sentence_counts_hops_and_tb_per_s_as_numbers_are_written():
    """The frontier example's 1,548 GB200 trays x 4 NICs x 400 Gb/s / 2 = 1,238,400 Gb/s across the
    cut: "bisection 1,238 Tb/s" (it printed "1238"; past 9,999 Tb/s, ".4g" wrote "1.24e+04"). A
    single switch is one hop: "1 switch hop" (it said "1 switch hops")."""
    from pathlib import Path

    from gpuplan.hardware import load_catalog

    root = Path(__file__).resolve().parents[2]
    catalog = load_catalog()

    def reasons(name, phase):
        path = root / "examples" / name
        plan = plan_file(path, catalog, phase)
        return next(r for r in getattr(plan, phase).interconnect.reasons if r.startswith("Topology:"))

    big = reasons("frontier-405b-training.toml", "training")
    assert "196 leaf, 196 spine, 128 core switches" in big
    assert big.endswith("5 switch hops worst case; bisection 1,238 Tb/s one direction.")
    small = reasons("moe-serving.toml", "serving")
    assert small.endswith("1 switch hop worst case; bisection 0.2 Tb/s one direction.")


def test_a_one_node_front_end_has_no_bisection_to_state():
    """An 8B chat fleet on one MI300X server (4 replicas, 2 front-end planes of one SN4600C each):
    the topology sentence said "bisection 0 Tb/s one direction", a figure for a cut that does not
    exist (the halves of one node)."""
    from gpuplan.hardware import load_catalog
    from gpuplan.model.profile import load_profile_text
    from gpuplan.planning.compose import plan_workload

    catalog = load_catalog()
    text = ('[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 60\nprompt_tokens = 1500\noutput_tokens = 350\n'
            'precision = "fp8"\nttft_ms = 800\ntpot_ms = 40\n')
    s = plan_workload(load_profile_text(text, "p.toml", catalog), catalog, phases=("serving",)).serving
    assert (s.gpu, s.nodes) == ("mi300x-oam-192gb", 1)
    topo = next(r for r in s.interconnect.reasons if r.startswith("Topology:"))
    assert topo == ("Topology: single switch, 1 tier of sn4600c (64 ports at 100G): 2 leaf switches; "
                    "oversubscription 1:1; 1 switch hop worst case; no bisection (one node: nothing to cut).")
