"""Fit of the GEMM roofline knee (``gemm_knee_exponent`` in catalog/calibration/serving.toml) to
measured GEMM latencies.

Reads aiconfigurator's TensorRT-LLM 1.3.0rc20 GEMM tables (github.com/ai-dynamo/aiconfigurator,
``aic-core/src/aiconfigurator_core/systems/data/{h100,h200,b200}_sxm/gemm/trtllm/1.3.0rc20/
gemm_perf.parquet`` at commit 095f58a, 2026-08-21; collected 2026-08-03, commit dec5f4c). Each row
is one ``tensorrt_llm._torch.modules.linear.Linear`` forward of ``m x k`` activations by an
``n x k`` weight, timed in a CUDA graph (collector/trtllm/collect_gemm.py), in ms. The fp8 rows
quantise their bf16 input dynamically inside the call; as aiconfigurator itself does for a static
scale and an fp8 input (``GemmOp::query``), the script subtracts the measured quantise kernels
(``quantize/trtllm/1.3.0rc20/{computescale,scale_matrix}_perf.parquet``) to keep the GEMM alone.

Shapes: the four linear layers of Llama 3.1 8B, 70B and 405B (QKV, output, gate-up, down) at
TP 1, 2, 4 and 8, each at the nearest collected (n, k) in log scale; m = 1..16,384 tokens. For
each, gpuplan's math time ``2 m n k / R`` and stream time ``(n k w + (m k + m n) a) / B`` (R, B:
the catalog's matmul and bandwidth rates, as in gpuplan/serving/model.py build_replica; w bytes
per weight, a = activation_bytes) and its per-kernel fixed time (``layer_latency_us /
KERNELS_PER_LAYER``) give::

    t = (math^p + stream^p)^(1/p) + fixed

The fit is least squares on the relative error over bf16 and fp8 on the three GPUs, with ``p``
shared and one compute-rate multiplier per GPU and dtype (so that the knee's shape is fitted,
not the level of the compute roof). It prints ``p`` to one decimal (the shipped constant), the
error of the shipped and of the former additive knee (``max + min (1 - 0.5 (1 - min/max))``),
by distance from the ridge, the compute-bound rate against the catalog's (the plateau check),
NVFP4 on B200 (not fitted: its small-m kernel is latency-bound along k) and, with ``--a100``,
TensorRT-LLM 1.0.0 bf16 on A100 as a held-out GPU.

Needs pandas, pyarrow and scipy (not gpuplan dependencies). Files, from a clone or mirror of
aiconfigurator (``D=aic-core/src/aiconfigurator_core/systems/data``)::

    for g in h100_sxm h200_sxm b200_sxm; do
      git show 095f58a:$D/$g/gemm/trtllm/1.3.0rc20/gemm_perf.parquet > DIR/$g.parquet
      for t in computescale scale_matrix; do
        git show 095f58a:$D/$g/quantize/trtllm/1.3.0rc20/${t}_perf.parquet > DIR/${g}_$t.parquet
      done
    done
    git show 095f58a:$D/a100_sxm/gemm/trtllm/1.0.0/gemm_perf.parquet > DIR/a100_sxm.parquet
    python benchmarks/fit_gemm.py DIR [--a100]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.planning.api import load_catalog
from gpuplan.serving.engine import KERNELS_PER_LAYER
from gpuplan.serving.model import gemm_time_s
from gpuplan.serving.weights import compute_path

GPUS = {"h100_sxm": "h100-sxm-80gb", "h200_sxm": "h200-sxm-141gb", "b200_sxm": "b200-sxm-180gb"}
#: aiconfigurator dtype -> (gpuplan precision, bytes per weight incl. NVFP4 block scales)
DTYPES = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "nvfp4": ("fp4", 0.5625)}
FITTED = ("bfloat16", "fp8")
MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b")
BANDS = (0.0, 0.1, 0.3, 0.6, 1.0, 1.7, 3.0, 10.0, np.inf)


def llama_shapes(catalog, grid: np.ndarray) -> set[tuple[int, int]]:
    """(n, k) of the Llama 3.1 linear layers at TP 1-8, each at the nearest collected shape."""
    def near(x: float) -> int:
        return int(grid[np.argmin(np.abs(np.log(grid / x)))])

    shapes = set()
    for name in MODELS:
        m = catalog.lookup("model", name)
        d = m.head_dim or m.hidden // m.heads
        qkv, attn = (m.heads + 2 * m.kv_heads) * d, m.heads * d
        for tp in (1, 2, 4, 8):
            for n, k in ((qkv / tp, m.hidden), (m.hidden, attn / tp), (2 * m.ffn / tp, m.hidden), (m.hidden, m.ffn / tp)):
                shapes.add((near(n), near(k)))
    return shapes


def load(folder: Path, names: dict[str, str], with_quantise: bool = True):
    import pandas as pd

    catalog = load_catalog()
    k = serving_constants(catalog)
    frames = []
    for name, gpu_id in names.items():
        d = pd.read_parquet(folder / f"{name}.parquet")
        d = d[d.gemm_dtype.isin(list(DTYPES)) & (d.kernel_source == "torch_flow")]
        d = d.groupby(["gemm_dtype", "m", "n", "k"], as_index=False).latency.mean()
        quantise = np.zeros(len(d))
        if with_quantise:
            for table in ("computescale", "scale_matrix"):
                q = pd.read_parquet(folder / f"{name}_{table}.parquet").groupby(["m", "k"]).latency.mean()
                quantise += np.where(d.gemm_dtype == "fp8", q.reindex(list(zip(d.m, d.k))).to_numpy(), 0.0)
        g = catalog.gpu(gpu_id)
        bw = g.mem_bw_tb_per_s * 1e12 * g.efficiency.mem_bw
        rate, bpw = {}, {}
        for dt, (precision, b) in DTYPES.items():
            path = compute_path(g, precision)
            if g.peak_tflops(path.math) is not None:
                rate[dt] = g.peak_tflops(path.math) * 1e12 * g.matmul_efficiency(path.math) * k.gemm_efficiency_vs_mamf
                bpw[dt] = b
        d = d[d.gemm_dtype.isin(list(rate))].copy()
        d["measured"] = (d.latency - quantise[d.index]) * 1e-3
        m, n, kk = (d[c].to_numpy(float) for c in ("m", "n", "k"))
        d["math"] = 2 * m * n * kk / d.gemm_dtype.map(rate).to_numpy(float)
        d["stream"] = (n * kk * d.gemm_dtype.map(bpw).to_numpy(float) + (m * kk + m * n) * k.activation_bytes) / bw
        d["gpu"] = name
        frames.append(d)
    d = pd.concat(frames, ignore_index=True)
    grid = np.array(sorted(set(d.n) & set(d.k)), dtype=float)
    shapes = llama_shapes(catalog, grid)
    keep = np.array([(a, b) in shapes for a, b in zip(d.n, d.k)]) & (d.m <= 16384).to_numpy()
    d = d[keep].reset_index(drop=True)
    d["group"] = d.gpu + " " + d.gemm_dtype
    fixed = k.layer_latency_us / KERNELS_PER_LAYER * 1e-6
    return d, fixed, k


def smooth(math: np.ndarray, stream: np.ndarray, p: float) -> np.ndarray:
    return np.array([gemm_time_s(a, b, p) for a, b in zip(math, stream)])


def additive(math: np.ndarray, stream: np.ndarray, overlap: float = 0.5) -> np.ndarray:
    """The knee gpuplan used before: ``max + min (1 - overlap (1 - min/max))``."""
    hi, lo = np.maximum(math, stream), np.minimum(math, stream)
    return hi + lo * (1 - overlap * (1 - lo / hi))


def fit(d, fixed: float):
    """Shared ``p`` and a compute-rate multiplier per GPU and dtype, least squares on relative error."""
    from scipy.optimize import least_squares

    groups = sorted(d.group.unique())
    gi = d.group.map({g: i for i, g in enumerate(groups)}).to_numpy()
    ma, st, me = d.math.to_numpy(), d.stream.to_numpy(), d.measured.to_numpy()

    def residual(th):
        p, a = th[0], th[1:][gi]
        m = ma / a
        hi, lo = np.maximum(m, st), np.minimum(m, st)
        return (hi * (1 + (lo / hi) ** p) ** (1 / p) + fixed) / me - 1

    x0 = np.r_[2.0, np.ones(len(groups))]
    lo = np.r_[1.0, np.full(len(groups), 0.5)]
    hi = np.r_[20.0, np.full(len(groups), 2.0)]
    th = least_squares(residual, x0, bounds=(lo, hi)).x
    return th[0], dict(zip(groups, th[1:]))


def errors(label: str, d, pred: np.ndarray) -> None:
    import pandas as pd

    e = pred / d.measured.to_numpy() - 1
    x = d.math / d.stream
    band = pd.cut(x, BANDS)
    by_band = pd.Series(e).groupby(band.to_numpy(), observed=True).median()
    print(f"  {label}: median |error| {np.median(np.abs(e)):.1%}, median {np.median(e):+.1%}; "
          "median by math/stream " + ", ".join(f"{iv.left:g}-{iv.right:g} {v:+.0%}" for iv, v in by_band.items()))
    for g, sub in pd.Series(e).groupby(d.group.to_numpy()):
        print(f"    {g:18s} median |error| {np.median(np.abs(sub)):.1%}, median {np.median(sub):+.1%}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--a100", action="store_true", help="also check TensorRT-LLM 1.0.0 bf16 on A100 (held out)")
    args = p.parse_args(argv)
    d, fixed, k = load(args.folder, GPUS)
    fitted = d[d.gemm_dtype.isin(FITTED)].reset_index(drop=True)
    print(f"{len(d)} measured GEMMs ({len(fitted)} bf16/fp8), {d[['n', 'k']].drop_duplicates().shape[0]} Llama shapes")
    power, plateau = fit(fitted, fixed)
    print(f"fit: gemm_knee_exponent = {power:.1f} ({power:.3f}); shipped {k.gemm_knee_exponent}")
    print("compute-bound rate / catalog rate (peak x matmul efficiency x gemm_efficiency_vs_mamf "
          f"{k.gemm_efficiency_vs_mamf}): " + ", ".join(f"{g} {v:.2f}" for g, v in plateau.items()))
    shipped = k.gemm_knee_exponent
    for label, sub in (("bf16 and fp8", fitted), ("nvfp4 (not fitted)", d[d.gemm_dtype == "nvfp4"].reset_index(drop=True))):
        print(label)
        errors("before (additive knee, overlap 0.5)", sub, additive(sub.math.to_numpy(), sub.stream.to_numpy()) + fixed)
        errors(f"shipped (p = {shipped})", sub, smooth(sub.math.to_numpy(), sub.stream.to_numpy(), shipped) + fixed)
        if label == "bf16 and fp8":
            rated = sub.math.to_numpy() / sub.group.map(plateau).to_numpy(float)
            errors("shipped knee, compute roof at the fitted rate", sub, smooth(rated, sub.stream.to_numpy(), shipped) + fixed)
    print("Llama 3.1 70B output projection (8192 x 8192) on H200 fp8, us: m measured / shipped / before")
    o = d[(d.group == "h200_sxm fp8") & (d.n == 8192) & (d.k == 8192) & d.m.isin([1, 64, 128, 256, 512, 1024, 4096])]
    for r in o.itertuples():
        print(f"  {r.m:5d} {r.measured * 1e6:7.1f} {(gemm_time_s(r.math, r.stream, shipped) + fixed) * 1e6:7.1f} "
              f"{(additive(np.array([r.math]), np.array([r.stream]))[0] + fixed) * 1e6:7.1f}")
    if args.a100:
        a, _, _ = load(args.folder, {"a100_sxm": "a100-sxm-80gb"}, with_quantise=False)
        a = a[a.gemm_dtype == "bfloat16"].reset_index(drop=True)
        print(f"A100 TensorRT-LLM 1.0.0 bf16 (held out, {len(a)} GEMMs)")
        errors("before (additive knee, overlap 0.5)", a, additive(a.math.to_numpy(), a.stream.to_numpy()) + fixed)
        errors(f"shipped (p = {shipped})", a, smooth(a.math.to_numpy(), a.stream.to_numpy(), shipped) + fixed)
    return 0 if round(power, 1) == shipped else 1


if __name__ == "__main__":
    sys.exit(main())
