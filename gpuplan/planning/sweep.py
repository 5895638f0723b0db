"""What-if sweeps (``gpuplan sweep``): one profile planned at every point of a grid of field values.

A ``--set`` names a dotted profile field and its values: ``serving.qps=10:100:10`` (10 values from
10 to 100, evenly spaced; ``log=True`` spaces them geometrically), or ``constraints.allow_gpus=
h100-sxm-80gb,b200-sxm-180gb`` (a list; a value for a list field becomes a one-item list). The grid
is the product of every ``--set``, in the order given, first field slowest. Each point is the
profile with those fields overridden and validated exactly as if written in the file, except that
a swept ``serving.qps`` scales a ``[serving.demand]`` curve to peak at it (each point's
``demand_scale``); the catalog is loaded once and shared. Points are independent, so ``jobs > 1`` plans them in worker processes
and reassembles them in grid order: the output does not depend on the number of jobs.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Iterator
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ConfigDict, model_serializer

from gpuplan.core.contract import Plan, ServingPlan, TrainingPlan
from gpuplan.core.errors import InputError, did_you_mean
from gpuplan.hardware.loader import Catalog, load_catalog
from gpuplan.core.io import parse_toml
from gpuplan.model.profile import Profile, demand_scale, load_profile_text
from gpuplan.planning.summary import plan_summary

#: A sweep is bounded work: more points than this is an input error, not an hour of CPU.
MAX_POINTS = 2_000
MAX_VALUES_PER_FIELD = 500


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrainingSummary(_Out):
    feasible: bool
    gpu: str | None
    gpus: int
    nodes: int
    wall_clock_days: float
    mfu: float
    capex_usd: float | None
    cloud_usd_per_hour: float | None
    power_kw: float


class ServingSummary(_Out):
    feasible: bool
    gpu: str | None
    gpus: int
    replicas: int
    ttft_ms_at_percentile: float
    tpot_ms: float
    max_qps: float
    capex_usd: float | None
    cloud_usd_per_hour: float | None
    power_kw: float


class SweepPoint(_Out):
    values: dict[str, Any]
    training: TrainingSummary | None
    serving: ServingSummary | None
    #: The factor the point's ``serving.qps`` scaled the profile's daily demand curve by (its new
    #: rate over the curve's peak); absent (None) when the profile has no curve or qps is not swept.
    demand_scale: float | None = None

    @model_serializer(mode="wrap")
    def _drop_no_scale(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if data.get("demand_scale") is None:
            data.pop("demand_scale", None)
        return data


class SweepResult(_Out):
    workload: str
    fields: list[str]
    sweep: list[SweepPoint]


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _field_type(path: str) -> Any:
    """The annotation of a dotted profile field, or an InputError naming the closest field."""
    model: Any = Profile
    annotation: Any = None
    parts = path.split(".")
    for i, part in enumerate(parts):
        fields = getattr(model, "model_fields", None)
        if fields is None or part not in fields:
            known = list(fields or ())
            where = ".".join(parts[:i]) or "the profile"
            raise InputError(f"unknown field {part!r} in {where}{did_you_mean(part, known)}", field="--set")
        annotation = fields[part].annotation
        model = next((a for a in (annotation, *get_args(annotation)) if isinstance(a, type)
                      and issubclass(a, BaseModel)), None)
    return annotation


def _is_list(annotation: Any) -> bool:
    return get_origin(annotation) in (list, tuple) or any(get_origin(a) in (list, tuple) for a in get_args(annotation))


def parse_set(spec: str, *, log: bool = False) -> tuple[str, list[Any]]:
    """``FIELD=START:STOP:N`` or ``FIELD=a,b,c`` -> (field, values)."""
    field, sep, rhs = spec.partition("=")
    field = field.strip()
    if not sep or not field or not rhs.strip():
        raise InputError(f"expected FIELD=START:STOP:N or FIELD=a,b,c, got {spec!r}", field="--set")
    annotation = _field_type(field)
    parts = rhs.split(":")
    if len(parts) == 3 and all(_number(p) is not None for p in parts):
        start, stop, count = (_number(p) for p in parts)
        if not isinstance(count, int) or not 1 <= count <= MAX_VALUES_PER_FIELD:
            raise InputError(f"N must be a whole number from 1 to {MAX_VALUES_PER_FIELD}, got {parts[2]!r}",
                             field=f"--set {field}")
        assert start is not None and stop is not None
        if log and (start <= 0 or stop <= 0):
            raise InputError("--log spacing needs positive START and STOP", field=f"--set {field}")
        values: list[Any] = []
        for i in range(count):
            t = i / (count - 1) if count > 1 else 0.0
            v = start * (stop / start) ** t if log else start + (stop - start) * t
            v = float(f"{v:.12g}")
            whole = isinstance(start, int) and isinstance(stop, int) and not log
            values.append(int(round(v)) if whole or (v.is_integer() and "int" in str(annotation)) else v)
    elif len(parts) == 1:
        items = [p.strip() for p in rhs.split(",")]
        if any(not p for p in items) or len(items) > MAX_VALUES_PER_FIELD:
            raise InputError(f"expected 1 to {MAX_VALUES_PER_FIELD} comma-separated values, got {rhs!r}",
                             field=f"--set {field}")
        values = [_number(p) if _number(p) is not None else {"true": True, "false": False}.get(p, p) for p in items]
    else:
        raise InputError(f"expected START:STOP:N with three numbers or a comma-separated list, got {rhs!r}",
                         field=f"--set {field}")
    if _is_list(annotation):
        values = [[v] for v in values]
    unique = list(dict.fromkeys(_freeze(v) for v in values))  # 1:1:3 is one point, not three
    return field, [_thaw(v) for v in unique]


def _freeze(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def _thaw(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def grid(sets: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    fields = [f for f, _ in sets]
    if len(set(fields)) != len(fields):
        raise InputError("a field is set twice", field="--set")
    points = math.prod(len(v) for _, v in sets)
    if points > MAX_POINTS:
        raise InputError(f"the grid has {points:,} points; at most {MAX_POINTS:,} per sweep", field="--set")
    return [dict(zip(fields, combo)) for combo in itertools.product(*(v for _, v in sets))]


def summarize(values: dict[str, Any], plan: Plan, scale: float | None = None) -> SweepPoint:
    """The summary of a full plan (what ``gpuplan recommend`` gives) at one grid point."""
    return summary_of(values, plan.training, plan.serving, scale)


def summary_of(values: dict[str, Any], t: TrainingPlan | None, s: ServingPlan | None,
               scale: float | None = None) -> SweepPoint:
    training = None if t is None else TrainingSummary(
        feasible=t.feasible, gpu=t.gpu, gpus=t.gpus, nodes=t.nodes, wall_clock_days=t.wall_clock_days, mfu=t.mfu,
        capex_usd=t.capex_usd, cloud_usd_per_hour=t.cloud_usd_per_hour, power_kw=t.power_kw)
    serving = None if s is None else ServingSummary(
        feasible=s.feasible, gpu=s.gpu, gpus=s.gpus, replicas=s.replicas, ttft_ms_at_percentile=s.ttft_ms_at_percentile,
        tpot_ms=s.tpot_ms, max_qps=s.max_qps, capex_usd=s.capex_usd, cloud_usd_per_hour=s.cloud_usd_per_hour,
        power_kw=s.power_kw)
    return SweepPoint(values=values, training=training, serving=serving, demand_scale=scale)


# Worker state: each process loads the catalog once (fork or spawn alike).
_WORKER: dict[str, Any] = {}


def _init_worker(text: str, name: str, overlays: list[str], phases: tuple[str, ...]) -> None:
    _WORKER.update(text=text, name=name, catalog=load_catalog(overlays), phases=phases, data=parse_toml(text, name))


def _plan_point(values: dict[str, Any]) -> SweepPoint:
    w = _WORKER
    workload = load_profile_text(w["text"], w["name"], w["catalog"], overrides=values)
    scale = demand_scale(w["data"], values)
    return summary_of(values, *plan_summary(workload, w["catalog"], phases=w["phases"]), scale)


#: Fields whose larger values only relax the target: a sweep plans the largest value first, so
#: that each search's result also serves the tighter values it holds for (training/search.py).
LOOSEST_FIRST = ("training.deadline_days",)


def plan_order(points: list[dict[str, Any]]) -> list[int]:
    """The order in which the grid's points are planned (the output keeps the grid's order):
    the grid's, except that the values of a :data:`LOOSEST_FIRST` field go from the largest."""
    swept = [f for f in LOOSEST_FIRST if points and f in points[0]]
    return sorted(range(len(points)), key=lambda i: tuple(-points[i][f] for f in swept))


def _load_point(text: str, name: str, catalog: Catalog, values: dict[str, Any]) -> Any:
    """The profile with one grid point's values; a value the profile rejects is blamed on the
    ``--set`` that gave it, not on the profile file."""
    try:
        return load_profile_text(text, name, catalog, overrides=values)
    except InputError as err:
        if err.field in values:
            raise InputError(err.message, field=f"--set {err.field}") from None
        raise


def run_sweep(text: str, name: str, sets: list[tuple[str, list[Any]]], catalog: Catalog, *, overlays: list[str],
              phases: tuple[str, ...] = ("training", "serving"), jobs: int = 1,
              on_point: Callable[[int, int], None] | None = None) -> SweepResult:
    """Plan every grid point of ``sets`` over the profile ``text`` (named ``name`` in errors)."""
    grid_points = grid(sets)
    order = plan_order(grid_points)
    points = [grid_points[i] for i in order]
    # The first point is planned here: a value the profile rejects fails once, with one line,
    # before any worker starts.
    first = _load_point(text, name, catalog, points[0])
    data = parse_toml(text, name)  # the profile as written: what a swept qps scales its curve from
    results = [summary_of(points[0], *plan_summary(first, catalog, phases=phases), demand_scale(data, points[0]))]
    if on_point:
        on_point(1, len(points))
    for values in points[1:]:  # every value is validated before the long part starts
        _load_point(text, name, catalog, values)
    rest: Iterator[SweepPoint]
    if jobs > 1 and len(points) > 2:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn" if os.name == "nt" else "fork")
        pool = ctx.Pool(min(jobs, len(points) - 1), initializer=_init_worker, initargs=(text, name, overlays, phases))
        try:
            rest = pool.imap(_plan_point, points[1:], chunksize=max(1, len(points) // (8 * jobs)))
            for i, point in enumerate(rest, start=2):
                results.append(point)
                if on_point:
                    on_point(i, len(points))
        finally:
            pool.terminate()
    else:
        _WORKER.update(text=text, name=name, catalog=catalog, phases=phases, data=data)
        for i, values in enumerate(points[1:], start=2):
            results.append(_plan_point(values))
            if on_point:
                on_point(i, len(points))
    in_grid = [results[0]] * len(results)
    for k, i in enumerate(order):
        in_grid[i] = results[k]
    return SweepResult(workload=first.name, fields=[f for f, _ in sets], sweep=in_grid)
