"""``dataclass`` built without the standard library's compilations.

The standard library writes each method of a dataclass as text and compiles it: for a frozen class
``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__``, about
0.7 ms a class, and a cold recommend defines some 90 (benchmarks/README.md, issue 21). Here the
last five are shared functions closed over the field names, doing what the generated ones do:

* ``__eq__``: the same class and equal tuples of the compared fields (from Python 3.13: the same
  object, or each compared field equal in turn), else ``NotImplemented``;
* ``__hash__``: the hash of the tuple of the fields that are hashed (``hash`` or else ``compare``);
  a mutable class (``frozen=False``) has none (``None``), as the standard library sets;
* ``__repr__``: ``Qualname(field=value!r, ...)`` over the fields shown, ``...`` when recursive;
* ``__setattr__`` / ``__delattr__`` (frozen): :class:`dataclasses.FrozenInstanceError` for a field
  or on the class itself, else the base class's.

``__init__`` has the standard library's signature, defaults and factories, compiled once per shape
(how many fields, which with a default factory, frozen, with a ``__post_init__``) and given each
class's names by :meth:`types.CodeType.replace`. A mutable class's is the standard library's code; a
frozen class's sets the instance's ``__dict__`` at once, ``{field: value, ...}`` in the fields' order
(what the standard library's ``object.__setattr__`` per field leaves there), at half the cost (about
0.9k instructions a field saved). Such a dict is an ordinary one: CPython 3.11-3.13 specialise the
attribute loads on it (``LOAD_ATTR_WITH_HINT``, ~20 instructions a read more than on inline values,
where a dict made by reading ``__dict__`` would miss on 3.11). The fields,
``__dataclass_fields__``, ``__dataclass_params__`` and ``__match_args__`` are the standard
library's, built directly (:mod:`gpuplan.core.record_fields`), as is the docstring of a class
without one; so :func:`dataclasses.fields`, ``replace`` and ``asdict`` work as before. With
``kw_only=True`` (frozen: the plan's result classes, gpuplan/core/contract_base.py) nothing is
compiled: ``__init__`` is a shared function that checks the keywords and fills the instance's
``__dict__`` (also faster to call past three fields), with the standard signature and ``TypeError``
messages. Anything else (other options, dataclass bases, ``InitVar``, ``ClassVar``, ``KW_ONLY``,
``init=False`` fields or a field's own ``kw_only``, a method of these names or ``__slots__`` in the class, a
base's ``__new__``, a property or slot of a field's name, a keyword-only class that is mutable or has a
``__post_init__``) is left to
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
from dataclasses import MISSING, FrozenInstanceError, field

from gpuplan.core.record_fields import FACTORY, OWN_FIELDS, call_error, doc_of, fields_of, pseudo_name

__all__ = ["cached_property", "constructor", "dataclass", "field", "hash_once"]

_FACTORY = FACTORY
#: Methods the standard library would not overwrite (or refuses to): such a class is left to it.
_OWN = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__match_args__")
_PSEUDO = ("ClassVar", "InitVar", "KW_ONLY")
#: The names the compiled ``__init__`` holds besides the fields' (a field may not take one).
_ENV = ("self", "__dataclass_builtins_object__", "_HAS_DEFAULT_FACTORY", "__records_set__")
#: Python 3.13's ``__eq__`` returns True for the same object, else compares field by field (a NaN
#: field is unequal to itself); before, it compares tuples (whose items are equal when identical).
_FIELDWISE_EQ = sys.version_info >= (3, 13)


def dataclass(cls: typing.Any = None, /, *, frozen: bool = False, kw_only: bool = False,
              **options: typing.Any) -> typing.Any:
    """:func:`dataclasses.dataclass`; a plain class is built without its compilations."""
    if cls is None:
        return lambda c: dataclass(c, frozen=frozen, kw_only=kw_only, **options)
    # Outside the versions whose dataclasses record_fields reproduces (OWN_FIELDS: 3.10 to 3.13; a
    # later one may, for one, evaluate annotations lazily, which _plain reads), the standard library
    # builds every class: slower to import, the same classes.
    if not OWN_FIELDS or options or _FACTORY is None or (kw_only and not frozen) or not _plain(cls, kw_only):
        return dataclasses.dataclass(cls, frozen=frozen, kw_only=kw_only, **options)
    return _build(cls, frozen, kw_only)


def _plain(cls: type, kw_only: bool) -> bool:
    """Fields only, all in ``__init__``; none of the features this module leaves alone (a
    ``__post_init__`` only by position: it is called from the compiled ``__init__``)."""
    if (any(n in cls.__dict__ for n in _OWN) or "__slots__" in cls.__dict__  # __init__ sets __dict__
            or (kw_only and hasattr(cls, "__post_init__"))):
        return False
    if any(hasattr(base, "__dataclass_fields__") or "__new__" in base.__dict__ for base in cls.__mro__[1:-1]):
        return False  # a base's __new__ may fill the instance's __dict__, which a frozen __init__ replaces
    module = sys.modules.get(cls.__module__)
    for name, ann in cls.__dict__.get("__annotations__", {}).items():
        if (name in _ENV or name.startswith("_dflt_") or not isinstance(name, str) or not name.isidentifier()
                or keyword.iskeyword(name)):
            return False  # the compiled text holds field names and fixed text only
        if isinstance(ann, str):
            if any(p in ann for p in _PSEUDO) or module is None or pseudo_name(ann, module.__dict__):
                return False
        elif (ann is dataclasses.KW_ONLY or ann is dataclasses.InitVar or isinstance(ann, dataclasses.InitVar)
              or ann is typing.ClassVar or typing.get_origin(ann) is typing.ClassVar):
            return False
        value = getattr(cls, name, None)  # as the standard library reads a default: a base's too
        if isinstance(value, dataclasses.Field) and (not value.init or value.kw_only is not MISSING):
            return False
        if hasattr(type(value), "__set__"):  # a property or slot: object.__setattr__ would go through it
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


def _build(cls: type, frozen: bool, kw_only: bool) -> type:
    doc = cls.__dict__.get("__doc__")
    fields = fields_of(cls, kw_only)  # OWN_FIELDS holds: dataclass() gives every other class to dataclasses
    names = tuple(f.name for f in fields)
    cls.__init__ = _kw_init(cls, fields) if kw_only else _init(cls, fields, frozen)  # type: ignore[misc]
    compared = _tuple_of(tuple(f.name for f in fields if f.compare))
    hashed = _tuple_of(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))
    shown = tuple(f.name for f in fields if f.repr)

    @reprlib.recursive_repr()
    def __repr__(self: typing.Any) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

    if _FIELDWISE_EQ:
        one_by_one = tuple(operator.attrgetter(f.name) for f in fields if f.compare)

        def __eq__(self: typing.Any, other: typing.Any) -> typing.Any:
            if self is other:
                return True
            if other.__class__ is self.__class__:
                result = True  # self.a == other.a and self.b == other.b ..., as 3.13 compiles it
                for get in one_by_one:
                    result = get(self) == get(other)
                    if not result:
                        return result
                return result
            return NotImplemented
    else:
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

    for fn in (__repr__, __eq__, __hash__, __setattr__, __delattr__) if frozen else (__repr__, __eq__):
        fn.__qualname__, fn.__module__ = f"{cls.__qualname__}.{fn.__name__}", cls.__module__
        setattr(cls, fn.__name__, fn)
    if not frozen:
        cls.__hash__ = None  # type: ignore[assignment]  # equal by value, mutable: unhashable, as the standard library sets
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init = params.repr = params.eq = True
    params.frozen = frozen
    if not doc:
        cls.__doc__ = doc_of(cls, fields, kw_only)
    abc.update_abstractmethods(cls)  # last, as the standard library: the methods above may implement abstract ones
    return cls


#: (shape, frozen, has __post_init__) -> the code of such an ``__init__``: the shape gives each field,
#: by position, None or (when it has a default factory) the rank of its name among theirs; its fields
#: are named ``_f0``, ``_f1``...
_INITS: dict[tuple[tuple[int | None, ...], bool, bool], types.CodeType] = {}


def _init(cls: type, fields: tuple[dataclasses.Field, ...], frozen: bool) -> typing.Any:
    """The ``__init__`` of a dataclass (a frozen one's fields set as one ``__dict__``, a mutable one's
    assigned; the defaults the function's, a factory called for a field not given): its code compiled once per
    shape (:func:`_init_code`) given this class's names (the bytecode does not depend on them, but for
    the order of the factories' cells, which the shape holds); its annotations set after."""
    defaults, cells = [], {"__dataclass_builtins_object__": object, "_HAS_DEFAULT_FACTORY": _FACTORY,
                           "__records_set__": object.__setattr__}
    for f in fields:
        if f.default_factory is not MISSING:
            cells[f"_dflt_{f.name}"] = f.default_factory
            defaults.append(_FACTORY)
        elif f.default is not MISSING:
            defaults.append(f.default)
        elif defaults:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    made = sorted(f.name for f in fields if f.default_factory is not MISSING)
    shape = tuple(made.index(f.name) if f.default_factory is not MISSING else None for f in fields)
    template = _init_code(shape, frozen, hasattr(cls, "__post_init__"))
    names = {f"_f{i}": f.name for i, f in enumerate(fields)} | {f"_dflt_{i:03d}": f"_dflt_{n}" for i, n in enumerate(made)}
    code = template.replace(co_varnames=tuple(names.get(n, n) for n in template.co_varnames),
                            co_freevars=tuple(names.get(n, n) for n in template.co_freevars),
                            co_names=tuple(names.get(n, n) for n in template.co_names),  # self.x = ... (not frozen)
                            co_consts=tuple(names.get(c, c) if type(c) is str else
                                            tuple(names.get(k, k) for k in c) if type(c) is tuple else c
                                            for c in template.co_consts))
    module = sys.modules.get(cls.__module__)
    init = types.FunctionType(code, module.__dict__ if module is not None else {}, "__init__",
                              tuple(defaults) or None, tuple(types.CellType(cells[n]) for n in code.co_freevars) or None)
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _init_code(shape: tuple[int | None, ...], frozen: bool, post_init: bool) -> types.CodeType:
    """The code of ``__init__(self, _f0, _f1, ...)``, for fields with a default factory where
    ``shape`` gives a rank (its closure cell ``_dflt_<rank>``, in the order of the names of the
    class's factories, as the compiler orders cells by name); a frozen class's instance given its
    ``__dict__`` of the fields at once (``object.__setattr__(self, '__dict__', {...})``: a frozen
    class has no ``__slots__`` here, so its instances have a ``__dict__``), a mutable one's fields
    assigned as the standard library writes them; ``__post_init__()`` called last."""
    code = _INITS.get((shape, frozen, post_init))
    if code is None:
        values = [f"_f{i}" if rank is None else f"_dflt_{rank:03d}() if _f{i} is _HAS_DEFAULT_FACTORY else _f{i}"
                  for i, rank in enumerate(shape)]
        if frozen and shape:
            lines = ["  __records_set__(self,'__dict__',{"
                     + ",".join(f"'_f{i}':{v}" for i, v in enumerate(values)) + "})"]
        else:
            lines = [f"  self._f{i}={v}" for i, v in enumerate(values)]
        lines += ["  self.__post_init__()"] if post_init else []
        env = (["__dataclass_builtins_object__", "_HAS_DEFAULT_FACTORY", "__records_set__"]
               + [f"_dflt_{r:03d}" for r in shape if r is not None])
        params = "".join(f",_f{i}" for i in range(len(shape)))
        text = f"def __create_fn__({','.join(env)}):\n def __init__(self{params}):\n{chr(10).join(lines) or '  pass'}\n return __init__"
        written = frozen and not post_init and shape and not any(r is not None for r in shape) and _written(len(shape))
        create = written or next(c for c in _compiled(text).co_consts if isinstance(c, types.CodeType))
        code = _INITS[(shape, frozen, post_init)] = next(c for c in create.co_consts if isinstance(c, types.CodeType))
    return code


def _written(n: int) -> types.CodeType | None:
    """The code of ``__create_fn__`` for a frozen ``__init__`` of ``n`` plain fields, as written out
    in :mod:`gpuplan.core.record_inits` (its text, read from the bytecode cache, not compiled here),
    named as :func:`_compiled` names it; None past the sizes written there."""
    from gpuplan.core import record_inits

    create = getattr(record_inits, f"_frozen_{n}", None)
    if create is None:
        return None
    code = create.__code__
    name = "__create_fn__.<locals>.__init__"  # also a constant of the outer code before Python 3.11
    inner = tuple(c.replace(co_filename="<string>", co_firstlineno=2, **_qualname(name)) if isinstance(c, types.CodeType)
                  else name if c == f"_frozen_{n}.<locals>.__init__" else c for c in code.co_consts)
    return code.replace(co_filename="<string>", co_firstlineno=1, co_name="__create_fn__",
                        co_consts=inner, **_qualname("__create_fn__"))


def _qualname(name: str) -> dict[str, str]:
    """``CodeType.replace``'s argument for a code's qualified name (Python 3.11 on; none before)."""
    return {"co_qualname": name} if sys.version_info >= (3, 11) else {}


def _compiled(text: str) -> types.CodeType:
    """The code of the module ``text``.

    The one compilation of gpuplan (docs/security.md): fixed text with numbered placeholders
    (:func:`_init_code`) or a class's field names (:func:`constructor`; identifiers of a class of
    the package, checked there), never input; what dataclasses itself compiles."""
    return compile(text, "<string>", "exec", dont_inherit=True)  # without this module's __future__ flags


def constructor(cls: type) -> typing.Callable[..., typing.Any]:
    """A constructor of the frozen dataclass ``cls`` for the records a plan builds by the thousand:
    every field by position (or keyword), in the class's order, no defaults, and the instance's
    ``__dict__`` set at once, as ``__init__`` does, without the type's call (~300 instructions
    less). The field names are read from
    :func:`dataclasses.fields` once, so the class holds their one list; the object is equal to
    ``cls(...)`` of the same values."""
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    if (not cls.__dataclass_params__.frozen or hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__  # type: ignore[attr-defined]
            or any("__new__" in base.__dict__ for base in cls.__mro__[:-1])  # object.__new__ would skip it
            or not all(f.init and n.isidentifier() and not keyword.iskeyword(n) and not n.startswith("_records_")
                       for f, n in zip(fields, names))):
        raise TypeError(f"{cls.__qualname__}: a constructor is built for a plain frozen dataclass only")
    values = ", ".join(f"{n!r}: {n}" for n in names)
    text = (f"def _records_make({', '.join(names)}):\n"
            f" _records_out = _records_new(_records_cls)\n"
            f" _records_set(_records_out, '__dict__', {{{values}}})\n"
            f" return _records_out")
    scope = {"_records_new": object.__new__, "_records_set": object.__setattr__, "_records_cls": cls}
    code = _written_make(names)
    if code is not None:  # the same code, from core/record_inits.py
        make = types.FunctionType(code, scope, "_records_make")
    else:
        exec(_compiled(text), scope)  # noqa: S102 - defines _records_make in scope (its globals), as dataclasses does
        make = scope["_records_make"]
    make.__qualname__ = make.__name__ = f"new_{cls.__name__}"
    make.__module__ = cls.__module__
    make.__annotations__ = {**{f.name: f.type for f in fields}, "return": cls.__qualname__}
    make.__doc__ = f"``{cls.__qualname__}(...)``, its fields set at once (:func:`gpuplan.core.records.constructor`)."
    return make


def _written_make(names: list[str]) -> types.CodeType | None:
    """The code of :func:`constructor`'s text for ``names``, from :mod:`gpuplan.core.record_inits`'s
    ``_make_<n>`` given these names as the compiled text has them; None past the sizes written there."""
    from gpuplan.core import record_inits

    template = getattr(record_inits, f"_make_{len(names)}", None)
    if template is None:
        return None
    code = template.__code__
    to = {f"_f{i}": n for i, n in enumerate(names)}
    return code.replace(co_filename="<string>", co_firstlineno=1, co_name="_records_make", **_qualname("_records_make"),
                        co_varnames=tuple(to.get(n, n) for n in code.co_varnames),
                        co_consts=tuple(tuple(to.get(k, k) for k in c) if type(c) is tuple else to.get(c, c)
                                        if type(c) is str else c for c in code.co_consts))


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
            raise call_error(qualname, args, kwargs, order, required)
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


def hash_once(cls: type) -> type:
    """A frozen record (with an instance ``__dict__``) whose hash, its own ``__hash__``'s value, is
    kept once computed: for memo keys hashed many times a plan (``Demand``, ``Architecture``). Not
    pickled: a string's hash differs from one process to the next."""
    fields_hash = cls.__hash__
    kept = cached_property(fields_hash)
    kept.__set_name__(cls, "_hash_once")
    cls._hash_once = kept  # type: ignore[attr-defined]

    def __hash__(self: typing.Any) -> int:
        return self._hash_once  # type: ignore[no-any-return]

    def __getstate__(self: typing.Any) -> dict[str, typing.Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_hash_once"}

    for fn in (__hash__, __getstate__):
        fn.__qualname__, fn.__module__ = f"{cls.__qualname__}.{fn.__name__}", cls.__module__
        setattr(cls, fn.__name__, fn)
    return cls
