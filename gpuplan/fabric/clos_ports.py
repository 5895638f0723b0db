"""Port arithmetic of a folded Clos: a leaf's split into down- and uplinks, the spine divisor rule,
and the endpoints a Clos of one, two or three tiers holds (docs/fabric-model.md)."""

from __future__ import annotations

import math

from gpuplan.fabric.clos import SizingError


def leaf_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """Down and up ports of a leaf: u = floor(k / (1 + r)), d = floor(u * r).

    Non-blocking 64 ports: 32/32 (RA-11333-001). 4:1 on 64 ports: 48 down / 12 up, 4 spare
    (shared reference fabric.md section 3.2).
    """
    up = max(1, int(radix // (1 + oversubscription)))
    down = max(1, min(radix - up, int(math.floor(up * oversubscription + 1e-9))))
    return down, up


def radix_half(radix: int) -> int:
    """Down ports of a non-blocking leaf: k/2 (rounded down)."""
    return max(1, radix // 2)


def min_uplinks(down: int, oversubscription: float) -> int:
    """Fewest uplinks that keep down : up within the requested ratio: ceil(down / r)."""
    return max(1, math.ceil(down / oversubscription - 1e-9))


def smallest_divisor_at_least(n: int, floor_value: int) -> int | None:
    """The smallest divisor of n that is >= floor_value (None if none)."""
    lo = max(1, floor_value)
    for s in range(lo, n + 1):
        if n % s == 0:
            return s
    return None


def spines_for(leaves: int, up: int, radix: int) -> int | None:
    """Divisor rule: the smallest s with s | up and s * radix >= leaves * up.

    At least two spines when there are two leaves or more, so no single switch carries all
    cross-leaf traffic (Juniper AI inference JVD front end: 4 leaves, 2 spines; fabric.md s4).
    """
    floor_value = -(-leaves * up // radix)
    if leaves > 1:
        floor_value = max(floor_value, min(2, up))
    return smallest_divisor_at_least(up, floor_value)


# ---------------------------------------------------------------------------- capacities
def tier_capacity(radix: int, tiers: int, leaf_down: int | None = None) -> int:
    """Endpoints a folded Clos of ``tiers`` tiers holds (non-blocking default: d = k/2).

    1 tier: k; 2 tiers: k leaves x d; 3 tiers: k pods x k/2 leaves x d (k^3/4 when d = k/2).
    """
    d = radix // 2 if leaf_down is None else leaf_down
    if tiers == 1:
        return radix
    if tiers == 2:
        return radix * d
    if tiers == 3:
        return radix * (radix // 2) * d
    raise SizingError(f"{tiers} tiers are not modelled")
