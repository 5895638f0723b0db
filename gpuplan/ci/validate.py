"""``gpuplan validate``: predict published measurements and report the relative error.

Case files are read exactly as specified in ``../shared/validation/README.md``. Each case is
dispatched to its planner's ``cases.predict``; a planner that cannot model a case raises
:class:`~gpuplan.model.case.NotModelled` and the case is reported as ``not_modelled``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuplan.model.arch import ArchitectureSpec, resolve
from gpuplan.model.case import CaseInput, NotModelled
from gpuplan.hardware.loader import Catalog
from gpuplan.core.errors import InputError
from gpuplan.core.io import pydantic_error, read_toml
from gpuplan.core.types import Id, NonNegative
from gpuplan.hardware.intervals import DEFAULT_LEVEL, RATE_FIGURES, software_of, TIME_FIGURES, band_of, figure_interval, generation, residual_table


def regime_keys(run: dict[str, Any], catalog: Catalog, *, kind: str, moe: bool = False) -> tuple[str, str] | None:
    """(``gpu/software``, ``vendor/generation``) of a case's run, None without a known GPU; an MoE
    model is a regime of its own (``/moe`` on both keys). Software left out is what the model then
    runs (hardware/intervals.software)."""
    name = run.get("gpu")
    if not isinstance(name, str):
        return None
    try:
        gpu = catalog.gpu(name)
    except InputError:
        return None
    software = software_of(kind, run.get("framework") if kind == "training" else run.get("engine"), catalog)
    tail = "/moe" if moe else ""
    return f"{gpu.id}/{software}{tail}", generation(gpu.vendor, gpu.arch) + tail


class CaseModel(ArchitectureSpec):
    preset: Id | None = None


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, max_length=200)
    kind: Literal["training", "serving", "fabric"]
    source: str
    tolerance: float = Field(ge=0, le=10, allow_inf_nan=False)
    note: str | None = None
    model: CaseModel | None = None
    run: dict[str, Any] = {}
    measured: dict[str, NonNegative] = Field(min_length=1)


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    case: list[Case]


class FigureResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    measured: float
    predicted: float | None
    error: float | None
    tolerance: float
    #: The interval of the prediction at the catalog's level (calibration/residuals.toml): a
    #: band from the residuals of the case's regime for times and rates, [predicted, predicted]
    #: for counts and FLOP totals. None without a prediction.
    low: float | None = None
    high: float | None = None
    # ``pass`` is a Python keyword; serialised under that name.
    passed: bool = Field(serialization_alias="pass")


class CaseResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    kind: str
    file: str
    status: Literal["pass", "fail", "not_modelled", "error"]
    message: str
    figures: list[FigureResult]
    #: The residual regimes of the case (``gpu/software``, ``vendor/generation``; hardware/intervals.py).
    regime: tuple[str, str] | None = None


class KindSummary(BaseModel):
    """Relative errors of the figures of one kind of case (training, serving, fabric)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    figures: int
    median_error: float | None
    worst_error: float | None
    worst_case: str | None
    #: Share of the figures with a band whose measured value lies inside it (None: none).
    coverage: float | None = None


class Summary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    cases: int
    passed: int
    failed: int
    not_modelled: int
    errors: int
    median_error: float | None
    worst_error: float | None
    worst_case: str | None
    #: The same per kind of case: exact fabric counts would otherwise hide the model errors.
    by_kind: dict[str, KindSummary] = {}
    #: Level of every figure's [low, high] (None: the catalog has no residual table).
    interval_level: float | None = None


class Report(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    cases: list[CaseResult]
    summary: Summary

    @property
    def ok(self) -> bool:
        return self.summary.cases > 0 and self.summary.passed == self.summary.cases


#: The published cases shipped with gpuplan: a copy of ../shared/validation (a test keeps them equal).
PACKAGED = Path(__file__).with_name("cases")
KINDS = ("training", "serving", "fabric")


def packaged_files(kinds: tuple[str, ...] = KINDS) -> dict[str, str]:
    """Packaged case files (main set, then frontier) by the name reports show for them."""
    out: dict[str, str] = {}
    for folder, prefix in ((PACKAGED, ""), (PACKAGED / "frontier", "frontier/")):
        for kind in kinds:
            path = folder / f"{kind}.toml"
            if path.is_file():
                out[f"<packaged>/{prefix}{kind}.toml"] = str(path)
    return out


def load_cases(path: str, name: str | None = None) -> list[Case]:
    data = read_toml(path)
    try:
        return list(CaseFile.model_validate(data).case)
    except ValidationError as exc:
        raise pydantic_error(exc, file=name or path) from None


def _predictor(kind: str) -> Any:
    if kind == "training":
        from gpuplan.training.cases import predict
    elif kind == "serving":
        from gpuplan.serving.cases import predict
    else:
        from gpuplan.fabric.cases import predict
    return predict


def run_case(case: Case, file: str, catalog: Catalog) -> CaseResult:
    figures = tuple(case.measured)
    try:
        arch = None
        if case.model is not None:
            if case.model.preset:
                preset = catalog.lookup("model", case.model.preset, file=file, field_path=f"case[{case.id}].model.preset")
                spec = ArchitectureSpec.model_validate(preset.arch_fields())
            else:
                spec = ArchitectureSpec.model_validate(case.model.arch_fields())
            try:
                arch, _ = resolve(spec)
            except ValueError as exc:
                raise InputError(str(exc), file=file, field=f"case[{case.id}].model") from None
        predicted = _predictor(case.kind)(CaseInput(id=case.id, file=file, arch=arch, run=dict(case.run),
                                                    figures=figures), catalog)
    except NotModelled as exc:
        return CaseResult(id=case.id, kind=case.kind, file=file, status="not_modelled", message=str(exc),
                          figures=[FigureResult(name=n, measured=m, predicted=None, error=None,
                                                tolerance=case.tolerance, passed=False)
                                   for n, m in case.measured.items()])
    except InputError as exc:
        return CaseResult(id=case.id, kind=case.kind, file=file, status="error", message=exc.one_line(), figures=[])
    results = []
    keys = (regime_keys(case.run, catalog, kind=case.kind, moe=arch is not None and arch.is_moe)
            if case.kind != "fabric" else None)
    band = band_of(residual_table(catalog), case.kind, *keys) if keys else None
    for name, measured in case.measured.items():
        value = predicted.get(name)
        if value is None or not math.isfinite(value):
            results.append(FigureResult(name=name, measured=measured, predicted=None, error=None,
                                        tolerance=case.tolerance, passed=False))
            continue
        error = abs(value - measured) / abs(measured) if measured else abs(value)
        low, high = figure_interval(band, name, value) if band is not None else (value, value)
        results.append(FigureResult(name=name, measured=measured, predicted=value, error=error,
                                    tolerance=case.tolerance, low=low, high=high,
                                    passed=error <= case.tolerance + 1e-12))
    missing = [f.name for f in results if f.predicted is None]
    if missing:
        return CaseResult(id=case.id, kind=case.kind, file=file, status="not_modelled",
                          message=f"no prediction for {', '.join(missing)}", figures=results, regime=keys)
    ok = all(f.passed for f in results)
    return CaseResult(id=case.id, kind=case.kind, file=file, status="pass" if ok else "fail",
                      message="" if ok else "outside tolerance", figures=results, regime=keys)


def validate_files(paths: list[str], catalog: Catalog, names: list[str] | None = None,
                   kinds: tuple[str, ...] = KINDS) -> Report:
    """Run every case of ``paths`` whose kind is in ``kinds``; ``names`` (one per path) is what
    reports call each file."""
    results: list[CaseResult] = []
    seen: dict[str, str] = {}
    for path, name in zip(paths, names or paths):
        for case in load_cases(path, name):
            if case.id in seen:
                raise InputError(f"duplicate case id {case.id!r} (also in {seen[case.id]})", file=name,
                                 field=f"case[{case.id}]")
            seen[case.id] = name
            if case.kind in kinds:
                results.append(run_case(case, name, catalog))
    overall = _errors(results)
    kinds = sorted({r.kind for r in results})
    count = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "not_modelled", "error")}
    summary = Summary(cases=len(results), passed=count["pass"], failed=count["fail"],
                      not_modelled=count["not_modelled"], errors=count["error"], median_error=overall.median_error,
                      worst_error=overall.worst_error, worst_case=overall.worst_case,
                      by_kind={k: _errors([r for r in results if r.kind == k]) for k in kinds},
                      interval_level=DEFAULT_LEVEL if residual_table(catalog) is not None else None)
    return Report(cases=results, summary=summary)


def _errors(results: list[CaseResult]) -> KindSummary:
    """Median and worst relative error over every figure of ``results``."""
    errors = sorted(f.error for r in results for f in r.figures if f.error is not None)
    worst = max(((f.error, r.id) for r in results for f in r.figures if f.error is not None), default=(None, None))
    median = None
    if errors:
        mid = len(errors) // 2
        median = errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2
    banded = [f for r in results for f in r.figures if f.low is not None and f.high is not None
              and (r.kind == "fabric" or f.name in TIME_FIGURES or f.name in RATE_FIGURES)]
    inside = sum(1 for f in banded if f.low <= f.measured * (1 + 1e-9) and f.measured <= f.high * (1 + 1e-9))  # type: ignore[operator]
    return KindSummary(figures=len(errors), median_error=median, worst_error=worst[0], worst_case=worst[1],
                       coverage=inside / len(banded) if banded else None)
