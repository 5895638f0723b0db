"""The records of a folded-Clos fabric: what is asked (:class:`ClosSpec`) and what is built
(:class:`ClosDesign`, with its switch and link counts). Sized by :func:`gpuplan.fabric.sizing.size_clos`."""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass, field
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
