"""The shipped catalog, pre-parsed when the wheel is built and checked against its sources at load.

Parsing the catalog's TOML files and validating their records (which builds the pydantic
validators of every catalog class) is about 35 ms of every start. The wheel build
(``hatch_build.py``) loads ``catalog/`` the normal way, so every check of
:mod:`gpuplan.hardware.loader` runs then, and writes ``gpuplan/_catalog.json`` beside the packaged
``gpuplan/_catalog/``: for each TOML file its SHA-256 and its parsed data, and the validated
catalog in a tagged JSON form (:func:`encode`) that is read back without validating again.

At load the files of the shipped catalog are still read and hashed (the catalog's ``sha256`` is
computed from them as always). A file whose hash differs from the recorded one is parsed from its
TOML; the validated records are used only when every file, the set of files, the package version
and the code that validates them (:func:`code_fingerprint`) all match. Anything else (no file: an
editable or source install; a stale, foreign or unreadable one) falls back to parsing and
validating, which gives the same catalog. Overlays are always validated: with an overlay only the
parsed TOML of unchanged shipped files is reused, and every merged record goes through its schema.

The file is data only: JSON read with :mod:`json`, classes named by the tags looked up in the table
of the catalog's own record classes (:data:`gpuplan.hardware.record.RECORDS`), never imported by
name. Reading it builds no pydantic class: the records are plain ones (hardware/record.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from gpuplan.core.records import cached_property, dataclass
from pathlib import Path
from typing import Any

from gpuplan.core.version import __version__
from gpuplan.hardware.record import Record, new_record

#: Raised to the next number whenever the layout of the file changes (2: the parsed TOML as one
#: JSON string, ``raw``, parsed only when wanted; each model's ``nested`` fields. 3: that JSON text
#: after the first line instead of inside it, and a model's fields by position: what a start reads
#: went from 18.5 M to 10 M instructions of JSON decoding). 4: the catalog's records are plain
#: records (hardware/record.py), without the set of fields given: no pydantic class is built to read them.
FORMAT = 4
#: The file's name, next to the packaged catalog directory ``_catalog``.
FILE_NAME = "_catalog.json"
PACKAGE = Path(__file__).resolve().parent.parent
#: The code that parses and validates catalog files: a change to any of it makes a pre-parsed
#: file stale even when the TOML files are unchanged (a source checkout after an edit).
CODE = ("hardware/*.py", "core/types.py", "core/io.py", "model/arch.py")


def preparsed_path() -> Path:
    return PACKAGE / FILE_NAME


def code_fingerprint() -> str:
    """SHA-256 over the package version and the files of :data:`CODE`, in a fixed order."""
    digest = hashlib.sha256(f"{FORMAT}:{__version__}\0".encode())
    for rel in _code_files():
        digest.update(f"{rel}\0".encode())
        with open(os.path.join(PACKAGE, rel), "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


def _code_files() -> list[str]:
    """The files of :data:`CODE` relative to the package, as ``sorted(PACKAGE.glob(pattern))`` lists
    them pattern by pattern (``dir/*.py``: every entry whose name ends in ``.py``, by name; a plain
    path if it exists), without pathlib's glob machinery (a start's 0.3 ms)."""
    out = []
    for pattern in CODE:
        folder, _, name = pattern.rpartition("/")
        if name.startswith("*"):
            with os.scandir(os.path.join(PACKAGE, folder)) as entries:
                out += [f"{folder}/{n}" for n in sorted(e.name for e in entries if e.name.endswith(name[1:]))]
        elif os.path.exists(os.path.join(PACKAGE, pattern)):
            out.append(pattern)
    return out


@dataclass(frozen=True)
class Preparsed:
    """A pre-parsed catalog file, read and checked for format and code; its sources not yet."""

    #: relative path -> SHA-256 (hex) of the file's bytes as the loader reads them
    hashes: dict[str, str]
    #: the files' parsed TOML as JSON text (relative path -> data), parsed when a file is wanted
    #: (an overlay, a changed file): a start from the shipped catalog reads none of it
    raw_text: str
    #: the validated catalog's fields, encoded (:func:`encode`)
    catalog: dict[str, Any]

    @cached_property
    def raw(self) -> dict[str, Any]:
        """relative path -> the file's parsed TOML"""
        return json.loads(self.raw_text)

    def parsed(self, rel: str, blob: bytes) -> Any | None:
        """The parsed TOML of ``rel`` when ``blob`` is the file it was parsed from, else None."""
        want = self.hashes.get(rel)
        if want is None or hashlib.sha256(blob).hexdigest() != want:
            return None
        return self.raw[rel]

    def catalog_parts(self, classes: dict[str, type[Record]]) -> dict[str, Any] | None:
        """The validated catalog's fields by name; None when the file does not decode."""
        try:
            return {name: decode(value, classes) for name, value in self.catalog.items()}
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


def read_preparsed(path: Path | None = None) -> Preparsed | None:
    """The pre-parsed file, or None when there is none or it is not for this code."""
    path = path or preparsed_path()
    try:
        if not path.is_file():
            return None
        head, newline, raw_text = path.read_text(encoding="utf-8").partition("\n")
        data = json.loads(head)
        if data.get("format") != FORMAT or data.get("code") != code_fingerprint() or not newline:
            return None
        return Preparsed(hashes={f["path"]: f["sha256"] for f in data["files"]}, raw_text=raw_text,
                         catalog=data["catalog"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # unreadable or malformed: the catalog is parsed from its sources instead


# -- the tagged encoding of validated records ---------------------------------------------------
# JSON keeps str, int, float (inf and nan as JSON's Infinity and NaN), bool, None and lists as they
# are; a record (hardware/record.py), tuple and dict are tagged objects, so every value decodes to
# the type validation gave it. A record is its class name ("$m"), its fields' values in the class's
# order ("f") and which of them hold a list or an object ("n"), the only ones decoding has to look into.

def encode(value: Any) -> Any:
    """``value`` as JSON data; records by their fields."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Record):
        names = type(value)._fields  # type: ignore[attr-defined]
        if tuple(value.__dict__) != names:
            raise TypeError(f"{type(value).__name__}: its values are not its fields")
        fields = [encode(value.__dict__[name]) for name in names]
        return {"$m": type(value).__name__, "f": fields,
                "n": [i for i, v in enumerate(fields) if isinstance(v, (list, dict))]}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("only string keys are encoded")
        return {"$dict": [[k, encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot encode a {type(value).__name__}")


def decode(data: Any, classes: dict[str, type[Record]]) -> Any:
    """The value :func:`encode` gave ``data`` for; records are built without validation (they were
    validated when the file was written). A ValueError for a class not in ``classes`` or a record
    whose fields are not the class's."""
    if isinstance(data, list):
        return [decode(v, classes) if isinstance(v, (list, dict)) else v for v in data]
    if not isinstance(data, dict):
        return data
    if "$m" in data:
        cls = classes.get(data["$m"])
        if cls is None:
            raise ValueError(f"unknown catalog class {data['$m']!r}")
        names, values = cls._fields, data["f"]  # type: ignore[attr-defined]
        if len(values) != len(names):
            raise ValueError(f"{data['$m']}: {len(values)} fields, the class has {len(names)}")
        fields = dict(zip(names, values))  # the scalars as they are; "n": the fields to decode
        for i in data["n"]:
            fields[names[i]] = decode(values[i], classes)
        return new_record(cls, fields)
    if "$tuple" in data:
        return tuple(decode(v, classes) if isinstance(v, (list, dict)) else v for v in data["$tuple"])
    if "$dict" in data:
        return {k: decode(v, classes) if isinstance(v, (list, dict)) else v for k, v in data["$dict"]}
    raise ValueError("untagged object in a pre-parsed catalog")


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types all the way down (records: the same fields, in order)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Record):
        return list(a.__dict__) == list(b.__dict__) and all(same(a.__dict__[n], b.__dict__[n]) for n in a.__dict__)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def preparsed_text(catalog: dict[str, Any], files: list[tuple[str, bytes, Any]],
                   classes: dict[str, type[Record]]) -> str:
    """The file's text for a validated catalog (its fields by name) loaded from ``files``
    (relative path, bytes, parsed TOML). Raises ValueError when a value would not read back as
    the same value of the same type (a build that cannot ship a faithful file fails)."""
    encoded = {name: encode(value) for name, value in catalog.items()}
    raw = {rel: data for rel, _, data in files}
    try:
        raw_text = json.dumps(raw, sort_keys=False, separators=(",", ":"), ensure_ascii=True)
    except TypeError as exc:  # a TOML date or time in a file: JSON has none
        raise ValueError(f"the catalog does not encode as JSON: {exc}") from None
    body = {"format": FORMAT, "code": code_fingerprint(),
            "files": [{"path": rel, "sha256": hashlib.sha256(blob).hexdigest()} for rel, blob, _ in files],
            "catalog": encoded}
    # JSON data throughout: the files' TOML is text by now and encode() raised on anything else; one
    # line each (ensure_ascii writes a line break in a string as \n), the parsed TOML second
    text = json.dumps(body, sort_keys=False, separators=(",", ":"), ensure_ascii=True) + "\n" + raw_text
    back = read_text_parts(text)
    again = json.loads(back[1])
    for rel, _, data in files:
        if not same(data, again[rel]):
            raise ValueError(f"{rel}: its parsed TOML does not survive JSON (a date or time value?)")
    for name, value in catalog.items():
        if not same(value, decode(back[0]["catalog"][name], classes)):
            raise ValueError(f"catalog field {name!r} does not read back as validated")
    return text + "\n"


def read_text_parts(text: str) -> tuple[Any, str]:
    """The file's first line as JSON data and the text after it (the parsed TOML, JSON text)."""
    head, _, raw_text = text.partition("\n")
    return json.loads(head), raw_text
