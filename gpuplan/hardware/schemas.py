"""Validation into catalog records: the schema of a record class, and data validated by it.

The one way TOML data becomes a catalog record (hardware/record.py): the pydantic schema of the
record validates it (hardware/schema_records.py, hardware/schema_tables.py, imported with this
module), and the validated model is turned into records. Imported where data is validated (the
loader's parsing path, ``gpuplan validate --residuals``, calibrate), never by a start from the
pre-parsed catalog.
"""

from __future__ import annotations

from typing import Any, TypeVar

from gpuplan.hardware import schema_records, schema_tables  # noqa: F401  (they fill SCHEMAS)
from gpuplan.hardware.record import SCHEMAS, Record, to_record

R = TypeVar("R", bound=Record)


def schema_of(cls: type[Record]) -> Any:
    """The pydantic schema class of the record class ``cls``."""
    return SCHEMAS[cls]


def validate(cls: type[R], data: Any) -> R:
    """``data`` validated by the schema of ``cls``, as a record of ``cls`` (a pydantic
    ValidationError when it is not valid)."""
    return to_record(SCHEMAS[cls].model_validate(data))  # type: ignore[no-any-return]
