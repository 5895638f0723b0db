"""``dataclass(frozen=True)`` built without the standard library's compilations.

The standard library writes each method of a dataclass as text and compiles it: for a frozen class
``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__``, about
0.7 ms a class, and a cold recommend defines some 90 (benchmarks/README.md, issue 21). Here the
last five are shared functions closed over the field names, doing what the generated ones do:

* ``__eq__``: the same class and equal tuples of the compared fields, else ``NotImplemented``;
* ``__hash__``: the hash of the tuple of the fields that are hashed (``hash`` or else ``compare``);
* ``__repr__``: ``Qualname(field=value!r, ...)`` over the fields shown, ``...`` when recursive;
* ``__setattr__`` / ``__delattr__``: :class:`dataclasses.FrozenInstanceError` for a field or on the
  class itself, else the base class's.

``__init__`` is the standard library's code (its signature and speed must be the standard one's),
compiled once per shape (how many fields, which with a default factory) and given each class's
names by :meth:`types.CodeType.replace`. The fields, ``__dataclass_fields__``,
``__dataclass_params__`` and ``__match_args__`` are the standard library's, built directly
(:func:`_fields`; its lookups for ``ClassVar``, ``InitVar`` and ``KW_ONLY`` in every field were a
third of a class), as is the docstring of a class without one; so :func:`dataclasses.fields`,
``replace`` and ``asdict`` work as before. With ``kw_only=True`` (the plan's result classes,
gpuplan/core/contract_base.py) nothing is compiled: ``__init__`` is a shared function that checks
the keywords and fills the instance's ``__dict__`` (also faster to call past three fields), with
the standard signature and ``TypeError`` messages. Anything else (not frozen, other options, a
``__post_init__``, dataclass bases, ``InitVar``, ``ClassVar``, ``KW_ONLY``, ``init=False`` fields or
a field's own ``kw_only``, a method of these names in the class) is left to
:func:`dataclasses.dataclass` (and after Python 3.13, the fields). tests/test_records.py compares
both on every frozen dataclass of the package.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import keyword
import operator
import reprlib
import sys
import types
import typing
from dataclasses import MISSING, Field, FrozenInstanceError, field

__all__ = ["cached_property", "constructor", "dataclass", "field"]

#: The default a field with a ``default_factory`` shows in ``__init__``'s signature (``<factory>``).
_FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None)
#: A field proper's mark (not ClassVar, InitVar), kept by fields(); how a string annotation is read.
_FIELD = getattr(dataclasses, "_FIELD", None)
_FIRST_NAME = getattr(dataclasses, "_MODULE_IDENTIFIER_RE", None)
#: The versions whose dataclasses :func:`_fields` reproduces (a later one builds the fields itself).
_OWN_FIELDS = (3, 10) <= sys.version_info[:2] <= (3, 13) and _FIELD is not None and _FIRST_NAME is not None
#: Methods the standard library would not overwrite (or refuses to): such a class is left to it.
_OWN = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__match_args__")
_PSEUDO = ("ClassVar", "InitVar", "KW_ONLY")
#: The names the compiled ``__init__`` holds besides the fields' (a field may not take one).
_ENV = ("self", "__dataclass_builtins_object__", "_HAS_DEFAULT_FACTORY")


def dataclass(cls: typing.Any = None, /, *, frozen: bool = False, kw_only: bool = False,
              **options: typing.Any) -> typing.Any:
    """:func:`dataclasses.dataclass`; a plain frozen class is built without its compilations."""
    if cls is None:
        return lambda c: dataclass(c, frozen=frozen, kw_only=kw_only, **options)
    if not frozen or options or _FACTORY is None or not _plain(cls):
        return dataclasses.dataclass(cls, frozen=frozen, kw_only=kw_only, **options)
    return _frozen(cls, kw_only)


def _plain(cls: type) -> bool:
    """Fields only, all in ``__init__`` by position; none of the features this module leaves alone."""
    if any(n in cls.__dict__ for n in _OWN) or hasattr(cls, "__post_init__"):
        return False
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        return False
    module = sys.modules.get(cls.__module__)
    for name, ann in cls.__dict__.get("__annotations__", {}).items():
        if (name in _ENV or name.startswith("_dflt_") or not isinstance(name, str) or not name.isidentifier()
                or keyword.iskeyword(name)):
            return False  # the compiled text holds field names and fixed text only
        if isinstance(ann, str):
            if any(p in ann for p in _PSEUDO) or module is None or _pseudo_name(ann, module.__dict__):
                return False
        elif (ann is dataclasses.KW_ONLY or ann is dataclasses.InitVar or isinstance(ann, dataclasses.InitVar)
              or ann is typing.ClassVar or typing.get_origin(ann) is typing.ClassVar):
            return False
        value = cls.__dict__.get(name)
        if isinstance(value, dataclasses.Field) and (not value.init or value.kw_only is not MISSING):
            return False
    return True


def _pseudo_name(ann: str, namespace: dict[str, typing.Any]) -> bool:
    """Whether the first name of the string annotation ``ann`` is, in the class's module, a
    ``ClassVar``, ``InitVar`` or ``KW_ONLY`` under another name: the standard library reads such an
    annotation as one (it looks that name up there, with or without a module before it)."""
    match = _FIRST_NAME.match(ann) if _FIRST_NAME is not None else None
    value = namespace.get(match.group(2)) if match else None
    return value is not None and (value is typing.ClassVar or value is dataclasses.InitVar
                                  or value is dataclasses.KW_ONLY or isinstance(value, dataclasses.InitVar)
                                  or typing.get_origin(value) is typing.ClassVar)


def _tuple_of(names: tuple[str, ...]) -> typing.Callable[[typing.Any], tuple[typing.Any, ...]]:
    """The values of ``names`` of an object, as a tuple (``operator.attrgetter`` for two or more)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _frozen(cls: type, kw_only: bool) -> type:
    doc = cls.__dict__.get("__doc__")
    if _OWN_FIELDS:
        fields = _fields(cls, kw_only)
    else:
        if not doc:
            cls.__doc__ = "-"  # the standard library would describe an __init__ not yet written
        dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)  # the fields, __match_args__
        fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    cls.__init__ = _kw_init(cls, fields) if kw_only else _init(cls, fields)  # type: ignore[misc]
    compared = _tuple_of(tuple(f.name for f in fields if f.compare))
    hashed = _tuple_of(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))
    shown = tuple(f.name for f in fields if f.repr)

    @reprlib.recursive_repr()
    def __repr__(self: typing.Any) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

    def __eq__(self: typing.Any, other: typing.Any) -> typing.Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: typing.Any) -> int:
        return hash(hashed(self))

    def __setattr__(self: typing.Any, name: str, value: typing.Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: typing.Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for fn in (__repr__, __eq__, __hash__, __setattr__, __delattr__):
        fn.__qualname__, fn.__module__ = f"{cls.__qualname__}.{fn.__name__}", cls.__module__
        setattr(cls, fn.__name__, fn)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init = params.repr = params.eq = params.frozen = True
    if not doc:
        cls.__doc__ = _doc(cls, fields, kw_only)
    return cls


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


def _fields(cls: type, kw_only: bool) -> tuple[Field, ...]:
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


def _doc(cls: type, fields: tuple[Field, ...], kw_only: bool) -> str:
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
        default = _FACTORY if f.default_factory is not MISSING else f.default
        parts.append(f"{f.name}: {inspect.formatannotation(f.type)}"
                     + ("" if default is MISSING else f" = {default!r}"))
    return f"{cls.__name__}({', '.join(parts)}) -> None".replace(" -> None", "")


#: shape -> the code of such an ``__init__``: for each field, by position, None or (when it has a
#: default factory) the rank of its name among theirs; its fields named ``_f0``, ``_f1``...
_INITS: dict[tuple[int | None, ...], types.CodeType] = {}


def _init(cls: type, fields: tuple[dataclasses.Field, ...]) -> typing.Any:
    """The standard library's ``__init__`` of a frozen dataclass (fields set with ``object.__setattr__``,
    the defaults the function's, a factory called for a field not given): its code compiled once per
    shape (:func:`_init_code`) given this class's names (the bytecode does not depend on them, but for
    the order of the factories' cells, which the shape holds); its annotations set after."""
    defaults, cells = [], {"__dataclass_builtins_object__": object, "_HAS_DEFAULT_FACTORY": _FACTORY}
    for f in fields:
        if f.default_factory is not MISSING:
            cells[f"_dflt_{f.name}"] = f.default_factory
            defaults.append(_FACTORY)
        elif f.default is not MISSING:
            defaults.append(f.default)
        elif defaults:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    made = sorted(f.name for f in fields if f.default_factory is not MISSING)
    template = _init_code(tuple(made.index(f.name) if f.default_factory is not MISSING else None for f in fields))
    names = {f"_f{i}": f.name for i, f in enumerate(fields)} | {f"_dflt_{i:03d}": f"_dflt_{n}" for i, n in enumerate(made)}
    code = template.replace(co_varnames=tuple(names.get(n, n) for n in template.co_varnames),
                            co_freevars=tuple(names.get(n, n) for n in template.co_freevars),
                            co_consts=tuple(names.get(c, c) if type(c) is str else c for c in template.co_consts))
    module = sys.modules.get(cls.__module__)
    init = types.FunctionType(code, module.__dict__ if module is not None else {}, "__init__",
                              tuple(defaults) or None, tuple(types.CellType(cells[n]) for n in code.co_freevars) or None)
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _init_code(shape: tuple[int | None, ...]) -> types.CodeType:
    """The code of ``__init__(self, _f0, _f1, ...)`` as the standard library writes it, for fields
    with a default factory where ``shape`` gives a rank (its closure cell ``_dflt_<rank>``, in the
    order of the names of the class's factories, as the compiler orders cells by name)."""
    code = _INITS.get(shape)
    if code is None:
        lines = [f"  __dataclass_builtins_object__.__setattr__(self,'_f{i}',"
                 + (f"_f{i})" if rank is None else f"_dflt_{rank:03d}() if _f{i} is _HAS_DEFAULT_FACTORY else _f{i})")
                 for i, rank in enumerate(shape)]
        env = ["__dataclass_builtins_object__", "_HAS_DEFAULT_FACTORY"] + [f"_dflt_{r:03d}" for r in shape if r is not None]
        params = "".join(f",_f{i}" for i in range(len(shape)))
        text = f"def __create_fn__({','.join(env)}):\n def __init__(self{params}):\n{chr(10).join(lines) or '  pass'}\n return __init__"
        create = next(c for c in _compiled(text).co_consts if isinstance(c, types.CodeType))
        code = _INITS[shape] = next(c for c in create.co_consts if isinstance(c, types.CodeType))
    return code


def _compiled(text: str) -> types.CodeType:
    """The code of the module ``text``.

    The one compilation of gpuplan (docs/security.md): fixed text with numbered placeholders
    (:func:`_init_code`) or a class's field names (:func:`constructor`; identifiers of a class of
    the package, checked there), never input; what dataclasses itself compiles."""
    return compile(text, "<string>", "exec", dont_inherit=True)  # without this module's __future__ flags


def constructor(cls: type) -> typing.Callable[..., typing.Any]:
    """A constructor of the frozen dataclass ``cls`` for the records a plan builds by the thousand:
    every field by position (or keyword), in the class's order, no defaults, and the instance's
    ``__dict__`` set at once, where ``__init__`` sets the fields one by one with
    ``object.__setattr__`` (twice the time). The field names are read from
    :func:`dataclasses.fields` once, so the class holds their one list; the object is equal to
    ``cls(...)`` of the same values."""
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    if (not cls.__dataclass_params__.frozen or hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__  # type: ignore[attr-defined]
            or not all(f.init and n.isidentifier() and not keyword.iskeyword(n) and not n.startswith("_records_")
                       for f, n in zip(fields, names))):
        raise TypeError(f"{cls.__qualname__}: a constructor is built for a plain frozen dataclass only")
    values = ", ".join(f"{n!r}: {n}" for n in names)
    text = (f"def _records_make({', '.join(names)}):\n"
            f" _records_out = _records_new(_records_cls)\n"
            f" _records_set(_records_out, '__dict__', {{{values}}})\n"
            f" return _records_out")
    scope = {"_records_new": object.__new__, "_records_set": object.__setattr__, "_records_cls": cls}
    exec(_compiled(text), scope)  # noqa: S102 - defines _records_make in scope (its globals), as dataclasses does
    make = scope["_records_make"]
    make.__qualname__ = make.__name__ = f"new_{cls.__name__}"
    make.__module__ = cls.__module__
    make.__annotations__ = {**{f.name: f.type for f in fields}, "return": cls.__qualname__}
    make.__doc__ = f"``{cls.__qualname__}(...)``, its fields set at once (:func:`gpuplan.core.records.constructor`)."
    return make


def _kw_init(cls: type, fields: tuple[dataclasses.Field, ...]) -> typing.Any:
    """``__init__(self, *, field, ...)`` of a keyword-only class, not compiled: the keywords checked
    against the fields (the standard ``TypeError`` otherwise), then the defaults, the factories'
    values and the keywords written into the instance's ``__dict__`` (what ``object.__setattr__``
    writes to). Its ``__signature__`` and annotations are the standard ones."""
    names = frozenset(f.name for f in fields)
    required = frozenset(f.name for f in fields if f.default is MISSING and f.default_factory is MISSING)
    defaults = {f.name: f.default for f in fields if f.default is not MISSING}
    factories = tuple((f.name, f.default_factory) for f in fields if f.default_factory is not MISSING)
    qualname = f"{cls.__qualname__}.__init__"
    order = [f.name for f in fields]

    def __init__(self: typing.Any, /, *args: typing.Any, **kwargs: typing.Any) -> None:
        if args or not required <= kwargs.keys() <= names:
            raise _call_error(qualname, args, kwargs, order, required)
        values = self.__dict__
        if defaults:
            values.update(defaults)
        for name, factory in factories:
            if name not in kwargs:
                values[name] = factory()
        values.update(kwargs)

    P = inspect.Parameter
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [P("self", P.POSITIONAL_OR_KEYWORD)]
        + [P(f.name, P.KEYWORD_ONLY, annotation=f.type,
             default=_FACTORY if f.default_factory is not MISSING else f.default if f.default is not MISSING else P.empty)
           for f in fields], return_annotation=None,
        __validate_parameters__=False)  # valid by construction: distinct identifiers, self then keyword-only
    __init__.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    __init__.__qualname__, __init__.__module__ = qualname, cls.__module__
    return __init__


def _call_error(qualname: str, args: tuple, kwargs: dict[str, typing.Any], order: list[str],
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


class cached_property:  # noqa: N801 - named as the functools one it stands in for
    """:class:`functools.cached_property` without its lock (Python 3.12 dropped it too): the value is
    computed on first read and stored in the instance's ``__dict__``, where later reads find it
    without calling this descriptor. For the serving model's per-replica constants, read once for
    each of the ~140 replicas a plan builds (the lock was a third of each first read)."""

    def __init__(self, func: typing.Callable[[typing.Any], typing.Any]) -> None:
        self.func = func
        self.attrname: str | None = None
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    def __get__(self, instance: typing.Any, owner: type | None = None) -> typing.Any:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value
