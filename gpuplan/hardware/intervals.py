"""Prediction intervals from validation residuals, read from ``catalog/calibration/residuals.toml``.

The table is generated, never edited: ``gpuplan validate --residuals`` runs the published cases
and writes, per regime, the count, mean and standard deviation of the log residuals
``ln(measured time / predicted time)`` (a rate such as TFLOP/s or tokens/s is turned into a
time first, so every residual has the same sign convention: > 0 means the model was fast).

A figure's interval is the Student-t prediction interval of one new residual of its regime:
``mean +- t(n-1) * sd * sqrt(1 + 1/n)``, applied to the prediction (docs/calibration.md). The
regime is the most specific scope with at least ``min_points`` residuals, in this order:
1. ``gpu``: the same GPU and the same framework or engine (``default`` when none is named);
2. ``generation``: the same vendor and generation (first word of the GPU's ``arch``);
3. ``kind``: every residual of the phase, widened by ``unvalidated_inflation``: an unvalidated
   regime, and the plan says so.
"""


from __future__ import annotations

import math
from statistics import NormalDist
from typing import Annotated, Literal, Protocol

from pydantic import Field

from gpuplan.core.errors import InputError
from gpuplan.core.memo import memo
from gpuplan.core.records import dataclass
from gpuplan.hardware.record import Record

Scope = Literal["gpu", "generation", "kind"]
#: The default level of every interval (docs/json.md, ``interval_level``).
DEFAULT_LEVEL = 0.8


class HasTables(Protocol):
    def table(self, name: str) -> object: ...


class Regime(Record):
    kind: Literal["training", "serving"]
    scope: Scope
    #: ``<gpu id>/<software>`` (gpu), ``<vendor>/<generation>`` (generation) or ``all`` (kind).
    key: Annotated[str, Field(min_length=1, max_length=120)]
    n: Annotated[int, Field(ge=1)]
    #: exp(mean log residual): the typical measured / predicted time (> 1: the model is fast).
    mean_ratio: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    #: Standard deviation of the log residuals.
    sd_log: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    #: The precisions of its runs, sorted (training: the arithmetic's; serving: the weights').
    precisions: tuple[str, ...] = ()

    @property
    def mean_log(self) -> float:
        return math.log(self.mean_ratio)


class ResidualTable(Record):
    #: What was run to produce the table (files and commit), and when.
    source: Annotated[str, Field(min_length=1)]
    date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    #: A scope needs this many residuals to be used (fewer falls through to a wider scope).
    min_points: Annotated[int, Field(ge=2)]
    #: No band is narrower than this standard deviation of the log residual.
    sd_floor: Annotated[float, Field(ge=0, le=1)]
    #: Standard deviation multiplier of an unvalidated regime (the pooled ``kind`` scope).
    unvalidated_inflation: Annotated[float, Field(ge=1, le=10)]
    #: Weight, in cases, of the wider scope's mean and spread in a narrower scope's band.
    prior_points: Annotated[float, Field(ge=0, le=100)] = 0
    regime: tuple[Regime, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Band:
    """Multipliers of a predicted time: ``[low, high]`` at ``level``, and where they come from
    (computed, never read from a file: a plain record, not validated)."""

    low: float
    high: float
    level: float
    scope: Scope | Literal["none"]
    key: str
    n: int
    #: On a ``kind`` band, the published runs of the GPU's generation that were too few (or of the
    #: other model kind) for a band of their own, in words ("" when there is none).
    generation_runs: str = ""

    def time(self, value: float) -> tuple[float, float]:
        """Interval of a figure that is a time (step, days, GPU-hours, TTFT, cost)."""
        return value * self.low, value * self.high

    def rate(self, value: float) -> tuple[float, float]:
        """Interval of a figure that is a rate (MFU, TFLOP/s, QPS, tokens/s)."""
        return value / self.high, value / self.low

    @property
    def why(self) -> str:
        if self.scope == "gpu":
            return f"{self.n} published runs on {self.key}"
        if self.scope == "generation":
            return f"{self.n} published runs on {self.key.replace('/', ' ')} GPUs (none with this GPU and software)"
        if self.scope == "kind":
            if self.generation_runs:
                return (f"unvalidated regime: too few published runs on this GPU generation and model kind for a "
                        f"band of their own ({self.generation_runs}); the spread of all {self.n} runs, widened")
            return (f"unvalidated regime: no published run on this GPU generation; the spread of all {self.n} "
                    f"runs, widened")
        return "no residual table in the catalog"


def t_quantile(p: float, dof: int) -> float:
    """Student-t quantile (Cornish-Fisher expansion of the normal one; within 1% for dof >= 2)."""
    z = NormalDist().inv_cdf(p)
    if dof <= 0:
        return z * 4
    v = float(dof)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3))


def stats(residuals: list[float]) -> tuple[int, float, float]:
    """(n, mean, sample sd) of log residuals."""
    n = len(residuals)
    mean = sum(residuals) / n
    sd = math.sqrt(sum((r - mean) ** 2 for r in residuals) / (n - 1)) if n > 1 else 0.0
    return n, mean, sd


def generation(vendor: str, arch: str) -> str:
    """``nvidia/hopper`` from a GPU's vendor and ``arch`` field."""
    return f"{vendor}/{arch.split()[0].lower() if arch.split() else 'unknown'}"


def band_of(table: ResidualTable | None, kind: str, gpu_key: str, gen_key: str, *,
            level: float = DEFAULT_LEVEL, side: Literal["two", "upper"] = "two") -> Band:
    """The band of a figure of ``kind`` in the regime (``gpu_key`` = ``gpu/software``).

    ``side="upper"``: ``high`` is the one-sided ``level`` quantile (a deadline that holds with
    probability ``level``), ``low`` the matching lower one."""
    if table is None:
        return Band(low=1.0, high=1.0, level=level, scope="none", key="-", n=0)
    found = {(r.scope, r.key): r for r in table.regime if r.kind == kind}
    chain = [found.get((scope, key)) for scope, key in (("gpu", gpu_key), ("generation", gen_key), ("kind", "all"))]
    for i, reg in enumerate(chain):
        if reg is None or reg.n < table.min_points:
            continue
        # Shrink toward the next wider scope, worth ``prior_points`` cases (empirical Bayes): a
        # spread estimated from three cases is itself uncertain.
        parent = next((p for p in chain[i + 1:] if p is not None and p.n > reg.n), None)
        k = table.prior_points if parent is not None else 0.0
        mean, var, dof = reg.mean_log, reg.sd_log ** 2, reg.n - 1.0
        if parent is not None and k:
            mean = (reg.n * reg.mean_log + k * parent.mean_log) / (reg.n + k)
            var = (dof * reg.sd_log ** 2 + k * parent.sd_log ** 2) / (dof + k)
            dof += k
        sd = max(math.sqrt(var), table.sd_floor)
        if reg.scope == "kind":
            sd *= table.unvalidated_inflation
        q = (1 + level) / 2 if side == "two" else level
        half = t_quantile(q, max(int(round(dof)), 1)) * sd * math.sqrt(1 + 1 / reg.n)
        return Band(low=math.exp(mean - half), high=math.exp(mean + half), level=level,
                    scope=reg.scope, key=reg.key, n=reg.n,
                    generation_runs=_generation_runs(table, kind, gen_key) if reg.scope == "kind" else "")
    return Band(low=1.0, high=1.0, level=level, scope="none", key="-", n=0)


def _generation_runs(table: ResidualTable, kind: str, gen_key: str) -> str:
    """The ``generation`` regimes of ``kind`` on ``gen_key``'s vendor and generation, dense or MoE,
    in words: "1 on nvidia blackwell moe"."""
    base = "/".join(gen_key.split("/")[:2])
    found = sorted((r.key, r.n) for r in table.regime
                   if r.kind == kind and r.scope == "generation" and "/".join(r.key.split("/")[:2]) == base)
    return ", ".join(f"{n} on {key.replace('/', ' ')}" for key, n in found)


#: Figures of a validation case that are times (their interval scales with the band) and rates.
TIME_FIGURES = frozenset({"iteration_time_s", "gpu_hours", "wall_clock_days", "ttft_ms", "tpot_ms"})
RATE_FIGURES = frozenset({"model_tflops_per_gpu", "hardware_tflops_per_gpu", "decode_tokens_per_s",
                          "output_tokens_per_s", "output_tokens_per_s_per_gpu"})


def residual(figure: str, measured: float, predicted: float) -> float | None:
    """``ln(measured time / predicted time)`` of a figure; None for a figure that is no time or rate."""
    if measured <= 0 or predicted <= 0:
        return None
    if figure in TIME_FIGURES:
        return math.log(measured / predicted)
    if figure in RATE_FIGURES:
        return math.log(predicted / measured)
    return None


def figure_interval(band: Band, figure: str, predicted: float) -> tuple[float, float]:
    """``[low, high]`` of a case figure: scaled by the band for a time or a rate, exact otherwise
    (fabric counts and FLOP totals are arithmetic, not timing)."""
    if figure in TIME_FIGURES:
        return band.time(predicted)
    if figure in RATE_FIGURES:
        return band.rate(predicted)
    return predicted, predicted


#: The serving engine a case or profile runs when it names none (gpuplan/serving/engine.py).
DEFAULT_ENGINE = "vllm"


def software_of(kind: str, named: object, catalog: HasTables) -> str:
    """The software key of a regime: the framework or engine named, else the one the model runs
    when none is named (the catalog's ``default_framework``; current vLLM)."""
    if isinstance(named, str) and named:
        return named
    if kind == "training":
        return str(getattr(catalog.table("training"), "default_framework", "default"))
    return DEFAULT_ENGINE


def validated_gpus(table: ResidualTable | None, kind: str) -> tuple[str, ...]:
    """The GPUs on which at least one published run of ``kind`` is among the validation cases: those
    of the table's ``gpu`` regimes (keys ``<gpu id>/<software>``), sorted; none without a table."""
    return tuple(sorted({r.key.split("/")[0] for r in _validated(table, kind)}))


def validated_precisions(table: ResidualTable | None, kind: str) -> tuple[str, ...]:
    """The precisions of the published runs of ``kind`` among the validation cases (those of the
    table's ``gpu`` regimes), sorted; none without a table."""
    return tuple(sorted({p for r in _validated(table, kind) for p in r.precisions}))


def validated_moe(table: ResidualTable | None, kind: str) -> bool:
    """Whether a published run of a mixture-of-experts model of ``kind`` is among the validation
    cases: a ``gpu`` regime of the table keyed ``.../moe`` (ci/validate.py ``regime_keys``)."""
    return any(r.key.endswith("/moe") for r in _validated(table, kind))


#: :func:`_validated` by (table, kind): a plan asks ~10 times, each a walk of the table's
#: regimes. The table is keyed by identity and held in the entry, so its id is
#: not reused while the entry lives. Bounded.
_VALIDATED: dict[tuple[int, str], tuple[ResidualTable, tuple[Regime, ...]]] = memo()


def _validated(table: ResidualTable | None, kind: str) -> tuple[Regime, ...]:
    """The ``gpu`` regimes of ``kind``: every validation case with a prediction is in one."""
    if table is None:
        return ()
    key = (id(table), kind)
    hit = _VALIDATED.get(key)
    if hit is None:
        if len(_VALIDATED) >= 64:
            _VALIDATED.clear()
        hit = _VALIDATED[key] = (table, tuple(r for r in table.regime if r.kind == kind and r.scope == "gpu"))
    return hit[1]


def residual_table(catalog: HasTables) -> ResidualTable | None:
    """The catalog's residual table, or None when it has none (intervals are then omitted)."""
    try:
        found = catalog.table("residuals")
    except InputError:  # a catalog without the table plans without intervals
        return None
    return found if isinstance(found, ResidualTable) else None
