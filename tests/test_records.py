"""gpuplan.core.records.dataclass builds the frozen dataclasses the standard library builds: for
every frozen dataclass of the package, a twin made by :func:`dataclasses.dataclass` from the same
fields has the same ``__init__`` signature, fields, params and match args, and its instances the
same repr, equality, hash, frozen errors, ``replace`` and ``asdict``."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import re

import pytest

import gpuplan
from gpuplan.core.records import dataclass, field


def _package_dataclasses() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(gpuplan.__path__, "gpuplan."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and obj.__module__ == info.name and dataclasses.is_dataclass(obj)
                    and obj.__dataclass_params__.frozen and not hasattr(obj, "__post_init__")):
                found.append(obj)
    return found


def _twin(cls: type) -> type:
    """``cls`` rebuilt by the standard library from its fields."""
    spec = []
    for f in dataclasses.fields(cls):
        kw = {"repr": f.repr, "compare": f.compare, "hash": f.hash, "kw_only": f.kw_only}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        spec.append((f.name, f.type, dataclasses.field(**kw)))
    ns = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    return dataclasses.make_dataclass(cls.__name__, spec, frozen=True, namespace=ns)


def _values(cls: type, shift: int = 0) -> dict[str, object]:
    return {f.name: (i + shift,) for i, f in enumerate(dataclasses.fields(cls))}


CLASSES = _package_dataclasses()


def test_the_package_has_frozen_dataclasses_built_here():
    fast = [c for c in CLASSES if c.__eq__.__code__.co_filename.endswith("records.py")]
    assert len(fast) >= 40


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_like_the_standard_library(cls):
    twin = _twin(cls)
    assert str(inspect.signature(cls.__init__)) == str(inspect.signature(twin.__init__))
    assert cls.__init__.__annotations__ == twin.__init__.__annotations__
    assert cls.__match_args__ == twin.__match_args__
    if not twin.__init__.__kwdefaults__ and not any(f.kw_only for f in dataclasses.fields(twin)):
        assert cls.__init__.__defaults__ == twin.__init__.__defaults__  # compiled once per shape, names replaced
    if cls.__doc__.startswith(cls.__name__ + "("):  # no docstring: the standard library's own
        assert cls.__doc__ == cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    assert set(vars(twin)) - {"__qualname__"} <= set(vars(cls))  # 3.13's __replace__ too
    assert repr(cls.__dataclass_params__) == repr(twin.__dataclass_params__)
    assert [repr(f) for f in dataclasses.fields(cls)] == [repr(f) for f in dataclasses.fields(twin)]
    a, b = cls(**_values(cls)), twin(**_values(twin))
    assert repr(a) == repr(b)
    assert vars(a) == vars(b)
    if not any(f.kw_only for f in dataclasses.fields(cls)):  # a positional one's __dict__ in the fields' order
        assert list(vars(a)) == list(vars(b))
    assert pickle.loads(pickle.dumps(a)) == a and copy.copy(a) == a and copy.deepcopy(a) == a
    assert hash(a) == hash(b)
    assert a == cls(**_values(cls)) and not a != cls(**_values(cls))
    assert (a == b) is False and a.__eq__(b) is NotImplemented
    for f in dataclasses.fields(cls):
        other = {**_values(cls), f.name: "other"}
        assert (a == cls(**other)) is (not f.compare)
        assert (a == cls(**other)) == (b == twin(**{**_values(twin), f.name: "other"}))
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    name = dataclasses.fields(cls)[0].name if dataclasses.fields(cls) else "x"
    for obj in (a, b):
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{name}'"):
            setattr(obj, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{name}'"):
            delattr(obj, name)
    if dataclasses.fields(cls):
        assert dataclasses.replace(a, **{name: 5}) == cls(**{**_values(cls), name: 5})


@dataclass(frozen=True)
class _Point:
    x: int
    y: float = 1.5
    tags: list = field(default_factory=list, hash=False)
    note: str = field(default="", compare=False, repr=False)
    kids: tuple = field(default=(), hash=False)


@dataclass(frozen=True)
class _Empty:
    pass


def test_defaults_factories_and_field_options():
    p = _Point(1)
    assert (p.x, p.y, p.tags, p.note, p.kids) == (1, 1.5, [], "", ())
    assert p.tags is not _Point(1).tags
    assert repr(p) == "_Point(x=1, y=1.5, tags=[], kids=())"
    assert p == _Point(1, note="ignored") and p != _Point(2)
    assert hash(_Point(1, kids=(1,))) == hash(_Point(1, kids=(2,)))
    assert str(inspect.signature(_Point)) == "(x: 'int', y: 'float' = 1.5, tags: 'list' = <factory>, " \
                                             "note: 'str' = '', kids: 'tuple' = ()) -> None"
    assert _Point.__doc__ == "_Point(x: 'int', y: 'float' = 1.5, tags: 'list' = <factory>, note: 'str' = '', " \
                             "kids: 'tuple' = ())"
    assert _Point.__match_args__ == ("x", "y", "tags", "note", "kids")
    assert _Point.__eq__.__qualname__ == "_Point.__eq__" and _Point.__init__.__qualname__ == "_Point.__init__"
    assert repr(_Empty()) == "_Empty()" and _Empty() == _Empty() and hash(_Empty()) == hash(())
    match _Point(3, 4.0):
        case _Point(x, y):
            assert (x, y) == (3, 4.0)


@dataclass(frozen=True, kw_only=True)
class _Keyed:
    x: int
    y: float = 1.5
    z: str
    tags: list = field(default_factory=list)


def test_keyword_only_fields_may_follow_defaults():
    k = _Keyed(x=1, z="a")
    assert (k.x, k.y, k.z, k.tags) == (1, 1.5, "a", [])
    assert "records" in _Keyed.__eq__.__code__.co_filename
    assert str(inspect.signature(_Keyed)) == "(*, x: 'int', y: 'float' = 1.5, z: 'str', tags: 'list' = <factory>) -> None"
    assert _Keyed.__match_args__ == () and all(f.kw_only for f in dataclasses.fields(_Keyed))
    with pytest.raises(TypeError):
        _Keyed(1, "a")  # type: ignore[misc]
    twin = _twin(_Keyed)
    bad = [((1,), {}), ((), {}), ((), {"x": 1}), ((), {"x": 1, "z": "", "q": 1}), ((1, 2), {"x": 1}),
           ((1,), {"x": 1, "z": ""}), ((), {"y": 1.0})]
    for args, kwargs in bad:  # the same TypeError as the standard library's compiled __init__
        with pytest.raises(TypeError) as ours:
            _Keyed(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            twin(*args, **kwargs)
        assert str(ours.value) == str(theirs.value), (args, kwargs)


def test_recursive_repr_and_subclass_attributes():
    p = _Point(1, tags=[])
    p.tags.append(p)
    assert repr(p) == "_Point(x=1, y=1.5, tags=[...], kids=())"

    class Sub(_Point):
        pass

    s = Sub(1)
    s.extra = 2  # not a field, not the class itself: allowed, as the standard library allows
    assert s.extra == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.x = 3


def _mutable(make: object) -> type:
    @make  # type: ignore[operator]
    class Mutable:
        x: int
        tags: list = field(default_factory=list)
        y: float = 1.5

        def __post_init__(self) -> None:
            self.z = self.x + 1

    return Mutable


def _post(make: object) -> type:
    @make(frozen=True)  # type: ignore[operator]
    class Post:
        x: int
        y: int = 3

        def __post_init__(self) -> None:
            object.__setattr__(self, "y", self.y * 2)

    return Post


@pytest.mark.parametrize("build", [_mutable, _post])
def test_mutable_and_post_init_classes_like_the_standard_library(build):
    ours, theirs = build(dataclass), build(dataclasses.dataclass)
    assert "records" in ours.__eq__.__code__.co_filename  # built here
    if not ours.__dataclass_params__.frozen:  # the standard library's code (a frozen one sets __dict__ at once)
        assert ours.__init__.__code__.co_code == theirs.__init__.__code__.co_code
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs)) and ours.__doc__ == theirs.__doc__
    assert [repr(f) for f in dataclasses.fields(ours)] == [repr(f) for f in dataclasses.fields(theirs)]
    assert repr(ours.__dataclass_params__) == repr(theirs.__dataclass_params__)
    a, b = ours(2), theirs(2)
    assert list(vars(a).items()) == list(vars(b).items()) and repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]
    assert a == ours(2) and a != ours(3) and (ours.__hash__ is None) == (theirs.__hash__ is None)


def test_what_it_leaves_to_the_standard_library():
    @dataclass(frozen=True, kw_only=True)
    class Post:
        x: int

        def __post_init__(self) -> None:
            object.__setattr__(self, "x", self.x * 2)

    @dataclass(kw_only=True)
    class Mutable:
        x: int

    @dataclass(frozen=True, order=True)
    class Ordered:
        x: int

    assert Post(x=2).x == 4
    m = Mutable(x=1)
    m.x = 2
    assert Ordered(1) < Ordered(2)
    assert "records" not in Post.__eq__.__code__.co_filename
    assert "records" not in Mutable.__eq__.__code__.co_filename
    with pytest.raises(TypeError, match="non-default argument 'y' follows default argument"):
        @dataclass(frozen=True)
        class Bad:
            x: int = 0
            y: int


def test_a_constructor_makes_the_object_init_makes():
    from gpuplan.core.records import constructor

    @dataclass(frozen=True)
    class Point:
        x: float
        label: str
        weight: float = 1.0

    make = constructor(Point)
    assert list(inspect.signature(make).parameters) == ["x", "label", "weight"]  # every field, by position
    made, built = make(1.5, "a", 2.0), Point(1.5, "a", 2.0)
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    assert vars(made) == vars(built) and list(vars(made)) == ["x", "label", "weight"]
    assert make(x=1.5, label="a", weight=2.0) == built
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.x = 2.0  # type: ignore[misc]

    @dataclasses.dataclass
    class Open:
        x: float

    with pytest.raises(TypeError):
        constructor(Open)  # not frozen: its __init__ is the constructor

    class New:
        def __new__(cls, *args: object) -> object:
            return super().__new__(cls)

    with pytest.raises(TypeError):
        constructor(dataclass(frozen=True)(type("Made", (New,), {"__annotations__": {"x": "int"}})))


def _edge_classes(make: object) -> list[object]:
    """Classes whose build differs from a plain one's: an abstract method the dataclass implements, a
    base's field(init=False) default, a base's __new__ that sets an attribute, a base's property."""
    import abc

    class Abstract(abc.ABC):
        @abc.abstractmethod
        def __repr__(self) -> str: ...

    class Mixin:
        y = field(default=0, init=False)

    class New:
        def __new__(cls, *args: object, **kwargs: object) -> object:
            obj = super().__new__(cls)
            object.__setattr__(obj, "extra", 1)
            return obj

    class Prop:
        @property
        def y(self) -> int:
            return 7

        @y.setter
        def y(self, value: int) -> None:
            object.__setattr__(self, "_y", value)

    built = []
    for base in (Abstract, Mixin, New, Prop):
        cls = make(frozen=True)(type("C", (base,), {"__annotations__": {"x": "int", "y": "int"},  # type: ignore[operator]
                                                    "__module__": __name__, "y": getattr(base, "y", 0)}))
        obj = cls(1)
        built.append(re.sub(" at 0x[0-9a-f]+", "", str((repr(obj), inspect.signature(cls), vars(obj), obj.y))))
    return built


def test_bases_that_change_the_build_are_handled_like_the_standard_library():
    assert _edge_classes(dataclass) == _edge_classes(dataclasses.dataclass)


def test_equality_of_a_nan_field_follows_the_running_python():
    @dataclass(frozen=True)
    class Ours:
        x: float

    @dataclasses.dataclass(frozen=True)
    class Theirs:
        x: float

    nan = float("nan")
    assert (Ours(nan) == Ours(nan)) == (Theirs(nan) == Theirs(nan))  # 3.13: unequal, before: equal
    one = Ours(nan)
    assert one == one


def test_a_python_whose_dataclasses_are_not_reproduced_gets_the_standard_library_class(monkeypatch):
    import gpuplan.core.records as records

    monkeypatch.setattr(records, "OWN_FIELDS", False)  # as on a Python after 3.13 (record_fields.OWN_FIELDS)

    @dataclass(frozen=True)
    class Ours:
        x: int
        y: list = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class Theirs:
        x: int
        y: list = dataclasses.field(default_factory=list)

    # the standard library's own __init__ (compiled by it, not by records): same code, same signature
    assert Ours.__init__.__code__.co_code == Theirs.__init__.__code__.co_code
    assert str(inspect.signature(Ours)) == str(inspect.signature(Theirs))
    assert Ours(1) == Ours(1, []) and hash(Ours(1, ())) == hash(Ours(1, ()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Ours(1).x = 2  # type: ignore[misc]


def test_written_inits_are_the_compiled_texts() -> None:
    """core/record_inits.py holds, for 1 to 40 plain fields, the very code ``_init_code`` compiles
    (code objects equal: bytecode, names, constants, line and column table; and the same file name)."""
    import types

    import gpuplan.core.records as records

    for n in range(1, 41):
        params = "".join(f",_f{i}" for i in range(n))
        body = "  __records_set__(self,'__dict__',{" + ",".join(f"'_f{i}':_f{i}" for i in range(n)) + "})"
        text = (f"def __create_fn__(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):\n"
                f" def __init__(self{params}):\n{body}\n return __init__")
        compiled = next(c for c in records._compiled(text).co_consts if isinstance(c, types.CodeType))
        written = records._written(n)
        assert written == compiled and written.co_filename == "<string>"
        inner = [(c, c.co_lines, getattr(c, "co_qualname", None), c.co_filename) for c in (written, compiled)
                 for c in [next(k for k in c.co_consts if isinstance(k, types.CodeType))]]
        inner = [(c, list(lines()), *rest) for c, lines, *rest in inner]
        assert inner[0][0] == inner[1][0] and inner[0][1:] == inner[1][1:]
    assert records._written(41) is None


def test_written_constructors_are_the_compiled_texts() -> None:
    """core/record_inits.py's constructors, given names as long as its own, are the code
    ``constructor`` compiles for them (equal code objects, the same line and column table)."""
    import types

    import gpuplan.core.records as records

    for n in range(1, 17):
        names = [f"_g{i}" for i in range(n)]
        values = ", ".join(f"{k!r}: {k}" for k in names)
        text = (f"def _records_make({', '.join(names)}):\n _records_out = _records_new(_records_cls)\n"
                f" _records_set(_records_out, '__dict__', {{{values}}})\n return _records_out")
        compiled = next(c for c in records._compiled(text).co_consts if isinstance(c, types.CodeType))
        written = records._written_make(names)
        assert written == compiled and list(written.co_lines()) == list(compiled.co_lines())
        assert written.co_filename == compiled.co_filename
        assert getattr(written, "co_qualname", None) == getattr(compiled, "co_qualname", None)
    assert records._written_make([f"x{i}" for i in range(17)]) is None


def test_hash_once_keeps_the_records_own_hash():
    """A kept hash is the record's own (its fields' tuple), computed once, and not pickled."""
    from gpuplan.core.records import hash_once

    @hash_once
    @dataclass(frozen=True)
    class Key:
        name: str
        n: int = 2

    k = Key("p99")
    assert hash(k) == hash(("p99", 2)) == hash(Key("p99"))
    assert k.__dict__["_hash_once"] == hash(("p99", 2))
    assert "_hash_once" not in k.__getstate__() and k == Key("p99") and repr(k).endswith("Key(name='p99', n=2)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        k.n = 3
