"""Regime constants of the training model, read from ``catalog/calibration/training.toml``.

Every constant carries its source in that file; docs/training-model.md explains each one.
Nothing here is per GPU (per-GPU ceilings are in the GPU records) or per validation case.
"""


from __future__ import annotations

import math
from typing import Annotated, Literal, Protocol

from pydantic import Field

from gpuplan.core.memo import memo
from gpuplan.hardware.record import Record
from gpuplan.hardware.training_frameworks import FRAMEWORKS, Framework  # noqa: F401  (FRAMEWORKS re-exported)



class HasTables(Protocol):
    """What reads a calibration table: the catalog (hardware.loader.Catalog), or a test double."""

    def table(self, name: str) -> object: ...

_Pos = Annotated[float, Field(gt=0, allow_inf_nan=False)]
_NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]

#: Bytes per parameter of the weights, gradients and optimizer states, by convention name.
STATE_CONVENTIONS: dict[str, tuple[int, int, int]] = {
    # (weights, gradients, optimizer) bytes per parameter
    "mixed-adam-fp32-grads": (2, 4, 12),
    "mixed-adam": (2, 2, 12),
}


class TrainingCalibration(Record):
    gemm_size_curve: tuple[tuple[float, float], ...]
    #: The training software's features by name (hardware/training_frameworks.py).
    frameworks: dict[str, Framework]
    #: The framework of a profile or case that names none: what a team runs today.
    default_framework: str
    flash_attention_fwd_efficiency: Annotated[float, Field(gt=0, le=1)]
    flash_attention_bwd_efficiency: Annotated[float, Field(gt=0, le=1)]
    #: FlashAttention-2 (a framework's ``attention = "flash2"``) on GPUs whose tensor cores it
    #: does not program natively (``generation()`` keys): its forward ceiling as a fraction of
    #: the dense 16-bit peak (training/layer_time.flash_efficiency).
    flash2_peak_fraction: Annotated[float, Field(gt=0, le=1)] = 1.0
    flash2_capped_generations: tuple[str, ...] = ()
    causal_fraction: Annotated[float, Field(gt=0, le=1)]
    norm_bytes_per_element: _NonNeg
    bias_dropout_add_bytes_per_element: _NonNeg
    gelu_bytes_per_element: _NonNeg
    swiglu_bytes_per_element: _NonNeg
    softmax_fwd_bytes_per_element: _NonNeg
    softmax_bwd_bytes_per_element: _NonNeg
    elementwise_bwd_factor: _Pos
    kernel_gap_us: _NonNeg
    kernels_per_layer_fwd: Annotated[int, Field(ge=0)]
    #: Host time per optimizer step and per micro-batch (seconds), and the per-GPU spread of
    #: speed behind the straggler term (gpuplan/training/host.py).
    host_step_s: _NonNeg
    host_microbatch_s: _NonNeg
    straggler_sigma: Annotated[float, Field(ge=0, lt=1)]
    #: Power caps (gpuplan/physics/power.py): the power a GPU draws goes as its SM clock to this
    #: power, and a memory-bound kernel draws this fraction of the board's rating.
    power_cap_clock_exponent: Annotated[float, Field(ge=1, le=3)]
    hbm_stream_power_fraction: Annotated[float, Field(gt=0, le=1)]
    #: MoE expert loop (gpuplan/training/moe.py): host launches per local expert and their cost.
    moe_launches_per_expert_fwd: Annotated[int, Field(ge=0)]
    moe_launches_per_expert_bwd: Annotated[int, Field(ge=0)]
    moe_launch_us: _NonNeg
    #: HBM bytes per element of a standalone FP8 quantize kernel (read 16-bit, write row- and
    #: column-wise 8-bit copies); current scaling re-reads the input for its amax.
    fp8_cast_bytes: _NonNeg
    state_convention: Literal["mixed-adam-fp32-grads", "mixed-adam"]
    optimizer_bytes_per_param: _NonNeg
    fp8_weight_copy_bytes: _NonNeg
    runtime_overhead_gib: _NonNeg
    fragmentation_fraction: Annotated[float, Field(ge=0, lt=1)]
    logits_bytes_per_element: _NonNeg
    collective_size_curve: tuple[tuple[float, float], ...]
    activation_bytes: _Pos
    overlap_slowdown_scaleup: Annotated[float, Field(ge=0, lt=1)]
    overlap_slowdown_scaleout: Annotated[float, Field(ge=0, lt=1)]
    interruptions_per_gpu_hour: _NonNeg
    restart_hours: _NonNeg
    checkpoint_save_hours: _NonNeg
    fixed_downtime_fraction: Annotated[float, Field(ge=0, lt=1)]
    #: Headroom below which a plan's memory is called tight (a warning finding).
    memory_tight_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.03

    def framework(self, name: str | None) -> Framework:
        """The features of framework ``name`` (None: the default framework)."""
        return self.frameworks[name or self.default_framework]

    @property
    def state_bytes(self) -> tuple[int, int, int]:
        """(weights, gradients, optimizer) bytes per parameter of the named convention."""
        return STATE_CONVENTIONS[self.state_convention]

    def gemm_fraction(self, ideal_us: float) -> float:
        """Fraction of the matmul ceiling one GEMM reaches that would take ``ideal_us``
        microseconds at the ceiling (log-linear curve): the fixed cost of a kernel (launch,
        ramp, tail) weighs on its duration, not on its FLOPs."""
        return _interp(self.gemm_size_curve, ideal_us)

    def collective_fraction(self, size_bytes: float) -> float:
        """Fraction of the large-message bus bandwidth a collective of this buffer reaches."""
        return _interp(self.collective_size_curve, size_bytes / 2**20)


class CalibrationView:
    """A TrainingCalibration's figures as plain slots, for the training model's hot paths.

    Made when the calibration was a pydantic model, whose every attribute read went through
    ``BaseModel.__getattr__`` (~0.7k instructions a read on CPython 3.11 against ~30 for a slot); a
    default plan reads the calibration ~27,000 times. The calibration is now a plain record
    (hardware/record.py); the view's slots (and ``state_bytes`` computed once) still save 3.1 M
    instructions of a cold default recommend and 4.6 M of the 405B one (callgrind, 2026-11-28). It holds the same objects (each field's value, the frameworks as
    :class:`FrameworkView`) and the same methods, so every value read through it is the one the
    record gives. Built once per calibration (:func:`calibration_view`)."""

    __slots__ = ("_model", "state_bytes", *TrainingCalibration.model_fields)

    def __init__(self, cal: TrainingCalibration) -> None:
        set_ = object.__setattr__
        for name in TrainingCalibration.model_fields:
            set_(self, name, getattr(cal, name))
        set_(self, "frameworks", {k: FrameworkView(v) for k, v in cal.frameworks.items()})
        set_(self, "state_bytes", cal.state_bytes)
        set_(self, "_model", cal)

    # The model's own methods (plain functions of the fields, read here from the slots): one place each.
    framework = TrainingCalibration.framework
    gemm_fraction = TrainingCalibration.gemm_fraction
    collective_fraction = TrainingCalibration.collective_fraction


class FrameworkView:
    """A Framework's features as plain slots (:class:`CalibrationView`)."""

    __slots__ = tuple(Framework.model_fields)

    def __init__(self, fw: Framework) -> None:
        for name in Framework.model_fields:
            object.__setattr__(self, name, getattr(fw, name))


#: The view of each calibration, by identity (the calibration held, so its id stays its own).
_VIEWS: dict[int, tuple[CalibrationView, TrainingCalibration]] = memo()


def calibration_view(cal: "TrainingCalibration | CalibrationView") -> CalibrationView:
    """The :class:`CalibrationView` of ``cal`` (itself when it is one), one per calibration."""
    if isinstance(cal, CalibrationView):
        return cal
    hit = _VIEWS.get(id(cal))
    if hit is None:
        if len(_VIEWS) >= 64:
            _VIEWS.clear()
        hit = _VIEWS[id(cal)] = (CalibrationView(cal), cal)
    return hit[0]


#: :func:`log_interp` by curve identity and abscissa: a training plan reads the same few hundred
#: GEMM and buffer sizes thousands of times. The curve is held in the entry so that its id stays
#: its own. Bounded: cleared when full.
_INTERPOLATED: dict[tuple[int, float], tuple[float, tuple[tuple[float, float], ...]]] = memo()


def _interp(points: tuple[tuple[float, float], ...], x: float) -> float:
    """:func:`log_interp`, memoised (``_INTERPOLATED``)."""
    key = (id(points), x)
    hit = _INTERPOLATED.get(key)
    if hit is None:
        if len(_INTERPOLATED) >= 16384:
            _INTERPOLATED.clear()
        hit = _INTERPOLATED[key] = (log_interp(points, x), points)
    return hit[0]


def log_interp(points: tuple[tuple[float, float], ...], x: float) -> float:
    """Piecewise-linear interpolation in log(x), clamped at both ends."""
    if x <= points[0][0]:
        return points[0][1]
    if x >= points[-1][0]:
        return points[-1][1]
    lx = math.log(x)
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (lx - math.log(x0)) / (math.log(x1) - math.log(x0))
    return points[-1][1]  # pragma: no cover


def calibration(catalog: HasTables) -> TrainingCalibration:
    """The training constants of ``catalog`` (``calibration/training.toml``, validated at load)."""
    found = catalog.table("training")
    assert isinstance(found, TrainingCalibration)
    return found
