"""What a validation case hands to a planner, and how a planner says it cannot model a figure."""

from __future__ import annotations

from gpuplan.core.records import dataclass
from typing import Any

from gpuplan.model.arch import Architecture


class NotModelled(Exception):
    """The planner has no model for this case or figure (reported, never invented)."""


@dataclass(frozen=True)
class CaseInput:
    id: str
    file: str
    #: None for fabric cases, which have no model.
    arch: Architecture | None
    #: The raw ``[case.run]`` table; each planner validates it with its own schema.
    run: dict[str, Any]
    #: Figure names to predict.
    figures: tuple[str, ...]
