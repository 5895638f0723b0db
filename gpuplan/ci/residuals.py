"""Validation residuals per regime: the table behind every interval (``gpuplan validate --residuals``).

Each predicted figure of a training or serving case gives one log residual
``ln(measured time / predicted time)``; a rate (TFLOP/s, tokens/s) is inverted first. The
residuals are grouped by regime (hardware/intervals.py) and written as
``catalog/calibration/residuals.toml``; :func:`leave_one_out` re-derives each case's band
without that case and reports how often the measured value falls inside it.
"""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass
from datetime import date as _date
from pathlib import Path

from gpuplan.ci.validate import Case, CaseResult, load_cases, run_case
from gpuplan.hardware.intervals import DEFAULT_LEVEL, ResidualTable, band_of, residual, stats
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schemas import validate

#: Settings of a generated table (docs/calibration.md explains each).
MIN_POINTS = 3
SD_FLOOR = 0.05
UNVALIDATED_INFLATION = 1.5
PRIOR_POINTS = 2.0
#: The command that regenerates the shipped table (docs/calibration.md).
REGENERATE = ("gpuplan validate ../shared/validation/*.toml ../shared/validation/frontier/*.toml "
              "tests/*/data/published-extra.toml --residuals -o catalog/calibration/residuals.toml")


@dataclass(frozen=True)
class Point:
    case: str
    kind: str
    figure: str
    gpu_key: str
    gen_key: str
    #: ln(measured time / predicted time)
    residual: float
    #: The run's precision (training: the arithmetic's; serving: the weights').
    precision: str


def points_of(case: Case, result: CaseResult, catalog: Catalog) -> list[Point]:
    keys = result.regime
    if keys is None or case.kind not in ("training", "serving"):
        return []
    out = []
    for fig in result.figures:
        r = residual(fig.name, fig.measured, fig.predicted) if fig.predicted is not None else None
        if r is not None:
            out.append(Point(case.id, case.kind, fig.name, keys[0], keys[1], r, _precision(case)))
    return out


def _precision(case: Case) -> str:
    """``[case.run] precision``, or the default of the case's run schema where it names none."""
    from gpuplan.serving.cases import ServingRun
    from gpuplan.training.cases import RunSpec

    spec = RunSpec if case.kind == "training" else ServingRun
    return str(case.run.get("precision", spec.model_fields["precision"].default))


def collect(paths: list[str], catalog: Catalog) -> list[Point]:
    """Run every case of ``paths`` and return its residuals."""
    found: list[Point] = []
    for path in paths:
        for case in load_cases(path):
            found += points_of(case, run_case(case, path, catalog), catalog)
    return found


def build_table(points: list[Point], *, source: str, day: str, **settings: float) -> ResidualTable:
    """Regime statistics of ``points``: one residual per case (the mean of its figures, which
    share one run and are not independent), at each scope."""
    per_case: dict[tuple[str, str, str, str], list[float]] = {}
    precisions: dict[tuple[str, str, str], set[str]] = {}
    for p in points:
        for scope, key in (("gpu", p.gpu_key), ("generation", p.gen_key), ("kind", "all")):
            per_case.setdefault((p.kind, scope, key, p.case), []).append(p.residual)
            precisions.setdefault((p.kind, scope, key), set()).add(p.precision)
    groups: dict[tuple[str, str, str], list[float]] = {}
    for (kind, scope, key, _), values in sorted(per_case.items()):
        groups.setdefault((kind, scope, key), []).append(sum(values) / len(values))
    regimes = []
    for (kind, scope, key), values in sorted(groups.items()):
        n, mean, sd = stats(values)
        regimes.append(dict(kind=kind, scope=scope, key=key, n=n, mean_ratio=round(math.exp(mean), 4),
                            sd_log=round(sd, 4), precisions=tuple(sorted(precisions[(kind, scope, key)]))))
    conf = {"min_points": MIN_POINTS, "sd_floor": SD_FLOOR, "unvalidated_inflation": UNVALIDATED_INFLATION,
            "prior_points": PRIOR_POINTS, **settings}
    return validate(ResidualTable, {"source": source, "date": day, "regime": tuple(regimes), **conf})


@dataclass(frozen=True)
class Coverage:
    kind: str
    figures: int
    covered: int
    median_half_width: float

    @property
    def share(self) -> float:
        return self.covered / self.figures if self.figures else 0.0


def leave_one_out(points: list[Point], *, level: float = DEFAULT_LEVEL, **settings: float) -> list[Coverage]:
    """Coverage and median half-width (relative to measured) of each case's band when the case is
    left out of the table, per kind and over both."""
    rows: list[tuple[str, bool, float]] = []
    for p in points:
        rest = [q for q in points if q.case != p.case]
        table = build_table(rest, source="leave-one-out", day="2000-01-01", **settings)
        band = band_of(table, p.kind, p.gpu_key, p.gen_key, level=level)
        # measured time = predicted time * exp(residual); the band is on the predicted time
        ratio = math.exp(p.residual)
        inside = band.low <= ratio <= band.high
        half = (band.high - band.low) / 2 / ratio
        rows.append((p.kind, inside, half))
    out = []
    for kind in ("training", "serving", "all"):
        sel = [r for r in rows if kind == "all" or r[0] == kind]
        if sel:
            halves = sorted(h for _, _, h in sel)
            out.append(Coverage(kind, len(sel), sum(1 for _, c, _ in sel if c), _median(halves)))
    return out


def _median(values: list[float]) -> float:
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def source_line(paths: list[str]) -> str:
    """``gpuplan validate over FILES at commit X`` for the table's source."""
    try:
        commit = head_commit(Path.cwd())[:7] or "unknown"
    except OSError:
        commit = "unknown"
    groups: dict[str, list[str]] = {}
    for p in sorted({_short(p) for p in paths}):
        folder, _, name = p.rpartition("/")
        groups.setdefault(folder, []).append(name)
    names = [f"{d}/{n[0]}" if len(n) == 1 else f"{d}/{{{','.join(n)}}}" for d, n in groups.items()]
    return f"gpuplan validate over {' + '.join(names)} at commit {commit}"


def head_commit(start: Path) -> str:
    """The commit checked out at ``start`` (read from .git, no git process), "" when unknown."""
    for d in (start, *start.parents):
        dot = d / ".git"
        if dot.is_file():  # a worktree: "gitdir: <path>", refs in its common directory
            gitdir = Path(dot.read_text(encoding="utf-8").partition("gitdir:")[2].strip())
        elif dot.is_dir():
            gitdir = dot
        else:
            continue
        common = gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip() \
            if (gitdir / "commondir").is_file() else gitdir
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head
        ref = head[4:].strip()
        for base in (gitdir, common):
            if (base / ref).is_file():
                return (base / ref).read_text(encoding="utf-8").strip()
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                if line.endswith(" " + ref):
                    return line.split()[0]
        return ""
    return ""


def _short(path: str) -> str:
    parts = Path(path).parts
    if "validation" in parts:
        i = parts.index("validation")
        return "shared/" + "/".join(parts[i:])
    return "/".join(parts[-4:])


def to_toml(table: ResidualTable) -> str:
    lines = [
        "# Validation residuals per regime: the statistics behind every interval of a plan",
        "# (gpuplan/hardware/intervals.py, docs/calibration.md): per regime, the number of cases n, the\n"
        "# geometric mean of measured / predicted time, the sd of its log and the runs' precisions; the\n"
        "# gpu regimes are also the validated GPUs, precisions and model kinds. GENERATED, do not edit; regenerate with",
        f"#   {REGENERATE}",
        "# tests/ci/test_residuals.py fails when this file no longer matches the validation cases.",
        f"source = {_q(table.source)}",
        f"date = {_q(table.date)}",
        f"min_points = {table.min_points}",
        f"sd_floor = {table.sd_floor}",
        f"unvalidated_inflation = {table.unvalidated_inflation}",
        f"prior_points = {table.prior_points}",
    ]
    for r in table.regime:
        lines += ["", "[[regime]]", f"kind = {_q(r.kind)}", f"scope = {_q(r.scope)}", f"key = {_q(r.key)}",
                  f"n = {r.n}", f"mean_ratio = {r.mean_ratio}", f"sd_log = {r.sd_log}",
                  f"precisions = [{', '.join(_q(p) for p in r.precisions)}]"]
    return "\n".join(lines) + "\n"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def today() -> str:
    return _date.today().isoformat()
