"""Fabrics below one scalable unit use the fewest switches (issue 15); whole units keep the RA."""

from __future__ import annotations

from gpuplan.fabric.compact import fewest_switches, switches
from gpuplan.fabric.sizing import ClosSpec, size_clos
from gpuplan.fabric.topology import design_of
from gpuplan.planning.compose import plan_workload
from gpuplan.model.profile import load_profile_text

A100_48 = """
[model]
preset = "llama-2-7b"
[training]
tokens = 1e11
sequence_length = 4096
gpus = 48
[constraints]
allow_gpus = ["a100-sxm-80gb"]
"""


def test_six_a100_servers_need_at_most_four_switches(catalog):
    t = plan_workload(load_profile_text(A100_48, "p.toml", catalog), catalog).training
    topo = t.topology
    assert topo.leaf_switches + topo.spine_switches + topo.core_switches <= 4  # was 8 leaf + 4 spine
    assert topo.endpoints == 48 and topo.oversubscription == 1.0 and topo.graph_checked
    assert any(r.startswith("Below one scalable unit") for r in t.interconnect.reasons)
    assert design_of(topo).leaf_switches == topo.leaf_switches  # the stored topology rebuilds


def test_traffic_that_is_not_rail_aligned_gets_a_leaf_spine_of_whole_nodes():
    spec = ClosSpec(radix=40, nodes=6, rails=8)
    d = fewest_switches(spec, rail_planes=False)
    assert d.spec.planes == 1 and d.spec.layout == "fat-tree"
    assert switches(d) == 5 < switches(size_clos(spec)) == 12   # 3 leaves of 2 nodes + 2 spines


def test_whole_units_keep_the_reference_design():
    for nodes in (20, 32, 64, 127):
        spec = ClosSpec(radix=64, nodes=nodes, rails=8)
        if nodes >= 32:
            assert fewest_switches(spec, rail_planes=True) == size_clos(spec)
    spec = ClosSpec(radix=64, nodes=20, rails=8, scalable_unit_nodes=32)  # a pinned unit is kept
    assert fewest_switches(spec, rail_planes=True) == size_clos(spec)
