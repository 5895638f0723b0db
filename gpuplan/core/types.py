"""Constrained number types shared by every pydantic model at gpuplan's boundaries."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

#: Finite and > 0.
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
#: Finite and >= 0.
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]
#: A fraction in (0, 1].
Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False, strict=True)]
PositiveInt = Annotated[int, Field(gt=0, strict=True)]
NonNegativeInt = Annotated[int, Field(ge=0, strict=True)]
#: Catalog and preset ids: lowercase letters, digits, '.', '_' and '-'.
ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
Id = Annotated[str, Field(min_length=1, max_length=64, pattern=ID_PATTERN)]

#: Every model read from a file: unknown keys are errors, objects are immutable.
STRICT = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
