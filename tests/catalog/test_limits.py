"""Catalog overlays are bounded: every GPU record is searched, so their number is capped."""

from __future__ import annotations

import re

import pytest

from gpuplan.hardware.loader import MAX_GPUS, load_catalog
from gpuplan.core.errors import InputError
from tests.conftest import ROOT


def _gpu_copies(n: int) -> str:
    text = (ROOT / "catalog" / "gpus" / "nvidia.toml").read_text()
    first = text[text.index("[[gpu]]"):text.index("[[gpu]]", text.index("[[gpu]]") + 1)]
    first = re.sub(r"(?m)^aliases = .*\n", "", first)
    return "".join(first.replace('id = "a100-sxm-40gb"', f'id = "inhouse-{i}"', 1) for i in range(n))


def test_an_overlay_may_add_gpus_up_to_the_limit(tmp_path):
    shipped = len(load_catalog().gpus)
    (tmp_path / "gpus.toml").write_text(_gpu_copies(MAX_GPUS - shipped))
    assert len(load_catalog([tmp_path]).gpus) == MAX_GPUS


def test_one_gpu_more_is_refused_naming_the_overlay(tmp_path):
    shipped = len(load_catalog().gpus)
    (tmp_path / "gpus.toml").write_text(_gpu_copies(MAX_GPUS - shipped + 1))
    with pytest.raises(InputError, match=f"more than the limit of {MAX_GPUS}") as err:
        load_catalog([tmp_path])
    assert err.value.file == str(tmp_path)


def test_plausible_ranges_are_documented():
    """docs/catalog.md, "Plausible ranges", lists exactly gpuplan.hardware.plausible.RANGES."""
    import re
    from pathlib import Path

    from gpuplan.hardware.plausible import RANGES, _number

    doc = (Path(__file__).resolve().parents[2] / "docs" / "catalog.md").read_text(encoding="utf-8")
    section = doc.split("## Plausible ranges", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", section, re.MULTILINE)
    assert {name: (low.strip(), high.strip(), unit.strip()) for name, low, high, unit in rows} == {
        name: (_number(low), _number(high), unit) for name, (low, high, unit) in RANGES.items()}


def test_shipped_catalog_is_inside_the_plausible_ranges():
    from gpuplan.hardware.loader import load_catalog

    assert load_catalog([]).gpus  # loading validates every record against RANGES
