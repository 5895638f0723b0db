"""The plan's network and bill of materials: interconnect choice, Clos topology, BOM lines.
Data only, re-exported by :mod:`gpuplan.core.contract`."""


from typing import Literal

from gpuplan.core.contract_base import _Out
from gpuplan.core.records import dataclass, field
from gpuplan.core.cost_contract import StorageSizing


@dataclass(frozen=True, kw_only=True)
class BomItem(_Out):
    category: Literal["server", "nic", "switch", "transceiver", "cable", "rack", "storage", "management", "power",
                      "cooling", "other"]
    tier: str | None = None
    part_id: str
    description: str
    quantity: int
    unit_price_usd: float | None
    unit_power_w: float | None
    total_price_usd: float | None
    total_power_w: float | None
    source: str | None
    price_date: str | None = None
    #: The unit price is an estimate by a stated method (its source's note), not an observed price.
    estimate: bool = False
    #: +/- fraction of an estimated unit price.
    price_uncertainty: float | None = None


@dataclass(frozen=True, kw_only=True)
class Bom(_Out):
    items: list[BomItem]
    capex_usd: float
    #: Parts with no catalog price (their cost is not in capex_usd, never counted as $0).
    unpriced_parts: list[str]
    power_kw: float
    network_capex_usd: float
    network_power_kw: float
    racks: int
    #: Peak power of the fullest compute rack, kW (docs/fabric-model.md, rack rule).
    rack_power_kw: float | None = None
    #: GPUs x the catalog's cloud rate per GPU-hour; None when the catalog has no rate.
    cloud_usd_per_hour: float | None = None
    #: Parts with no catalog power figure (their power is not in power_kw).
    unpowered_parts: list[str] = field(default_factory=list)
    #: Capex per BOM category (server, nic, switch, ..., cooling).
    capex_by_category_usd: dict[str, float] = field(default_factory=dict)
    #: The part of capex_usd priced by estimates (lines marked ``estimate``).
    estimated_capex_usd: float = 0.0
    #: Compute-rack cooling: air (room CRAH), rear-door heat exchangers or direct liquid (CDUs).
    cooling: Literal["air", "rear-door", "liquid"] | None = None
    servers_per_rack: int | None = None
    #: Power usage effectiveness applied (``[constraints] pue`` or the default for the cooling).
    pue: float | None = None
    #: power_kw x pue: what the site draws at full load.
    facility_power_kw: float | None = None
    storage: StorageSizing | None = None


@dataclass(frozen=True, kw_only=True)
class Interconnect(_Out):
    scaleup_tech: str
    scaleup_domain_gpus: int
    scaleup_uni_gb_per_s: float
    scaleout_fabric: str | None
    scaleout_kind: Literal["infiniband", "ethernet"] | None
    nic: str | None
    nics_per_node: int
    nic_gbit_per_gpu: float
    #: Scale-out bandwidth per GPU the chosen layout needs to keep communication hidden.
    required_gbit_per_gpu: float
    rails: int
    reasons: list[str]
    #: Serving: the front-end (north-south) Ethernet, when it is a network of its own.
    frontend_fabric: str | None = None
    frontend_gbit_per_node: float = 0.0
    #: GPUs of one node (server, or compute tray of a rack-scale system); 0 in plans saved before it.
    gpus_per_node: int = 0
    #: Switch trays of one rack-scale scale-up domain (9 in a GB200 NVL72); 0 when the domain is
    #: one server's baseboard.
    scaleup_switch_trays: int = 0


@dataclass(frozen=True, kw_only=True)
class ClosParameters(_Out):
    """What rebuilds the exact graph of a Topology (gpuplan.fabric.graph.build_graph)."""

    switch_radix: int
    #: Fabric ports per node per plane (one per GPU on rail-optimized HGX-class servers).
    rails: int
    planes: int = 1
    #: Node slots given to fabric management (UFM), after the last node.
    reserved_node_slots: int = 0
    #: Node-facing ports provisioned per leaf and uplinks per leaf (0 for a single switch).
    leaf_down_ports: int
    leaf_up_ports: int


@dataclass(frozen=True, kw_only=True)
class Topology(_Out):
    kind: Literal["rail-optimized-fat-tree", "fat-tree", "leaf-spine", "rail-only", "single-switch", "none"]
    switch: str | None
    port_gbit: float
    tiers: int
    oversubscription: float
    nodes: int
    endpoints: int
    max_endpoints: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    node_leaf_links: int
    leaf_spine_links: int
    spine_core_links: int
    #: One direction, across the worst bisection of the graph (docs/fabric-model.md).
    bisection_gbit: float
    max_switch_hops: int
    equal_cost_paths: int
    scalable_unit_nodes: int | None
    graph_checked: bool
    clos: ClosParameters | None = None
