"""The pre-parsed catalog (gpuplan/hardware/preparsed.py) that the wheel ships so that a start
does not parse and validate the TOML again: it must give exactly the catalog the TOML gives, never
a stale one, and never let an overlay past validation."""

from __future__ import annotations

import datetime
import os
import re
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

import gpuplan.hardware.loader as loader
import gpuplan.hardware.preparsed as preparsed
from gpuplan.core.errors import InputError
from gpuplan.hardware.catalog_build import write_preparsed
from gpuplan.hardware.schema import Gpu

SHIPPED = loader.builtin_dir()


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A copy of the shipped catalog standing in for the built-in one, with its pre-parsed file
    written as the wheel build writes it. Returns the directory and the file."""
    root = tmp_path / "_catalog"
    shutil.copytree(SHIPPED, root)
    out = tmp_path / "_catalog.json"
    write_preparsed(root, out)
    monkeypatch.setattr(loader, "builtin_dir", lambda: root)
    monkeypatch.setattr(preparsed, "preparsed_path", lambda: out)
    return root, out


@pytest.fixture
def parses(monkeypatch):
    """The files the loader parses from TOML, and the records it validates, in this test."""
    seen: dict[str, list[str]] = {"toml": [], "records": []}
    parse, validate = loader.parse_toml, loader._validate

    def counting_parse(text, name):
        seen["toml"].append(name)
        return parse(text, name)

    def counting_validate(kind, where, item):
        seen["records"].append(where)
        return validate(kind, where, item)

    monkeypatch.setattr(loader, "parse_toml", counting_parse)
    monkeypatch.setattr(loader, "_validate", counting_validate)
    return seen


def same_catalog(a, b) -> bool:
    return all(preparsed.same(getattr(a, f.name), getattr(b, f.name)) for f in fields(loader.Catalog))


def test_the_preparsed_catalog_is_the_parsed_one_without_parsing(shipped, parses):
    root, _ = shipped
    fast = loader.load_catalog()
    assert parses == {"toml": [], "records": []}  # read from the pre-parsed file
    parsed = loader.load_catalog(base=root)  # a base directory given: always parsed and validated
    assert len(parses["toml"]) > 10 and len(parses["records"]) > 100
    assert same_catalog(fast, parsed)
    assert fast.sha256 == parsed.sha256 and len(fast.gpus) == len(parsed.gpus) > 10
    # the records read back are the validated ones: same class (the record, not its pydantic schema),
    # same fields, usable as before
    gpu = fast.gpus["h100-sxm-80gb"]
    assert type(gpu) is type(parsed.gpus["h100-sxm-80gb"]) is Gpu and gpu == parsed.gpus["h100-sxm-80gb"]
    assert gpu.servers_for(9) == 2 and fast.table("training").default_framework


def test_a_start_from_the_preparsed_catalog_builds_no_schema(shipped):
    """The records are read back without their pydantic schemas: the schema modules are never
    imported (a fresh process, as a cold ``gpuplan recommend``)."""
    root, out = shipped
    code = ("import sys; from pathlib import Path; import gpuplan.hardware.loader as loader, "
            "gpuplan.hardware.preparsed as preparsed; "
            f"loader.builtin_dir = lambda: Path({str(root)!r}); preparsed.preparsed_path = lambda: Path({str(out)!r}); "
            "cat = loader.load_catalog(); cat.table('serving').engines.release[0].engine; "
            "print(type(cat.gpus['h100-sxm-80gb']).__module__, "
            "sorted(m for m in sys.modules if m.startswith('gpuplan.hardware.schema')))")
    env = {**os.environ, "PYTHONPATH": str(Path(loader.__file__).parents[2])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["gpuplan.hardware.schema", "['gpuplan.hardware.schema']"]


def test_a_changed_catalog_file_is_not_read_stale(shipped, parses):
    """The stale case: a source changed after the file was written (an edit in a checkout, a
    patched install). The changed file is parsed again, every record validated, and the catalog
    is the edited one."""
    root, _ = shipped
    before = loader.load_catalog()
    nvidia = root / "gpus" / "nvidia.toml"
    text = nvidia.read_text()
    edited = re.sub(r'(id = "h100-sxm-80gb"(?:(?!\[\[gpu\]\]).)*?node_price_usd = )\d+', r"\g<1>123456", text,
                    count=1, flags=re.S)
    assert edited != text
    nvidia.write_text(edited)
    after = loader.load_catalog()
    assert after.gpus["h100-sxm-80gb"].node_price_usd == 123456 != before.gpus["h100-sxm-80gb"].node_price_usd
    assert after.sha256 != before.sha256
    assert parses["toml"] == [str(nvidia)]  # only the changed file is parsed; the others are reused
    assert len(parses["records"]) > 100  # and the whole catalog is validated again
    assert same_catalog(after, loader.load_catalog(base=root))


@pytest.mark.parametrize("change", ["add", "remove"])
def test_a_file_added_or_removed_makes_the_file_stale(shipped, parses, change):
    root, _ = shipped
    if change == "add":
        (root / "network" / "more.toml").write_text(
            '[[source]]\nid = "extra-source"\ntitle = "t"\ndate = "2026"\nconfidence = "V"\n')
    else:
        (root / "facility" / "parts.toml").unlink()

    def outcome(load):
        try:
            return load()
        except InputError as exc:
            return str(exc)

    got, parsed = outcome(loader.load_catalog), outcome(lambda: loader.load_catalog(base=root))
    assert parses["records"]  # validated again, not read from the file
    if isinstance(parsed, str):  # the same refusal as the sources give
        assert got == parsed
    else:
        assert same_catalog(got, parsed)
        assert ("extra-source" in got.sources) == (change == "add")
        assert bool(got.parts) == (change == "add")


def test_a_file_for_other_code_or_unreadable_is_ignored(shipped, parses, monkeypatch):
    root, out = shipped
    monkeypatch.setattr(preparsed, "code_fingerprint", lambda: "another gpuplan")
    assert preparsed.read_preparsed() is None
    monkeypatch.undo()
    monkeypatch.setattr(loader, "builtin_dir", lambda: root)
    monkeypatch.setattr(preparsed, "preparsed_path", lambda: out)
    for broken in ("{", "[]", '{"format": 1}', ""):
        out.write_text(broken)
        assert preparsed.read_preparsed() is None
    assert same_catalog(loader.load_catalog(), loader.load_catalog(base=root))


def test_no_preparsed_file_parses_as_before(tmp_path, monkeypatch, parses):
    """An editable or source install ships no file: the catalog is parsed and validated."""
    monkeypatch.setattr(preparsed, "preparsed_path", lambda: tmp_path / "none.json")
    cat = loader.load_catalog()
    assert len(parses["toml"]) > 10 and len(cat.gpus) > 10


def test_an_overlay_is_validated_over_a_preparsed_catalog(shipped, parses, tmp_path):
    root, _ = shipped
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "price.toml").write_text('[[gpu]]\nid = "h100-sxm-80gb"\nnode_price_usd = 250000\n')
    got = loader.load_catalog([overlay])
    assert got.gpus["h100-sxm-80gb"].node_price_usd == 250000
    assert parses["toml"] == [str(overlay / "price.toml")]  # the shipped files' parsed TOML is reused
    assert len(parses["records"]) > 100  # every merged record validated
    (overlay / "price.toml").write_text('[[gpu]]\nid = "h100-sxm-80gb"\nnode_price_usd = "cheap"\n')
    with pytest.raises(InputError, match="node_price_usd"):
        loader.load_catalog([overlay])


def test_the_build_refuses_what_would_not_read_back():
    with pytest.raises(ValueError, match="JSON"):
        preparsed.preparsed_text({}, [("x.toml", b"", {"when": datetime.date(2026, 1, 1)})], {})
    with pytest.raises(TypeError):
        preparsed.encode({1: "a non-string key"})
