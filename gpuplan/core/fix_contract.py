"""The closest fix of an infeasible phase (docs/json.md): the smallest change of one constraint
that makes it feasible, found by re-planning (gpuplan/planning/closest_fix.py). Data only."""


from pydantic import BaseModel, ConfigDict, Field


class ClosestFix(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    #: The profile field changed, e.g. ``training.deadline_days``, ``serving.qps``, ``constraints.allow_gpus``.
    constraint: str
    #: Its value in the profile and the value that plans feasibly (as written in a profile).
    from_: str = Field(alias="from")
    to: str
    message: str
