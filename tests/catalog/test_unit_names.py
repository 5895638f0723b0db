"""Unit names nobody can misread (issue 13): bytes per second say ``gb_per_s`` / ``tb_per_s``, line
rates say ``gbit``, and the vendor's memory label is called a label. Each key's unit is pinned to
a datasheet figure, and no catalog or plan field may again end in the ambiguous ``gbps`` / ``tbps``."""

from __future__ import annotations

import dataclasses
import re
import typing

import pytest
from pydantic import BaseModel

from gpuplan.core.contract import Plan
from gpuplan.core.units import GB, GIB
from gpuplan.hardware.loader import KINDS
from gpuplan.hardware.record import Record
from gpuplan.hardware.schemas import schema_of

AMBIGUOUS = re.compile(r"(gbps|tbps|mbps)(_|$)|^memory_gib$")  # rename-keys: keep


def _annotations(model: type) -> dict[str, object]:
    """Field name -> type of a pydantic model (the catalog's schemas) or a dataclass (the plan's classes)."""
    if dataclasses.is_dataclass(model):
        return {f.name: f.type for f in dataclasses.fields(model)}
    return {name: info.annotation for name, info in model.model_fields.items()}


def _models(model: type, seen: set[type]) -> None:
    if model in seen:
        return
    seen.add(model)
    for annotation in _annotations(model).values():
        stack = [annotation]
        while stack:
            tp = stack.pop()
            if isinstance(tp, type) and issubclass(tp, Record) and not issubclass(tp, BaseModel):
                tp = schema_of(tp)  # a catalog record in a field: its schema's fields
            if isinstance(tp, type) and (issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp)):
                _models(tp, seen)
            stack.extend(typing.get_args(tp))


def _fields(roots: list[type]) -> list[str]:
    seen: set[type] = set()
    for root in roots:
        _models(root, seen)
    return sorted({f"{m.__name__}.{name}" for m in seen for name in _annotations(m)})


@pytest.mark.parametrize("roots", [[Plan], [schema_of(k) for k in KINDS.values()]], ids=["plan-json", "catalog"])
def test_no_field_name_has_an_ambiguous_unit(roots):
    fields = _fields(roots)
    assert len(fields) > 40  # the walk reached the nested models
    assert [f for f in fields if AMBIGUOUS.search(f.split(".")[1])] == []


def test_h100_bandwidths_read_in_the_units_of_their_names(catalog):
    """NVIDIA H100 SXM datasheet: HBM3 3.35 TB/s; NVLink4 900 GB/s (both directions) stored per
    direction; ConnectX-7 400 Gb/s per port (NVIDIA ConnectX-7 product brief)."""
    h100 = catalog.gpus["h100-sxm-80gb"]
    assert h100.mem_bw_tb_per_s == 3.35
    assert 2 * h100.scaleup_uni_gb_per_s == 900
    assert h100.host_link_uni_gb_per_s == 64  # PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 ~ 63 GB/s
    assert catalog.nics["cx7-400g"].port_gbit == 400


def test_the_memory_label_is_a_label_not_a_byte_count(catalog):
    """smi-memory-totals: H100 reports 81,559 MiB, so its "80GB" is GiB (the usable bytes exceed 80e9);
    B300 reports 275,040 MiB, so its "288 GB" is decimal (288 GiB would be 20 GiB more than exists).
    No single factor turns ``memory_label_gb`` into bytes; the planners use ``memory_usable_gib``."""
    h100, b300 = catalog.gpus["h100-sxm-80gb"], catalog.gpus["b300-sxm-288gb"]
    assert h100.memory_usable_gib * GIB > h100.memory_label_gb * GB
    assert b300.memory_usable_gib * GIB < b300.memory_label_gb * GB < b300.memory_label_gb * GIB - 15 * GIB
