"""Bisection of a sized Clos (the arithmetic min cut, checked against the graph) and the ports
each switch role uses (what the cable and optic counts of the BOM read)."""

from __future__ import annotations

from gpuplan.fabric.clos import ClosDesign


# ---------------------------------------------------------------------------- bisection
def _leaf_sides(design: ClosDesign, half: int) -> list[tuple[int, int]]:
    """(ports to first-half nodes, ports to second-half nodes) of each leaf of one copy."""
    per_node = design.ports_per_slot
    out = []
    for first, end, _ in design.leaf_fill():
        a = max(0, min(end, half) - first)
        b = max(0, end - max(first, half))
        out.append((a * per_node, b * per_node))
    return out


def bisection_links(design: ClosDesign) -> int:
    """Links cut, one direction, between the first and second half of the nodes (build order).

    The exact minimum cut over vertex sets that keep each tier group (the spines of one pod,
    all cores) on one side, leaves chosen one by one: for uniform Clos wiring this equals the
    max-flow between the halves (checked against networkx max-flow in tests/fabric).
    Convention (docs/fabric-model.md): servers split in build order (unit, pod), capacity in one
    direction; a non-blocking fabric gives N/2 links.
    """
    half = design.spec.nodes // 2
    sides = _leaf_sides(design, half)
    per_copy: int
    if design.tiers == 1:
        a, b = sides[0]
        per_copy = min(a, b)
    else:
        u = design.leaf_up

        def leaf_cost(a: int, b: int, spine_in: bool) -> int:
            return min(b + (0 if spine_in else u), a + (u if spine_in else 0))

        if design.tiers == 2:
            per_copy = min(sum(leaf_cost(a, b, s) for a, b in sides) for s in (False, True))
        else:
            pods = [sides[i:i + design.pod_leaves] for i in range(0, len(sides), design.pod_leaves)]
            best = None
            for core_in in (False, True):
                total = 0
                for p, pod in enumerate(pods):
                    last = p == len(pods) - 1 and len(pod) != design.pod_leaves
                    uplinks = design.spines_per_pod * (design.group_links_last if last else design.group_links_full)
                    total += min(sum(leaf_cost(a, b, s) for a, b in pod) + (uplinks if s != core_in else 0)
                                 for s in (False, True))
                best = total if best is None else min(best, total)
            per_copy = best or 0
    return per_copy * design.copies


def bisection_gbit(design: ClosDesign, port_gbit: float) -> float:
    return bisection_links(design) * port_gbit


# ---------------------------------------------------------------------------- port usage
def switch_port_usage(design: ClosDesign) -> dict[str, list[tuple[int, int, int]]]:
    """Ports used per switch of one copy, grouped: tier -> [(down ports, up ports, count)].

    Leaf down ports include reserved (management) slots: the RA populates them (RA-11333-001
    Table 8: all 32 cages of every QM9700 carry a transceiver).
    """
    per_node = design.ports_per_slot
    leaves: dict[tuple[int, int], int] = {}
    for first, end, res in design.leaf_fill():
        down = (end - first + res) * per_node
        key = (down, design.leaf_up)
        leaves[key] = leaves.get(key, 0) + 1
    out: dict[str, list[tuple[int, int, int]]] = {"leaf": [(d, u, n) for (d, u), n in sorted(leaves.items())]}
    if design.tiers == 2:
        out["spine"] = [(design.leaves * design.leaf_up // design.spines, 0, design.spines)]
    elif design.tiers == 3:
        full, spines = design.full_pods, []
        if full:
            x = design.pod_leaves * design.leaf_up // design.spines_per_pod
            spines.append((x, design.group_links_full, full * design.spines_per_pod))
        if design.last_pod_leaves != design.pod_leaves:
            down = design.last_pod_leaves * design.leaf_up // design.last_pod_spines
            up = design.spines_per_pod // design.last_pod_spines * design.group_links_last
            spines.append((down, up, design.last_pod_spines))
        out["spine"] = spines
        per_core = design.spine_core_links_per_copy // design.cores
        out["core"] = [(per_core, 0, design.cores)]
    return out
