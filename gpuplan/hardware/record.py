"""The catalog's runtime records: what the planners read, without pydantic models behind them.

Every catalog class (``Gpu``, ``Fabric``, ``TrainingCalibration``, ``EngineRelease``...) is a
:class:`Record`: a plain class whose annotations are its fields (in their order) and whose class
attributes are their defaults, with the methods and properties the planners call. Its instances
are frozen and hold their fields in the instance ``__dict__``, set at once; an attribute read is an
ordinary one, which CPython specialises (not on a pydantic model: its class defines ``__getattr__``,
and a read costs some hundreds of instructions more on 3.11), and no pydantic class is built to read
the shipped catalog from its pre-parsed file (hardware/preparsed.py): building the ~30 catalog
schemas was ~58 M instructions of a cold start.

pydantic stays the one validation boundary. The schema of each record is a pydantic class that
derives from it (``class Gpu(BaseModel, schema.Gpu)`` in hardware/schema_records.py and
hardware/schema_tables.py), so the field names, types and defaults are written once, in the
record; the schema adds the configuration and the validators, and a record in a field is validated
by its own schema (:meth:`Record.__get_pydantic_core_schema__`). Whatever validates TOML (a
source checkout, an overlay, the wheel build, calibrate and refit) validates with the schema and
turns the validated model into records (hardware/schemas.py ``validate``, :func:`to_record`): the
planners see one kind of object on every path. A record is never built from unchecked fields:
``Gpu(id=...)`` is a TypeError.

The few pydantic methods the package and its tests call on catalog objects are here with the
same results for these records: ``model_copy(update=...)``, ``model_dump()`` and ``model_fields``
(the names); equality is by class and fields.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

#: Runtime record classes by name (the tags of the pre-parsed catalog; the names are unique).
RECORDS: dict[str, type[Record]] = {}
#: Record class -> its pydantic schema class, and back (filled when the schema modules are imported).
SCHEMAS: dict[type, type] = {}
RUNTIME: dict[type, type[Record]] = {}


class Record:
    """A frozen catalog record: fields from the annotations (:data:`_fields`, in order; ``leading``:
    names that come before them, from a pydantic base the schema class has), values in
    ``__dict__``."""

    __slots__ = ()

    def __init_subclass__(cls, leading: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type(cls) is not type:  # a pydantic schema class built over a record
            base = next(b for b in cls.__mro__ if type(b) is type and issubclass(b, Record))
            extra = set(cls.__dict__.get("__annotations__", ())) - set(base._fields)  # type: ignore[attr-defined]
            if extra:  # the record's annotations are the fields: a schema adds none
                raise TypeError(f"the schema {cls.__name__} has fields its record has not: {', '.join(sorted(extra))}")
            SCHEMAS[base], RUNTIME[cls] = cls, base
            return
        names = list(leading)
        for klass in reversed(cls.__mro__[:-2]):  # without Record and object
            names += [n for n in klass.__dict__.get("__annotations__", {}) if n not in names]
        if cls.__name__ in RECORDS:
            raise TypeError(f"two catalog records are named {cls.__name__}")
        RECORDS[cls.__name__] = cls
        cls._fields = tuple(names)  # type: ignore[attr-defined]
        cls.model_fields = dict.fromkeys(names)  # type: ignore[attr-defined]

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """A record in a schema's field (``efficiency: GpuEfficiency``) is validated by its own
        schema (pydantic's hook for a type it does not know): the schemas restate no field. A
        record given there is validated again from its fields (pydantic takes a model instance)."""
        from pydantic_core import core_schema

        def fields_of(value: Any) -> Any:
            return dict(value.__dict__) if type(value) is cls else value

        return core_schema.no_info_before_validator_function(fields_of, handler(SCHEMAS[cls]))

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return self.__dict__ == other.__dict__
        return NotImplemented

    def __hash__(self) -> int:
        # The values in the class's field order: every record is built with its fields in that
        # order (new_record's callers, model_copy), so equal records hash alike.
        return hash(tuple(self.__dict__.values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A copy with ``update``'s fields replaced, not validated (as pydantic's ``model_copy``)."""
        unknown = set(update or ()) - set(self.__dict__)
        if unknown:
            raise ValueError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        return new_record(type(self), {**self.__dict__, **(update or {})})

    def model_dump(self, *, mode: str = "python", exclude: set[str] | None = None) -> dict[str, Any]:
        """The fields as a dict (but ``exclude``), nested records as dicts (``mode="json"``: tuples
        as lists; dict keys as they are, where pydantic would write a number key as a string: no
        catalog record has one)."""
        return {k: _dump(v, mode == "json") for k, v in self.__dict__.items() if not exclude or k not in exclude}


def _dump(value: Any, json: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(mode="json" if json else "python")
    if isinstance(value, (list, tuple)):
        items = [_dump(v, json) for v in value]
        return items if json or type(value) is list else tuple(items)
    if isinstance(value, dict):
        return {k: _dump(v, json) for k, v in value.items()}
    return value


def new_record(cls: type[Record], fields: dict[str, Any]) -> Any:
    """A record of ``cls`` holding ``fields`` (every field of the class, in its order), not validated."""
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", fields)
    return obj


def to_record(value: Any) -> Any:
    """``value`` with every validated schema model in it turned into its record (lists, tuples and
    dicts rebuilt around them; anything else as it is)."""
    cls = RUNTIME.get(type(value))
    if cls is not None:
        return new_record(cls, {n: to_record(getattr(value, n)) for n in cls._fields})  # type: ignore[attr-defined]
    if type(value) is list:
        return [to_record(v) for v in value]
    if type(value) is tuple:
        return tuple(to_record(v) for v in value)
    if type(value) is dict:
        return {k: to_record(v) for k, v in value.items()}
    return value
