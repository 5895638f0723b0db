"""The fields of a :mod:`gpuplan.core.records` dataclass as :func:`dataclasses.dataclass` makes
them, built directly: its per-field lookups of ``ClassVar``, ``InitVar`` and ``KW_ONLY`` were a third
of a class's cost (benchmarks/README.md, issue 21); and the docstring it gives a class without one."""

from __future__ import annotations

import abc
import dataclasses
import inspect
import re
import sys
import types
import typing
from dataclasses import MISSING, Field, field

#: The default a field with a ``default_factory`` shows in ``__init__``'s signature (``<factory>``).
FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None)
#: A field proper's mark (not ClassVar, InitVar), kept by fields(); how a string annotation is read.
_FIELD = getattr(dataclasses, "_FIELD", None)
#: The optional module and the name an annotation string starts with, as dataclasses reads it
#: (its ``_MODULE_IDENTIFIER_RE``, 3.10-3.13): here, so no private name is needed to read one.
_FIRST_NAME = re.compile(r'^(?:\s*(\w+)\s*\.)?\s*(\w+)')
#: The versions whose dataclasses :func:`fields_of` reproduces (a later one builds the fields itself).
OWN_FIELDS = (3, 10) <= sys.version_info[:2] <= (3, 13) and _FIELD is not None


def pseudo_name(ann: str, namespace: dict[str, typing.Any]) -> bool:
    """Whether the first name of the string annotation ``ann`` is, in the class's module, a
    ``ClassVar``, ``InitVar`` or ``KW_ONLY`` under another name: the standard library reads such an
    annotation as one (it looks that name up there, with or without a module before it)."""
    match = _FIRST_NAME.match(ann)
    value = namespace.get(match.group(2)) if match else None
    return value is not None and (value is typing.ClassVar or value is dataclasses.InitVar
                                  or value is dataclasses.KW_ONLY or isinstance(value, dataclasses.InitVar)
                                  or typing.get_origin(value) is typing.ClassVar)


#: kw_only -> (the __dataclass_params__ of a class without fields, made by the standard library
#: with init, repr and eq off; what else it set on that class, such as 3.13's ``__replace__``).
_BLANK: dict[bool, tuple[typing.Any, dict[str, typing.Any]]] = {}


def _blank(kw_only: bool) -> tuple[typing.Any, dict[str, typing.Any]]:
    if kw_only not in _BLANK:
        probe = type("_Probe", (), {"__doc__": "-", "__module__": __name__})
        before = dict(probe.__dict__)
        dataclasses.dataclass(probe, init=False, repr=False, eq=False, kw_only=kw_only)
        made = {k: v for k, v in probe.__dict__.items() if k not in before and k not in
                ("__dataclass_params__", "__dataclass_fields__", "__match_args__")}
        _BLANK[kw_only] = probe.__dataclass_params__, made  # type: ignore[attr-defined]
    return _BLANK[kw_only]


def fields_of(cls: type, kw_only: bool) -> tuple[Field, ...]:
    """What ``dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)`` sets
    on a :func:`_plain` class (every annotation a field proper), in its steps: params, each field
    from the class attribute of its name, the attributes set to the defaults, the fields, what it
    sets on any dataclass, ``__match_args__``; its errors for a mutable default or a bare field()."""
    blank, made = _blank(kw_only)  # a copy of the params of a class without fields
    params = object.__new__(type(blank))
    for slot in type(blank).__slots__:
        setattr(params, slot, getattr(blank, slot))
    cls.__dataclass_params__ = params  # type: ignore[attr-defined]
    annotations = cls.__dict__.get("__annotations__", {})
    fields: dict[str, Field] = {}
    given = []  # the fields written as field(...) in the class, whose attribute becomes the default
    for name, tp in annotations.items():
        default = getattr(cls, name, MISSING)
        if isinstance(default, Field):
            f = default
            given.append(f)
        else:
            if isinstance(default, types.MemberDescriptorType):  # a slot: no default
                default = MISSING
            f = field(default=default)
        f.name, f.type, f._field_type = name, tp, _FIELD  # type: ignore[attr-defined]
        if f.kw_only is MISSING:
            f.kw_only = kw_only  # type: ignore[assignment]
        if (f.default.__class__.__hash__ is None if sys.version_info >= (3, 11)
                else isinstance(f.default, (list, dict, set))):
            raise ValueError(f"mutable default {type(f.default)} for field {f.name} is not allowed: use default_factory")
        fields[name] = f
    for f in given:
        if f.default is MISSING:
            delattr(cls, f.name)
        else:
            setattr(cls, f.name, f.default)
    for name, value in cls.__dict__.items():
        if isinstance(value, Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    for name, value in made.items():
        if name not in cls.__dict__:
            setattr(cls, name, value)
    cls.__match_args__ = tuple(f.name for f in fields.values() if not f.kw_only)  # type: ignore[attr-defined]
    abc.update_abstractmethods(cls)
    return tuple(fields.values())


def doc_of(cls: type, fields: tuple[Field, ...], kw_only: bool) -> str:
    """The docstring the standard library gives a dataclass without one, ``Name(signature)``
    (``inspect.signature(cls)`` less ``-> None``), formatted from the fields as inspect does when
    the signature is this ``__init__``'s (no metaclass, ``__new__``, ``__signature__``, ``__wrapped__``)."""
    if (type(cls) is not type or hasattr(cls, "__signature__") or hasattr(cls, "__wrapped__")
            or any("__new__" in base.__dict__ for base in cls.__mro__[:-1])):
        try:
            return cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            return cls.__name__
    parts = ["*"] if kw_only and fields else []
    for f in fields:
        default = FACTORY if f.default_factory is not MISSING else f.default
        parts.append(f"{f.name}: {inspect.formatannotation(f.type)}"
                     + ("" if default is MISSING else f" = {default!r}"))
    return f"{cls.__name__}({', '.join(parts)}) -> None".replace(" -> None", "")


def call_error(qualname: str, args: tuple, kwargs: dict[str, typing.Any], order: list[str],
                required: frozenset[str]) -> TypeError:
    """The TypeError Python raises for a bad call of a keyword-only ``__init__``, in its order."""
    if args:
        given = sum(k in order for k in kwargs)
        also = f" positional arguments (and {given} keyword-only argument{'s' if given > 1 else ''})" if given else ""
        return TypeError(f"{qualname}() takes 1 positional argument but {len(args) + 1}{also} were given")
    unknown = next((k for k in kwargs if k not in order), None)
    if unknown is not None:
        return TypeError(f"{qualname}() got an unexpected keyword argument {unknown!r}")
    missing = [repr(n) for n in order if n in required and n not in kwargs]
    listed = missing[0] if len(missing) == 1 else " and ".join(missing) if len(missing) == 2 else \
        ", ".join(missing[:-1]) + ", and " + missing[-1]
    plural = "s" if len(missing) > 1 else ""
    return TypeError(f"{qualname}() missing {len(missing)} required keyword-only argument{plural}: {listed}")
