"""The Topology result of a sized fabric, and the way back from a Topology to its design."""

from __future__ import annotations

from gpuplan.fabric.sizing import ClosDesign, ClosSpec, Layout, bisection_links, size_clos
from gpuplan.core.contract import ClosParameters, Topology

#: Topology.kind of each layout; a plain fat tree is labelled "leaf-spine" when it is a front end.
KIND_BY_LAYOUT = {"rail-optimized": "rail-optimized-fat-tree", "fat-tree": "fat-tree", "rail-only": "rail-only"}
LAYOUT_BY_KIND: dict[str, Layout] = {"rail-optimized-fat-tree": "rail-optimized", "fat-tree": "fat-tree",
                                     "leaf-spine": "fat-tree", "rail-only": "rail-only", "single-switch": "fat-tree"}


def topology_kind(design: ClosDesign, *, frontend: bool = False) -> str:
    layout = design.spec.layout
    if design.tiers == 1 and layout != "rail-only":
        return "single-switch"
    if layout == "fat-tree" and frontend:
        return "leaf-spine"
    return KIND_BY_LAYOUT[layout]


def build_topology(design: ClosDesign, *, switch: str, port_gbit: float, frontend: bool = False,
                   graph_checked: bool = False) -> Topology:
    """Topology from the closed-form design (bisection by the arithmetic min cut of sizing.py)."""
    spec = design.spec
    return Topology(
        kind=topology_kind(design, frontend=frontend),  # type: ignore[arg-type]
        switch=switch,
        port_gbit=port_gbit,
        tiers=design.tiers,
        oversubscription=design.oversubscription,
        nodes=spec.nodes,
        endpoints=design.endpoints,
        max_endpoints=design.max_endpoints,
        leaf_switches=design.leaf_switches,
        spine_switches=design.spine_switches,
        core_switches=design.core_switches,
        node_leaf_links=design.node_leaf_links,
        leaf_spine_links=design.leaf_spine_links,
        spine_core_links=design.spine_core_links,
        bisection_gbit=bisection_links(design) * port_gbit,
        max_switch_hops=design.max_switch_hops,
        equal_cost_paths=design.equal_cost_paths,
        scalable_unit_nodes=design.unit_nodes,
        graph_checked=graph_checked,
        clos=ClosParameters(switch_radix=spec.radix, rails=spec.rails, planes=spec.planes,
                            reserved_node_slots=spec.reserved_node_slots, leaf_down_ports=design.leaf_down,
                            leaf_up_ports=design.leaf_up),
    )


def no_fabric(nodes: int) -> Topology:
    """No scale-out network (one node, or one scale-up domain)."""
    return Topology(kind="none", switch=None, port_gbit=0.0, tiers=0, oversubscription=1.0, nodes=nodes,
                    endpoints=0, max_endpoints=0, leaf_switches=0, spine_switches=0, core_switches=0,
                    node_leaf_links=0, leaf_spine_links=0, spine_core_links=0, bisection_gbit=0.0,
                    max_switch_hops=0, equal_cost_paths=0, scalable_unit_nodes=None, graph_checked=False)


def design_of(topology: Topology) -> ClosDesign:
    """Re-derive the exact design of a stored topology (its leaf port split is pinned)."""
    if topology.clos is None or topology.kind == "none":
        raise ValueError("topology has no Clos parameters to rebuild (kind 'none' or hand-made)")
    c = topology.clos
    spec = ClosSpec(radix=c.switch_radix, nodes=topology.nodes, rails=c.rails, planes=c.planes,
                    layout=LAYOUT_BY_KIND[topology.kind], scalable_unit_nodes=topology.scalable_unit_nodes,
                    reserved_node_slots=c.reserved_node_slots, leaf_down=c.leaf_down_ports,
                    leaf_up=c.leaf_up_ports)
    design = size_clos(spec)
    if (design.leaf_switches, design.spine_switches, design.core_switches) != (
            topology.leaf_switches, topology.spine_switches, topology.core_switches):
        raise ValueError("topology counts do not match its Clos parameters")
    return design
