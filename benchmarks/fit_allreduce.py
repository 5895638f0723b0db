"""Fit of the NVSwitch all-reduce algorithms (``[all_reduce]`` in catalog/calibration/serving.toml;
the XGMI rows: benchmarks/fit_allreduce_xgmi.py).

Reads aiconfigurator's measured all-reduce latencies (github.com/ai-dynamo/aiconfigurator,
``aic-core/src/aiconfigurator_core/systems/data/{h100,h200,b200}_sxm/comm/``):

* ``nccl/2.29.2/nccl_perf.parquet``: nccl-tests ``all_reduce_perf``, fp16, 2/4/8 GPUs;
* ``trtllm/1.3.0rc10/custom_allreduce_perf.parquet``: TensorRT-LLM's AllReduce op with strategy
  AUTO inside a CUDA graph (one-shot and two-shot peer-to-peer kernels for small messages, NCCL
  above), bf16, 2/4/8 GPUs.

``message_size`` is in elements (2 bytes each). It fits, by least squares on the log of
predicted/measured, the constants of :func:`gpuplan.physics.collectives.fastest_all_reduce_s`
as fractions of each GPU's NVLink line rate (``scaleup_uni_gb_per_s`` in the catalog), one set
for the three GPUs: first NCCL's three ring protocols (LL, LL128, Simple) and NVLS on the NCCL
table, then, with those fixed, the custom one-shot and two-shot kernels on the TensorRT-LLM
table (AUTO = the fastest of all six). Messages from 1 to 16,384 tokens of up to 16,384 hidden
(up to 268M elements). It prints the constants, the error of the fit per GPU and group size,
and the error of gpuplan's previous model (ring 2(n-1)/n over the catalog's scale-up bus
bandwidth, 1.5 us a step, 5 us launch; NVLS for NCCL; 3 us less launch for custom kernels).

Needs pandas, pyarrow and scipy (not gpuplan dependencies)::

    python benchmarks/fit_allreduce.py DIR   # DIR: h100_sxm-nccl.parquet, h100_sxm-trtllm.parquet,
                                             # and the same for h200_sxm and b200_sxm
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from gpuplan.physics.collectives import AllReduceAlgorithm, algorithm_all_reduce_s
from gpuplan.planning.api import load_catalog

#: aiconfigurator system -> catalog GPU; the fit is one set of constants per NVLink generation
#: (the catalog's scaleup_tech: nvlink3 A100, nvlink4 H100/H200, nvlink5 B200/B300/GB200).
GPUS = {"a100_sxm": "a100-sxm-80gb", "h100_sxm": "h100-sxm-80gb", "h200_sxm": "h200-sxm-141gb",
        "b200_sxm": "b200-sxm-180gb", "b300_sxm": "b300-sxm-288gb", "gb200": "gb200-nvl72"}
MAX_ELEMENTS = 16384 * 16384
#: (name, kind) of each fitted algorithm; each has base_us, step_us and a line-rate fraction.
NCCL = (("nccl_ll", "ring"), ("nccl_ll128", "ring"), ("nccl_simple", "ring"), ("nccl_nvls", "in_network"))
CUSTOM = (("custom_one_shot", "one_shot"), ("custom_two_shot", "two_shot"))
START = {"nccl_ll": (4.0, 0.5, 0.25), "nccl_ll128": (8.0, 0.8, 0.6), "nccl_simple": (25.0, 2.0, 0.8),
         "nccl_nvls": (20.0, 2.0, 0.6), "custom_one_shot": (2.5, 0.1, 0.6), "custom_two_shot": (4.0, 0.2, 0.5)}
#: Bounds (base_us, step_us, fraction): NCCL's LL protocol sends 4 bytes of data per 8-byte store
#: (at most half the line rate) and LL128 120 of 128 bytes; Simple has the longest fixed latency.
LOW = {"nccl_ll128": (2.0, 0.0, 0.01), "nccl_simple": (10.0, 0.0, 0.01)}
HIGH = {"nccl_ll": (15.0, 5.0, 0.5), "nccl_ll128": (40.0, 5.0, 0.94)}


def load(folder: Path, tech: str):
    import pandas as pd

    catalog = load_catalog()
    rows = []
    for name, gpu_id in GPUS.items():
        gpu = catalog.gpu(gpu_id)
        if gpu.scaleup_tech != tech:
            continue
        line = gpu.scaleup_uni_gb_per_s * 1e9
        nvls = gpu.efficiency.scaleup_in_network_reduction
        n = pd.read_parquet(folder / f"{name}-nccl.parquet")
        n = n[(n.op_name == "all_reduce") & (n.nccl_dtype == "half")]
        t = pd.read_parquet(folder / f"{name}-trtllm.parquet")
        for table, d in (("nccl", n), ("trtllm", t)):
            d = d[d.message_size <= MAX_ELEMENTS]
            for r in d.itertuples():
                rows.append((table, name, int(r.num_gpus), float(r.message_size) * 2, float(r.latency) * 1e-3,
                             line, nvls, gpu.efficiency.scaleup_busbw))
    return rows


def algorithms(theta: np.ndarray, names, line: float, nvls: bool) -> list[AllReduceAlgorithm]:
    out = []
    for i, (name, kind) in enumerate(names):
        base, step, frac = theta[3 * i: 3 * i + 3]
        if kind == "in_network" and not nvls:
            continue
        out.append(AllReduceAlgorithm(kind, base * 1e-6, step * 1e-6, frac * line))
    return out


def predict(rows, theta_nccl, theta_custom=None) -> np.ndarray:
    pred = []
    for table, _, n, size, _, line, nvls, _ in rows:
        algs = algorithms(theta_nccl, NCCL, line, nvls)
        if theta_custom is not None and table == "trtllm":
            algs += algorithms(theta_custom, CUSTOM, line, nvls)
        pred.append(min(algorithm_all_reduce_s(size, n, a) for a in algs))
    return np.array(pred)


def previous(rows) -> np.ndarray:
    """gpuplan before this fit: ring (and NVLS for NCCL) over line x scaleup_busbw, 1.5 us steps, 5 us launch."""
    pred = []
    for table, _, n, size, _, line, nvls, busbw in rows:
        bw = line * busbw
        ring = 2 * (n - 1) / n * size / bw + 2 * (n - 1) * 1.5e-6
        t = ring if table == "trtllm" or not nvls or n <= 2 else min(ring, size / bw + 3e-6)
        pred.append(t + (2e-6 if table == "trtllm" else 5e-6))
    return np.array(pred)


def fit(rows, names, fixed=None):
    from scipy.optimize import least_squares

    sel = [r for r in rows if r[0] == ("nccl" if fixed is None else "trtllm")]
    meas = np.array([r[4] for r in sel])
    x0 = np.array([v for name, _ in names for v in START[name]])
    lo = np.array([v for name, _ in names for v in LOW.get(name, (0.0, 0.0, 0.01))])
    hi = np.array([v for name, _ in names for v in HIGH.get(name, (200.0, 20.0, 1.0))])
    x0 = np.clip(x0, lo, hi - 1e-9)

    def resid(th):
        p = predict(sel, th) if fixed is None else predict(sel, fixed, th)
        return np.log(p / meas)

    best = least_squares(resid, x0, bounds=(lo, hi), loss="soft_l1", f_scale=0.05)
    return best.x


def report(rows, label: str, pred: np.ndarray) -> None:
    print(f"\n{label}: |predicted/measured - 1| median by table, GPU and group size (max in brackets)")
    for table in ("nccl", "trtllm"):
        parts = []
        for gpu in GPUS:
            for n in (2, 4, 8):
                idx = [i for i, r in enumerate(rows) if r[0] == table and r[1] == gpu and r[2] == n]
                if not idx:
                    continue
                err = np.abs(pred[idx] / np.array([rows[i][4] for i in idx]) - 1)
                parts.append(f"{gpu[:4]} tp{n} {np.median(err):.0%} ({err.max():.0%})")
        allerr = np.abs(pred / np.array([r[4] for r in rows]) - 1)[[r[0] == table for r in rows]]
        print(f"  {table:6s} median {np.median(allerr):.1%}: " + ", ".join(parts))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    args = p.parse_args(argv)
    for tech in ("nvlink3", "nvlink4", "nvlink5"):
        rows = load(args.folder, tech)
        print(f"\n=== {tech}: {len(rows)} measured all-reduces")
        nccl = fit(rows, NCCL)
        custom = fit(rows, CUSTOM, fixed=nccl)
        nvls = any(r[6] for r in rows)
        for names, th in ((NCCL, nccl), (CUSTOM, custom)):
            for i, (name, kind) in enumerate(names):
                if kind == "in_network" and not nvls:
                    continue  # no switch reduction on this generation: not fitted
                base, step, frac = th[3 * i: 3 * i + 3]
                print(f'{{ scaleup_tech = "{tech}", kind = "{kind}", custom = {str(name.startswith("custom")).lower()}, '
                      f"base_us = {base:.2f}, step_us = {step:.2f}, line_fraction = {frac:.3f} }},  # {name}")
        report(rows, "previous model", previous(rows))
        report(rows, "fitted", predict(rows, nccl, custom))
    return 0


if __name__ == "__main__":
    sys.exit(main())
