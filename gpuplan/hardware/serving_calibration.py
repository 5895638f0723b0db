"""The serving model's regime constants, read from ``catalog/calibration/serving.toml``.

Validated once per catalog (unknown keys are errors); the values and their sources are in the
TOML file and in docs/serving-model.md. No number here: a catalog without the file is an error.
"""


from __future__ import annotations

from typing import Annotated, Literal, Protocol

from pydantic import Field

from gpuplan.core.types import Fraction, NonNegative, Positive
from gpuplan.hardware.record import Record


class HasTables(Protocol):
    """What reads a calibration table: the catalog (hardware.loader.Catalog), or a test double."""

    def table(self, name: str) -> object: ...


class ScaleBits(Record):
    bf16: NonNegative
    fp16: NonNegative
    fp8: NonNegative
    int8: NonNegative
    int4: NonNegative
    fp4: NonNegative


class WeightOnly(Record):
    int8: Fraction
    int4: Fraction
    fp8: Fraction
    fp4: Fraction


class Engine(Record):
    prefill_tokens_per_step: Annotated[int, Field(gt=0)]


class Moe(Record):
    """Costs of the fused mixture-of-experts module beyond its expert weights and GEMM FLOPs."""

    layer_latency_us: NonNegative
    copy_ps_per_element: NonNegative
    token_ps_per_element: NonNegative
    expert_us: NonNegative
    expert_block_scaled_us: NonNegative


class AllReduceFit(Record):
    """One measured all-reduce algorithm of one NVLink generation (``[all_reduce]``)."""

    scaleup_tech: Annotated[str, Field(min_length=1)]
    kind: Literal["ring", "in_network", "one_shot", "two_shot"]
    #: An engine's own peer-to-peer kernel (used by engines with ``all_reduce = "custom"``).
    custom: bool
    base_us: NonNegative
    step_us: NonNegative
    line_fraction: Fraction


class AllReduce(Record):
    source: Annotated[str, Field(min_length=1)]
    algorithm: tuple[AllReduceFit, ...]


class Queueing(Record):
    prefill_service_scv: NonNegative
    max_utilisation: Fraction


class Frontend(Record):
    bytes_per_prompt_token: NonNegative
    bytes_per_output_token: NonNegative
    bytes_per_request: NonNegative


EngineName = Literal["vllm", "sglang", "trtllm", "fastertransformer", "gpt-fast"]
ENGINE_NAMES: tuple[str, ...] = ("vllm", "sglang", "trtllm", "fastertransformer", "gpt-fast")


class EngineRelease(Record):
    """Documented kernel and scheduler features of one engine from release ``since`` on."""

    engine: EngineName
    since: Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)*$")]
    gqa_kv_reads: Literal["per_group", "per_query_head"]
    #: What a decode step's attention reads of each sequence's cache: the tokens filled so far, or the
    #: whole cache reserved for the sequence (a static cache attended through a mask: gpt-fast).
    kv_reads: Literal["filled", "reserved"] = "filled"
    scheduling: Literal["mixed", "prefill_first"]
    kv_admission: Literal["reserve_full", "on_demand"]
    kv_block_tokens: Annotated[int, Field(ge=0)]
    fp8_quantize: Literal["fused", "separate"]
    cuda_graphs: bool
    all_reduce: Literal["custom", "nccl"]
    #: The all-reduce on AMD GPUs (ROCm builds) where it differs from ``all_reduce`` (None: the same).
    rocm_all_reduce: Literal["custom", "nccl"] | None = None
    kv_memory_fraction: Fraction
    max_batch: Annotated[int, Field(ge=0)]
    max_step_tokens: Annotated[int, Field(gt=0)]
    #: Host (CPU) time per scheduled sequence per step, microseconds, on a host core of
    #: ``host_reference_ghz`` (scheduling, input preparation, sampling and request update run per
    #: request in the engine's Python loop); 0: not modelled for this release.
    host_us_per_sequence: NonNegative = 0.0
    host_reference_ghz: Positive = 3.0
    #: The host work of step n+1 runs while the GPU runs step n (TensorRT-LLM's overlap
    #: scheduler): a step lasts the longer of the two; False: they add.
    host_overlap: bool = True
    #: The CUDA graph is replayed for decode-only steps alone (TensorRT-LLM's PyTorch executor):
    #: a step that carries a prompt launches every op of every layer from Python, on the host.
    graphs_decode_only: bool = False
    #: Host time per op such an eager step launches, microseconds at ``host_reference_ghz``.
    eager_op_us: NonNegative = 0.0
    #: Batch sizes the decode CUDA graph is captured at, with padding on: a decode-only step of ``b``
    #: sequences per rank runs the graph of the next size up, capped at the engine's batch limit
    #: (:func:`gpuplan.serving.engine.graph_batch`); empty: no padding modelled.
    graph_batch_sizes: tuple[Annotated[int, Field(gt=0)], ...] = ()
    source: Annotated[str, Field(min_length=1)]
    #: Releases that pick their scheduler defaults by device (vLLM V1, engine/arg_utils.py): on a GPU
    #: with less memory than ``large_gpu_memory_gib``, or whose id names one of ``large_gpu_excluded``,
    #: ``max_batch`` and ``max_step_tokens`` become these (None: the same on every GPU).
    small_gpu_max_batch: Annotated[int, Field(ge=0)] | None = None
    #: Releases that turn chunked prefill on by themselves when the maximum model length exceeds
    #: ``long_context_above_tokens`` (vLLM V0 from 0.5.3): the token budget a step then takes, and
    #: prefill chunks share the decode steps (None: no such default). ``long_context_on_amd`` and
    #: ``long_context_with_mla``: whether it also applies on AMD GPUs and to MLA models.
    long_context_step_tokens: Annotated[int, Field(gt=0)] | None = None
    #: A static batch runs through the engine's scheduler (vLLM benchmark_latency: LLM.generate),
    #: so with chunked prefill its prompts share steps with the decodes (serving/static_mixed.py).
    static_batch_scheduled: bool = False
    long_context_above_tokens: Annotated[int, Field(gt=0)] = 32768
    long_context_on_amd: bool = True
    long_context_with_mla: bool = True
    small_gpu_max_step_tokens: Annotated[int, Field(gt=0)] | None = None
    large_gpu_memory_gib: Annotated[float, Field(ge=0)] = 0.0
    large_gpu_excluded: tuple[str, ...] = ()


class Engines(Record):
    default: EngineName
    release: tuple[EngineRelease, ...]


class ServingConstants(Record):
    gemm_efficiency_vs_mamf: Fraction
    attention_efficiency_vs_mamf: Fraction
    gemm_knee_exponent: Annotated[float, Field(ge=1, le=100, allow_inf_nan=False, strict=True)]
    layer_latency_us: NonNegative
    decode_attention_latency_us: NonNegative
    decode_attention_full_mb: Positive
    step_overhead_us: NonNegative
    collective_launch_us: NonNegative
    activation_bytes: Positive
    runtime_overhead_gib: NonNegative
    kv_memory_fraction: Fraction
    scale_bits_per_weight: ScaleBits
    weight_only_bandwidth_factor: WeightOnly
    engine: Engine
    moe: Moe
    all_reduce: AllReduce
    queueing: Queueing
    frontend: Frontend
    engines: Engines

    def scale_bits(self, precision: str) -> float:
        return float(getattr(self.scale_bits_per_weight, precision))

    def weight_only_factor(self, precision: str) -> float:
        return float(getattr(self.weight_only_bandwidth_factor, precision))


def serving_constants(catalog: HasTables) -> ServingConstants:
    """The serving constants of ``catalog`` (``calibration/serving.toml``, validated at load)."""
    found = catalog.table("serving")
    assert isinstance(found, ServingConstants)
    return found
