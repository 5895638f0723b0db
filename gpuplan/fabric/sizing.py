"""Closed-form sizing of folded-Clos (fat-tree) fabrics: leaves, spines, cores and links.

Pure arithmetic, no graph: this is the hot path every plan runs. The graph in
:mod:`gpuplan.fabric.graph` is built from the same :class:`ClosDesign` and checks it.

Notation (docs/fabric-model.md): k = switch radix in ports of the endpoint speed; a node has R
fabric ports per plane (one per GPU on HGX-class servers: the "rails"); r = leaf oversubscription
(downlink : uplink bandwidth). Rules, each with its source:

* Capacities of a non-blocking folded Clos: 1 tier k, 2 tiers k^2/2, 3 tiers k^3/4 endpoints
  (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008; NVIDIA RA-11333-001 Table 3: 2,048 GPUs is the
  two-tier limit of a 64-port switch).
* Rail-optimized: in each scalable unit (SU) every rail has its own leaf group; the fabric is
  built in whole SUs (RA-11333-001 section "compute fabric": 32 nodes per SU, "if a partial SU
  is built, build the full SU's leaves and leaf-spine cables").
* Spine divisor rule: the spine count s divides the leaf's uplinks u (every leaf has u/s links
  to every spine, so ECMP / adaptive routing spreads evenly) and s*k >= leaves*u. Reproduces
  RA-11333-001 Table 4 (3 SU: 24 leaves need 12 spines by port count, the RA builds 16).
* Three tiers: pods of k/2 leaves (whole SUs), spines with k/2 down and k/2 up, core groups
  joining spine j of every pod (Al-Fares; RA-11333-001 Table 3, 16 SU: 128/128/64).
* Rail-only: every rail is its own Clos, no switch joins rails; cross-rail traffic is forwarded
  inside the node over NVLink (Wang, Ghobadi et al., arXiv 2307.12169).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Layout = Literal["rail-optimized", "fat-tree", "rail-only"]

#: Worst-case switch hops by tier count: leaf; leaf-spine-leaf; leaf-spine-core-spine-leaf
#: (shared reference fabric.md section 3.4).
HOPS_BY_TIERS = {1: 1, 2: 3, 3: 5}


class SizingError(ValueError):
    """The endpoints do not fit the switch in three tiers (four tiers are not modelled)."""


@dataclass(frozen=True)
class ClosSpec:
    """What to build: the inputs of the closed-form sizing."""

    radix: int
    nodes: int
    #: Fabric ports of one node in one plane (one per GPU on rail-optimized HGX servers).
    rails: int = 1
    planes: int = 1
    layout: Layout = "rail-optimized"
    oversubscription: float = 1.0
    #: Round the fabric up to whole units of this many node slots (None: one leaf's worth).
    scalable_unit_nodes: int | None = None
    #: Node slots given to fabric management (UFM), taken once, after the last node.
    reserved_node_slots: int = 0
    #: Pinned leaf port split (from a stored topology); None = choose from radix and ratio.
    leaf_down: int | None = None
    leaf_up: int | None = None

    def __post_init__(self) -> None:
        if self.radix < 2:
            raise SizingError(f"switch radix {self.radix} is below 2")
        if self.nodes < 1 or self.rails < 1 or self.planes < 1:
            raise SizingError("nodes, rails and planes must be at least 1")
        if self.reserved_node_slots < 0:
            raise SizingError("reserved node slots must be >= 0")
        if not (self.oversubscription > 0 and math.isfinite(self.oversubscription)):
            raise SizingError("oversubscription must be a positive number")
        if self.scalable_unit_nodes is not None and self.scalable_unit_nodes < 1:
            raise SizingError("scalable_unit_nodes must be at least 1")


@dataclass(frozen=True)
class ClosDesign:
    """One copy (plane, or rail of a rail-only fabric) of the sized fabric; totals via properties."""

    spec: ClosSpec
    #: Identical independent networks: planes (x rails for rail-only).
    copies: int
    #: Ports of one node in one copy.
    ports_per_node: int
    #: Leaf groups per unit: rails for rail-optimized, 1 otherwise.
    rail_groups: int
    tiers: int
    unit_nodes: int
    units: int
    leaves_per_group: int
    slots_per_leaf: int
    leaf_down: int
    leaf_up: int
    leaves: int
    spines: int
    cores: int
    pod_leaves: int = 0
    pods: int = 0
    spines_per_pod: int = 0
    last_pod_leaves: int = 0
    last_pod_spines: int = 0
    cores_per_group: int = 0
    #: Uplinks per core group from one full pod, and from the last (possibly partial) pod.
    group_links_full: int = 0
    group_links_last: int = 0
    max_endpoints_per_copy: int = 0
    _leaf_fill: tuple[tuple[int, int, int], ...] = field(default=(), repr=False)

    @property
    def ports_per_slot(self) -> int:
        """Ports one node slot takes on one leaf: 1 on a rail-optimized leaf, all of them otherwise."""
        return 1 if self.spec.layout == "rail-optimized" and self.tiers > 1 else self.ports_per_node

    # ---- per-copy counts ----
    @property
    def node_ports(self) -> int:
        return self.spec.nodes * self.ports_per_node

    @property
    def reserved_ports(self) -> int:
        return self.spec.reserved_node_slots * self.ports_per_node

    @property
    def leaf_spine_links_per_copy(self) -> int:
        return self.leaves * self.leaf_up if self.tiers >= 2 else 0

    @property
    def spine_core_links_per_copy(self) -> int:
        if self.tiers != 3:
            return 0
        return self.spines_per_pod * (self.full_pods * self.group_links_full + self._last_group_links)

    @property
    def full_pods(self) -> int:
        if self.tiers != 3:
            return 0
        return self.pods - (1 if self.last_pod_leaves != self.pod_leaves else 0)

    @property
    def _last_group_links(self) -> int:
        return self.group_links_last if self.last_pod_leaves != self.pod_leaves else 0

    # ---- totals over copies ----
    @property
    def leaf_switches(self) -> int:
        return self.leaves * self.copies

    @property
    def spine_switches(self) -> int:
        return self.spines * self.copies

    @property
    def core_switches(self) -> int:
        return self.cores * self.copies

    @property
    def node_leaf_links(self) -> int:
        return self.node_ports * self.copies

    @property
    def leaf_spine_links(self) -> int:
        return self.leaf_spine_links_per_copy * self.copies

    @property
    def spine_core_links(self) -> int:
        return self.spine_core_links_per_copy * self.copies

    @property
    def endpoints(self) -> int:
        return self.node_ports * self.copies

    @property
    def max_endpoints(self) -> int:
        return self.max_endpoints_per_copy * self.copies

    @property
    def oversubscription(self) -> float:
        """Leaf downlink : uplink ports as built (1.0 for a single switch)."""
        return self.leaf_down / self.leaf_up if self.tiers >= 2 else 1.0

    @property
    def max_switch_hops(self) -> int:
        return HOPS_BY_TIERS[self.tiers]

    @property
    def equal_cost_paths(self) -> int:
        """Shortest switch-level paths between the first and the last leaf of a copy."""
        if self.tiers == 1:
            return 1
        if self.tiers == 2:
            return self.spines
        return self.spines_per_pod * self.cores_per_group

    def leaf_fill(self) -> tuple[tuple[int, int, int], ...]:
        """Leaves of one copy as (first node, end node, reserved slots) per leaf, in build order.

        Leaf order: unit, then rail group, then leaf within the group. Nodes [first, end) are
        attached (one port each on a rail-optimized leaf, ``ports_per_node`` on a plain one).
        """
        return self._leaf_fill


# ---------------------------------------------------------------------------- leaf port split
def leaf_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """Down and up ports of a leaf: u = floor(k / (1 + r)), d = floor(u * r).

    Non-blocking 64 ports: 32/32 (RA-11333-001). 4:1 on 64 ports: 48 down / 12 up, 4 spare
    (shared reference fabric.md section 3.2).
    """
    up = max(1, int(radix // (1 + oversubscription)))
    down = max(1, min(radix - up, int(math.floor(up * oversubscription + 1e-9))))
    return down, up


def radix_half(radix: int) -> int:
    """Down ports of a non-blocking leaf: k/2 (rounded down)."""
    return max(1, radix // 2)


def min_uplinks(down: int, oversubscription: float) -> int:
    """Fewest uplinks that keep down : up within the requested ratio: ceil(down / r)."""
    return max(1, math.ceil(down / oversubscription - 1e-9))


def smallest_divisor_at_least(n: int, floor_value: int) -> int | None:
    """The smallest divisor of n that is >= floor_value (None if none)."""
    lo = max(1, floor_value)
    for s in range(lo, n + 1):
        if n % s == 0:
            return s
    return None


def spines_for(leaves: int, up: int, radix: int) -> int | None:
    """Divisor rule: the smallest s with s | up and s * radix >= leaves * up.

    At least two spines when there are two leaves or more, so no single switch carries all
    cross-leaf traffic (Juniper AI inference JVD front end: 4 leaves, 2 spines; fabric.md s4).
    """
    floor_value = -(-leaves * up // radix)
    if leaves > 1:
        floor_value = max(floor_value, min(2, up))
    return smallest_divisor_at_least(up, floor_value)


# ---------------------------------------------------------------------------- capacities
def tier_capacity(radix: int, tiers: int, leaf_down: int | None = None) -> int:
    """Endpoints a folded Clos of ``tiers`` tiers holds (non-blocking default: d = k/2).

    1 tier: k; 2 tiers: k leaves x d; 3 tiers: k pods x k/2 leaves x d (k^3/4 when d = k/2).
    """
    d = radix // 2 if leaf_down is None else leaf_down
    if tiers == 1:
        return radix
    if tiers == 2:
        return radix * d
    if tiers == 3:
        return radix * (radix // 2) * d
    raise SizingError(f"{tiers} tiers are not modelled")


def fat_tree_k_ary(k: int) -> dict[str, int]:
    """Al-Fares k-ary fat tree: k^3/4 hosts, k^2/2 edge, k^2/2 aggregation, k^2/4 core switches."""
    spec = ClosSpec(radix=k, nodes=k**3 // 4, rails=1, layout="fat-tree")
    d = size_clos(spec)
    return {"hosts": d.endpoints, "edge": d.leaves, "aggregation": d.spines, "core": d.cores,
            "switches": d.leaves + d.spines + d.cores}


# ---------------------------------------------------------------------------- sizing
def size_clos(spec: ClosSpec) -> ClosDesign:
    """Size the fabric: the fewest tiers that hold the endpoints, then switches and links."""
    k = spec.radix
    rail_only = spec.layout == "rail-only"
    ports = 1 if rail_only else spec.rails
    copies = spec.planes * (spec.rails if rail_only else 1)
    groups = ports if spec.layout == "rail-optimized" else 1
    per_node_on_leaf = 1 if spec.layout == "rail-optimized" else ports
    slots = spec.nodes + spec.reserved_node_slots
    base = dict(spec=spec, copies=copies, ports_per_node=ports, rail_groups=groups)

    # One switch holds everything (fabric.md section 3.2, tier 1); leaf_up = 0 pins it.
    if slots * ports <= k and spec.leaf_up in (None, 0):
        fill = ((0, spec.nodes, spec.reserved_node_slots),)
        return ClosDesign(**base, tiers=1, unit_nodes=slots, units=1, leaves_per_group=1,
                          slots_per_leaf=slots, leaf_down=slots * ports, leaf_up=0, leaves=1, spines=0,
                          cores=0, max_endpoints_per_copy=k, _leaf_fill=fill)
    if spec.leaf_up == 0:
        raise SizingError("a single-switch design no longer fits its switch")

    d_max, _ = leaf_split(k, spec.oversubscription)
    if spec.leaf_down is not None:
        d_max = spec.leaf_down
    nodes_per_leaf = d_max // per_node_on_leaf
    if nodes_per_leaf < 1:
        raise SizingError(f"a node's {ports} ports do not fit one leaf's {d_max} downlinks")
    # Default unit: rail-optimized -> the RA's scalable unit, one non-blocking leaf's downlinks per
    # rail (32 nodes on a 64-port switch, RA-11333-001), also when the leaf is oversubscribed (fewer
    # uplinks, same unit); plain -> one leaf's worth of nodes.
    default_unit = min(radix_half(k), nodes_per_leaf) if spec.layout == "rail-optimized" else nodes_per_leaf
    unit = spec.scalable_unit_nodes or default_unit
    per_group = -(-unit // nodes_per_leaf)
    slots_per_leaf = -(-unit // per_group)
    leaf_down = slots_per_leaf * per_node_on_leaf
    if spec.leaf_down is not None:
        leaf_down = spec.leaf_down
    units = -(-slots // unit)
    leaves = units * groups * per_group
    fill = _fill(spec.nodes, spec.reserved_node_slots, unit, units, groups, per_group, slots_per_leaf)
    common = dict(base, unit_nodes=unit, units=units, leaves_per_group=per_group,
                  slots_per_leaf=slots_per_leaf, leaf_down=leaf_down, leaves=leaves, _leaf_fill=fill)

    two = _two_tier(leaves, leaf_down, k, spec)
    if two is not None:
        up, spines = two
        return ClosDesign(**common, tiers=2, leaf_up=up, spines=spines, cores=0, pod_leaves=leaves, pods=1,
                          spines_per_pod=spines, last_pod_leaves=leaves, last_pod_spines=spines,
                          max_endpoints_per_copy=k * leaf_down)
    three = _three_tier(leaves, leaf_down, k, spec, unit_leaves=groups * per_group)
    if three is None:
        cap = tier_capacity(k, 3, leaf_down)
        raise SizingError(f"{spec.nodes * ports} endpoints per plane exceed the three-tier capacity of a "
                          f"{k}-port switch ({cap}); use a larger-radix switch or more planes")
    return ClosDesign(**common, tiers=3, **three)


def _fill(nodes: int, reserved: int, unit: int, units: int, groups: int, per_group: int,
          slots_per_leaf: int) -> tuple[tuple[int, int, int], ...]:
    """(first node, end node, reserved slots) of each leaf of one copy, in build order."""
    out = []
    total = nodes + reserved
    for u in range(units):
        base = u * unit
        for _ in range(groups):
            for j in range(per_group):
                lo = base + j * slots_per_leaf
                hi = min(base + min((j + 1) * slots_per_leaf, unit), total)
                first, end = min(lo, nodes), min(max(hi, lo), nodes)
                res = max(0, min(hi, total) - max(lo, nodes)) if hi > lo else 0
                out.append((first, max(first, end), res))
    return tuple(out)


def _two_tier(leaves: int, leaf_down: int, k: int, spec: ClosSpec) -> tuple[int, int] | None:
    """Leaf uplinks and spines: fewest spines by the divisor rule, then fewest uplinks.

    Uplinks range from ceil(down / r) (the requested ratio) to the free ports; raising them a
    little can let a divisor of u cover the ports with far fewer spines (13 uplinks, prime,
    would force 13 spines; 14 allows 2). Non-blocking RA leaves have exactly k/2 free: forced.
    """
    if leaves > k:
        return None
    if spec.leaf_up is not None:
        s = spines_for(leaves, spec.leaf_up, k)
        return (spec.leaf_up, s) if s is not None else None
    lo = min_uplinks(leaf_down, spec.oversubscription)
    best: tuple[int, int] | None = None
    for up in range(lo, k - leaf_down + 1):
        s = spines_for(leaves, up, k)
        if s is not None and (best is None or s < best[1]):
            best = (up, s)
    return best


def _three_tier(leaves: int, leaf_down: int, k: int, spec: ClosSpec, *, unit_leaves: int) -> dict[str, int] | None:
    """Pods of whole units (at most k/2 leaves), spines k/2 down + k/2 up, core groups per spine index.

    Core group j joins spine j of every pod; c cores per group with c | (uplinks of a full-pod
    spine) so every spine spreads evenly. A partial last pod gets s_last | s_pod spines, each
    serving s_pod / s_last groups. Among the feasible (s_last, c), the fewest switches win.
    """
    half = k // 2
    up = spec.leaf_up if spec.leaf_up is not None else min_uplinks(leaf_down, spec.oversubscription)
    if up + leaf_down > k:
        return None
    pod = (half // unit_leaves) * unit_leaves if unit_leaves <= half else half
    s_pod = smallest_divisor_at_least(up, -(-pod * up // half)) if pod >= 1 else None
    if s_pod is None:
        return None
    pods = -(-leaves // pod)
    last = leaves - (pods - 1) * pod
    partial = last != pod
    full = pods - (1 if partial else 0)
    x_full = pod * up // s_pod
    x_last = last * up // s_pod
    best: tuple[tuple[int, int], dict[str, int]] | None = None
    last_options = [d for d in _divisors(s_pod) if d * half >= last * up] if partial else [s_pod]
    for s_last in last_options:
        down_last = last * up // s_last
        for c in _divisors(x_full):
            y = -(-x_last // c) * c if partial else x_full
            if partial and (s_pod // s_last) * y > k - down_last:
                continue
            if c * k < full * x_full + (y if partial else 0):
                continue
            spines = full * s_pod + (s_last if partial else 0)
            key = (spines + s_pod * c, s_pod * (full * x_full + (y if partial else 0)))
            if best is None or key < best[0]:
                best = (key, dict(leaf_up=up, spines=spines, cores=s_pod * c, pod_leaves=pod, pods=pods,
                                  spines_per_pod=s_pod, last_pod_leaves=last, last_pod_spines=s_last,
                                  cores_per_group=c, group_links_full=x_full, group_links_last=y,
                                  max_endpoints_per_copy=k * pod * leaf_down))
            break  # larger c only adds cores for this s_last
    return best[1] if best else None


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


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
