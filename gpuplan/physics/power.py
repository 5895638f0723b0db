"""What a power cap below the board's rated power does to a GPU: its compute rate and its draw.

A compute-bound kernel already runs at the board's power limit: a BF16 8192^3 GEMM loop on an
H100 SXM draws 697 W of its 700 W limit with the "SW power cap" clock event active and the SM
clock at 1,370 MHz of its 1,980 MHz boost, while an HBM copy loop draws 381 W (0.55 of the
rating) at the full clock (measured 2026-11-27: benchmarks/device/power-h100-2026-11-27.txt;
docs/training-model.md "Power caps"). A cap below the rating therefore binds on every GEMM of a
training step: the power manager lowers the SM clock until the draw fits. Dynamic power is ``a C V^2 f`` (Weste and
Harris, CMOS VLSI Design, 4th ed., section 5.1) and in the upper part of a GPU's DVFS range the
voltage follows the clock only in part, so the draw goes as the clock to a power ``k`` between 1
(voltage at its floor) and 3 (voltage in proportion). The GEMM rate under a cap is then
``(cap / rating) ** (1/k)``. ``k`` = 2 (training.toml ``power_cap_clock_exponent``) fits the
power-limit sweeps of the Zeus traces (You, Chung and Chowdhury, NSDI'23; ml-energy/zeus
``examples/research_reproducibility/zeus_nsdi23/trace/summary_power_v100.csv``): BERT on a V100
capped at 88% and 66% of its uncapped draw trains at 0.94 and 0.78-0.83 of its uncapped speed,
where ``k`` = 2 gives 0.94 and 0.81 and ``k`` = 3 (the former model here) 0.96 and 0.87.

Memory-bound kernels draw less than the rating and keep their bandwidth while the cap stays
above their draw; below it they slow by the same law.
"""

from __future__ import annotations


def _check(cap_w: float, exponent: float) -> None:
    if cap_w <= 0:
        raise ValueError("a power cap must be positive")
    if exponent < 1:
        raise ValueError("the power-clock exponent is at least 1 (voltage at its floor)")


def capped_clock_fraction(cap_w: float | None, tdp_w: float, exponent: float) -> float:
    """Fraction of its full rate a compute-bound kernel keeps under a cap of ``cap_w`` watts on a
    board rated ``tdp_w`` (None or at or above the rating: 1.0); the draw goes as clock^``exponent``."""
    if cap_w is None or cap_w >= tdp_w:
        return 1.0
    _check(cap_w, exponent)
    return (cap_w / tdp_w) ** (1.0 / exponent)


def capped_memory_fraction(cap_w: float | None, tdp_w: float, stream_fraction: float, exponent: float) -> float:
    """Fraction of its HBM bandwidth a memory-bound kernel keeps: 1.0 while the cap is above the
    ``stream_fraction`` of the rating such a kernel draws, the clock law below it."""
    if cap_w is None:
        return 1.0
    return capped_clock_fraction(cap_w, stream_fraction * tdp_w, exponent)


def capped_node_power_kw(node_power_kw: float, gpus_per_node: int, tdp_w: float, cap_w: float | None) -> float:
    """A server's maximum draw with each of its GPUs capped at ``cap_w``: the rated draw less what
    the caps take off the GPUs (the CPUs, NICs and fans keep theirs)."""
    if cap_w is None or cap_w >= tdp_w:
        return node_power_kw
    return node_power_kw - gpus_per_node * (tdp_w - cap_w) / 1000.0
