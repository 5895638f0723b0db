"""The planners' memos, in one place to clear.

Planning reuses, across plans in one process, what does not depend on the field a caller varies
(issue 21): serving replicas and their ceilings (serving/planner.py), disaggregated workers and their
prefill rates (serving/disagg_search.py), fleet costs (serving/fleet.py), weight bytes (serving/model.py), the queue-tail solves
(physics/queueing.py), the training search's shared
parts, evaluations and deadline searches (training/evaluator.py, training/search.py), the layout bytes and DP
values the GPU types share (training/evaluator.py, training/space.py), ramped
collective networks (training/groupcomm.py) and checked fabric graphs (fabric/interconnect.py).
Every memo is bounded and exact (a plan is the same with or without it), and registered where it
is made (:func:`gpuplan.core.memo.memo`); :func:`clear_memos` empties them, for a benchmark that
times a plan from scratch or a long-lived process that wants the memory back.
"""

from __future__ import annotations

from gpuplan.core.memo import clear_all


def clear_memos() -> None:
    """Empty every planning memo of this process (:func:`gpuplan.core.memo.clear_all`)."""
    clear_all()
