"""Fit of the AMD Infinity Fabric (XGMI) all-reduce rows of ``[all_reduce]`` in catalog/calibration/serving.toml.

The NVSwitch rows come from aiconfigurator's tables (benchmarks/fit_allreduce.py); no such table
exists for AMD, so this fits the same per-algorithm form (:func:`gpuplan.physics.collectives.
algorithm_all_reduce_s`) to the published per-size tables below, typed in from their sources:

* RCCL: Microsoft's Azure AI-benchmarking-guide, ND MI300X v5 (ROCm 6.2, RCCL 2.22.3-develop),
  rccl-tests all_reduce on 8 GPUs, in-place bus bandwidth from 1 KiB to 8 GiB
  (Azure_Results/ND_MI300X_v5_results.md at commit bf209abb of 2025-03-27, read in the fork
  samuel-bohman/AI-benchmarking-guide). Time = S x 2(n-1)/n / busbw (nccl-tests PERFORMANCE.md).
* vLLM's custom all-reduce on ROCm (csrc/custom_all_reduce.cuh built with HIP; vLLM enables it on
  MI300-class GPUs from pull request #14125, 2025-03): two published kernel tables,
  - ROCm/aiter pull request #801 ("add quick allreduce", 2025-07), 2 GPUs, fp16, column "vllm cr",
    4 KiB to 512 MiB (MI300-class: the author's vLLM pull request #19744 enables QuickReduce on
    MI300 only);
  - vllm-project/vllm pull request #39080 ("[ROCM] Optimize all-reduce performances", 2026-04-06),
    MI355X, 8 GPUs, bf16 hidden 3072, column "vllm/us" (the kernel before that pull request),
    4 to 256 tokens (24 KiB to 1.5 MiB).

The bandwidth term is a fraction of the GPU's XGMI line rate as the group sees it: XGMI is a full
mesh of point-to-point links, so a group of g GPUs uses g-1 links of ``scaleup_p2p_uni_gb_per_s``
each, at most ``scaleup_uni_gb_per_s`` (:meth:`gpuplan.serving.links.Links.all_reduce_s`).
The RCCL table has 8 GPUs only, so its fixed latency cannot be split into a per-step part: the
RCCL rows carry it all in ``base_us`` (step_us = 0), and smaller groups pay the same.

Needs numpy and scipy (not gpuplan dependencies)::

    python benchmarks/fit_allreduce_xgmi.py
"""

from __future__ import annotations

import sys
from functools import lru_cache

import numpy as np

from gpuplan.physics.collectives import AllReduceAlgorithm, algorithm_all_reduce_s
from gpuplan.planning.api import load_catalog

#: Azure ND MI300X v5, rccl-tests all_reduce in place, 8 GPUs: busbw GB/s at 2**10 ... 2**33 bytes.
AZURE_BUSBW = (0.04, 0.07, 0.15, 0.29, 0.59, 1.13, 2.22, 4.18, 7.50, 13.01, 22.41, 43.41, 82.53, 131.57,
               171.46, 230.35, 266.34, 290.81, 302.80, 308.89, 313.92, 315.06, 314.85, 316.82)
#: ROCm/aiter #801, 2 GPUs, fp16, vLLM custom all-reduce (us) at 4 KiB ... 512 MiB (powers of 2).
AITER_TP2_VLLM_US = (7.07, 7.58, 7.53, 7.30, 7.66, 8.70, 11.45, 17.13, 28.15, 49.67, 93.79, 181.43, 355.91,
                     703.69, 1398.17, 2787.55, 5568.08, 11126.36)
#: vllm-project/vllm #39080, MI355X, 8 GPUs, bf16 x 3072 hidden, vLLM custom all-reduce (us) by tokens.
VLLM_MI355X_TP8_US = {4: 6.3, 8: 6.7, 16: 7.6, 32: 10.0, 64: 13.1, 128: 16.0, 256: 24.2}
#: Serving messages reach 16,384 tokens x 16,384 hidden x 2 bytes (the NVSwitch fit's range).
MAX_BYTES = 16384 * 16384 * 2

RCCL = (("rccl_ll", "ring"), ("rccl_simple", "ring"))
CUSTOM = (("custom_one_shot", "one_shot"), ("custom_two_shot", "two_shot"))
START = {"rccl_ll": (45.0, 0.0, 0.05), "rccl_simple": (80.0, 0.0, 0.7),
         "custom_one_shot": (6.0, 0.1, 0.3), "custom_two_shot": (7.0, 0.1, 0.7)}
#: RCCL: 8 GPUs only, no per-step latency (see above). Fractions at most 1 of the line.
HIGH = {"rccl_ll": (200.0, 1e-9, 1.0), "rccl_simple": (200.0, 1e-9, 1.0)}


def rows():
    """(table, gpu id, group, bytes, measured s) of every published point within the serving range."""
    out = []
    for i, bw in enumerate(AZURE_BUSBW):
        size = 2.0 ** (10 + i)
        if size <= MAX_BYTES:
            out.append(("rccl", "mi300x-oam-192gb", 8, size, size * 2 * 7 / 8 / (bw * 1e9)))
    for i, us in enumerate(AITER_TP2_VLLM_US):
        out.append(("custom", "mi300x-oam-192gb", 2, 2.0 ** (12 + i), us * 1e-6))
    for tokens, us in VLLM_MI355X_TP8_US.items():
        out.append(("custom", "mi355x-oam-288gb", 8, tokens * 3072 * 2.0, us * 1e-6))
    return out


@lru_cache(maxsize=None)
def line_bytes_per_s(gpu_id: str, group: int) -> float:
    """The XGMI line rate a group of ``group`` GPUs reaches: g-1 peer links, at most the aggregate."""
    gpu = load_catalog().gpu(gpu_id)
    return min(gpu.scaleup_uni_gb_per_s, gpu.scaleup_p2p_uni_gb_per_s * (group - 1)) * 1e9


def predict(data, theta, names) -> np.ndarray:
    out = []
    for _, gpu, n, size, _ in data:
        line = line_bytes_per_s(gpu, n)
        algs = [AllReduceAlgorithm(kind, theta[3 * i] * 1e-6, theta[3 * i + 1] * 1e-6, theta[3 * i + 2] * line)
                for i, (_, kind) in enumerate(names)]
        out.append(min(algorithm_all_reduce_s(size, n, a) for a in algs))
    return np.array(out)


def fit(data, names):
    from scipy.optimize import least_squares

    meas = np.array([r[4] for r in data])
    x0 = np.array([v for name, _ in names for v in START[name]])
    lo = np.zeros_like(x0) + np.array([0.0, 0.0, 0.01] * len(names))
    hi = np.array([v for name, _ in names for v in HIGH.get(name, (200.0, 20.0, 1.0))])
    x0 = np.clip(x0, lo, hi - 1e-12)
    best = least_squares(lambda th: np.log(predict(data, th, names) / meas), x0, bounds=(lo, hi),
                         loss="soft_l1", f_scale=0.05)
    return best.x


def previous(data) -> np.ndarray:
    """gpuplan before this fit: ring over line x 0.70 busbw, 1.5 us a step, 5 us launch (3 us less custom)."""
    out = []
    for table, gpu, n, size, _ in data:
        bw = line_bytes_per_s(gpu, n) * 0.70
        t = 2 * (n - 1) / n * size / bw + 2 * (n - 1) * 1.5e-6 + 5e-6
        out.append(t - (3e-6 if table == "custom" else 0.0))
    return np.array(out)


def main() -> int:
    data = rows()
    for table, names in (("rccl", RCCL), ("custom", CUSTOM)):
        sel = [r for r in data if r[0] == table]
        th = fit(sel, names)
        for i, (name, kind) in enumerate(names):
            base, step, frac = th[3 * i: 3 * i + 3]
            print(f'{{ scaleup_tech = "xgmi", kind = "{kind}", custom = {str(table == "custom").lower()}, '
                  f"base_us = {base:.2f}, step_us = {step:.2f}, line_fraction = {frac:.3f} }},  # {name}")
        meas = np.array([r[4] for r in sel])
        for label, pred in (("previous", previous(sel)), ("fitted", predict(sel, th, names))):
            err = np.abs(pred / meas - 1)
            print(f"  {table} {label}: median |error| {np.median(err):.1%}, max {err.max():.0%}")
        fitted = predict(sel, th, names)
        for r, p, q in zip(sel, fitted, previous(sel)):
            print(f"    {r[1][:6]} n={r[2]} {r[3]:>12.0f} B  measured {r[4] * 1e6:9.1f} us  fitted {p * 1e6:9.1f}"
                  f"  previous {q * 1e6:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
