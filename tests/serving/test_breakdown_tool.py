"""benchmarks/breakdown_case.py splits the steps behind a validation case into what the model adds up:
its parts must add up to the step, and its steps to the figure the harness predicts."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from gpuplan.ci.validate import packaged_files, validate_files

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("breakdown_case", ROOT / "benchmarks" / "breakdown_case.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(out: str) -> list[dict[str, float]]:
    rows = []
    for line in out.splitlines():
        pairs = re.findall(r"([a-z_]+) +(-?[0-9.]+)", line.split("  ", 2)[-1]) if "total" in line else []
        if pairs:
            rows.append({k: float(v) for k, v in pairs})
    return rows


def test_first_token_breakdown_adds_up_to_the_prediction(capsys, catalog):
    # TensorRT-LLM 0.5, Llama 2 70B on 4 A100, one 128-token prompt: 47 ms measured (performance.md).
    path = packaged_files(("serving",))["<packaged>/serving.toml"]
    case = "trtllm-0.5-llama-70b-a100-tp4-ttft-128"
    assert _tool().main([path, case]) == 0
    rows = _rows(capsys.readouterr().out)
    prefill = rows[0]
    parts = ("gemm", "attention", "comm", "fixed", "launch_wait", "host_wait")
    assert abs(sum(prefill[p] for p in parts) - prefill["total"]) < 2e-3
    rep = validate_files([path], catalog)
    predicted = next(f.predicted for c in rep.cases if c.id == case for f in c.figures)
    assert abs(prefill["total"] - predicted) < 1e-3
    assert prefill["gemm"] > prefill["comm"] > prefill["fixed"] > prefill["attention"]
