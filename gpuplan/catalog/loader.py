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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gpuplan.catalog.schema import (
    CatalogMeta,
    Fabric,
    Gpu,
    ModelPreset,
    Nic,
    Optic,
    Source,
    Switch,
)
from gpuplan.errors import InputError, did_you_mean
from gpuplan.io import parse_toml, pydantic_error, read_text

KINDS: dict[str, type[BaseModel]] = {
    "source": Source,
    "gpu": Gpu,
    "fabric": Fabric,
    "switch": Switch,
    "nic": Nic,
    "optic": Optic,
    "model": ModelPreset,
}
#: At most this many files are read from one catalog directory (overlays come from PRs).
MAX_FILES = 200

T = TypeVar("T", bound=BaseModel)


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

    @property
    def version(self) -> str:
        return self.meta.version

    def gpu(self, name: str, *, file: str | None = None, field_path: str | None = None) -> Gpu:
        """Look a GPU up by id or alias; unknown names raise with suggestions."""
        key = name.strip().lower()
        gid = self.aliases.get(key, key)
        if gid in self.gpus:
            return self.gpus[gid]
        hint = did_you_mean(key, [*self.gpus, *self.aliases])
        raise InputError(f"unknown GPU {name!r}{hint}; see 'gpuplan catalog gpus'", file=file, field=field_path)

    def lookup(self, kind: str, name: str, *, file: str | None = None, field_path: str | None = None) -> Any:
        table: Mapping[str, Any] = getattr(self, {"fabric": "fabrics", "switch": "switches", "nic": "nics",
                                                  "optic": "optics", "model": "models", "source": "sources"}[kind])
        if name in table:
            return table[name]
        hint = did_you_mean(name, table)
        label = "model preset" if kind == "model" else kind
        cmd = {"model": "models", "switch": "switches"}.get(kind, kind + "s")
        raise InputError(f"unknown {label} {name!r}{hint}; see 'gpuplan catalog {cmd}'", file=file, field=field_path)


def _toml_files(root: Path) -> list[Path]:
    root_resolved = root.resolve()
    files = []
    for path in sorted(root.rglob("*.toml")):
        try:
            real = path.resolve()
        except OSError:
            raise InputError("cannot resolve path", file=str(path)) from None
        if root_resolved not in real.parents and real != root_resolved:
            raise InputError("catalog file points outside its directory (symlink)", file=str(path))
        files.append(path)
    if len(files) > MAX_FILES:
        raise InputError(f"more than {MAX_FILES} catalog files", file=str(root))
    return files


def _read_dir(root: Path) -> tuple[dict[str, list[tuple[str, dict[str, Any]]]], dict[str, Any], dict[str, dict[str, Any]], list[tuple[str, bytes]]]:
    records: dict[str, list[tuple[str, dict[str, Any]]]] = {k: [] for k in KINDS}
    meta: dict[str, Any] = {}
    calibration: dict[str, dict[str, Any]] = {}
    raw: list[tuple[str, bytes]] = []
    if not root.exists():
        raise InputError("catalog directory not found", file=str(root))
    if not root.is_dir():
        raise InputError("catalog path is not a directory", file=str(root))
    for path in _toml_files(root):
        name = str(path)
        text = read_text(path)
        raw.append((path.relative_to(root).as_posix(), text.encode()))
        data = parse_toml(text, name)
        rel = path.relative_to(root)
        if rel.parts[0] == "calibration":
            calibration[path.stem] = data
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
                records[key].append((f"{name}:{key}[{i}]", item))
    return records, meta, calibration, raw


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _validate(kind: str, where: str, item: dict[str, Any]) -> BaseModel:
    model = KINDS[kind]
    file, _, index = where.rpartition(":")
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        ident = item.get("id") if isinstance(item.get("id"), str) else index
        known = {f"{kind}[{ident}]": list(model.model_fields)}
        raise pydantic_error(exc, file=file, prefix=f"{kind}[{ident}]", known_fields=known) from None


def load_catalog(overlays: Iterable[str | os.PathLike[str]] = (), *, base: Path | None = None) -> Catalog:
    """Load the built-in catalog, then each overlay directory in order."""
    dirs = [base or builtin_dir(), *[Path(o) for o in overlays]]
    merged: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {k: {} for k in KINDS}
    meta: dict[str, Any] = {}
    calibration: dict[str, dict[str, Any]] = {}
    digest = hashlib.sha256()
    for layer, root in enumerate(dirs):
        records, layer_meta, layer_cal, raw = _read_dir(root)
        for rel, blob in raw:
            digest.update(f"{layer}:{rel}\0".encode())
            digest.update(hashlib.sha256(blob).digest())
        meta = _merge(meta, layer_meta)
        for stem, table in layer_cal.items():
            calibration[stem] = _merge(calibration.get(stem, {}), table)
        for kind, items in records.items():
            seen_here: dict[str, str] = {}
            for where, item in items:
                ident = item.get("id")
                if not isinstance(ident, str):
                    raise InputError("record has no string 'id'", file=where.rpartition(":")[0],
                                     field=where.rpartition(":")[2])
                if ident in seen_here:
                    raise InputError(f"duplicate {kind} id {ident!r} (also in {seen_here[ident]})",
                                     file=where.rpartition(":")[0], field=f"{kind}[{ident}]")
                seen_here[ident] = where.rpartition(":")[0]
                if layer > 0 and ident in merged[kind]:
                    item = _merge(merged[kind][ident][1], item)
                merged[kind][ident] = (where, item)
    try:
        cat_meta = CatalogMeta.model_validate(meta)
    except ValidationError as exc:
        raise pydantic_error(exc, file=str(dirs[0] / "catalog.toml"), prefix="catalog") from None
    built: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
    for kind, items in merged.items():
        for ident in sorted(items):
            where, item = items[ident]
            built[kind][ident] = _validate(kind, where, item)
    aliases: dict[str, str] = {}
    for gid, gpu in built["gpu"].items():
        for alias in gpu.aliases:
            if alias in built["gpu"] or (alias in aliases and aliases[alias] != gid):
                raise InputError(f"alias {alias!r} of {gid!r} collides with another GPU", field=f"gpu[{gid}].aliases")
            aliases[alias] = gid
    _check_references(built)
    return Catalog(meta=cat_meta, sources=built["source"], gpus=built["gpu"], fabrics=built["fabric"],
                   switches=built["switch"], nics=built["nic"], optics=built["optic"], models=built["model"],
                   calibration=calibration, sha256=digest.hexdigest(), aliases=aliases)


def _check_references(built: dict[str, dict[str, Any]]) -> None:
    sources = built["source"]
    for kind in ("gpu", "fabric", "switch", "nic", "optic", "model"):
        for ident, rec in built[kind].items():
            for group, src in rec.sources.items():
                if src not in sources:
                    raise InputError(f"unknown source {src!r}{did_you_mean(src, sources)}",
                                     field=f"{kind}[{ident}].sources.{group}")
    for ident, fab in built["fabric"].items():
        if fab.default_switch not in built["switch"]:
            raise InputError(f"unknown switch {fab.default_switch!r}", field=f"fabric[{ident}].default_switch")
        if fab.default_nic not in built["nic"]:
            raise InputError(f"unknown nic {fab.default_nic!r}", field=f"fabric[{ident}].default_nic")
    for ident, gpu in built["gpu"].items():
        if gpu.reference_nic and gpu.reference_nic not in built["nic"]:
            raise InputError(f"unknown nic {gpu.reference_nic!r}", field=f"gpu[{ident}].reference_nic")
