"""``dataclass(frozen=True)`` built with one compiled function instead of six.

The standard library writes each method of a dataclass as source text and compiles it: for a
frozen class ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and
``__delattr__``, six compilations, about 0.7 ms a class. The recommend path defines some 40 frozen
dataclasses at import, a tenth of a cold start before planning (benchmarks/README.md, issue 21).
Here only ``__init__`` is compiled (its signature and speed must be the standard one's); the other
five are shared functions closed over the field names, doing what the generated ones do:

* ``__eq__``: the same class and equal tuples of the compared fields, else ``NotImplemented``;
* ``__hash__``: the hash of the tuple of the fields that are hashed (``hash`` or else ``compare``);
* ``__repr__``: ``Qualname(field=value!r, ...)`` over the fields shown, ``...`` when recursive;
* ``__setattr__`` / ``__delattr__``: :class:`dataclasses.FrozenInstanceError` for a field or on the
  class itself, else the base class's.

The fields, ``__dataclass_fields__``, ``__dataclass_params__``, ``__match_args__`` and the
docstring are the standard library's, so :func:`dataclasses.fields`, ``replace`` and ``asdict``
work as before. With ``kw_only=True`` (every field keyword-only, as in a pydantic model: the
plan's result classes, gpuplan/core/contract_base.py) nothing is compiled: ``__init__`` is a
shared function that checks the keywords and fills the instance's ``__dict__`` (compiling costs
some 20 us of CPU a field, and those 33 classes have 416 fields; the shared one is also faster to
call past three fields), with the standard signature and ``TypeError`` messages. Anything else
(not frozen, other options, a ``__post_init__``, dataclass bases, ``InitVar``, ``ClassVar``,
``KW_ONLY``, ``init=False`` fields or a field's own ``kw_only``, a method of these names written in
the class) is left to :func:`dataclasses.dataclass` itself.
tests/test_records.py compares both on every frozen dataclass of the package.
"""

from __future__ import annotations

import dataclasses
import inspect
import keyword
import operator
import reprlib
import sys
import typing
from dataclasses import MISSING, FrozenInstanceError, field

__all__ = ["cached_property", "constructor", "dataclass", "field"]

#: The default a field with a ``default_factory`` shows in ``__init__``'s signature (``<factory>``).
_FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None)
#: Methods the standard library would not overwrite (or refuses to): such a class is left to it.
_OWN = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__match_args__")
_PSEUDO = ("ClassVar", "InitVar", "KW_ONLY")


def dataclass(cls: typing.Any = None, /, *, frozen: bool = False, kw_only: bool = False,
              **options: typing.Any) -> typing.Any:
    """:func:`dataclasses.dataclass`; a plain frozen class is built with one compilation."""
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
    for name, ann in cls.__dict__.get("__annotations__", {}).items():
        if name == "self" or not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            return False  # the compiled text holds field names and fixed text only
        if isinstance(ann, str):
            if any(p in ann for p in _PSEUDO):
                return False
        elif (ann is dataclasses.KW_ONLY or ann is dataclasses.InitVar or isinstance(ann, dataclasses.InitVar)
              or ann is typing.ClassVar or typing.get_origin(ann) is typing.ClassVar):
            return False
        value = cls.__dict__.get(name)
        if isinstance(value, dataclasses.Field) and (not value.init or value.kw_only is not MISSING):
            return False
    return True


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
        try:
            cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            cls.__doc__ = cls.__name__
    return cls


def _init(cls: type, fields: tuple[dataclasses.Field, ...]) -> typing.Any:
    """The standard library's ``__init__`` of a frozen dataclass, compiled the same way: each field
    set with ``object.__setattr__``, defaults and factories as its own. Its annotations (the fields'
    types, ``return: None``) are set after, not compiled (a fifth of the compilation)."""
    env: dict[str, typing.Any] = {"__dataclass_builtins_object__": object, "_HAS_DEFAULT_FACTORY": _FACTORY}
    params, lines, seen_default = ["self"], [], False
    for f in fields:
        n = f.name
        value = n
        if f.default_factory is not MISSING:
            env[f"_dflt_{n}"] = f.default_factory
            params.append(f"{n}=_HAS_DEFAULT_FACTORY")
            value, seen_default = f"_dflt_{n}() if {n} is _HAS_DEFAULT_FACTORY else {n}", True
        elif f.default is not MISSING:
            env[f"_dflt_{n}"] = f.default
            params.append(f"{n}=_dflt_{n}")
            seen_default = True
        else:
            if seen_default:
                raise TypeError(f"non-default argument {n!r} follows default argument")
            params.append(n)
        lines.append(f"  __dataclass_builtins_object__.__setattr__(self,{n!r},{value})")
    body = "\n".join(lines) or "  pass"
    init = _compiled(cls, "__init__", f" def __init__({','.join(params)}):\n{body}", env)
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _compiled(cls: type, name: str, function: str, env: dict[str, typing.Any], *, alone: bool = False) -> typing.Any:
    """The function ``name`` whose text is ``function``: compiled in the module of ``cls`` with the
    names of ``env`` bound around it (``function`` indented by one space), or (``alone``, at column
    0) with them as its only globals (read as a module's are; no closure cells to copy at each call)."""
    if alone:
        text, scope = function, dict(env)
    else:
        text = f"def __create_fn__({', '.join(env)}):\n{function}\n return {name}"
        module = sys.modules.get(cls.__module__)
        scope = module.__dict__ if module is not None else {}
    ns: dict[str, typing.Any] = {}
    # The one compilation of gpuplan (docs/security.md): fixed text and the field names of a class
    # of the package (identifiers, checked in _plain and constructor), never input; what
    # dataclasses itself runs.
    code = compile(text, "<string>", "exec", dont_inherit=True)  # without this module's __future__ flags
    exec(code, scope, ns)  # noqa: S102 - as dataclasses does
    return ns[name] if alone else ns["__create_fn__"](**env)


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
    make = _compiled(cls, "_records_make", text, {"_records_new": object.__new__, "_records_set": object.__setattr__,
                                 "_records_cls": cls}, alone=True)
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
           for f in fields], return_annotation=None)
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
