"""The planners' memos, in one place to clear.

Planning reuses, across plans in one process, what does not depend on the field a caller varies
(issue 21): serving replicas, workers and fleet costs, the training search's parts, evaluations,
layout bytes and pipeline ranks, ramped collectives, checked fabric graphs, cost bases, the
queue-tail solves. Each memo is made with :func:`gpuplan.core.memo.memo` where it is used (so no
list here to keep: ``grep -rn "= memo()" gpuplan`` finds them), bounded and exact (a plan is the
same with or without it); :func:`clear_memos` empties them, for a benchmark that times a plan from
scratch or a long-lived process that wants the memory back.
"""

from __future__ import annotations

from gpuplan.core.memo import clear_all


def clear_memos() -> None:
    """Empty every planning memo of this process (:func:`gpuplan.core.memo.clear_all`)."""
    clear_all()
