"""Closed-form Clos sizing against published designs (shared reference fabric.md sections 1, 3, 8)."""

from __future__ import annotations

import pytest

from gpuplan.fabric.sizing import (
    ClosSpec,
    SizingError,
    bisection_links,
    fat_tree_k_ary,
    leaf_split,
    size_clos,
    spines_for,
    tier_capacity,
)


def dgx(nodes: int, **kw) -> ClosSpec:
    """DGX H100 SuperPOD: QM9700 (64 x NDR400), 8 rails, SU of 32 nodes (RA-11333-001)."""
    return ClosSpec(radix=64, nodes=nodes, rails=8, scalable_unit_nodes=32, **kw)


# T1-T3 (RA-11333-001 Table 4): one node slot goes to UFM; the 3-SU row needs the divisor rule.
@pytest.mark.parametrize("nodes, leaves, spines, node_links, spine_links", [
    (31, 8, 4, 248, 256),
    (63, 16, 8, 504, 512),
    (95, 24, 16, 760, 768),
    (127, 32, 16, 1016, 1024),
])
def test_superpod_1_to_4_su(nodes, leaves, spines, node_links, spine_links):
    d = size_clos(dgx(nodes, reserved_node_slots=1))
    assert (d.leaf_switches, d.spine_switches, d.core_switches) == (leaves, spines, 0)
    assert d.node_leaf_links == node_links
    assert d.leaf_spine_links == spine_links
    # RA Table 4 "cables compute + UFM" = node links + 4 UFM cables; the slot holds 8 ports.
    assert d.reserved_ports == 8


def test_three_su_needs_sixteen_spines_not_twelve():
    d = size_clos(dgx(95, reserved_node_slots=1))
    assert d.leaves * d.leaf_up // 64 == 12  # enough ports ...
    assert d.spines == 16                     # ... but 12 does not divide the 32 uplinks evenly
    assert d.leaf_up % d.spines == 0


# T5 (RA-11333-001 Table 3, same in RA-11334-001): 8 / 16 / 32 / 64 SU.
@pytest.mark.parametrize("su, leaves, spines, cores", [
    (4, 32, 16, 0), (8, 64, 32, 0), (16, 128, 128, 64), (32, 256, 256, 128), (64, 512, 512, 256),
])
def test_superpod_large(su, leaves, spines, cores):
    d = size_clos(dgx(32 * su))
    gpus = 256 * su
    assert (d.leaf_switches, d.spine_switches, d.core_switches) == (leaves, spines, cores)
    assert d.node_leaf_links == gpus
    assert d.leaf_spine_links == gpus
    assert d.spine_core_links == (gpus if cores else 0)
    assert d.tiers == (3 if cores else 2)


def test_eight_su_is_the_two_tier_limit():
    assert size_clos(dgx(256)).tiers == 2
    assert size_clos(dgx(256)).max_endpoints == 2048 == 64 * 64 // 2
    assert size_clos(dgx(257)).tiers == 3


# T15: the Amit33-design/Network-Automation bug (56 spines from a bandwidth quantity).
@pytest.mark.parametrize("layout, nodes, rails", [("fat-tree", 512, 1), ("fat-tree", 64, 8), ("rail-optimized", 64, 8)])
def test_512_gpus_non_blocking_is_16_leaves_8_spines(layout, nodes, rails):
    d = size_clos(ClosSpec(radix=64, nodes=nodes, rails=rails, layout=layout))
    assert (d.leaves, d.spines) == (16, 8)
    assert d.spines != 56
    assert d.leaf_spine_links <= d.spines * 64


# T10: Al-Fares k-ary fat tree.
def test_k48_fat_tree():
    assert fat_tree_k_ary(48) == {"hosts": 27648, "edge": 1152, "aggregation": 1152, "core": 576, "switches": 2880}
    assert fat_tree_k_ary(4)["switches"] == 20


# T11: tier capacities.
@pytest.mark.parametrize("k, caps", [(64, (64, 2048, 65536)), (144, (144, 10368, 746496)), (128, (128, 8192, 524288))])
def test_tier_capacity(k, caps):
    assert tuple(tier_capacity(k, t) for t in (1, 2, 3)) == caps


def test_capacity_boundaries_pick_the_tier_count():
    assert size_clos(ClosSpec(radix=64, nodes=64, rails=1, layout="fat-tree")).tiers == 1
    assert size_clos(ClosSpec(radix=64, nodes=65, rails=1, layout="fat-tree")).tiers == 2
    assert size_clos(ClosSpec(radix=64, nodes=2048, rails=1, layout="fat-tree")).tiers == 2
    assert size_clos(ClosSpec(radix=64, nodes=2049, rails=1, layout="fat-tree")).tiers == 3
    assert size_clos(ClosSpec(radix=64, nodes=65536, rails=1, layout="fat-tree")).tiers == 3
    with pytest.raises(SizingError, match="three-tier capacity"):
        size_clos(ClosSpec(radix=64, nodes=65537, rails=1, layout="fat-tree"))


# T17: rail per Clos (tech-talk-cto spreadsheet) = rail-only.
@pytest.mark.parametrize("nodes, switches", [(64, 8), (128, 48), (4096, 2560)])
def test_rail_only_switch_counts(nodes, switches):
    d = size_clos(ClosSpec(radix=64, nodes=nodes, rails=8, layout="rail-only"))
    assert d.leaf_switches + d.spine_switches + d.core_switches == switches
    assert d.copies == 8


def test_leaf_split_and_oversubscription():
    assert leaf_split(64, 1) == (32, 32)
    assert leaf_split(64, 4) == (48, 12)      # fabric.md 3.2: 48 down / 12 up, 4 spare
    assert leaf_split(64, 3) == (48, 16)
    assert leaf_split(144, 1) == (72, 72)
    d = size_clos(ClosSpec(radix=64, nodes=128, rails=1, layout="fat-tree", oversubscription=4))
    assert (d.leaves, d.leaf_down, d.leaf_up, d.spines) == (3, 48, 12, 2)
    assert d.oversubscription == 4


def test_oversubscribed_rail_optimized_keeps_the_scalable_unit():
    d = size_clos(ClosSpec(radix=64, nodes=128, rails=8, oversubscription=2))
    assert (d.unit_nodes, d.leaves, d.leaf_up, d.spines) == (32, 32, 16, 8)
    assert bisection_links(d) == 256  # half of the non-blocking 1,024 / 2 = 512


def test_divisor_rule_prefers_a_few_more_uplinks_to_many_spines():
    # 13 uplinks (prime) on 8 leaves would force 13 spines; 14 uplinks divide over 2.
    assert spines_for(8, 13, 64) == 13
    assert spines_for(8, 14, 64) == 2
    d = size_clos(ClosSpec(radix=64, nodes=8 * 51, rails=1, layout="fat-tree", oversubscription=51 / 13))
    assert d.spines < 13 and d.leaf_up % d.spines == 0


def test_partial_pod_three_tier():
    """17 SU = 544 DGX x 8 rails = 4,352 endpoints on 136 leaves. Pods of 32 leaves (4 SU): 4 full
    pods and a last pod of 8 leaves. A full pod's 32 x 32 leaf uplinks land on 32 spines (32 down,
    32 up each); the last pod's 8 x 32 on 8 spines: 4 x 32 + 8 = 136 spines. Core group j joins
    spine j of every pod: 32 groups of 4 cores = 128. Non-blocking, so every tier carries all
    4,352 endpoints: 4,352 node-leaf, 4,352 leaf-spine and 4,352 spine-core links."""
    d = size_clos(dgx(17 * 32))
    assert d.tiers == 3 and d.pods == 5 and d.last_pod_leaves == 8 and d.leaves == 136
    assert d.spines == 136 and d.cores == 128
    assert d.node_leaf_links == d.leaf_spine_links == d.spine_core_links == 4352


def test_bisection_non_blocking_is_half_the_endpoints():
    for nodes in (128, 256, 512, 2048):
        d = size_clos(dgx(nodes))
        assert bisection_links(d) == nodes * 8 // 2
    assert bisection_links(size_clos(ClosSpec(radix=64, nodes=128, rails=1, layout="fat-tree", oversubscription=4))) == 28


def test_planes_multiply_every_count():
    one = size_clos(ClosSpec(radix=64, nodes=128, rails=8))
    two = size_clos(ClosSpec(radix=64, nodes=128, rails=8, planes=2))
    assert two.leaf_switches == 2 * one.leaf_switches
    assert two.endpoints == 2 * one.endpoints and two.max_endpoints == 2 * one.max_endpoints


def test_bad_specs_raise():
    with pytest.raises(SizingError):
        ClosSpec(radix=64, nodes=0)
    with pytest.raises(SizingError):
        ClosSpec(radix=64, nodes=1, oversubscription=0)
    with pytest.raises(SizingError, match="do not fit"):
        size_clos(ClosSpec(radix=8, nodes=10, rails=8, layout="fat-tree", oversubscription=1))
