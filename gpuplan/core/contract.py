"""The plan: the one result model every renderer reads (table, JSON, Markdown, tfvars, CI formats).

Keys are snake_case with the unit in the name. The JSON Schema (``gpuplan schema``) is generated
from these classes; any breaking change bumps :data:`SCHEMA_VERSION` (docs/json.md).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuplan.core.contract_fleet import Autoscaling, Fleet, FleetStrategy, Risk  # noqa: F401  (re-exported)
from gpuplan.core.cost_contract import PlanTco, StorageSizing, Tco

from gpuplan.core.bands import PhaseIntervals
from gpuplan.core.fix_contract import ClosestFix

SCHEMA_VERSION = "1.2"
#: A roofline's peak, bandwidth and ridge: renderers divide by them, so a saved plan must carry
#: them finite and above zero (the planners always do).
RoofFigure = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AssumptionOut(_Out):
    field: str
    value: str
    reason: str


class Finding(_Out):
    """Something a CI gate or a reader should see; anchored to a profile field when possible."""

    severity: Literal["error", "warning", "note"]
    code: str
    message: str
    phase: Literal["training", "serving", "profile"]
    field: str | None = None


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
    unpowered_parts: list[str] = []
    #: Capex per BOM category (server, nic, switch, ..., cooling).
    capex_by_category_usd: dict[str, float] = {}
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


class Interconnect(_Out):
    scaleup_tech: str
    scaleup_domain_gpus: int
    scaleup_uni_gbps: float
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


class TrainingLayout(_Out):
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    vp: int
    micro_batch: int
    num_micro_batches: int
    global_batch_sequences: int
    recompute: Literal["none", "selective", "full"]
    sequence_parallel: bool
    zero: int
    #: With recompute "full": layers per pipeline stage that are recomputed (0 = all of them).
    recompute_layers: int = 0


class TrainingBreakdown(_Out):
    """Seconds per optimizer step; the ``*_comm_s`` are the exposed (not overlapped) parts."""

    compute_s: float
    recompute_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    ep_comm_s: float
    cp_comm_s: float
    bubble_s: float
    optimizer_s: float
    step_time_s: float
    dp_bandwidth_to_hide_gbit_per_gpu: float
    #: Host-side gaps, synchronisation and stragglers between kernels (part of step_time_s).
    host_overhead_s: float = 0.0


class MemoryBreakdown(_Out):
    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    overhead_gib: float
    total_gib: float
    capacity_gib: float
    headroom_gib: float


class TrainingOption(_Out):
    gpu: str
    gpus: int
    nodes: int
    layout: TrainingLayout
    step_time_s: float
    mfu: float
    wall_clock_days: float
    gpu_hours: float
    cost_usd: float | None
    meets_target: bool
    bound: str
    #: True when cost_usd includes the option's own network (fabric, NICs, optics), not servers only.
    network_included: bool = False


class TrainingLayoutOption(_Out):
    """A runner-up layout on the recommended GPU, with the terms of its step time."""

    layout: TrainingLayout
    gpus: int
    step_time_s: float
    mfu: float
    wall_clock_days: float
    breakdown: TrainingBreakdown
    memory_headroom_gib: float


class RooflinePoint(_Out):
    """One kernel class on a roofline: FLOP per byte of HBM traffic and which side of the ridge."""

    name: str
    flops_per_byte: float
    bound: Literal["compute", "memory"]


class TrainingRoofline(_Out):
    """Where the training layout's layer GEMMs sit on the chosen GPU's roofline."""

    peak_tflops: RoofFigure
    mem_bw_tbps: RoofFigure
    ridge_flops_per_byte: RoofFigure
    points: list[RooflinePoint]


class TrainingPlan(_Out, PhaseIntervals):
    feasible: bool
    gpu: str | None
    gpus: int
    nodes: int
    #: GPUs paid for and not used by the plan: the rest of the last whole server (capex) or of the
    #: last cloud instance rented (cloud pricing).
    gpus_idle: int = 0
    layout: TrainingLayout | None
    precision: str
    step_time_s: float
    mfu: float
    hfu: float
    model_tflops_per_gpu: float
    tokens_per_s: float
    total_flops: float
    steady_state_days: float
    goodput: float
    wall_clock_days: float
    gpu_hours: float
    breakdown: TrainingBreakdown | None
    memory: MemoryBreakdown | None
    bound: str
    #: The layer GEMMs against the GPU's ridge point (docs/training-model.md, "Roofline").
    roofline: TrainingRoofline | None = None
    interconnect: Interconnect | None
    topology: Topology | None
    bom: Bom | None
    capex_usd: float | None
    power_kw: float
    cloud_usd_per_hour: float | None
    run_cost_usd: float | None
    alternatives: list[TrainingOption]
    reasons: list[str]
    infeasible: list[str]
    #: Infeasible only: the smallest change of one constraint that plans feasibly (core/fix_contract.py).
    closest_fix: ClosestFix | None = None
    #: The next best layouts on the recommended GPU (search order), each with its breakdown.
    layout_alternatives: list[TrainingLayoutOption] = []
    tco: Tco | None = None


class ServingLayout(_Out):
    tp: int
    pp: int
    ep: int
    concurrency: int
    disaggregated: bool


class Roofline(_Out):
    """Where the phases sit on the chosen GPU's roofline (FLOP per byte of HBM traffic)."""

    peak_tflops: RoofFigure
    mem_bw_tbps: RoofFigure
    ridge_flops_per_byte: RoofFigure
    prefill_flops_per_byte: float
    decode_flops_per_byte: float
    prefill_bound: Literal["compute", "memory"]
    decode_bound: Literal["compute", "memory"]


class DisaggregationComparison(_Out):
    prefill_gpus: int
    decode_gpus: int
    total_gpus: int
    aggregated_gpus: int
    kv_transfer_gbit_per_s: float
    recommended: bool
    reason: str


class ServingOption(_Out):
    gpu: str
    gpus: int
    replicas: int
    layout: ServingLayout
    ttft_ms_p99: float
    tpot_ms: float
    max_qps: float
    cost_usd: float | None
    usd_per_million_output_tokens: float | None
    meets_target: bool
    bound: str
    #: Cloud $/hour of this fleet (None without a catalog rate).
    cloud_usd_per_hour: float | None = None
    #: Why this option was not chosen, or which target it misses.
    reason: str | None = None
    #: True when cost_usd includes the option's own network (fabric, NICs, optics), not servers only.
    network_included: bool = False


class FrontierPoint(_Out):
    """One operating point of one layout on the chosen GPU: throughput against per-user speed."""

    layout: str
    gpus_per_replica: int
    concurrency: float
    tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    ttft_ms_mean: float
    #: True when the point meets the TTFT, TPOT, KV and utilisation limits.
    meets_targets: bool
class ServingDeploy(_Out):
    """What an engine's launch settings need besides the layout (``gpuplan deploy``,
    docs/deploy.md): each engine states its memory fraction on its own basis, so the plan keeps
    the memory terms, not one engine's fraction."""

    #: Longest sequence (prompt + output) a replica serves: the engine's maximum model length.
    context_length: int
    #: Memory a program can allocate on the chosen GPU, GiB (the base of the memory fractions).
    gpu_memory_usable_gib: float
    #: Memory the engine holds besides weights and KV cache (CUDA context, workspaces), GiB.
    runtime_overhead_gib: float
    #: Tokens of one prefill step (chunked-prefill size) the serving model assumes.
    prefill_chunk_tokens: int
    gpu_vendor: Literal["nvidia", "amd", "intel"]
    gpus_per_node: int


class ServingPlan(_Out, PhaseIntervals):
    feasible: bool
    gpu: str | None
    gpus: int
    nodes: int
    #: GPUs paid for and not used by the plan: the rest of the last whole server (capex) or of the
    #: last cloud instance rented (cloud pricing).
    gpus_idle: int = 0
    replicas: int
    spare_replicas: int
    gpus_per_replica: int
    layout: ServingLayout | None
    precision: str
    kv_precision: str
    #: dtype of the matmul math on the chosen GPU (fp16 where bf16 is missing, 16-bit for
    #: weight-only formats and for fp8/fp4 weights on GPUs without those tensor cores).
    compute_dtype: str | None = None
    weights_gib_per_gpu: float
    kv_bytes_per_token_per_gpu: float
    kv_gib_per_gpu: float
    max_sequences_per_replica: int
    ttft_ms_mean: float
    ttft_ms_p99: float
    #: The profile's ``latency_percentile`` (mean, p50, p90, p99) and the TTFT at it: the figure
    #: the ``ttft_ms`` target is met with (and that ``gpuplan check`` gates on).
    latency_percentile: str
    ttft_ms_at_percentile: float
    tpot_ms: float
    e2e_ms_mean: float
    prefill_ms: float
    qps_per_replica: float
    max_qps: float
    output_tokens_per_s: float
    utilization: float
    #: Peak QPS over the latency-limited capacity of the non-spare replicas; at most
    #: ``[serving] max_load_fraction`` (default 0.85) in a recommended fleet.
    peak_load_fraction: float = 0.0
    bound: str
    roofline: Roofline | None
    disaggregation: DisaggregationComparison | None
    interconnect: Interconnect | None
    topology: Topology | None
    bom: Bom | None
    capex_usd: float | None
    power_kw: float
    cloud_usd_per_hour: float | None
    usd_per_million_output_tokens: float | None
    alternatives: list[ServingOption]
    reasons: list[str]
    infeasible: list[str]
    #: Infeasible only: the smallest change of one constraint that plans feasibly (core/fix_contract.py).
    closest_fix: ClosestFix | None = None
    #: Throughput-latency frontier of every layout on the chosen GPU (gpuplan/serving/frontier.py).
    frontier: list[FrontierPoint] = []
    tco: Tco | None = None
    #: Launch inputs of the chosen layout (None when infeasible, and in older saved plans).
    deploy: ServingDeploy | None = None
    #: Autoscaling bounds from the demand curve (docs/fleet-model.md).
    autoscaling: Autoscaling | None = None


class ModelSummary(_Out):
    name: str
    total_params: int
    active_params: int
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    experts: int
    kv_bytes_per_token_bf16: int
    #: Hugging Face repository of a catalog preset (from its config source), for engine launches.
    hf_repo: str | None = None


class Plan(_Out):
    schema_version: str
    gpuplan_version: str
    catalog_version: str
    catalog_sha256: str
    input_sha256: str
    profile: str
    workload: str
    model: ModelSummary
    pricing: Literal["capex", "cloud"]
    assumptions: list[AssumptionOut]
    training: TrainingPlan | None
    serving: ServingPlan | None
    findings: list[Finding]
    #: Cost of ownership of both phases together (None when neither phase has one).
    tco: PlanTco | None = None
    #: Both phases: separate fleets or one shared fleet (docs/fleet-model.md).
    fleet: Fleet | None = None
