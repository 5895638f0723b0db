"""What the deadline scan (bounds._deadline_scan) reads besides a shape's terms: the straggler lag
and goodput of each GPU count, the days of a shape's pipeline sends, and the least days of the DPs
a rack's price buys."""

from __future__ import annotations

from gpuplan.core.memo import memo, on_clear_all
from gpuplan.training.evaluator import Evaluator
from gpuplan.training.fit import MEMO_ENTRIES
from gpuplan.training.layout import Layout
from gpuplan.training.timing import sends_s, straggler

#: ``(1 + straggler(n, sigma), goodput fraction of n GPUs)`` by GPU count ``n``, one table per
#: calibration (by identity, held) and sigma: both read only these (evaluator._GOODPUT: the
#: goodput is any GPU type's of the calibration), so every GPU type's scan shares them.
_FACTORS: dict[tuple[int, float], tuple[dict[int, tuple[float, float]], object]] = memo()


#: The setup of the last deadline scan (bounds._deadline_scan): (Evaluator, target, straggle, whether
#: its racks bracket the days, sigma, :func:`gpu_factors`' table), read by the next scan of the same
#: three (a search's scans, ~1,300 a plan) instead of being made again (~130 bytecodes a scan).
LAST_SCAN: list[tuple] = [(None, None, None, False, 0.0, {})]
on_clear_all(lambda: LAST_SCAN.__setitem__(0, (None, None, None, False, 0.0, {})))


def gpu_factors(ev: Evaluator, sigma: float) -> dict[int, tuple[float, float]]:
    """The table of :data:`_FACTORS` of ``ev``'s calibration and ``sigma``."""
    key = (id(ev.cal), sigma)
    hit = _FACTORS.get(key)
    if hit is None or hit[1] is not ev.cal:
        if len(_FACTORS) >= 16:
            _FACTORS.clear()
        hit = _FACTORS[key] = ({}, ev.cal)
    elif len(hit[0]) >= 65536:
        hit[0].clear()
    return hit[0]


def gpu_factor(ev: Evaluator, factors: dict[int, tuple[float, float]], n: int, sigma: float) -> tuple[float, float]:
    """Entry ``n`` of ``factors`` (:func:`gpu_factors`): the same floats the scan computed per
    DP (``1.0 + straggler(n, sigma)``; ``ev.goodput(n).fraction``)."""
    if len(factors) >= 65536:  # bounded where filled too: LAST_SCAN holds a table past gpu_factors
        factors.clear()
    f = factors[n] = (1.0 + straggler(n, sigma), ev.goodput(n).fraction)
    return f


def _bracket_days(ev: Evaluator, dps: tuple[int, ...], i: int, mp: int, mb: int, bubble: float, per_day: float,
                  cost: float | None, t: float, pricing: str) -> float:
    """The least of ``t`` (the days at ``dps[i]``) and those of the next DPs costing ``cost`` too
    (:func:`_deadline_scan`'s ``bracket``), theirs without straggler share (``t`` may count it) or sends: lower."""
    batch = ev.job.batch
    host_step, host_mb = ev.host_days
    for d in dps[i + 1:]:
        n = mp * d
        if ev.cost(n, 0.0, pricing) != cost:
            break
        m = batch / (d * mb)
        t = min(t, (per_day * (m + bubble) + host_mb * m + host_step) / ev.goodput(n).fraction)
    return t


def _send_days(ev: Evaluator, shape: Layout, dp: int) -> float:
    """Days of pipeline sends over the run of one VP's shape at ``dp`` (timing.pipeline_sends_s),
    memoised on the Evaluator's shared parts."""
    key = (shape[0], shape[1], shape[3], shape[5], shape[6], dp)  # TP, PP, CP, VP, micro-batch (by index: faster)
    memo = ev._sends
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= MEMO_ENTRIES:
            memo.clear()
        # pipeline_sends_s of shape.but(dp=dp) over its micro-batches (Layout.microbatches), by fields
        tp, pp, _, cp, _, vp, mb = shape[:7]
        seconds, _ = sends_s(ev.job, ev.hw, ev.cal, tp, pp, dp, cp, vp, mb, ev.job.batch // (dp * mb))
        hit = memo[key] = ev.steps * seconds / 86400.0
    return hit
