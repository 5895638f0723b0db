"""The plan's serving phase: layout, roofline, disaggregation, options, frontier, deploy inputs.
Data only, re-exported by :mod:`gpuplan.core.contract`."""


from typing import Literal

from gpuplan.core.fix_contract import ClosestFix
from gpuplan.core.contract_base import RoofFigure, _Out
from gpuplan.core.records import dataclass, field
from gpuplan.core.contract_fabric import Bom, Interconnect, Topology
from gpuplan.core.contract_fleet import Autoscaling
from gpuplan.core.cost_contract import Tco


@dataclass(frozen=True, kw_only=True)
class ServingLayout(_Out):
    tp: int
    pp: int
    ep: int
    concurrency: int
    disaggregated: bool


@dataclass(frozen=True, kw_only=True)
class Roofline(_Out):
    """Where the phases sit on the chosen GPU's roofline (FLOP per byte of HBM traffic)."""

    peak_tflops: RoofFigure
    mem_bw_tb_per_s: RoofFigure
    ridge_flops_per_byte: RoofFigure
    prefill_flops_per_byte: float
    decode_flops_per_byte: float
    prefill_bound: Literal["compute", "memory"]
    decode_bound: Literal["compute", "memory"]
    #: What one GPU achieves in the planned steps: the step's FLOPs over its modelled time
    #: (TFLOP/s); None in plans saved before it.
    prefill_achieved_tflops: float | None = None
    decode_achieved_tflops: float | None = None


@dataclass(frozen=True, kw_only=True)
class DisaggregatedPool(_Out):
    """One pool of a disaggregated fleet (since 1.4)."""

    role: Literal["prefill", "decode"]
    gpu: str
    layout: ServingLayout
    gpus_per_worker: int
    #: Workers carrying the load, and spare ones beyond them.
    workers: int
    spare_workers: int
    #: Every GPU of the pool, spares included.
    gpus: int
    #: Requests/s one worker sustains within its target (prefill: TTFT with the KV transfer; decode: TPOT).
    rate_per_worker: float
    #: Prefill: prompt tokens/s per worker at that rate; decode: sequences per worker at the TPOT target.
    capacity_per_worker: float
    #: Peak QPS over the capacity of the pool's active workers.
    load_fraction: float
    #: The pool's own servers and cost (None when both pools share the servers of one domain).
    nodes: int | None = None
    capex_usd: float | None = None
    cloud_usd_per_hour: float | None = None


@dataclass(frozen=True, kw_only=True)
class DisaggregationComparison(_Out):
    """The cheapest disaggregated prefill/decode fleet and how it compares with the aggregated one.

    ``prefill_gpus``, ``decode_gpus``, ``total_gpus`` and ``aggregated_gpus`` count the GPUs that
    carry the load (spares left out on both sides); ``gpus`` counts every GPU."""

    prefill_gpus: int
    decode_gpus: int
    total_gpus: int
    aggregated_gpus: int
    kv_transfer_gbit_per_s: float
    #: Meets the targets for less than the best aggregated plan.
    recommended: bool
    reason: str
    #: Since 1.4: ``[serving] disaggregation`` ("auto" or "always"; "never" plans no comparison).
    mode: Literal["auto", "always"] = "auto"
    #: The plan's fleet is this one (recommended under "auto"; whenever feasible under "always").
    chosen: bool = False
    #: How the KV cache travels: "scale-out" (NICs between the pools' servers), "scale-up" or
    #: "pcie" (a group of both kinds of worker inside one NVLink domain or server).
    placement: Literal["scale-out", "scale-up", "pcie"] | None = None
    #: Active replica groups of ``prefill_per_group`` prefill and ``decode_per_group`` decode workers.
    groups: int = 0
    prefill_per_group: int = 0
    decode_per_group: int = 0
    #: Spare capacity: whole groups (one-domain placement) or 1 prefill + 1 decode worker each (scale-out).
    spare_groups: int = 0
    gpus: int = 0
    nodes: int = 0
    kv_bytes_per_request: float = 0.0
    #: Bytes/s between one prefill and one decode worker, as Gb/s, and one request's transfer time.
    kv_link_gbit_per_s: float = 0.0
    kv_transfer_ms: float = 0.0
    ttft_ms_mean: float = 0.0
    ttft_ms_at_percentile: float = 0.0
    tpot_ms: float = 0.0
    #: Rate matching: the side whose capacity exceeds the other's, and the share of it left idle.
    idle_side: Literal["prefill", "decode"] | None = None
    idle_fraction: float = 0.0
    #: Capex (servers; the whole BOM when ``network_included``) or cloud $/h, and the aggregated plan's.
    capex_usd: float | None = None
    cloud_usd_per_hour: float | None = None
    aggregated_capex_usd: float | None = None
    aggregated_cloud_usd_per_hour: float | None = None
    network_included: bool = False
    pools: list[DisaggregatedPool] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class ServingPlan(_Out):
    #: [low, high] of each predicted figure at ``interval_level``, from the validation residuals
    #: of the phase's regime, named by ``interval_basis``; empty without a residual table
    #: (docs/calibration.md). Both phases carry these three first.
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    interval_level: float | None = None
    interval_basis: str | None = None
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
    #: Since 2.1: spare GPUs outside whole replicas (a scale-out disaggregated fleet's spare prefill
    #: and decode workers); ``gpus = replicas x gpus_per_replica + spare_gpus`` on every plan.
    spare_gpus: int = 0
    layout: ServingLayout | None
    precision: str
    kv_precision: str
    #: Since 2.2: the serving engine whose kernels and scheduler the step times model (``[serving]
    #: engine``, vllm when not given), the release asked for (None: the newest the catalog
    #: describes), and the catalog's engine entry that was applied (its first release).
    engine: str | None = None
    engine_version: str | None = None
    engine_release: str | None = None
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
    frontier: list[FrontierPoint] = field(default_factory=list)
    tco: Tco | None = None
    #: Launch inputs of the chosen layout (None when infeasible, and in older saved plans).
    deploy: ServingDeploy | None = None
    #: Autoscaling bounds from the demand curve (docs/fleet-model.md).
    autoscaling: Autoscaling | None = None
    #: When usd_per_million_output_tokens is priced on the daily demand curve: this fleet's figure on
    #: the alternatives' basis (the target QPS, the sizing load), to compare it with them; else None.
    usd_per_million_output_tokens_at_target: float | None = None
