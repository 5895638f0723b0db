"""What a power cap below the board's rated power does to a GPU's compute rate.

Dynamic CMOS power is ``P = a C V^2 f``, and across a GPU's DVFS range the supply voltage moves
roughly in proportion to the clock, so the power a compute-bound kernel draws goes as the cube
of the clock (Weste and Harris, CMOS VLSI Design, 4th ed., section 5.1 "Dynamic power"; the
V-f coupling: section 5.2.5 "Dynamic voltage scaling"). A cap at ``cap`` watts on a board rated
``tdp`` watts that a training step holds at its limit therefore slows the clock, and every
tensor-core kernel with it, to ``(cap / tdp) ** (1/3)``. Memory-bound kernels keep their HBM
bandwidth (the memory clock is not the one the power manager lowers first).

The cube root is the optimistic end: the part of the board power that does not scale with the
SM clock (HBM, leakage, fans of air-cooled boards) leaves less for the cores, so a real cap
costs at least this much.
"""

from __future__ import annotations


def capped_clock_fraction(cap_w: float | None, tdp_w: float) -> float:
    """Fraction of the full compute rate left under a power cap of ``cap_w`` watts (None or at or
    above ``tdp_w``: 1.0)."""
    if cap_w is None or cap_w >= tdp_w:
        return 1.0
    if cap_w <= 0:
        raise ValueError("a power cap must be positive")
    return (cap_w / tdp_w) ** (1.0 / 3.0)
