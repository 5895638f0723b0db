"""Read measurements for ``gpuplan calibrate``: validation cases and benchmark tool outputs.

Formats (docs/calibration.md), recognised by content, not by file name:
- validation case TOML (``[[case]]``, shared/validation/README.md): used as they are;
- ``trtllm-bench throughput`` report (the "key: value" lines it prints);
- vLLM ``vllm bench serve`` / ``benchmark_serving.py --save-result`` JSON, SGLang ``bench_serving
  --output-file`` JSON lines (one record per run);
- ``nccl-tests`` stdout (``all_reduce_perf``): the largest message's out-of-place bus bandwidth;
- Megatron-LM / NeMo training logs: ``elapsed time per iteration (ms)`` or ``train_step_timing in s``
  lines (median after the first), with Megatron's arguments block when the log has it.

What a tool output does not say (the GPU, the model preset, a layout field) comes from the
command line (``--gpu``, ``--model``, ``--set key=value``); a missing field is an error naming it.
"""

from __future__ import annotations

import json
import re
import statistics
from gpuplan.core.records import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuplan.ci.validate import Case, load_cases
from gpuplan.core.errors import InputError
from gpuplan.core.io import parse_toml, pydantic_error, read_text


@dataclass(frozen=True)
class BusBandwidth:
    """One nccl-tests run: bus bandwidth in GB/s over ``ranks`` GPUs on ``nodes`` servers."""

    file: str
    gpu: str
    busbw_gb_per_s: float
    ranks: int
    nodes: int


@dataclass
class Measurements:
    cases: list[Case] = field(default_factory=list)
    busbw: list[BusBandwidth] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Context:
    """What the command line adds to a tool output: GPU id, model preset, run fields."""

    gpu: str | None = None
    model: str | None = None
    run: dict[str, Any] = field(default_factory=dict)


def read_measurements(paths: list[str], ctx: Context) -> Measurements:
    out = Measurements()
    for path in paths:
        text = read_text(path)
        out.files.append(path)
        kind = detect(text)
        if kind == "cases":
            out.cases += load_cases(path)
        elif kind == "nccl":
            out.busbw.append(parse_nccl(text, path, ctx))
        elif kind == "trtllm":
            out.cases.append(parse_trtllm(text, path, ctx))
        elif kind == "bench-json":
            out.cases += parse_bench_json(text, path, ctx)
        elif kind == "megatron":
            out.cases.append(parse_training_log(text, path, ctx))
        else:
            raise InputError("not a measurement file gpuplan reads (validation cases, trtllm-bench, vLLM or SGLang "
                             "bench JSON, nccl-tests, Megatron/NeMo log); see docs/calibration.md", file=path)
    return out


def detect(text: str) -> str:
    head = text.lstrip()[:1]
    if "[[case]]" in text:
        return "cases"
    if "nccl-tests" in text or re.search(r"#\s+size\s+count\s+type", text) or "Avg bus bandwidth" in text:
        return "nccl"
    if head == "{" and "output_throughput" in text:
        return "bench-json"
    if re.search(r"elapsed time per iteration \(ms\)|train_step_timing in s", text):
        return "megatron"
    if re.search(r"Total Output Throughput|Per GPU Output Throughput", text, re.I):
        return "trtllm"
    return "unknown"


def _need(value: Any, what: str, file: str, flag: str) -> Any:
    if value is None:
        raise InputError(f"{what} is not in the file: give {flag}", file=file)
    return value


def _case(file: str, index: int, kind: str, ctx: Context, run: dict[str, Any], measured: dict[str, float],
          model: dict[str, Any] | None = None) -> Case:
    run = {**run, **ctx.run}
    if ctx.gpu:
        run["gpu"] = ctx.gpu
    _need(run.get("gpu"), "the GPU", file, "--gpu")
    if ctx.model:
        model = {"preset": ctx.model}
    _need(model, "the model", file, "--model PRESET")
    measured = {k: v for k, v in measured.items() if v is not None and v > 0}
    if not measured:
        raise InputError("no measured figure in the file", file=file)
    try:
        return Case.model_validate({"id": f"{Path(file).name}#{index}", "kind": kind, "source": file,
                                    "tolerance": 0.25, "model": model, "run": run, "measured": measured})
    except ValidationError as exc:
        raise pydantic_error(exc, file=file, prefix=f"case[{Path(file).name}#{index}]") from None


def _number(pattern: str, text: str) -> float | None:
    m = re.search(pattern + r"\s*[:=]\s*([-+0-9.eE]+)", text, re.I)
    return float(m.group(1)) if m else None


def parse_trtllm(text: str, file: str, ctx: Context) -> Case:
    """``trtllm-bench throughput``: TP/PP size, average input/output length, total output
    throughput and, when printed, the average TTFT and TPOT of the streaming run."""
    tp, pp = _number(r"TP Size", text), _number(r"PP Size", text)
    avg = re.search(r"^AVG:\s+([0-9.]+)\s+([0-9.]+)", text, re.M)  # the dataset percentile table
    isl = _number(r"Average Input Length \(tokens\)", text) or (float(avg.group(1)) if avg else None)
    osl = _number(r"Average Output Length \(tokens\)", text) or (float(avg.group(2)) if avg else None)
    isl = ctx.run.get("prompt_tokens") or _need(isl, "the average input length", file, "--set prompt_tokens=N")
    osl = ctx.run.get("output_tokens") or _need(osl, "the average output length", file, "--set output_tokens=N")
    quant = re.search(r"Quantization\s*:\s*(\w+)", text, re.I)
    run: dict[str, Any] = {"engine": "trtllm", "tp": int(tp or 1), "pp": int(pp or 1), "scenario": "offline",
                           "prompt_tokens": int(round(isl)), "output_tokens": int(round(osl))}
    if quant and quant.group(1).lower() in ("fp8", "fp4", "int8", "int4"):
        run["precision"] = quant.group(1).lower()
    measured = {"output_tokens_per_s": _number(r"Total Output Throughput \((?:tokens/sec|tps)\)", text)}
    return _case(file, 0, "serving", ctx, run, measured)  # type: ignore[arg-type]


def parse_bench_json(text: str, file: str, ctx: Context) -> list[Case]:
    """vLLM (one JSON object) or SGLang (JSON lines) serving benchmark results: a closed loop at
    ``max_concurrency`` is a batch of that size; TTFT is kept at concurrency 1 only (above it,
    queueing the model does not describe enters it)."""
    records = []
    for line in ([text] if text.lstrip().startswith("{") and text.strip().count("\n{") == 0 else text.splitlines()):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError:
                raise InputError("not valid JSON (vLLM writes one object, SGLang one per line)", file=file) from None
    cases = []
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            raise InputError(f"record {i} is not a JSON object", file=file)
        backend = str(r.get("backend", "vllm")).lower()
        engine = "sglang" if backend.startswith("sglang") else "vllm"
        done = _positive(r, "completed", file)
        conc = r.get("max_concurrency")
        if conc is not None and (not isinstance(conc, int) or isinstance(conc, bool) or conc < 1):
            raise InputError(f"record {i}: max_concurrency must be a whole number >= 1", file=file)
        run: dict[str, Any] = {"engine": engine,
                               "prompt_tokens": max(1, int(round(_positive(r, "total_input_tokens", file) / done))),
                               "output_tokens": max(1, int(round(_positive(r, "total_output_tokens", file) / done)))}
        if conc:
            run["batch"] = int(conc)
        else:
            run["scenario"] = "offline"
        measured = {"output_tokens_per_s": r.get("output_throughput"), "tpot_ms": r.get("mean_tpot_ms") if conc else None}
        if conc == 1:
            measured["ttft_ms"] = r.get("mean_ttft_ms")
        cases.append(_case(file, i, "serving", ctx, run, _rates(measured, file)))
    return cases


def _positive(record: dict[str, Any], key: str, file: str) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise InputError(f"{key} must be a number > 0, got {str(value)[:40]!r}", file=file)
    return float(value)


def _rates(measured: dict[str, Any], file: str) -> dict[str, float]:
    out = {}
    for key, value in measured.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            raise InputError(f"{key} must be a number > 0, got {str(value)[:40]!r}", file=file)
        out[key] = float(value)
    return out


#: Megatron arguments (the block it prints at start) -> validation case fields.
_RUN_ARGS = {"tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp", "context_parallel_size": "cp",
             "expert_model_parallel_size": "ep", "seq_length": "sequence_length", "global_batch_size":
             "global_batch_sequences", "micro_batch_size": "micro_batch", "world_size": "gpus"}
_ARCH_ARGS = {"num_layers": "layers", "hidden_size": "hidden", "num_attention_heads": "heads",
              "num_query_groups": "kv_heads", "ffn_hidden_size": "ffn", "padded_vocab_size": "vocab"}


def parse_training_log(text: str, file: str, ctx: Context) -> Case:
    """Megatron-LM (``elapsed time per iteration (ms)``) or NeMo (``train_step_timing in s``)."""
    times = [float(m) / 1000 for m in re.findall(r"elapsed time per iteration \(ms\):\s*([0-9.]+)", text)]
    times += [float(m) for m in re.findall(r"train_step_timing in s:\s*([0-9.]+)", text)]
    if len(times) < 2:
        raise InputError("fewer than two iteration-time lines (the first one includes warm-up)", file=file)
    args = dict(re.findall(r"^\s*(\w+)\s\.{3,}\s(\S+)\s*$", text, re.M))
    run: dict[str, Any] = {"framework": "megatron-core"}
    for arg, key in _RUN_ARGS.items():
        if args.get(arg, "None") not in ("None", "null"):
            run[key] = int(args[arg])
    gbs = re.findall(r"global[_ ]batch[_ ]size:?\s*([0-9]+)", text)
    if gbs and "global_batch_sequences" not in run:
        run["global_batch_sequences"] = int(gbs[-1])
    if args.get("fp8", "None") not in ("None", "False"):
        run["precision"] = "fp8"
    elif args.get("fp16") == "True":
        run["precision"] = "fp16"
    if args.get("sequence_parallel") in ("True", "False"):
        run["sequence_parallel"] = args["sequence_parallel"] == "True"
    if args.get("recompute_granularity", "None") in ("full", "selective"):
        run["recompute"] = args["recompute_granularity"]
    elif "recompute_granularity" in args:
        run["recompute"] = "none"
    model = None
    if all(a in args for a in ("num_layers", "hidden_size", "num_attention_heads")):
        model = {k: int(args[a]) for a, k in _ARCH_ARGS.items() if args.get(a, "None") not in ("None",)}
        model["gated_mlp"] = args.get("swiglu") == "True"
    return _case(file, 0, "training", ctx, run, {"iteration_time_s": statistics.median(times[1:])}, model)


def parse_nccl(text: str, file: str, ctx: Context) -> BusBandwidth:
    """``all_reduce_perf`` output: ranks and hosts from the device lines, bus bandwidth of the
    largest message (out-of-place column)."""
    ranks = re.findall(r"#\s+Rank\s+\d+\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)", text)
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 8 and not line.lstrip().startswith("#") and parts[0].isdigit():
            try:
                size, bus = int(parts[0]), float(parts[7])
            except ValueError:
                continue
            if 0 < bus < float("inf"):
                rows.append((size, bus))
    if not rows:
        raise InputError("no result rows (size count type redop root time algbw busbw ...)", file=file)
    gpu = _need(ctx.gpu, "the GPU", file, "--gpu")
    return BusBandwidth(file=file, gpu=gpu, busbw_gb_per_s=max(rows)[1], ranks=len(ranks) or 8,
                        nodes=len(set(ranks)) or 1)


def parse_set(values: list[str]) -> dict[str, Any]:
    """``--set key=value`` (TOML values: ``tp=8``, ``precision="fp8"`` or ``precision=fp8``)."""
    out: dict[str, Any] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[a-z_]+", key.strip()):
            raise InputError(f"expected key=value, got {item!r}", field="--set")
        try:
            out[key.strip()] = parse_toml(f"v = {value.strip()}", "--set")["v"]
        except InputError:
            out[key.strip()] = value.strip()
    return out
