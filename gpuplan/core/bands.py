"""The interval fields every phase of a plan carries (data only; docs/calibration.md, docs/json.md).

A mixin of :class:`~gpuplan.core.contract.TrainingPlan` and ``ServingPlan``, kept out of
core/contract.py so that module stays under the size limit.
"""


from pydantic import BaseModel, ConfigDict


class PhaseIntervals(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    #: [low, high] of each predicted figure at ``interval_level``, from the validation residuals
    #: of the phase's regime, named by ``interval_basis``; empty without a residual table.
    intervals: dict[str, tuple[float, float]] = {}
    interval_level: float | None = None
    interval_basis: str | None = None
