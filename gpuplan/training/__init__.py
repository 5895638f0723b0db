"""The training planner: FLOPs, memory, step time, goodput, layout search (docs/training-model.md).

Public entry points: :func:`gpuplan.training.planner.plan_training`,
:func:`gpuplan.training.planner.with_network` and :func:`gpuplan.training.cases.predict`.
"""
