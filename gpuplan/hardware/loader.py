"""Load the catalog: the shipped data files plus optional overlay directories.

Layout: every ``*.toml`` file under the catalog directory may hold arrays of tables named
``source``, ``gpu``, ``fabric``, ``switch``, ``nic``, ``optic`` and ``model``; ``catalog.toml``
holds ``[catalog]`` metadata and ``calibration/*.toml`` the planners' regime constants.

An overlay directory (``--catalog DIR`` or ``GPUPLAN_CATALOG``) has the same layout. An overlay
record whose id exists already is merged field by field over it (a negotiated price, a corrected
figure); a new id adds a record. Every merged record goes through the same validation.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from gpuplan.core.records import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import ValidationError

from gpuplan.hardware.schema import (
    BomCalibration,
    CatalogMeta,
    CollectivesCalibration,
    Fabric,
    Gpu,
    ModelPreset,
    Nic,
    Optic,
    Part,
    Source,
    Switch,
)
from gpuplan.core.errors import InputError, did_you_mean
from gpuplan.hardware.overlay import check_calibration, merge_tables
from gpuplan.hardware.fleet_calibration import FleetCalibration
from gpuplan.hardware.intervals import ResidualTable
from gpuplan.hardware.renamed import refuse_renamed
from gpuplan.hardware.serving_calibration import ServingConstants
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.core.io import clip, parse_toml, pydantic_error, read_text
from gpuplan.hardware.preparsed import Preparsed, read_preparsed
from gpuplan.hardware.record import RECORDS, Record

#: The record class of each kind of catalog record (its schema: hardware/schemas.py ``schema_of``).
KINDS: dict[str, type[Record]] = {
    "source": Source,
    "gpu": Gpu,
    "fabric": Fabric,
    "switch": Switch,
    "nic": Nic,
    "optic": Optic,
    "model": ModelPreset,
    "part": Part,
}
#: The schema of each calibration table (``calibration/<name>.toml``).
TABLES: dict[str, type[Record]] = {"bom": BomCalibration, "collectives": CollectivesCalibration,
                                      "training": TrainingCalibration, "serving": ServingConstants,
                                      "fleet": FleetCalibration, "residuals": ResidualTable}
#: At most this many files are read from one catalog directory (overlays come from PRs).
MAX_FILES = 200
#: At most this many directory entries are listed under one catalog directory.
MAX_ENTRIES = 10_000
#: At most this many GPU records after merging every overlay (5x the shipped catalog): each one is
#: searched by both planners, so this bounds planning time as MAX_GROUPS bounds one GPU's search.
MAX_GPUS = 100

def builtin_dir() -> Path:
    """The shipped catalog: inside the wheel, or ``catalog/`` of a source checkout."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_catalog"
    return packaged if packaged.is_dir() else here.parent / "catalog"


@dataclass(frozen=True)
class Catalog:
    meta: CatalogMeta
    sources: dict[str, Source]
    gpus: dict[str, Gpu]
    fabrics: dict[str, Fabric]
    switches: dict[str, Switch]
    nics: dict[str, Nic]
    optics: dict[str, Optic]
    models: dict[str, ModelPreset]
    calibration: dict[str, dict[str, Any]]
    sha256: str
    aliases: dict[str, str] = field(default_factory=dict)
    #: The calibration tables validated once at load (bom, collectives, serving, training): the
    #: models read these, never the raw ``calibration`` dicts.
    tables: dict[str, Record] = field(default_factory=dict)
    #: Facility, storage and management parts (racks, PDUs, CDUs, storage blocks, head nodes).
    parts: dict[str, Part] = field(default_factory=dict)
    #: The overlay directories laid over the shipped catalog, as given (``--catalog``,
    #: GPUPLAN_CATALOG), in order.
    overlays: tuple[str, ...] = ()

    @overload
    def table(self, name: Literal["training"]) -> TrainingCalibration: ...
    @overload
    def table(self, name: Literal["serving"]) -> ServingConstants: ...
    @overload
    def table(self, name: Literal["bom"]) -> BomCalibration: ...
    @overload
    def table(self, name: Literal["collectives"]) -> CollectivesCalibration: ...
    @overload
    def table(self, name: Literal["fleet"]) -> FleetCalibration: ...
    @overload
    def table(self, name: Literal["residuals"]) -> ResidualTable: ...

    def table(self, name: str) -> Record:
        """The validated calibration table ``name`` (an InputError if the catalog has none)."""
        found = self.tables.get(name)
        if found is None:
            raise InputError(f"the catalog has no calibration/{name}.toml", file=f"calibration/{name}.toml")
        return found

    @property
    def version(self) -> str:
        return self.meta.version

    @property
    def label(self) -> str:
        """The version, with how many overlays were laid over it: what a plan records as
        ``catalog_version`` (the version alone would read as the shipped catalog). Not their paths:
        the same files in another directory give the same plan (``catalog_sha256`` tells contents)."""
        n = len(self.overlays)
        return self.version + ("" if n == 0 else " + overlay" if n == 1 else f" + {n} overlays")

    def gpu(self, name: str, *, file: str | None = None, field_path: str | None = None) -> Gpu:
        """Look a GPU up by id or alias; unknown names raise with suggestions."""
        key = name.strip().lower()
        gid = self.aliases.get(key, key)
        if gid in self.gpus:
            return self.gpus[gid]
        hint = did_you_mean(key, [*self.gpus, *self.aliases]) if len(key) <= 200 else ""
        raise InputError(f"unknown GPU {clip(name)!r}{hint}; see 'gpuplan catalog gpus'", file=file, field=field_path)

    def lookup(self, kind: str, name: str, *, file: str | None = None, field_path: str | None = None) -> Any:
        table: Mapping[str, Any] = getattr(self, {"fabric": "fabrics", "switch": "switches", "nic": "nics",
                                                  "optic": "optics", "model": "models", "source": "sources",
                                                  "part": "parts"}[kind])
        if name in table:
            return table[name]
        hint = did_you_mean(name, table) if len(name) <= 200 else ""
        label = "model preset" if kind == "model" else kind
        cmd = {"model": "models", "switch": "switches"}.get(kind, kind + "s")
        raise InputError(f"unknown {label} {clip(name)!r}{hint}; see 'gpuplan catalog {cmd}'", file=file, field=field_path)


def _toml_files(root: Path) -> list[Path]:
    """The ``*.toml`` files under ``root``, sorted. Symlinked directories are not entered (no
    loops, no escape); a symlinked file must resolve inside ``root``; the walk is bounded."""
    root_resolved = root.resolve()
    found: list[Path] = []
    entries = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        entries += len(dirnames) + len(filenames)
        if entries > MAX_ENTRIES:
            raise InputError(f"more than {MAX_ENTRIES} entries under the catalog directory", file=str(root))
        found += [Path(dirpath) / f for f in filenames if f.endswith(".toml")]
        if len(found) > MAX_FILES:
            raise InputError(f"more than {MAX_FILES} catalog files", file=str(root))
    files = []
    for path in sorted(found):
        try:  # a regular file, not a link, under directories the walk entered (never links): inside
            if stat.S_ISREG(os.lstat(path).st_mode):  # root and a regular file, as resolving says
                files.append(path)
                continue
        except OSError:
            pass  # resolved below, which says what is wrong
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
            raise InputError("cannot resolve path (symlink loop?)", file=str(path)) from None
        if root_resolved not in real.parents and real != root_resolved:
            raise InputError("catalog file points outside its directory (symlink)", file=str(path))
        if not real.is_file():  # a FIFO would block the read, a device never end it
            raise InputError("catalog file is not a regular file", file=str(path))
        files.append(path)
    return files


def parse_dir(root: Path, pre: Preparsed | None = None) -> list[tuple[Path, str, bytes, dict[str, Any]]]:
    """(path, path relative to ``root``, bytes, parsed TOML) of every catalog file under ``root``;
    a file ``pre`` holds unchanged (the same bytes) is not parsed again."""
    if not root.exists():
        raise InputError("catalog directory not found", file=str(root))
    if not root.is_dir():
        raise InputError("catalog path is not a directory", file=str(root))
    out = []
    for path in _toml_files(root):
        text = read_text(path)
        rel, blob = path.relative_to(root).as_posix(), text.encode()
        data = pre.parsed(rel, blob) if pre is not None else None
        out.append((path, rel, blob, parse_toml(text, str(path)) if data is None else data))
    return out


def _read_dir(root: Path, pre: Preparsed | None = None) -> tuple[dict[str, list[tuple[str, dict[str, Any]]]], dict[str, Any], dict[str, tuple[str, dict[str, Any]]], list[tuple[str, bytes]]]:
    records: dict[str, list[tuple[str, dict[str, Any]]]] = {k: [] for k in KINDS}
    meta: dict[str, Any] = {}
    calibration: dict[str, tuple[str, dict[str, Any]]] = {}
    raw: list[tuple[str, bytes]] = []
    for path, rel_text, blob, data in parse_dir(root, pre):
        name = str(path)
        raw.append((rel_text, blob))
        rel = path.relative_to(root)
        if rel.parts[0] == "calibration":
            calibration[path.stem] = (name, data)
            continue
        for key, value in data.items():
            if key == "catalog":
                if not isinstance(value, dict):
                    raise InputError("expected a table", file=name, field="catalog")
                meta = value
                continue
            if key not in KINDS:
                raise InputError(f"unknown table{did_you_mean(key, [*KINDS, 'catalog'])}; expected one of "
                                 f"{', '.join(sorted(KINDS))}", file=name, field=key)
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise InputError(f"expected an array of tables ([[{key}]])", file=name, field=key)
            for i, item in enumerate(value):
                refuse_renamed(key, item, file=name)
                records[key].append((f"{name}:{key}[{i}]", item))
    return records, meta, calibration, raw


def _validate(kind: str, where: str, item: dict[str, Any]) -> Record:
    from gpuplan.hardware.schemas import schema_of, validate  # validating: the schemas are built (not from the pre-parsed file)

    file, _, index = where.rpartition(":")
    try:
        return validate(KINDS[kind], item)
    except ValidationError as exc:
        ident = item.get("id") if isinstance(item.get("id"), str) else index
        known = {f"{kind}[{ident}]": list(schema_of(KINDS[kind]).model_fields)}
        raise pydantic_error(exc, file=file, prefix=f"{kind}[{ident}]", known_fields=known) from None


def load_catalog(overlays: Iterable[str | os.PathLike[str]] = (), *, base: Path | None = None) -> Catalog:
    """Load the built-in catalog, then each overlay directory in order."""
    dirs = [base or builtin_dir(), *[Path(o) for o in overlays]]
    # The shipped catalog pre-parsed at build (gpuplan/hardware/preparsed.py); never for a base
    # directory given by the caller.
    pre = read_preparsed() if base is None else None
    if pre is not None and len(dirs) == 1:
        done = _validated(dirs[0], pre)
        if done is not None:
            return done
    from gpuplan.hardware.schemas import validate  # the files are validated: their schemas are built

    merged: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {k: {} for k in KINDS}
    meta: dict[str, Any] = {}
    calibration: dict[str, dict[str, Any]] = {}
    digest = hashlib.sha256()
    for layer, root in enumerate(dirs):
        records, layer_meta, layer_cal, raw = _read_dir(root, pre if layer == 0 else None)
        for rel, blob in raw:
            digest.update(f"{layer}:{rel}\0".encode())
            digest.update(hashlib.sha256(blob).digest())
        meta = merge_tables(meta, layer_meta)
        for stem, (name, table) in layer_cal.items():
            if layer > 0:
                check_calibration(stem, table, calibration, name)
            calibration[stem] = merge_tables(calibration.get(stem, {}), table)
        for kind, items in records.items():
            seen_here: dict[str, str] = {}
            for where, item in items:
                ident = item.get("id")
                if not isinstance(ident, str):
                    raise InputError("record has no string 'id'", file=where.rpartition(":")[0],
                                     field=where.rpartition(":")[2])
                if ident in seen_here:
                    raise InputError(f"duplicate {kind} id {clip(ident)!r} (also in {seen_here[ident]})",
                                     file=where.rpartition(":")[0], field=f"{kind}[{clip(ident)}]")
                seen_here[ident] = where.rpartition(":")[0]
                if layer > 0 and ident in merged[kind]:
                    item = merge_tables(merged[kind][ident][1], item)
                merged[kind][ident] = (where, item)
    try:
        cat_meta = validate(CatalogMeta, meta)
    except ValidationError as exc:
        raise pydantic_error(exc, file=str(dirs[0] / "catalog.toml"), prefix="catalog") from None
    if len(merged["gpu"]) > MAX_GPUS:
        raise InputError(f"{len(merged['gpu'])} GPU records with the overlays, more than the limit of {MAX_GPUS}",
                         file=str(dirs[-1]))
    built: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
    #: (kind, id) -> the file that last set the record, so cross-record errors name a file
    origin: dict[tuple[str, str], str] = {}
    for kind, items in merged.items():
        for ident in sorted(items):
            where, item = items[ident]
            built[kind][ident] = _validate(kind, where, item)
            origin[(kind, ident)] = where.rpartition(":")[0]
    aliases: dict[str, str] = {}
    for gid, gpu in built["gpu"].items():
        for alias in gpu.aliases:
            if alias in built["gpu"] or (alias in aliases and aliases[alias] != gid):
                raise InputError(f"alias {alias!r} of {gid!r} collides with another GPU", file=origin[("gpu", gid)],
                                 field=f"gpu[{gid}].aliases")
            aliases[alias] = gid
    _check_references(built, origin)
    tables = _validate_calibration(calibration, dirs)
    return Catalog(meta=cat_meta, sources=built["source"], gpus=built["gpu"], fabrics=built["fabric"],
                   switches=built["switch"], nics=built["nic"], optics=built["optic"], models=built["model"],
                   calibration=calibration, sha256=digest.hexdigest(), aliases=aliases, tables=tables,
                   parts=built["part"], overlays=tuple(str(d) for d in dirs[1:]))


def _validate_calibration(calibration: dict[str, dict[str, Any]], dirs: list[Path]) -> dict[str, Record]:
    """Validate every calibration table (merged over overlays) against its schema, once, here;
    the models are what the planners read (:meth:`Catalog.table`)."""
    from gpuplan.hardware.schemas import schema_of, validate

    out: dict[str, Record] = {}
    for stem in sorted(calibration):
        record = TABLES.get(stem)
        if record is None:
            raise InputError(f"unknown calibration table; expected one of {', '.join(sorted(TABLES))}",
                             file=f"calibration/{stem}.toml")
        try:
            out[stem] = validate(record, calibration[stem])
        except ValidationError as exc:
            file = next((str(d / "calibration" / f"{stem}.toml") for d in reversed(dirs)
                         if (d / "calibration" / f"{stem}.toml").exists()), f"calibration/{stem}.toml")
            raise pydantic_error(exc, file=file, known_fields={"": list(schema_of(record).model_fields)}) from None
    return out


def _check_references(built: dict[str, dict[str, Any]], where: Mapping[tuple[str, str], str]) -> None:
    """Every source, default switch / NIC and reference NIC a record names exists; an error names
    the file that last set the record (``where``)."""
    sources = built["source"]
    for kind in ("gpu", "fabric", "switch", "nic", "optic", "model", "part"):
        for ident, rec in built[kind].items():
            for group, src in rec.sources.items():
                if src not in sources:
                    raise InputError(f"unknown source {src!r}{did_you_mean(src, sources)}",
                                     file=where.get((kind, ident)), field=f"{kind}[{ident}].sources.{group}")
    for ident, fab in built["fabric"].items():
        if fab.default_switch not in built["switch"]:
            raise InputError(f"unknown switch {fab.default_switch!r}", file=where.get(("fabric", ident)),
                             field=f"fabric[{ident}].default_switch")
        if fab.default_nic not in built["nic"]:
            raise InputError(f"unknown nic {fab.default_nic!r}", file=where.get(("fabric", ident)),
                             field=f"fabric[{ident}].default_nic")
    for ident, gpu in built["gpu"].items():
        if gpu.reference_nic and gpu.reference_nic not in built["nic"]:
            raise InputError(f"unknown nic {gpu.reference_nic!r}", file=where.get(("gpu", ident)),
                             field=f"gpu[{ident}].reference_nic")


def catalog_classes() -> dict[str, type[Record]]:
    """Every record class a catalog holds, by name (the tags of a pre-parsed file)."""
    return RECORDS


def _validated(root: Path, pre: Preparsed) -> Catalog | None:
    """The catalog of a pre-parsed file when every file under ``root`` is the one it was parsed
    from, and the set of files the same; else None (the files are parsed and validated)."""
    digest, hashes = hashlib.sha256(), {}
    for path in _toml_files(root):
        rel, file_hash = path.relative_to(root).as_posix(), hashlib.sha256(read_text(path).encode())
        digest.update(f"0:{rel}\0".encode())  # as load_catalog hashes layer 0
        digest.update(file_hash.digest())
        hashes[rel] = file_hash.hexdigest()
    if hashes != pre.hashes:
        return None
    parts = pre.catalog_parts(catalog_classes())
    return Catalog(**parts) if parts is not None and parts.get("sha256") == digest.hexdigest() else None
