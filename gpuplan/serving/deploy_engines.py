"""Serving engines' launch flags, by release: what ``gpuplan deploy`` writes (docs/deploy.md).

Each engine's flag names, value spellings and memory-fraction basis were read from the release
named in :attr:`Engine.release` (tests/render/test_deploy.py pins them):

* vLLM 0.33.0: ``vllm/engine/arg_utils.py`` and ``vllm/config/cache.py`` of the released wheel.
* SGLang 0.5.23: ``sglang/srt/arg_groups/fields/*.py`` and ``sglang/srt/server_args.py`` of the
  released wheel (``--enable-dp-attention`` is deprecated there in favour of ``--attn-dp-size``).
* TensorRT-LLM 1.2.1: ``tensorrt_llm/commands/serve.py`` (``trtllm-serve``) and the 1.x docs;
  settings without a flag go in the YAML file of ``--extra_llm_api_options``.

Pure data and pure functions: nothing here reads a file or the catalog.
"""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass, field

from gpuplan.core.errors import InputError
from gpuplan.hardware.engine_vendors import ENGINE_LABELS, ENGINE_VENDORS, VENDOR_LABELS, vendor_refusal

ENGINES = ("vllm", "sglang", "trtllm")


@dataclass(frozen=True)
class Launch:
    """The engine-neutral launch settings of one serving replica, read from a plan."""

    model: str
    tp: int
    pp: int
    #: GPUs a MoE layer's experts are spread over (1: no expert parallelism).
    ep: int
    #: Attention data-parallel groups per replica (the plan's ep / tp when ep > tp).
    attn_dp: int
    #: Sequences the replica's KV cache holds at the mean request length (all DP groups).
    max_sequences: int
    precision: str
    kv_precision: str
    weights_gib: float
    kv_gib: float
    context_length: int | None = None
    usable_gib: float | None = None
    overhead_gib: float | None = None
    chunk_tokens: int | None = None
    vendor: str = "nvidia"


@dataclass(frozen=True)
class Command:
    """An engine's launch: the program and its arguments, a config file when the engine needs
    one (TensorRT-LLM), and notes on what the plan could not say (shown on stderr)."""

    engine: str
    release: str
    argv: list[str]
    port: int
    config_file: str | None = None
    config: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Engine:
    id: str
    name: str
    release: str
    program: tuple[str, ...]
    port: int
    #: Container image of the release (NVIDIA builds); other vendors need ``--image``.
    image: str
    #: Prometheus gauge of running requests per server, which the HPA's per-pod metric maps.
    running_metric: str | None
    vendors: tuple[str, ...]
    #: The plan's KV precision -> the engine's KV cache dtype (missing: not supported).
    kv_dtype: dict[str, str]


VLLM = Engine("vllm", ENGINE_LABELS["vllm"], "0.33.0", ("vllm", "serve"), 8000, "vllm/vllm-openai:v0.33.0",
              "vllm:num_requests_running", ENGINE_VENDORS["vllm"],
              {"bf16": "bfloat16", "fp16": "float16", "fp8": "fp8", "int8": "int8_per_token_head"})
SGLANG = Engine("sglang", ENGINE_LABELS["sglang"], "0.5.23", ("sglang", "serve"), 30000, "lmsysorg/sglang:v0.5.23",
                "sglang:num_running_reqs", ENGINE_VENDORS["sglang"],
                {"bf16": "bf16", "fp16": "auto", "fp8": "fp8_e4m3"})
TRTLLM = Engine("trtllm", ENGINE_LABELS["trtllm"], "1.2.1", ("trtllm-serve",), 8000,
                "nvcr.io/nvidia/tensorrt-llm/release:1.2.1", None, ENGINE_VENDORS["trtllm"],
                {"bf16": "auto", "fp16": "auto", "fp8": "fp8"})
BY_ID = {e.id: e for e in (VLLM, SGLANG, TRTLLM)}
#: Name of the YAML file trtllm-serve reads through --extra_llm_api_options.
TRTLLM_CONFIG = "extra-llm-api-config.yml"

_DTYPE = {"bf16": "bfloat16", "fp16": "float16"}
_PREQUANTISED = {"int8": "INT8 (W8A8 or weight-only)", "int4": "INT4 (AWQ or GPTQ)", "fp4": "FP4 (NVFP4 or MXFP4)"}


def engine(name: str) -> Engine:
    from gpuplan.core.errors import did_you_mean

    if name not in BY_ID:
        raise InputError(f"unknown engine {name!r}{did_you_mean(name, ENGINES)}; expected one of {', '.join(ENGINES)}",
                         field="--engine")
    return BY_ID[name]


def floor2(x: float) -> float:
    """A memory fraction, rounded down to 0.01 (never more memory than the plan counted)."""
    return math.floor(x * 100 + 1e-6) / 100


def memory_fraction(eng: Engine, s: Launch) -> float | None:
    """The engine's memory setting on its own basis, from the plan's memory terms:
    vLLM ``--gpu-memory-utilization`` = (weights + runtime + KV) / memory;
    SGLang ``--mem-fraction-static`` = (weights + KV) / memory;
    TensorRT-LLM ``--kv_cache_free_gpu_memory_fraction`` = KV / (memory - weights - runtime)."""
    if s.usable_gib is None or s.overhead_gib is None or s.usable_gib <= 0:
        return None
    if eng.id == "vllm":
        value = (s.weights_gib + s.overhead_gib + s.kv_gib) / s.usable_gib
    elif eng.id == "sglang":
        value = (s.weights_gib + s.kv_gib) / s.usable_gib
    else:
        free = s.usable_gib - s.weights_gib - s.overhead_gib
        if free <= 0:
            return None
        value = s.kv_gib / free
    return min(0.99, max(0.01, floor2(value)))


def _kv(eng: Engine, s: Launch) -> str:
    if s.kv_precision not in eng.kv_dtype:
        supported = ", ".join(sorted(eng.kv_dtype))
        raise InputError(f"{eng.name} {eng.release} has no {s.kv_precision} KV cache (it has {supported}); plan with "
                         f"kv_precision = \"fp8\" or a 16-bit one", field="serving.kv_precision")
    return eng.kv_dtype[s.kv_precision]


def _weights(eng: Engine, s: Launch, notes: list[str]) -> list[str]:
    """Flags of the weight precision: a 16-bit dtype, online FP8, or a pre-quantised checkpoint."""
    if s.precision in _DTYPE:
        return [] if eng.id == "trtllm" else ["--dtype", _DTYPE[s.precision]]
    if s.precision == "fp8" and eng.id != "trtllm":  # quantises a 16-bit checkpoint at load
        return ["--quantization", "fp8"]
    kind = "FP8" if s.precision == "fp8" else _PREQUANTISED[s.precision]
    via = "a ModelOpt-quantised checkpoint" if eng.id == "trtllm" else "a pre-quantised checkpoint"
    notes.append(f"weights are {kind}: give --model {via}; {eng.name} reads the method from its config")
    return []


def command(eng: Engine, s: Launch) -> Command:
    """The launch command of one replica with ``eng``'s flag names."""
    refusal = vendor_refusal(eng.id, s.vendor)
    if refusal is not None:
        runs = ", ".join(VENDOR_LABELS.get(v, v) for v in eng.vendors)
        raise InputError(f"{refusal} (it runs on {runs}); choose another --engine", field="--engine")
    notes: list[str] = []
    kv = _kv(eng, s)
    fraction = memory_fraction(eng, s)
    if s.context_length is None:
        notes.append("the plan has no context length (saved before gpuplan deploy): the engine uses the model's")
    if fraction is None:
        notes.append("the plan has no memory terms (saved before gpuplan deploy): the engine's default memory "
                     "fraction applies")
    if eng.id == "vllm":
        argv = _vllm(s, kv, fraction, notes)
    elif eng.id == "sglang":
        argv = _sglang(s, kv, fraction, notes)
    else:
        return _trtllm(s, kv, fraction, notes)
    return Command(engine=eng.id, release=eng.release, argv=argv, port=eng.port, notes=notes)


def _opt(flag: str, value: object | None) -> list[str]:
    return [] if value is None else [flag, str(value)]


def _vllm(s: Launch, kv: str, fraction: float | None, notes: list[str]) -> list[str]:
    # vLLM runs one scheduler per data-parallel rank: --max-num-seqs is per rank.
    argv = [*VLLM.program, s.model, "--host", "0.0.0.0", "--port", str(VLLM.port),
            "--tensor-parallel-size", str(s.tp), "--pipeline-parallel-size", str(s.pp)]
    if s.attn_dp > 1:
        argv += ["--data-parallel-size", str(s.attn_dp)]
    if s.ep > 1:
        argv += ["--enable-expert-parallel"]  # vLLM's EP size is TP x DP, the plan's expert shards
    argv += ["--max-num-seqs", str(max(1, s.max_sequences // s.attn_dp)), *_opt("--max-model-len", s.context_length),
             "--kv-cache-dtype", kv, *_opt("--gpu-memory-utilization", fraction), *_weights(VLLM, s, notes)]
    if s.chunk_tokens is not None:
        argv += ["--enable-chunked-prefill", "--max-num-batched-tokens", str(s.chunk_tokens)]
    return argv


def _sglang(s: Launch, kv: str, fraction: float | None, notes: list[str]) -> list[str]:
    # SGLang's attention DP groups live inside the TP group: --tp-size counts every GPU of a stage.
    argv = [*SGLANG.program, "--model-path", s.model, "--host", "0.0.0.0", "--port", str(SGLANG.port),
            "--tp-size", str(s.tp * s.attn_dp), "--pp-size", str(s.pp)]
    if s.attn_dp > 1:
        argv += ["--attn-dp-size", str(s.attn_dp)]
    if s.ep > 1:
        argv += ["--ep-size", str(max(s.tp, s.ep))]
    argv += ["--max-running-requests", str(max(1, s.max_sequences)), *_opt("--context-length", s.context_length),
             "--kv-cache-dtype", kv, *_opt("--mem-fraction-static", fraction), *_weights(SGLANG, s, notes),
             *_opt("--chunked-prefill-size", s.chunk_tokens), "--enable-metrics"]
    return argv


def _trtllm(s: Launch, kv: str, fraction: float | None, notes: list[str]) -> Command:
    config: dict[str, object] = {"kv_cache_config": {"dtype": kv}}
    if s.chunk_tokens is not None:
        config["enable_chunked_prefill"] = True
    if s.attn_dp > 1:
        config["enable_attention_dp"] = True
        if s.tp > 1:
            notes.append(f"TensorRT-LLM's attention DP puts one attention rank on each GPU: the plan's attention "
                         f"TP {s.tp} x DP {s.attn_dp} runs as DP {s.tp * s.attn_dp}")
    argv = [*TRTLLM.program, s.model, "--host", "0.0.0.0", "--port", str(TRTLLM.port), "--backend", "pytorch",
            "--tp_size", str(s.tp * s.attn_dp), "--pp_size", str(s.pp)]
    if s.ep > 1:
        argv += ["--ep_size", str(max(s.tp, s.ep))]
    argv += ["--max_batch_size", str(max(1, s.max_sequences // s.attn_dp)), *_opt("--max_num_tokens", s.chunk_tokens),
             *_opt("--max_seq_len", s.context_length), *_opt("--kv_cache_free_gpu_memory_fraction", fraction),
             *_weights(TRTLLM, s, notes), "--extra_llm_api_options", TRTLLM_CONFIG]
    return Command(engine="trtllm", release=TRTLLM.release, argv=argv, port=TRTLLM.port, config_file=TRTLLM_CONFIG,
                   config=config, notes=notes)
