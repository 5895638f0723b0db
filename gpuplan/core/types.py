"""Constrained number types shared by every pydantic model at gpuplan's boundaries."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

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
#: STRICT for the catalog's records: their validators are built when first used, which a start
#: from the pre-parsed catalog (gpuplan/hardware/preparsed.py) never does.
CATALOG_STRICT = ConfigDict(STRICT, defer_build=True)

#: SI multipliers a count may be written with in a profile (``tokens = "15T"``, ``params = "70B"``).
#: Lowercase ``m`` (milli) is not one; ``B`` (billion) is the G of counts of parameters and tokens.
SI_MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "b": 1e9, "T": 1e12, "t": 1e12, "P": 1e15}
#: (A number with its suffix; compiled when a profile first writes one.)
SI_NUMBER = r"\s*((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([kKMGBbTtP])\s*"


def si_number(value: Any) -> Any:
    """``"70B"`` -> 70e9 (exact decimal arithmetic); anything else is left for the field to check."""
    if isinstance(value, str):
        m = re.fullmatch(SI_NUMBER, value)
        if m:
            try:
                return float(Decimal(m.group(1)) * Decimal(repr(SI_MULTIPLIERS[m.group(2)])))
            except (ArithmeticError, ValueError):  # an exponent too large for a float
                return value
    return value


class _SiCount:
    """A count that may carry an SI suffix (docs/profile.md, "Numbers"): parsed before the
    number's own checks, and in the JSON Schema a number or such a string."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(si_number, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        return {"anyOf": [handler(schema), {"type": "string", "pattern": SI_PATTERN}]}


SI_PATTERN = r"^\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*[kKMGBbTtP]\s*$"
SiCount = _SiCount()
