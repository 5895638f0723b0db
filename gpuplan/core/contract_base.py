"""The base of the plan's result classes: frozen, keyword-only dataclasses with no extra keys.

The classes are plain dataclasses built by :mod:`gpuplan.core.records` (``@dataclass(frozen=True,
kw_only=True)``, nothing compiled): defining these 33 costs about a third of what their pydantic
models did (issue 21, benchmarks/README.md). What pydantic did for them is done here, on first use
of each class:

* :meth:`_Out.model_dump` ``(mode="json", by_alias=True)``: the JSON data, converted by the declared
  types as pydantic converted them (an int in a float field becomes a float, a tuple a list,
  ``from_`` the key ``"from"``);
* :meth:`_Out.published`: a copy with the numbers the JSON publishes (rounded as
  :func:`~gpuplan.core.stable_json.stable` rounds them), what the renderers are given;
* :meth:`_Out.from_data`: an object back from dumped data, trusted (a renderer's escaped copy),
  without validating it;
* :meth:`_Out.model_validate` / ``model_validate_json``: untrusted data (a saved plan) validated by
  a pydantic ``TypeAdapter`` of the class, built when first needed: the same checks and errors as
  the models had (``__pydantic_config__`` forbids extra keys);
* :meth:`_Out.model_json_schema`: the JSON Schema (``gpuplan schema``) from the same adapter;
* :meth:`_Out.model_copy` ``(update=...)``: :func:`dataclasses.replace`.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Annotated, Any, Callable

from pydantic import Field

from gpuplan.core.stable_json import is_money, rounded

#: A roofline's peak, bandwidth and ridge: renderers divide by them, so a saved plan must carry
#: them finite and above zero (the planners always do).
RoofFigure = Annotated[float, Field(gt=0, allow_inf_nan=False)]

#: A field's conversion (None: the value as it is).
_Conv = Callable[[Any], Any] | None
#: (class, JSON mode, by alias) -> ((field, key), ...) and ((field, key, conversion), ...).
_DUMPS: dict[tuple[type, bool, bool], tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, Callable], ...]]] = {}
_BUILDS: dict[type, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, Callable], ...]]] = {}
_ADAPTERS: dict[type, Any] = {}
#: class -> ((field, JSON key, shape), ...) (see _shape).
_SPECS: dict[type, tuple[tuple[str, str, Any], ...]] = {}


class _Out:
    """Base of the result classes: the part of pydantic's model interface the package and the
    public :class:`~gpuplan.core.contract.Plan` use (docs/api.md)."""

    __slots__ = ()
    #: Read by pydantic when it validates or describes the class: no keys besides the fields.
    __pydantic_config__: typing.ClassVar[dict[str, Any]] = {"extra": "forbid"}

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A copy with ``update``'s fields replaced (no validation, as pydantic's)."""
        return dataclasses.replace(self, **update) if update else dataclasses.replace(self)  # type: ignore[type-var]

    def model_dump(self, *, mode: str = "python", by_alias: bool = False) -> dict[str, Any]:
        """The fields as a dict, nested objects as dicts; ``mode="json"``: lists for tuples;
        ``by_alias``: the JSON keys (``from`` for ``from_``)."""
        plain, converted = _DUMPS.get((type(self), mode == "json", by_alias)) or _dump_spec(
            type(self), mode == "json", by_alias)
        values = self.__dict__
        out = {key: values[name] for name, key in plain}
        for name, key, conv in converted:
            value = values[name]
            if value is not None:
                out[key] = conv(value)
        return out

    def model_dump_json(self, *, indent: int | None = None, by_alias: bool = False) -> str:
        """``model_dump(mode="json")`` as JSON text (compact, as pydantic writes it)."""
        data = self.model_dump(mode="json", by_alias=by_alias)
        return json.dumps(data, indent=indent, separators=(",", ":") if indent is None else None, ensure_ascii=False)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Any:
        """The object of ``model_dump(mode="json", by_alias=True)``'s data, trusted: not validated."""
        plain, converted = _BUILDS.get(cls) or _build_spec(cls)
        kwargs = {name: data[key] for name, key in plain}
        for name, key, conv in converted:
            value = data[key]
            if value is not None:
                kwargs[name] = conv(value)
        return cls(**kwargs)

    def published(self, key: str | None = None) -> Any:
        """A copy with the numbers the JSON publishes (:func:`~gpuplan.core.stable_json.stable`'s
        rounding, under ``key``'s dollar rule), as ``from_data(stable(model_dump(mode="json",
        by_alias=True)))`` would build it, in one walk."""
        cls = type(self)
        spec = _SPECS.get(cls) or _spec(cls)
        money = is_money(key)
        values = self.__dict__
        kwargs = {}
        for name, field_key, shape in spec:
            value = values[name]
            if value is None or shape is None:
                kwargs[name] = value
            else:
                kwargs[name] = _publish(value, shape, key if money and not is_money(field_key) else field_key)
        return cls(**kwargs)

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """Untrusted data validated as pydantic validated the model (pydantic's ValidationError)."""
        return _adapter(cls).validate_python(data)

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Any:
        return _adapter(cls).validate_json(text)

    @classmethod
    def model_json_schema(cls, mode: str = "validation") -> dict[str, Any]:
        """The JSON Schema pydantic writes for the class (a default factory's ``[]``/``{}`` shown)."""
        return _adapter(cls).json_schema(mode=mode, schema_generator=_schema_generator())


def _adapter(cls: type) -> Any:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def _schema_generator() -> type:
    """pydantic's schema generator, showing the default of a ``default_factory=list`` or ``dict``
    field as the ``[]`` or ``{}`` that the models' literal defaults showed."""
    from pydantic.json_schema import GenerateJsonSchema

    class _Schema(GenerateJsonSchema):
        def get_default_value(self, schema: Any) -> Any:
            factory = schema.get("default_factory")
            if factory in (list, dict) and not schema.get("default_factory_takes_data"):
                return factory()
            return super().get_default_value(schema)

    return _Schema


def _fields(cls: type) -> list[tuple[str, str, Any]]:
    """(name, JSON key, shape) of each field; the key is a ``Field(alias=...)``'s alias."""
    out = []
    for f in dataclasses.fields(cls):
        tp, key = f.type, f.name
        if type(tp) is _ANNOTATED:
            key = next((m.alias for m in tp.__metadata__ if getattr(m, "alias", None)), key)
        out.append((f.name, key, _shape(tp)))
    return out


_ANNOTATED = type(Annotated[int, ""])
_SHAPES: dict[Any, Any] = {}


def _shape(tp: Any) -> Any:
    """A field type reduced to what converting it needs: None (taken as it is: str, bool, a
    Literal), ``float``, ``int``, a result class, or ("list" | "tuple" | "dict", element shape).
    ``X | None`` is ``X``'s shape (None is never converted), ``Annotated[X, ...]`` is ``X``'s."""
    if tp is float or tp is int:
        return tp
    try:
        return _SHAPES[tp]
    except KeyError:
        pass
    kind = type(tp)
    if kind is _ANNOTATED:
        shape = _shape(tp.__origin__)
    elif isinstance(tp, type):
        if issubclass(tp, _Out):
            shape = tp
        elif tp in (str, bool, type(None)):
            shape = None
        else:
            raise TypeError(f"no conversion for the field type {tp!r}")
    elif kind is types.UnionType or typing.get_origin(tp) is typing.Union:
        args = [a for a in tp.__args__ if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"no conversion for the field type {tp!r}")
        shape = _shape(args[0])
    elif typing.get_origin(tp) is typing.Literal or tp is Any:
        shape = None
    elif kind is types.GenericAlias and tp.__origin__ in (list, tuple, dict):
        args = [a for a in tp.__args__ if a is not Ellipsis]
        if tp.__origin__ is dict:
            args = args[1:]
        if len(set(args)) != 1:
            raise TypeError(f"no conversion for the field type {tp!r}")
        shape = (tp.__origin__.__name__, _shape(args[0]))
    else:
        raise TypeError(f"no conversion for the field type {tp!r}")
    _SHAPES[tp] = shape
    return shape


def _spec(cls: type) -> tuple[tuple[str, str, Any], ...]:
    spec = _SPECS[cls] = tuple(_fields(cls))
    return spec


def _publish(value: Any, shape: Any, key: str | None) -> Any:
    """``value`` of ``shape`` with :func:`rounded` numbers, dollars by ``key`` (see stable())."""
    if shape is float:
        return rounded(value if value.__class__ is float else float(value), key)
    if shape is int:
        return _to_int(value)
    if isinstance(shape, type):
        return value.published(key)
    kind, element = shape
    if element is None:
        return dict(value) if kind == "dict" else tuple(value) if kind == "tuple" else list(value)
    if kind == "dict":
        money = is_money(key)
        return {k: None if x is None else _publish(x, element, key if money and not is_money(k) else k)
                for k, x in value.items()}
    items = [None if x is None else _publish(x, element, key) for x in value]
    return tuple(items) if kind == "tuple" else items


def _split(cls: type, convert: Callable[[Any], _Conv], by_alias: bool = True) -> tuple:
    """((field, key), ...) of every field, and ((field, key, conversion), ...) of those converted
    (written over the copied value, so that each key keeps its place in the field order)."""
    keys, converted = [], []
    for name, key, shape in _SPECS.get(cls) or _spec(cls):
        key = key if by_alias else name
        keys.append((name, key))
        conv = convert(shape)
        if conv is not None:
            converted.append((name, key, conv))
    return tuple(keys), tuple(converted)


def _dump_spec(cls: type, as_json: bool, by_alias: bool) -> tuple:
    spec = _DUMPS[(cls, as_json, by_alias)] = _split(cls, lambda shape: _dumper(shape, as_json, by_alias), by_alias)
    return spec


def _build_spec(cls: type) -> tuple:
    spec = _BUILDS[cls] = _split(cls, _builder)
    return spec


def _to_float(value: Any) -> float:
    return value if value.__class__ is float else float(value)


def _to_int(value: Any) -> int:
    """An int as pydantic stores it: a float only when whole (pydantic refused any other)."""
    if value.__class__ is int:
        return value
    if isinstance(value, float) and not value.is_integer():
        raise TypeError(f"an int field holds {value!r}")
    return int(value)


def _dumper(shape: Any, as_json: bool, by_alias: bool) -> _Conv:
    """The conversion of a value of ``shape`` to dumped data (None: none needed)."""
    if shape is None:
        return None
    if shape is float:
        return _to_float
    if shape is int:
        return _to_int
    if isinstance(shape, type):
        mode = "json" if as_json else "python"
        return lambda v: v.model_dump(mode=mode, by_alias=by_alias)
    kind, element = shape
    inner = _dumper(element, as_json, by_alias)
    if kind == "dict":
        return (lambda v: {k: inner(x) for k, x in v.items()}) if inner is not None else dict
    if kind == "tuple" and not as_json:
        return (lambda v: tuple(inner(x) for x in v)) if inner is not None else None
    return (lambda v: [inner(x) for x in v]) if inner is not None else list


def _builder(shape: Any) -> _Conv:
    """The conversion of dumped JSON data back to a value of ``shape`` (None: the data as it is)."""
    if shape is None or shape is float or shape is int:
        return None
    if isinstance(shape, type):
        return shape.from_data
    kind, element = shape
    if kind == "tuple":
        return tuple
    inner = _builder(element)
    if inner is None:
        return None
    if kind == "dict":
        return lambda v: {k: inner(x) for k, x in v.items()}
    return lambda v: [inner(x) for x in v]
