"""Units every layer shares: the size of each number format, and the byte multiples. Imports nothing.

Format sizes are definitions, not hardware figures: FP32/TF32 32 bits, BF16/FP16 16, FP8/INT8 8,
FP4/INT4 4 (block scales of a quantised format are extra, stated where a format is used).
"""

from __future__ import annotations

#: Bits per element of each number format.
DTYPE_BITS: dict[str, int] = {
    "fp32": 32, "tf32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp4": 4, "int4": 4,
}
#: Bytes per element of each number format (bits / 8: ``fp8`` -> 1, ``int4`` -> 0.5).
DTYPE_BYTES: dict[str, float] = {dtype: bits / 8 for dtype, bits in DTYPE_BITS.items()}

#: Binary gigabyte (GiB): memory capacities and sizes the plan reports in GiB.
GIB = float(2**30)
#: Decimal gigabyte: network rates (GB/s, Gb/s) and vendors' storage figures.
GB = 1e9

#: Days in a year of the calendar's average length (365.25: a multi-year horizon counts its leap
#: days). Every yearly figure (cost of ownership, fleet, autoscaling, $/token amortisation) uses this
#: one year, so a year's rent in one line times the horizon is the horizon's rent in another.
DAYS_PER_YEAR = 365.25
#: Hours in that year: 8,766.
HOURS_PER_YEAR = 24.0 * DAYS_PER_YEAR


def dtype_bytes(dtype: str) -> float:
    """Bytes per element of ``dtype`` (``bf16`` -> 2, ``fp8`` -> 1, ``int4`` -> 0.5)."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}") from None

