"""The roofline model (Williams, Waterman and Patterson, CACM 52(4), 2009).

A kernel doing ``F`` FLOPs over ``B`` bytes of DRAM traffic has arithmetic intensity
``AI = F / B``. A processor with peak ``P`` FLOP/s and bandwidth ``W`` bytes/s attains
``min(P, AI * W)``; the ridge point ``P / W`` separates memory-bound (AI below) from
compute-bound kernels. Time is ``max(F / P, B / W)`` when the two overlap perfectly and
``F / P + B / W`` when they do not (the serving model uses the latter for weight-streaming GEMMs,
see docs/serving-model.md, "GEMM time").

Pure functions; rates are whatever the caller passes (datasheet peaks times efficiencies).
"""

from __future__ import annotations

from typing import Literal

Bound = Literal["compute", "memory"]


def ridge_point(peak_flops: float, bandwidth_bytes_per_s: float) -> float:
    """FLOP per byte at which a kernel turns compute-bound: ``peak / bandwidth``."""
    if bandwidth_bytes_per_s <= 0:
        raise ValueError("bandwidth must be positive")
    return peak_flops / bandwidth_bytes_per_s


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOP per byte of DRAM traffic; infinite when nothing is moved."""
    return flops / bytes_moved if bytes_moved > 0 else float("inf")


def attainable_flops(intensity: float, peak_flops: float, bandwidth_bytes_per_s: float) -> float:
    """Attainable FLOP/s at arithmetic intensity ``intensity``: ``min(peak, AI * BW)``."""
    return min(peak_flops, intensity * bandwidth_bytes_per_s)


def achieved_tflops(flops: float, seconds: float) -> float | None:
    """Throughput a kernel or step achieves, TFLOP/s: its FLOPs over the time it takes (the point a
    roofline plots below the roof; Williams et al. plot measured kernels the same way). None for a
    step of no duration."""
    if seconds <= 0 or flops < 0:
        return None
    return flops / seconds / 1e12


def bound(intensity: float, ridge: float) -> Bound:
    """``"compute"`` at or above the ridge point, ``"memory"`` below it."""
    return "compute" if intensity >= ridge else "memory"


def overlapped_time_s(flops: float, bytes_moved: float, flops_per_s: float, bytes_per_s: float) -> float:
    """Perfect-overlap roofline time: ``max(F / P, B / W)``."""
    return max(flops / flops_per_s, bytes_moved / bytes_per_s)


def serial_time_s(flops: float, bytes_moved: float, flops_per_s: float, bytes_per_s: float) -> float:
    """No-overlap roofline time: ``F / P + B / W`` (at the ridge point, half the roofline rate)."""
    return flops / flops_per_s + bytes_moved / bytes_per_s


def memory_bound_tokens_per_s(bytes_per_token: float, bandwidth_bytes_per_s: float) -> float:
    """Upper bound of batch-1 decode: every token streams ``bytes_per_token`` (weights + KV) once."""
    if bytes_per_token <= 0:
        raise ValueError("bytes_per_token must be positive")
    return bandwidth_bytes_per_s / bytes_per_token


def gemm_time_s(math_s: float, stream_s: float, knee: float) -> float:
    """A GEMM's time from its math and DRAM-stream times: ``(math^p + stream^p)^(1/p)``, ``p = knee``.

    A smooth maximum of the two roofs: far from the ridge point the shorter part hides under the
    longer (a compute-bound GEMM streams its next tiles while it multiplies); at the ridge the
    kernel takes ``2^(1/p)`` times either roof. ``p`` 1 is the no-overlap roofline ``math +
    stream``, a large ``p`` the plain ``max``. ``p`` is fitted to measured GEMM latencies
    (benchmarks/fit_gemm.py, docs/serving-model.md)."""
    # max() and min() spelled out (the same choice, ties and NaN included): this runs per step.
    hi = stream_s if stream_s > math_s else math_s
    lo = stream_s if stream_s < math_s else math_s
    if hi <= 0:
        return 0.0
    return hi * (1.0 + (lo / hi) ** knee) ** (1.0 / knee)
