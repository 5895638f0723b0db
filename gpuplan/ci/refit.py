"""Refit the training model's host-time constants to published steady-state training figures.

``python -m gpuplan.ci.refit FILE...`` (the procedure of docs/calibration.md, "Host time"):
the three constants of :func:`gpuplan.training.timing.host_overhead`, ``host_step_s`` (per
optimizer step), ``host_microbatch_s`` (per micro-batch) and ``straggler_sigma`` (the per-GPU
speed spread behind the wait for the slowest GPU), are fitted together, one set for every case,
to the steady-state figures of the given case files (``iteration_time_s``,
``model_tflops_per_gpu``, ``hardware_tflops_per_gpu``; end-to-end GPU-hours and days also carry
downtime, and memory and FLOP counts carry no time, so those are left out). The loss is that of
``gpuplan calibrate`` (:mod:`gpuplan.ci.calibrate`): the mean |ln(predicted / measured)| plus a
tie-breaking pull toward the shipped value, minimised one constant at a time (the prediction
moves in steps where the searched layout changes, so each constant is first scanned on a grid of
its bounds, then refined by golden-section search around the best grid point), three passes. With ``--holdout FILE`` the fit leaves that file out and
reports its error before and after: a check that the constants generalise.
"""

from __future__ import annotations

import argparse
import math
import sys
from gpuplan.core.records import dataclass

from gpuplan.ci.calibrate import _golden, _with_table, errors
from gpuplan.ci.validate import Case, load_cases
from gpuplan.hardware.loader import Catalog, load_catalog

#: Figures that measure the steady state (no downtime, no memory or FLOP count).
STEADY = ("iteration_time_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu")

#: (name, low, high): physical bounds. A step's host time is at most a few hundred ms (a Python
#: walk over the parameters and a handful of host synchronisations); a micro-batch's at most tens
#: of ms (a batch fetch and broadcast); the speed spread of one SKU a few percent (Sinha et al.
#: 2022: 8% range over thousands of GPUs).
PARAMS = (("host_step_s", 0.0, 0.3), ("host_microbatch_s", 0.0, 0.02), ("straggler_sigma", 0.0, 0.05))
#: Grid points per constant and pass; weight of the pull toward the shipped value (per unit of
#: |change| / upper bound): it only breaks near-ties, unlike ``gpuplan calibrate``'s.
GRID = 12
PRIOR_WEIGHT = 0.001


@dataclass(frozen=True)
class Refit:
    start: dict[str, float]
    values: dict[str, float]
    before: float  # mean |ln(pred/meas)| of the fitted figures
    after: float


def steady_cases(paths: list[str]) -> list[Case]:
    """The training cases of ``paths`` with only their steady-state figures (cases with none dropped)."""
    out = []
    for path in paths:
        for case in load_cases(path):
            keep = {k: v for k, v in case.measured.items() if k in STEADY}
            if case.kind == "training" and keep:
                out.append(case.model_copy(update={"measured": keep, "source": path}))
    return out


def _apply(cat: Catalog, values: dict[str, float]) -> Catalog:
    for name, value in values.items():
        cat = _with_table(cat, "training", name, value)
    return cat


def mean_error(cases: list[Case], cat: Catalog, values: dict[str, float]) -> float:
    errs, _ = errors(cases, _apply(cat, values))
    return sum(errs) / len(errs) if errs else 0.0


def refit(cases: list[Case], cat: Catalog, passes: int = 3) -> Refit:
    table = cat.table("training")
    start = {name: float(getattr(table, name)) for name, _, _ in PARAMS}
    values = dict(start)

    def loss(vals: dict[str, float]) -> float:
        prior = sum(abs(vals[n] - start[n]) / max(hi, 1e-12) for n, _, hi in PARAMS)
        return mean_error(cases, cat, vals) + PRIOR_WEIGHT * prior

    for _ in range(passes):
        for name, lo, hi in PARAMS:
            step = (hi - lo) / GRID
            grid = sorted({values[name], *(lo + i * step for i in range(GRID + 1))})
            scored = [(loss({**values, name: v}), v) for v in grid]
            _, best = min(scored)
            fine = _golden(lambda v, n=name: loss({**values, n: v}), max(lo, best - step), min(hi, best + step))
            values[name] = min((best, fine), key=lambda v, n=name: loss({**values, n: v}))
    return Refit(start, values, mean_error(cases, cat, start), mean_error(cases, cat, values))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpuplan.ci.refit", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="validation case files (TOML)")
    ap.add_argument("--holdout", action="append", default=[], help="a case file left out of the fit and scored")
    args = ap.parse_args(argv)
    cat = load_catalog()
    fitted = refit(steady_cases([f for f in args.files if f not in args.holdout]), cat)
    print(f"fit: mean |ln error| {fitted.before:.4f} -> {fitted.after:.4f}")
    for name, _, _ in PARAMS:
        print(f"{name} = {fitted.values[name]:.4g}  # was {fitted.start[name]:g}")
    for path in args.holdout:
        held = steady_cases([path])
        before, after = mean_error(held, cat, fitted.start), mean_error(held, cat, fitted.values)
        print(f"holdout {path}: mean |ln error| {before:.4f} -> {after:.4f} ({len(held)} cases)")
    return 0 if all(math.isfinite(v) for v in fitted.values.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
