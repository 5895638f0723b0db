"""The closest fix of an infeasible phase (docs/json.md): the smallest change of one constraint
that makes it feasible, found by re-planning (gpuplan/planning/closest_fix.py). Data only."""


from typing import Annotated

from pydantic import Field

from gpuplan.core.contract_base import _Out
from gpuplan.core.records import dataclass


@dataclass(frozen=True, kw_only=True)
class ClosestFix(_Out):
    #: A saved plan's ``from`` may also be written ``from_`` (the field's name).
    __pydantic_config__ = {"extra": "forbid", "populate_by_name": True}

    #: The profile field changed, e.g. ``training.deadline_days``, ``serving.qps``, ``constraints.allow_gpus``.
    constraint: str
    #: Its value in the profile and the value that plans feasibly (as written in a profile).
    from_: Annotated[str, Field(alias="from")]
    to: str
    message: str
