"""``gpuplan calibrate``: fit per-GPU efficiency figures to your own measurements.

Fitted, each within physical bounds (docs/calibration.md):
- ``efficiency.matmul_<dtype>`` of each measured GPU (the compute dtypes its cases run): 0.2-0.99
  of the datasheet peak;
- ``efficiency.mem_bw`` (serving cases): 0.3-0.98 of the HBM spec; a GPU's decode-attention
  rate ``efficiency.attention_mem_bw``, where it has one, moves with it in proportion;
- ``efficiency.scaleup_busbw`` from single-server nccl-tests, and the scale-out fabric's
  ``efficiency`` from multi-server ones (bus bandwidth over the link rate, at most 1);
- the fixed per-layer costs: ``serving.layer_latency_us`` (0-100 us) and
  ``training.kernel_gap_us`` (0-30 us), only with at least four points of that phase.

The loss is the mean absolute log error over every measured time or rate, plus a small pull
toward the shipped value (a figure the measurements do not inform stays put); it is minimised
one figure at a time by golden-section search, three passes. The result is a catalog overlay
(``--catalog DIR``) whose source is the measurements, dated.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from gpuplan.core.records import dataclass
from datetime import date as _date
from pathlib import Path
from typing import Callable

from gpuplan.ci.measurements import Measurements
from gpuplan.ci.validate import Case, run_case
from gpuplan.core.errors import InputError
from gpuplan.core.io import write_atomic
from gpuplan.hardware.intervals import residual
from gpuplan.hardware.loader import Catalog

#: A measurement set is contradictory when the same run is measured this far apart (ratio).
CONTRADICTION_RATIO = 1.25
#: Weight of the pull toward the shipped value, per unit of |log(value / shipped)|.
PRIOR_WEIGHT = 0.02
#: Points of a phase below which its fixed per-layer cost is not fitted.
MIN_POINTS_FIXED = 4
#: The highest fitted fraction of the HBM spec a memory read reaches (refresh, ECC and page
#: turns keep every measured kernel below it; docs/calibration.md).
MEMORY_CEILING = 0.98


@dataclass(frozen=True)
class Param:
    name: str
    low: float
    high: float
    start: float
    apply: Callable[[Catalog, float], Catalog]
    log: bool = True


@dataclass(frozen=True)
class Fit:
    values: dict[str, float]
    start: dict[str, float]
    before: list[float]
    after: list[float]
    notes: list[str]
    catalog: Catalog

    @property
    def median_before(self) -> float:
        return _median(self.before)

    @property
    def median_after(self) -> float:
        return _median(self.after)


def _median(values: list[float]) -> float:
    v = sorted(values)
    if not v:
        return 0.0
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def _with_eff(cat: Catalog, gpu_id: str, field: str, value: float) -> Catalog:
    gpu = cat.gpus[gpu_id]
    eff = gpu.efficiency.model_copy(update={field: value})
    return replace(cat, gpus={**cat.gpus, gpu_id: gpu.model_copy(update={"efficiency": eff})})


def _with_memory(cat: Catalog, gpu_id: str, mem_bw: float) -> Catalog:
    """The GPU's memory read rates fitted as one: ``mem_bw`` set, and a decode-attention rate
    (``attention_mem_bw``, where the catalog measured one apart) moved in the same proportion,
    within the same 0.98 of spec. Serving measurements time whole steps, which read both the
    weights and the KV cache: they cannot tell the two apart, only scale them together."""
    gpu = cat.gpus[gpu_id]
    shipped = gpu.efficiency
    cat = _with_eff(cat, gpu_id, "mem_bw", mem_bw)
    if shipped.attention_mem_bw is None:
        return cat
    attention = min(MEMORY_CEILING, shipped.attention_mem_bw * mem_bw / shipped.mem_bw)
    return _with_eff(cat, gpu_id, "attention_mem_bw", attention)


def _with_table(cat: Catalog, table: str, field: str, value: float) -> Catalog:
    return replace(cat, tables={**cat.tables, table: cat.tables[table].model_copy(update={field: value})})


def _dtype(case: Case) -> str:
    p = str(case.run.get("precision", "bf16"))
    return {"fp16": "bf16", "bf16": "bf16", "int8": "fp8", "fp8": "fp8", "fp4": "fp4", "int4": "fp4"}.get(p, "bf16")


def errors(cases: list[Case], cat: Catalog, *, relative: bool = False) -> tuple[list[float], list[str]]:
    """|ln(predicted / measured)| of every measured time or rate (``relative``: |predicted -
    measured| / measured, as ``gpuplan validate`` reports it), and the cases not modelled."""
    out, skipped = [], []
    for case in cases:
        res = run_case(case, str(case.source), cat)
        if res.status == "error":
            raise InputError(res.message)  # already names the file and the field
        if res.status == "not_modelled":
            skipped.append(f"{case.id}: {res.message}")
            continue
        for f in res.figures:
            r = residual(f.name, f.measured, f.predicted) if f.predicted is not None else None
            if r is not None:
                out.append(f.error if relative and f.error is not None else abs(r))
    return out, skipped


def check_consistent(meas: Measurements) -> None:
    """Refuse (one line) when the same run is measured with figures too far apart."""
    seen: dict[str, tuple[str, float]] = {}
    for case in meas.cases:
        run = json.dumps({"kind": case.kind, "model": case.model.model_dump() if case.model else None,
                          "run": case.run}, sort_keys=True, default=str)
        for name, value in case.measured.items():
            key = run + name
            if key in seen and value > 0 and seen[key][1] > 0:
                other, v = seen[key]
                if max(v, value) / min(v, value) > CONTRADICTION_RATIO:
                    raise InputError(f"contradictory measurements: {other} and {case.id} measure the same run's "
                                     f"{name} {max(v, value) / min(v, value) - 1:.0%} apart; drop one or say what "
                                     "differs", field="MEASUREMENTS")
            seen.setdefault(key, (case.id, value))
    bus: dict[tuple[str, bool], tuple[str, float]] = {}
    for b in meas.busbw:
        key = (b.gpu, b.nodes > 1)
        if key in bus and max(bus[key][1], b.busbw_gb_per_s) / min(bus[key][1], b.busbw_gb_per_s) > CONTRADICTION_RATIO:
            raise InputError(f"contradictory measurements: {bus[key][0]} and {b.file} measure the bus bandwidth of "
                             f"the same network {bus[key][1]:g} and {b.busbw_gb_per_s:g} GB/s", field="MEASUREMENTS")
        bus.setdefault(key, (b.file, b.busbw_gb_per_s))


def case_params(cases: list[Case], cat: Catalog, points: dict[str, int]) -> list[Param]:
    params: list[Param] = []
    gpus: dict[str, set[str]] = {}
    for case in cases:
        gid = cat.gpu(str(case.run["gpu"])).id
        gpus.setdefault(gid, set()).add(_dtype(case))
        if case.kind == "serving":
            gpus[gid].add("mem_bw")
    for gid, needs in sorted(gpus.items()):
        gpu = cat.gpus[gid]
        for need in sorted(needs):
            if need == "mem_bw":
                params.append(Param(f"{gid}.mem_bw", 0.3, MEMORY_CEILING, gpu.efficiency.mem_bw,
                                    lambda c, v, g=gid: _with_memory(c, g, v)))
            elif gpu.peak_tflops(need) is not None:
                field = f"matmul_{need}"
                params.append(Param(f"{gid}.{field}", 0.2, 0.99, gpu.matmul_efficiency(need),
                                    lambda c, v, g=gid, f=field: _with_eff(c, g, f, v)))
    if points.get("serving", 0) >= MIN_POINTS_FIXED:
        k = cat.table("serving").layer_latency_us
        params.append(Param("serving.layer_latency_us", 0.0, 100.0, k,
                            lambda c, v: _with_table(c, "serving", "layer_latency_us", v), log=False))
    if points.get("training", 0) >= MIN_POINTS_FIXED:
        k = cat.table("training").kernel_gap_us
        params.append(Param("training.kernel_gap_us", 0.0, 30.0, k,
                            lambda c, v: _with_table(c, "training", "kernel_gap_us", v), log=False))
    return params


def _loss(errs: list[float], values: dict[str, float], params: list[Param]) -> float:
    if not errs:
        return 0.0
    prior = 0.0
    for p in params:
        v = values[p.name]
        prior += abs(math.log(v / p.start)) if p.log and p.start > 0 else abs(v - p.start) / max(p.start, 1.0)
    return sum(errs) / len(errs) + PRIOR_WEIGHT * prior


def _golden(f: Callable[[float], float], lo: float, hi: float, steps: int = 12) -> float:
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (a + b) / 2


def fit(meas: Measurements, cat: Catalog, *, passes: int = 3) -> Fit:
    check_consistent(meas)
    notes: list[str] = []
    base = cat
    start: dict[str, float] = {}
    values: dict[str, float] = {}
    for b in meas.busbw:
        gpu = cat.gpu(b.gpu)
        if b.nodes <= 1:
            name, field_rate = f"{gpu.id}.scaleup_busbw", gpu.scaleup_uni_gb_per_s
            value = b.busbw_gb_per_s / field_rate
            start[name] = gpu.efficiency.scaleup_busbw
        else:
            from gpuplan.physics.network import default_fabric

            fab = default_fabric(gpu, cat, gpu.reference_scaleout_gbit_per_gpu)
            if fab is None or gpu.reference_scaleout_gbit_per_gpu <= 0:
                raise InputError(f"{gpu.id} has no scale-out network to calibrate", file=b.file)
            name, field_rate = f"fabric.{fab.id}.efficiency", gpu.reference_scaleout_gbit_per_gpu / 8
            value = b.busbw_gb_per_s / field_rate
            start[name] = fab.efficiency
        if value > 1.0:
            notes.append(f"{b.file}: bus bandwidth {b.busbw_gb_per_s:g} GB/s is above the link rate {field_rate:g} GB/s "
                         "(in-network reduction?); capped at 1.0")
        values[name] = min(max(value, 0.05), 1.0)
        if name.startswith("fabric."):
            fid = name.split(".")[1]
            base = replace(base, fabrics={**base.fabrics, fid: base.fabrics[fid].model_copy(
                update={"efficiency": values[name]})})
        else:
            base = _with_eff(base, gpu.id, "scaleup_busbw", values[name])
    before, skipped = errors(meas.cases, cat, relative=True)
    notes += [f"not modelled, left out: {s}" for s in skipped]
    points: dict[str, int] = {}
    for case in meas.cases:
        points[case.kind] = points.get(case.kind, 0) + sum(1 for n in case.measured if residual(n, 1, 1) is not None)
    params = case_params([c for c in meas.cases if not any(s.startswith(c.id + ":") for s in skipped)], cat, points)
    n_points = len(before)
    if not meas.busbw and (n_points < 2 or n_points < len(params) + 1):
        raise InputError(f"too few points to fit: {n_points} measured time(s) or rate(s) for {len(params)} "
                         f"figure(s) ({', '.join(p.name for p in params) or 'none'}); give at least "
                         f"{max(2, len(params) + 1)}", field="MEASUREMENTS")
    if n_points < len(params) + 1:
        params = []
        notes.append("too few timing points to fit compute figures; only the bus bandwidths are set")
    current = {p.name: p.start for p in params}

    def build(vals: dict[str, float]) -> Catalog:
        c = base
        for p in params:
            c = p.apply(c, vals[p.name])
        return c

    def loss(vals: dict[str, float]) -> float:
        return _loss(errors(meas.cases, build(vals))[0], vals, params)

    for _ in range(passes if params else 0):
        for p in params:
            def f(x: float, p: Param = p) -> float:
                v = math.exp(x) if p.log else x
                return loss({**current, p.name: v})
            lo, hi = (math.log(p.low), math.log(p.high)) if p.log else (p.low, p.high)
            x = _golden(f, lo, hi)
            cand = math.exp(x) if p.log else x
            if loss({**current, p.name: cand}) < loss(current):
                current[p.name] = cand
    final = build(current)
    after, _ = errors(meas.cases, final, relative=True)
    start.update({p.name: p.start for p in params})
    values.update(current)
    for p in params:
        if min(abs(current[p.name] - p.low), abs(current[p.name] - p.high)) < 0.02 * (p.high - p.low):
            notes.append(f"{p.name} ended at its physical bound ({current[p.name]:.3g}): the model misses these "
                         "measurements for another reason")
    return Fit(values=values, start=start, before=before, after=after, notes=notes, catalog=final)


def overlay_files(result: Fit, meas: Measurements, *, day: str | None = None) -> dict[str, str]:
    """Relative path -> TOML text of the catalog overlay."""
    day = day or _date.today().isoformat()
    sid = f"gpuplan-calibrate-{day}"
    names = ", ".join(Path(f).name for f in meas.files)
    lines = ["# Written by gpuplan calibrate (docs/calibration.md): efficiency figures fitted to measurements.",
             "[[source]]", f'id = "{sid}"', f"title = {json.dumps('gpuplan calibrate over ' + names)}",
             f'date = "{day}"', 'confidence = "C"',
             "note = " + json.dumps(f"fitted to {len(result.before)} measured figures; median error "
                                    f"{result.median_before:.1%} before, {result.median_after:.1%} after")]
    gpus: dict[str, dict[str, float]] = {}
    tables: dict[str, dict[str, float]] = {}
    fabrics: dict[str, float] = {}
    for name, value in sorted(result.values.items()):
        head, _, field = name.rpartition(".")
        if head.startswith("fabric."):
            fabrics[head.split(".", 1)[1]] = value
        elif head in ("serving", "training"):
            tables.setdefault(head, {})[field] = value
        else:
            gpus.setdefault(head, {})[field] = value
    for gid, eff in gpus.items():
        attention = result.catalog.gpus[gid].efficiency.attention_mem_bw
        if "mem_bw" in eff and attention is not None:  # moved with mem_bw (_with_memory)
            eff = {**eff, "attention_mem_bw": attention}
        lines += ["", "[[gpu]]", f'id = "{gid}"',
                  "efficiency = { " + ", ".join(f"{k} = {v:.4g}" for k, v in eff.items()) + " }",
                  f'sources = {{ efficiency = "{sid}" }}']
    for fid, eff in fabrics.items():
        lines += ["", "[[fabric]]", f'id = "{fid}"', f"efficiency = {eff:.4g}"]
    files = {"calibrated.toml": "\n".join(lines) + "\n"}
    residuals = residual_overlay(result, meas, day, sid)
    if residuals:
        files["calibration/residuals.toml"] = residuals
    for table, vals in tables.items():
        files[f"calibration/{table}.toml"] = (f"# Written by gpuplan calibrate; source: {sid}\n"
                                              + "".join(f"{k} = {v:.4g}\n" for k, v in vals.items()))
    return files


def residual_overlay(result: Fit, meas: Measurements, day: str, sid: str) -> str | None:
    """The catalog's residual table with the ``gpu`` regimes of the measured runs replaced by their
    residuals after the fit, so a plan's interval on that GPU and software reflects your runs
    (in-sample: the shrinkage toward the generation's spread keeps them from being too narrow)."""
    from gpuplan.ci.residuals import build_table, points_of, to_toml
    from gpuplan.hardware.intervals import residual_table

    table = residual_table(result.catalog)
    if table is None:
        return None
    points = []
    for case in meas.cases:
        points += points_of(case, run_case(case, str(case.source), result.catalog), result.catalog)
    mine = [r for r in build_table(points, source=sid, day=day).regime if r.scope == "gpu"]
    if not mine:
        return None
    keys = {(r.kind, r.key) for r in mine}
    keep = [r for r in table.regime if not (r.scope == "gpu" and (r.kind, r.key) in keys)]
    regimes = tuple(sorted([*keep, *mine], key=lambda r: (r.kind, r.scope, r.key)))
    return to_toml(table.model_copy(update={
        "regime": regimes, "date": day,
        "source": f"{table.source}; regimes {', '.join(sorted(k for _, k in keys))} from {sid} after the fit"}))


def write_overlay(out: Path, files: dict[str, str], protect: list[str]) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("the output is not a directory", file=str(out))
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text, protect=protect)
