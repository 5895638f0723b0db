"""The catalog's runtime records (gpuplan/hardware/record.py) against their pydantic schemas: the
same fields in the same order, the same values and dumps, frozen; and a start from the pre-parsed
catalog builds none of the schemas (the ~58 M instructions of a cold start they cost, issue 21)."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel, ValidationError

from gpuplan.hardware.record import RECORDS, RUNTIME, SCHEMAS, Record
from gpuplan.hardware.schema import Gpu, ModelPreset
from gpuplan.hardware.schemas import schema_of, validate
from gpuplan.model.arch import ArchitectureSpec


def _records(catalog) -> list[Record]:
    out: list[Record] = [catalog.meta, *catalog.tables.values()]
    for kind in ("sources", "gpus", "fabrics", "switches", "nics", "optics", "models", "parts"):
        out += getattr(catalog, kind).values()
    return out


def test_every_record_has_a_schema_with_its_fields_in_order():
    assert len(RECORDS) >= 30 and set(SCHEMAS) == set(RECORDS.values())
    for cls in RECORDS.values():
        schema = schema_of(cls)
        assert issubclass(schema, BaseModel) and issubclass(schema, cls) and RUNTIME[schema] is cls
        assert tuple(schema.model_fields) == cls._fields == tuple(cls.model_fields), cls.__name__
    # the preset: ArchitectureSpec's fields first, then its own four
    assert ModelPreset._fields[: len(ArchitectureSpec.model_fields)] == tuple(ArchitectureSpec.model_fields)


def test_records_hold_and_dump_what_their_schemas_validated(catalog):
    """Every record of the shipped catalog, validated again by its schema, dumps the same (the
    ``gpuplan catalog`` JSON is a record's model_dump) and turns back into an equal record."""
    records = _records(catalog)
    assert len(records) > 200
    for rec in records:
        assert type(rec) in SCHEMAS and type(rec).__module__.startswith("gpuplan.hardware.")
        model = schema_of(type(rec)).model_validate(rec.model_dump())
        assert rec.model_dump(mode="json") == model.model_dump(mode="json")
        assert rec.model_dump() == model.model_dump()
        assert validate(type(rec), rec.model_dump()) == rec
    nested = catalog.table("serving").engines.release[0]
    assert type(nested).__name__ == "EngineRelease" and not isinstance(nested, BaseModel)


def test_a_record_is_frozen_and_copied_with_updates(catalog):
    gpu = catalog.gpus["h100-sxm-80gb"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        gpu.tdp_w = 1.0  # type: ignore[misc]
    cheaper = gpu.model_copy(update={"price_usd": 1.0})
    assert type(cheaper) is Gpu and cheaper.price_usd == 1.0 and gpu.price_usd != 1.0
    assert cheaper != gpu and cheaper.model_copy(update={"price_usd": gpu.price_usd}) == gpu
    assert gpu.purchase_unit_nodes == 1 and gpu.servers_for(9) == 2  # H100 HGX: 8 GPUs a server


def test_validation_is_the_schemas():
    with pytest.raises(ValidationError, match="memory_usable_gib exceeds memory_label_gb"):
        validate(Gpu, {**_h100_fields(), "memory_usable_gib": 1000.0})
    with pytest.raises(TypeError):
        Gpu(id="x")  # a record is validated or read back, never built by calling its class


def _h100_fields() -> dict:
    from gpuplan.hardware.loader import load_catalog

    return load_catalog().gpus["h100-sxm-80gb"].model_dump()
