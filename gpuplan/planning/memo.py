"""The planners' memos, in one place to clear.

Planning reuses, across plans in one process, what does not depend on the field a caller varies
(issue 21): serving replicas and their ceilings (serving/planner.py), disaggregated workers and their
prefill rates (serving/disagg_search.py), fleet costs (serving/fleet.py), weight bytes (serving/model.py), the queue-tail solves
(physics/queueing.py), the training search's shared
parts, evaluations and deadline searches (training/evaluator.py, training/search.py), the layout bytes and DP
values the GPU types share (training/evaluator.py, training/space.py), ramped
collective networks (training/groupcomm.py) and checked fabric graphs (fabric/interconnect.py).
Every memo is bounded and exact (a plan is the same with or without it); :func:`clear_memos`
empties them, for a benchmark that times a plan from scratch or a long-lived process that wants
the memory back.
"""

from __future__ import annotations


def clear_memos() -> None:
    """Empty every planning memo of this process."""
    from gpuplan.fabric import interconnect
    from gpuplan.hardware import training_calibration
    from gpuplan.physics import queueing
    from gpuplan.serving import disagg_search, fleet, model
    from gpuplan.serving import planner as serving_planner
    from gpuplan.training import bounds, evaluator, groupcomm, groups, layer_time, space, timing

    evaluator._Parts._shared.clear()
    evaluator._Parts._bytes.clear()
    evaluator._GOODPUT.clear()
    groupcomm._RAMPED.clear()
    groupcomm._COLLECTIVES.clear()
    space._DPS.clear()
    timing._AVERAGES.clear()
    timing._HOPS.clear()
    bounds._LAGS.clear()
    groups._ROWS.clear()
    layer_time._GEMMS.clear()
    serving_planner._REPLICAS.clear()
    serving_planner._ENGINES.clear()
    disagg_search._WORKERS.clear()
    disagg_search._RATES.clear()
    fleet._FLEETS.clear()
    model._WEIGHTS.clear()
    queueing._tail_decay_rate.cache_clear()
    interconnect._CHECKED.clear()
    training_calibration._INTERPOLATED.clear()
