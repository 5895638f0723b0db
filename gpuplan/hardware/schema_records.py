"""The pydantic schemas of the catalog's records (hardware/schema.py) and of the collectives and
bill-of-materials tables (hardware/fabric_calibration.py).

Each schema derives from its record, whose annotations and defaults are its fields
(hardware/record.py): here only the configuration and the validators (a nested record's schema is
its own). Imported only where TOML is validated (hardware/schemas.py), never to read the
pre-parsed catalog.
"""

from __future__ import annotations

from pydantic import BaseModel, model_validator

from gpuplan.core.types import CATALOG_STRICT, Id, Positive
from gpuplan.hardware import fabric_calibration, schema
from gpuplan.model.arch import ArchitectureSpec


class Source(BaseModel, schema.Source):
    model_config = CATALOG_STRICT


class GpuEfficiency(BaseModel, schema.GpuEfficiency):
    model_config = CATALOG_STRICT


class Gpu(BaseModel, schema.Gpu):
    model_config = CATALOG_STRICT

    @model_validator(mode="after")
    def _consistent(self) -> Gpu:
        if self.memory_usable_gib > self.memory_label_gb * 1.0001:
            raise ValueError("memory_usable_gib exceeds memory_label_gb")
        if self.scaleup_p2p_uni_gb_per_s and self.scaleup_p2p_uni_gb_per_s > self.scaleup_uni_gb_per_s:
            raise ValueError("scaleup_p2p_uni_gb_per_s exceeds scaleup_uni_gb_per_s")
        if self.scaleup_domain > 1 and self.scaleup_domain < self.gpus_per_node and self.form_factor != "pcie":
            raise ValueError("scaleup_domain smaller than gpus_per_node on a baseboard GPU")
        return self


class Fabric(BaseModel, schema.Fabric):
    model_config = CATALOG_STRICT


class Switch(BaseModel, schema.Switch):
    model_config = CATALOG_STRICT


class Nic(BaseModel, schema.Nic):
    model_config = CATALOG_STRICT


class Optic(BaseModel, schema.Optic):
    model_config = CATALOG_STRICT


class Part(BaseModel, schema.Part):
    model_config = CATALOG_STRICT


class ModelPreset(ArchitectureSpec, schema.ModelPreset):
    """A published model architecture with its source."""

    model_config = CATALOG_STRICT
    id: Id
    name: str
    published_params_b: Positive | None = None
    sources: dict[str, Id]


class CatalogMeta(BaseModel, schema.CatalogMeta):
    model_config = CATALOG_STRICT


class CollectivesCalibration(BaseModel, fabric_calibration.CollectivesCalibration):
    model_config = CATALOG_STRICT


class BomCalibration(BaseModel, fabric_calibration.BomCalibration):
    model_config = CATALOG_STRICT
