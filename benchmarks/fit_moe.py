"""Refit of the fused-MoE constants (``[moe]`` in catalog/calibration/serving.toml) to measured data.

Reads aiconfigurator's TensorRT-LLM 1.3.0rc10 fused-MoE tables (github.com/ai-dynamo/aiconfigurator,
``aic-core/src/aiconfigurator_core/systems/data/{h100,h200,b200}_sxm/moe/trtllm/1.3.0rc10/
moe_perf.parquet``; CUTLASS kernel rows, balanced routing, bf16/fp8/nvfp4: 59,589 latencies) and
fits, by least squares on the relative error with non-negative constants, the terms that
gpuplan/serving/moe.py adds to one MoE layer beside the expert weights read and the expert GEMM
math (both at the catalog's rates, as in tests/serving/test_engine.py)::

    layer = weights / B + math / R + latency + copies x h x copy_ps + tokens x h x token_ps
            + experts touched x (expert_us + NVFP4 x expert_block_scaled_us)

``--floor`` also scans the alternative in which the per-copy work overlaps the GEMM math, the
layer taking ``max(math / R, copies x h x floor_ps)``: narrow experts sit on that floor. It prints
the fit's median error and, for the Qwen3-30B-A3B shape on B200 NVFP4, predicted/measured.

Needs pandas and pyarrow (not gpuplan dependencies)::

    python benchmarks/fit_moe.py DIR [--floor]   # DIR: the three moe_perf.parquet files, named
                                                 # h100_sxm.parquet, h200_sxm.parquet, b200_sxm.parquet
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.planning.api import load_catalog
from gpuplan.serving.weights import compute_path

GPUS = {"h100_sxm": "h100-sxm-80gb", "h200_sxm": "h200-sxm-141gb", "b200_sxm": "b200-sxm-180gb"}
#: aiconfigurator dtype -> (gpuplan precision, bytes per expert weight incl. NVFP4 block scales)
DTYPES = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "nvfp4": ("fp4", 0.5625)}
TERMS = ("layer_latency_us", "copy_ps_per_element", "token_ps_per_element", "expert_us", "expert_block_scaled_us")


def load(folder: Path):
    import pandas as pd

    catalog = load_catalog()
    k = serving_constants(catalog)
    frames = []
    for name, gpu_id in GPUS.items():
        d = pd.read_parquet(folder / f"{name}.parquet")
        d = d[(d.kernel_source == "moe_torch_flow_cutlass") & (d.distribution == "balanced")
              & d.moe_dtype.isin(list(DTYPES))].copy()
        g = catalog.gpu(gpu_id)
        d["bw"] = g.mem_bw_tb_per_s * 1e12 * g.efficiency.mem_bw
        rates = {}
        for dt, (precision, _) in DTYPES.items():
            path = compute_path(g, precision)
            rates[dt] = g.peak_tflops(path.math) * 1e12 * g.matmul_efficiency(path.math) * k.gemm_efficiency_vs_mamf
        d["rate"] = d.moe_dtype.map(rates)
        d["gpu"] = name
        frames.append(d)
    d = pd.concat(frames, ignore_index=True)
    t, e, a, h = (d[c].to_numpy(float) for c in ("num_tokens", "num_experts", "topk", "hidden_size"))
    ep = d.moe_ep_size.to_numpy(float)
    f = (d.inter_size / d.moe_tp_size).to_numpy(float)
    bpw = d.moe_dtype.map(lambda x: DTYPES[x][1]).to_numpy(float)
    fp4 = (d.moe_dtype == "nvfp4").to_numpy(float)
    touched = e * (1 - (1 - a / e) ** t) / ep
    copies = t * a / ep
    x = {
        "weights": touched * 3 * h * f * bpw / d.bw.to_numpy(float),
        "math": 6 * h * f * copies / d.rate.to_numpy(float),
        "copy_h": copies * h * 1e-12,
        "cols": np.column_stack([np.full(len(d), 1e-6), copies * h * 1e-12, t * h * 1e-12,
                                 touched * 1e-6, touched * fp4 * 1e-6]),
        "measured": d.latency.to_numpy(float) * 1e-3,
        "qwen3_30b": ((d.hidden_size == 2048) & (d.gpu == "b200_sxm") & (d.moe_dtype == "nvfp4")
                      & (d.moe_ep_size == 1) & (d.moe_tp_size == 1)).to_numpy(),
        "tokens": t,
    }
    return x


def nonneg_lstsq(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with the constants kept >= 0: drop the most negative column and refit."""
    keep = list(range(a.shape[1]))
    while True:
        th = np.zeros(a.shape[1])
        th[keep] = np.linalg.lstsq(a[:, keep], y, rcond=None)[0]
        if th.min() >= 0 or not keep:
            return th
        keep.remove(int(np.argmin(th)))


def fit(x, floor_ps: float | None):
    """Constants, relative errors and predictions for one variant (``floor_ps`` None: additive)."""
    cols = x["cols"].copy()
    if floor_ps is None:
        base = x["weights"] + x["math"]
    else:
        base = x["weights"] + np.maximum(x["math"], x["copy_h"] * floor_ps)
        cols[:, 1] = 0.0
    w = 1 / x["measured"]
    th = nonneg_lstsq(cols * w[:, None], (x["measured"] - base) * w)
    pred = base + cols @ th
    return th, np.abs(pred / x["measured"] - 1), pred


def report(x, label: str, th, err, pred) -> None:
    q = x["qwen3_30b"]
    ratios = {int(t): p / m for t, p, m in zip(x["tokens"][q], pred[q], x["measured"][q]) if t in (3072, 8192, 16384)}
    consts = ", ".join(f"{n} {v:.3g}" for n, v in zip(TERMS, th))
    print(f"{label}: {consts}; median error {np.median(err):.1%}, rms {np.sqrt(np.mean(err ** 2)):.1%}; "
          "Qwen3-30B-A3B B200 NVFP4 predicted/measured " + ", ".join(f"{t}: {r:.2f}" for t, r in ratios.items()))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--floor", action="store_true", help="also scan the max(math, copy floor) variant")
    args = p.parse_args(argv)
    x = load(args.folder)
    print(f"{len(x['measured'])} measured layers")
    report(x, "additive", *fit(x, None))
    if args.floor:
        for c in (2.0, 2.5, 3.0, 3.5, 4.0, 5.0):
            th, err, pred = fit(x, c)
            th[1] = c
            report(x, f"floor {c} ps", th, err, pred)
    return 0


if __name__ == "__main__":
    sys.exit(main())
