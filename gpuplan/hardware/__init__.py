"""The hardware and model catalog: sourced data files validated once at load."""

from gpuplan.hardware.loader import Catalog, load_catalog

__all__ = ["Catalog", "load_catalog"]
