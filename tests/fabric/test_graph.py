"""The fabric graph: ports within radix, bisection = max-flow, hops, ECMP, exports, lazy import."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from gpuplan.fabric.graph import (
    build_graph,
    check_graph,
    graphml_text,
    node_link,
    to_networkx,
)
from gpuplan.fabric.sizing import ClosSpec, SizingError, size_clos
from gpuplan.fabric.topology import build_topology, design_of


def topo(spec: ClosSpec, gbit: float = 400.0):
    return build_topology(size_clos(spec), switch="qm9700", port_gbit=gbit)


def max_flow_bisection(g: nx.Graph) -> float:
    """Max-flow from the first half of the servers to the second (one direction)."""
    h = g.copy()
    n = g.graph["nodes"]
    for i in range(n):
        if i < n // 2:
            h.add_edge("SRC", f"server{i}", capacity_gbit=float("inf"))
        else:
            h.add_edge(f"server{i}", "DST", capacity_gbit=float("inf"))
    return nx.maximum_flow_value(h, "SRC", "DST", capacity="capacity_gbit")


def random_specs(seed: int, count: int, radices=(4, 6, 8, 12, 16, 32, 64), max_nodes=200):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        layout = rng.choice(["rail-optimized", "fat-tree", "rail-only"])
        spec = {"radix": rng.choice(radices), "nodes": rng.randint(1, max_nodes),
                    "rails": rng.choice([1, 2, 4, 8]) if layout != "fat-tree" else rng.choice([1, 2]),
                    "layout": layout, "oversubscription": rng.choice([1, 1, 2, 3, 4, 0.8]),
                    "scalable_unit_nodes": rng.choice([None, None, 2, 4, 8, 32]),
                    "reserved_node_slots": rng.choice([0, 0, 1]), "planes": rng.choice([1, 1, 2])}
        try:
            size_clos(ClosSpec(**spec))
        except SizingError:
            continue
        out.append(ClosSpec(**spec))
    return out


@pytest.mark.parametrize("spec", random_specs(3, 120))
def test_graph_ports_within_radix_and_matches_closed_form(spec):
    t = topo(spec)
    checks = check_graph(build_graph(t))
    assert checks.ports_within_radix, checks.violations
    assert checks.max_port_use <= 1.0
    assert checks.even_uplinks
    assert checks.bisection_gbit == pytest.approx(t.bisection_gbit)
    assert checks.max_switch_hops == t.max_switch_hops
    assert checks.equal_cost_paths == t.equal_cost_paths
    assert checks.links == t.node_leaf_links + t.leaf_spine_links + t.spine_core_links


@pytest.mark.parametrize("spec", random_specs(11, 60, radices=(4, 6, 8, 12), max_nodes=120))
def test_bisection_convention_equals_max_flow(spec):
    t = topo(spec, gbit=100.0)
    assert max_flow_bisection(to_networkx(build_graph(t))) == pytest.approx(t.bisection_gbit)


def test_superpod_graph():
    t = topo(ClosSpec(radix=64, nodes=127, rails=8, scalable_unit_nodes=32, reserved_node_slots=1))
    g = build_graph(t)
    c = check_graph(g)
    assert (c.servers, c.switches) == (127, 48)
    assert c.max_switch_hops == 3 and c.equal_cost_paths == 16
    # each leaf reaches each of the 16 spines over 2 parallel links, aggregated into one edge
    assert {e["multiplicity"] for _, _, e in g.edges() if e["tier"] == "leaf-spine"} == {2}
    # the UFM slot's 8 ports sit on the last SU's leaves and count against the radix
    assert sum(a["reserved_ports"] for a in g.nodes.values() if a["kind"] == "leaf") == 8
    assert c.max_port_use == 1.0
    assert c.bisection_gbit == 63 * 8 * 400  # floor(127 / 2) nodes x 8 rails


def test_three_tier_graph_hops_and_paths():
    t = topo(ClosSpec(radix=64, nodes=512, rails=8, scalable_unit_nodes=32))
    c = check_graph(build_graph(t))
    assert c.max_switch_hops == 5
    assert c.equal_cost_paths == 32 * 2  # 32 pod spines x 2 cores per group
    assert c.bisection_gbit == 2048 * 400


def test_rail_only_rails_are_disconnected_except_through_servers():
    t = topo(ClosSpec(radix=64, nodes=128, rails=8, layout="rail-only"))
    g = to_networkx(build_graph(t))
    switches = g.subgraph(n for n, a in g.nodes(data=True) if a["kind"] != "server")
    assert nx.number_connected_components(switches) == 8
    assert check_graph(build_graph(t)).max_switch_hops == 3


def test_graph_stays_small_with_multiplicity():
    t = topo(ClosSpec(radix=64, nodes=2048, rails=8, scalable_unit_nodes=32))
    g = build_graph(t)
    assert g.number_of_nodes() == 2048 + 512 + 512 + 256
    assert g.number_of_edges() < t.node_leaf_links + t.leaf_spine_links + t.spine_core_links


def test_design_round_trips_through_the_topology():
    spec = ClosSpec(radix=64, nodes=200, rails=8, oversubscription=3)
    d = size_clos(spec)
    t = build_topology(d, switch="qm9700", port_gbit=400)
    again = design_of(t)
    assert (again.leaves, again.spines, again.leaf_up, again.leaf_down) == (d.leaves, d.spines, d.leaf_up, d.leaf_down)


def test_exports(tmp_path):
    t = topo(ClosSpec(radix=64, nodes=64, rails=8, scalable_unit_nodes=32))
    path = tmp_path / "fabric.graphml"
    path.write_text(graphml_text(t))
    back = nx.read_graphml(path)
    assert back.number_of_nodes() == 64 + 16 + 8
    data = node_link(t)
    text = json.dumps(data, sort_keys=True)
    assert json.loads(text)["graph"]["switch"] == "qm9700"
    assert len(data["edges"]) == build_graph(t).number_of_edges()
    assert node_link(t) == data  # deterministic


def test_networkx_is_not_imported_on_the_planning_path():
    code = ("import sys; import gpuplan.fabric.interconnect, gpuplan.fabric.cases, gpuplan.fabric.bom, "
            "gpuplan.fabric.graph; assert 'networkx' not in sys.modules, 'networkx imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_networkx_copy_is_the_same_graph():
    t = topo(ClosSpec(radix=16, nodes=40, rails=2, oversubscription=2))
    g = build_graph(t)
    h = to_networkx(g)
    assert (h.number_of_nodes(), h.number_of_edges()) == (g.number_of_nodes(), g.number_of_edges())
    assert list(h.nodes) == list(g.nodes)
    assert sorted((min(u, v), max(u, v), sorted(e.items())) for u, v, e in h.edges(data=True)) == \
        sorted((min(u, v), max(u, v), sorted(e.items())) for u, v, e in g.edges())
    assert h.graph == g.graph


def test_recommend_plans_and_checks_the_fabric_without_networkx():
    # the graph check runs on every fabric up to GRAPH_CHECK_LIMIT endpoints: no networkx import
    code = ("import sys; from gpuplan.hardware import load_catalog; from gpuplan.planning.compose import plan_workload; "
            "from gpuplan.model.profile import load_profile_text; cat = load_catalog(); "
            "w = load_profile_text(open('examples/default.toml').read(), 'default', cat); "
            "p = plan_workload(w, cat); assert p.training.topology.graph_checked; "
            "assert 'networkx' not in sys.modules, 'networkx imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


def test_the_collector_is_paused_only_while_a_graph_is_built_and_checked():
    import gc

    from gpuplan.fabric.graph import FabricGraph

    t = topo(ClosSpec(radix=64, nodes=512, rails=8, scalable_unit_nodes=32))
    assert gc.isenabled()
    seen = []
    real = FabricGraph.add_edges_from

    def spy(self, items):
        seen.append(gc.isenabled())
        return real(self, items)

    FabricGraph.add_edges_from = spy  # type: ignore[method-assign]
    try:
        check_graph(build_graph(t))
    finally:
        FabricGraph.add_edges_from = real  # type: ignore[method-assign]
    assert seen and not any(seen) and gc.isenabled()
    gc.disable()  # a caller that paused it keeps it paused
    try:
        build_graph(t)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_shared_edge_attributes_are_copied_on_a_repeated_edge():
    from gpuplan.fabric.graph import FabricGraph

    g = FabricGraph()
    g.add_nodes_from((n, {"kind": "leaf"}) for n in "abc")
    tier = {"multiplicity": 1, "tier": "leaf-spine"}
    g.add_edges_from([("a", "b", tier), ("a", "c", tier)])
    g.add_edges_from([("b", "a", {"multiplicity": 2})])  # networkx: the repeat updates the edge
    assert g.adj["a"]["b"] == g.adj["b"]["a"] == {"multiplicity": 2, "tier": "leaf-spine"}
    assert g.adj["a"]["c"] == {"multiplicity": 1, "tier": "leaf-spine"} and tier["multiplicity"] == 1
    assert [(u, v, e["multiplicity"]) for u, v, e in g.edges()] == [("a", "b", 2), ("a", "c", 1)]
    assert g.number_of_edges() == 2


def test_edges_grow_no_faster_than_links():
    # 3 tiers, every edge at least one link: the graph (and its build and check) stays linear in
    # the GPUs even where parallel links stop merging into one edge.
    for nodes in (1024, 4096, 8192):
        t = topo(ClosSpec(radix=64, nodes=nodes, rails=8, scalable_unit_nodes=32))
        g = build_graph(t)
        assert g.number_of_edges() <= t.node_leaf_links + t.leaf_spine_links + t.spine_core_links
