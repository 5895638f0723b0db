"""The fabric as a graph: build, check, export (GraphML, JSON node-link).

The checks walk a plain adjacency (:class:`FabricGraph`), so planning never imports networkx
(about 0.1 s of a cold ``gpuplan recommend``); the exports convert it with :func:`to_networkx`.

Graph shape: one vertex per server and per switch; parallel links between two vertices are one
edge with ``multiplicity`` (links) and ``capacity_gbit`` (links x port speed, one direction), so a
131,072-GPU fabric stays at about 300 k edges. Switch vertices carry ``radix`` and
``reserved_ports`` (node slots given to fabric management); every vertex carries ``kind``
(server, leaf, spine, core), ``copy`` (plane, or rail of a rail-only fabric) and ``pod``.

Checks (docs/fabric-model.md, "Graph checks"):

* ports: links + reserved ports of every switch <= its radix;
* even uplinks: every leaf has the same number of links to each of its spines (divisor rule);
* bisection: minimum cut, one direction, between the first and second half of the servers in
  build order, over cuts that keep each tier group (the spines of a pod, the cores) on one side
  and choose every leaf's side freely; equals the max-flow for Clos wiring (tests/fabric);
* worst-case switch hops: breadth-first search over switches from the first and the last leaf;
* equal-cost paths: shortest switch-level paths from the first to the last leaf.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from gpuplan.core.records import dataclass
from typing import TYPE_CHECKING, Any

from gpuplan.core.collector import collector_paused
from gpuplan.fabric.sizing import ClosDesign
from gpuplan.fabric.topology import design_of
from gpuplan.core.contract import Topology

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx


@dataclass(frozen=True)
class GraphChecks:
    ports_within_radix: bool
    #: Highest used/radix ratio over all switches.
    max_port_use: float
    #: "switch: used > radix" for each violation (empty when ports_within_radix).
    violations: tuple[str, ...]
    even_uplinks: bool
    bisection_gbit: float
    max_switch_hops: int
    equal_cost_paths: int
    servers: int
    switches: int
    edges: int
    links: int

    @property
    def ok(self) -> bool:
        return self.ports_within_radix and self.even_uplinks


# ---------------------------------------------------------------------------- build
class FabricGraph:
    """An undirected graph as dicts: ``graph`` (attributes), ``nodes`` (name -> attributes) and
    ``adj`` (name -> neighbour -> edge attributes, one dict shared by both directions), the part
    of networkx's ``Graph`` interface the checks use. Nodes and edges keep insertion order."""

    def __init__(self, **attrs: Any) -> None:
        self.graph: dict[str, Any] = dict(attrs)
        self.nodes: dict[str, dict[str, Any]] = {}
        self.adj: dict[str, dict[str, dict[str, Any]]] = {}
        self._edges: list[tuple[str, str]] = []

    def add_nodes_from(self, items: Iterable[tuple[str, dict[str, Any]]]) -> None:
        for name, attrs in items:
            self.nodes[name] = attrs
            self.adj.setdefault(name, {})

    def add_edges_from(self, items: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
        """Edges between nodes already added (the builders add every vertex first); a repeated
        edge updates the attributes of the first, as networkx does.

        Edges may share one attribute dict (the builders give all edges of a tier one: a million
        edges then cost a million adjacency entries, not a million dicts); the graph treats them as
        read-only, and a repeated edge gets a merged copy."""
        adj, edges = self.adj, self._edges
        for u, v, attrs in items:
            au = adj[u]
            known = au.get(v)
            if known is not None:
                au[v] = adj[v][u] = {**known, **attrs}
                continue
            au[v] = adj[v][u] = attrs
            edges.append((u, v))

    def edges(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        adj = self.adj
        return ((u, v, adj[u][v]) for u, v in self._edges)

    def number_of_nodes(self) -> int:
        return len(self.nodes)

    def number_of_edges(self) -> int:
        return len(self._edges)


def to_networkx(g: FabricGraph) -> nx.Graph:
    """The same graph as a ``networkx.Graph`` (same node and edge order, so exports are stable)."""
    import networkx as nx

    out = nx.Graph(**g.graph)
    out.add_nodes_from(g.nodes.items())
    out.add_edges_from(g.edges())
    return out


def build_graph(topology: Topology) -> FabricGraph:
    """The graph of a topology (rebuilt exactly from its Clos parameters)."""
    return graph_of_design(design_of(topology), port_gbit=topology.port_gbit, switch=topology.switch or "",
                           kind=topology.kind)


def graph_of_design(design: ClosDesign, *, port_gbit: float, switch: str = "", kind: str = "") -> FabricGraph:
    with collector_paused():
        return _graph_of_design(design, port_gbit=port_gbit, switch=switch, kind=kind)


def _graph_of_design(design: ClosDesign, *, port_gbit: float, switch: str, kind: str) -> FabricGraph:
    g = FabricGraph(kind=kind, switch=switch, port_gbit=float(port_gbit), tiers=design.tiers,
                    copies=design.copies, nodes=design.spec.nodes)
    spec = design.spec
    k = spec.radix
    per_node = design.ports_per_slot
    servers = [f"server{n}" for n in range(spec.nodes)]
    g.add_nodes_from((name, {"kind": "server", "index": n, "copy": -1, "pod": -1}) for n, name in enumerate(servers))
    fill = design.leaf_fill()
    pod_size = design.pod_leaves if design.tiers == 3 else max(1, design.leaves)
    for c in range(design.copies):
        p = f"p{c}."
        leaf_nodes = []
        for i, (first, end, res) in enumerate(fill):
            name = f"{p}leaf{i}"
            leaf_nodes.append((name, {"kind": "leaf", "copy": c, "pod": i // pod_size, "radix": k,
                                      "reserved_ports": res * per_node, "index": i}))
        g.add_nodes_from(leaf_nodes)
        attrs = {"multiplicity": per_node, "capacity_gbit": per_node * port_gbit, "tier": "node-leaf"}
        g.add_edges_from((servers[n], leaf, attrs)
                         for (leaf, _), (first, end, _) in zip(leaf_nodes, fill) for n in range(first, end))
        if design.tiers == 2:
            _two_tier_edges(g, design, c, port_gbit)
        elif design.tiers == 3:
            _three_tier_edges(g, design, c, port_gbit)
    return g


def _switches(g: FabricGraph, names: list[str], kind: str, copy: int, radix: int, pods: list[int]) -> None:
    g.add_nodes_from((n, {"kind": kind, "copy": copy, "pod": pod, "radix": radix, "reserved_ports": 0, "index": i})
                     for i, (n, pod) in enumerate(zip(names, pods)))


def _two_tier_edges(g: FabricGraph, d: ClosDesign, copy: int, port_gbit: float) -> None:
    p = f"p{copy}."
    spines = [f"{p}spine{j}" for j in range(d.spines)]
    _switches(g, spines, "spine", copy, d.spec.radix, [0] * d.spines)
    m = d.leaf_up // d.spines
    attrs = {"multiplicity": m, "capacity_gbit": m * port_gbit, "tier": "leaf-spine"}
    g.add_edges_from((f"{p}leaf{i}", s, attrs) for i in range(d.leaves) for s in spines)


def _three_tier_edges(g: FabricGraph, d: ClosDesign, copy: int, port_gbit: float) -> None:
    p = f"p{copy}."
    P, sp, sl = d.pod_leaves, d.spines_per_pod, d.last_pod_spines
    partial = d.last_pod_leaves != P
    names, pods = [], []
    for pod in range(d.pods):
        count = sl if (partial and pod == d.pods - 1) else sp
        for j in range(count):
            names.append(f"{p}spine{pod * sp + j}")
            pods.append(pod)
    _switches(g, names, "spine", copy, d.spec.radix, pods)
    cores = [f"{p}core{c}" for c in range(d.cores)]
    _switches(g, cores, "core", copy, d.spec.radix, [-1] * d.cores)
    by_index = dict(zip((pod * sp + j for pod in range(d.pods) for j in range(sl if (partial and pod == d.pods - 1)
                                                                          else sp)), names))
    shared: dict[tuple[str, int], dict[str, Any]] = {}  # one attribute dict per (tier, multiplicity)

    def attrs(tier: str, m: int) -> dict[str, Any]:
        return shared.setdefault((tier, m), {"multiplicity": m, "capacity_gbit": m * port_gbit, "tier": tier})

    edges = []
    for i in range(d.leaves):
        pod = i // P
        count = sl if (partial and pod == d.pods - 1) else sp
        up = attrs("leaf-spine", d.leaf_up // count)
        leaf = f"{p}leaf{i}"
        edges.extend((leaf, by_index[pod * sp + j], up) for j in range(count))
    cg = d.cores_per_group
    for pod in range(d.pods):
        last = partial and pod == d.pods - 1
        count = sl if last else sp
        per_group = (d.group_links_last if last else d.group_links_full) // cg
        core_attrs = attrs("spine-core", per_group)
        groups_per_spine = sp // count
        for j in range(count):
            spine = by_index[pod * sp + j]
            for grp in range(j * groups_per_spine, (j + 1) * groups_per_spine):
                edges.extend((spine, cores[grp * cg + c], core_attrs) for c in range(cg))
    g.add_edges_from(edges)


# ---------------------------------------------------------------------------- checks
def check_graph(g: FabricGraph) -> GraphChecks:
    """Ports within radix, even uplinks, bisection, worst-case hops and equal-cost paths."""
    with collector_paused():
        return _check_graph(g)


def _check_graph(g: FabricGraph) -> GraphChecks:
    adj = g.adj
    nodes = g.nodes
    violations, worst, links, switches = [], 0.0, 0, 0
    even = True
    for n, attrs in nodes.items():
        if attrs["kind"] == "server":
            continue
        switches += 1
        used = attrs["reserved_ports"]
        up_mult: set[int] = set()
        for nb, e in adj[n].items():
            used += e["multiplicity"]
            if attrs["kind"] == "leaf" and nodes[nb]["kind"] == "spine":
                up_mult.add(e["multiplicity"])
        if len(up_mult) > 1:
            even = False
        worst = max(worst, used / attrs["radix"])
        if used > attrs["radix"]:
            violations.append(f"{n}: {used} > {attrs['radix']}")
    for _, _, e in g.edges():
        links += e["multiplicity"]
    hops, paths = _hops_and_paths(g)
    return GraphChecks(ports_within_radix=not violations, max_port_use=worst, violations=tuple(violations),
                       even_uplinks=even, bisection_gbit=_bisection(g), max_switch_hops=hops,
                       equal_cost_paths=paths, servers=g.graph.get("nodes", 0), switches=switches,
                       edges=g.number_of_edges(), links=links)


def checked_topology(topology: Topology, design: ClosDesign | None = None) -> Topology:
    """Build and check the graph (of ``design`` when the caller has it, else rebuilt from the
    topology's Clos parameters); the topology with the graph's figures and ``graph_checked``."""
    graph = (build_graph(topology) if design is None else
             graph_of_design(design, port_gbit=topology.port_gbit, switch=topology.switch or "", kind=topology.kind))
    checks = check_graph(graph)
    if not checks.ok:
        raise ValueError(f"fabric graph check failed: {', '.join(checks.violations[:5]) or 'uneven uplinks'}")
    return topology.model_copy(update={"bisection_gbit": checks.bisection_gbit,
                                       "max_switch_hops": checks.max_switch_hops,
                                       "equal_cost_paths": checks.equal_cost_paths, "graph_checked": True})


def _leaf_names(g: FabricGraph, copy: int) -> list[str]:
    return sorted((n for n, a in g.nodes.items() if a["kind"] == "leaf" and a["copy"] == copy),
                  key=lambda n: g.nodes[n]["index"])


def _switch_adjacency(g: FabricGraph) -> dict[str, list[str]]:
    """Each switch's switch neighbours, in adjacency order (the breadth-first searches walk
    switches only; servers are left out once here, not at every step)."""
    nodes = g.nodes
    return {n: [nb for nb in g.adj[n] if nodes[nb]["kind"] != "server"]
            for n, a in nodes.items() if a["kind"] != "server"}


def _switch_bfs(switch_adj: dict[str, list[str]], start: str) -> tuple[dict[str, int], dict[str, int]]:
    """Distances and shortest-path counts from ``start`` over switches only."""
    dist, count = {start: 0}, {start: 1}
    queue = deque([start])
    while queue:
        n = queue.popleft()
        here, paths = dist[n] + 1, count[n]
        for nb in switch_adj[n]:
            seen = dist.get(nb)
            if seen is None:
                dist[nb] = here
                count[nb] = paths
                queue.append(nb)
            elif seen == here:
                count[nb] += paths
    return dist, count


def _hops_and_paths(g: FabricGraph) -> tuple[int, int]:
    leaves = _leaf_names(g, 0)
    if not leaves:
        return 0, 0
    first, last = leaves[0], leaves[-1]
    switch_adj = _switch_adjacency(g)
    hops = 1
    from_first, count = _switch_bfs(switch_adj, first)
    for dist in (from_first, _switch_bfs(switch_adj, last)[0] if last != first else from_first):
        hops = max(hops, max(dist[n] for n in leaves if n in dist) + 1)
    return hops, count.get(last, 0) if first != last else 1


def _bisection(g: FabricGraph) -> float:
    """Min cut between the server halves (tier groups kept whole, leaves free), summed over copies."""
    nodes, adj = g.nodes, g.adj
    half = g.graph.get("nodes", 0) // 2
    total = 0.0
    for copy in range(g.graph.get("copies", 1)):
        leaves = _leaf_names(g, copy)
        by_pod: dict[int, list[tuple[float, float, float]]] = {}
        pod_up: dict[int, float] = {}
        for leaf in leaves:
            a = b = u = 0.0
            for nb, e in adj[leaf].items():
                kind = nodes[nb]["kind"]
                if kind == "server":
                    if nodes[nb]["index"] < half:
                        a += e["capacity_gbit"]
                    else:
                        b += e["capacity_gbit"]
                else:
                    u += e["capacity_gbit"]
            by_pod.setdefault(nodes[leaf]["pod"], []).append((a, b, u))
        for n, attrs in nodes.items():
            if attrs["kind"] == "spine" and attrs["copy"] == copy:
                up = sum(e["capacity_gbit"] for nb, e in adj[n].items() if nodes[nb]["kind"] == "core")
                pod_up[attrs["pod"]] = pod_up.get(attrs["pod"], 0.0) + up
        tiers = g.graph.get("tiers", 2)
        if tiers == 1:
            a, b, _ = by_pod[0][0]
            total += min(a, b)
            continue

        def cost(a: float, b: float, u: float, spine_in: bool) -> float:
            return min(b + (0.0 if spine_in else u), a + (u if spine_in else 0.0))

        best = None
        for core_in in (False, True):
            value = 0.0
            for pod, rows in by_pod.items():
                value += min(sum(cost(a, b, u, s) for a, b, u in rows) + (pod_up.get(pod, 0.0) if s != core_in else 0.0)
                             for s in (False, True))
            best = value if best is None else min(best, value)
            if tiers == 2:
                break
        total += best or 0.0
    return total


# ---------------------------------------------------------------------------- exports
def graphml_text(topology: Topology) -> str:
    """The graph as GraphML text (yEd, Gephi and Cytoscape read it)."""
    import networkx as nx

    return "\n".join(nx.generate_graphml(to_networkx(build_graph(topology)))) + "\n"


def node_link(topology: Topology) -> dict[str, Any]:
    """The graph as a JSON-serialisable node-link dict (``nodes``, ``edges``, ``graph``)."""
    import networkx as nx

    return nx.node_link_data(to_networkx(build_graph(topology)), edges="edges")
