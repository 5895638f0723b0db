"""Schemas of ``calibration/collectives.toml`` and ``calibration/bom.toml``: the collective
model's latency terms and the constants of the bill of materials, facility and cost of ownership
(records, hardware/record.py; validated by hardware/schema_tables.py)."""


from __future__ import annotations

from gpuplan.core.types import Fraction, NonNegative, Positive, PositiveInt
from gpuplan.hardware.plausible import _r
from gpuplan.hardware.record import Record


class CollectivesCalibration(Record):
    """``calibration/collectives.toml``: latency terms of the collective model."""

    scaleup_step_latency_us: _r(NonNegative, "step_latency_us")
    pcie_step_latency_us: _r(NonNegative, "step_latency_us")
    scaleout_hops: _r(PositiveInt, "scaleout_hops")


class BomCalibration(Record):
    """``calibration/bom.toml``: constants of the bill of materials, facility and cost of ownership."""

    rack_power_kw: _r(Positive, "rack_power_kw")
    # facility (gpuplan/fabric/facility.py)
    air_rack_max_kw: Positive = 20.0
    rear_door_rack_max_kw: Positive = 50.0
    pue_air: Positive = 1.5
    pue_liquid: Positive = 1.2
    pdus_per_rack: PositiveInt = 2
    head_nodes: PositiveInt = 3
    head_nodes_per_servers: PositiveInt = 100
    # storage (gpuplan/fabric/storage.py)
    checkpoint_bytes_per_param: Positive = 14.0
    checkpoints_kept: PositiveInt = 5
    dataset_bytes_per_token: Positive = 8.0
    checkpoint_write_fraction: Fraction = 0.05
    storage_headroom: Positive = 1.3
    model_store_copies: PositiveInt = 3
    storage_fabric_ratio: Positive = 1.6667
    # cost of ownership (gpuplan/fabric/tco.py)
    horizon_years: Positive = 4.0
    usd_per_kwh: Positive = 0.08
    utilization: Fraction = 0.8
    support_fraction_per_year: NonNegative = 0.1
    reserved_discount: NonNegative = 0.4
