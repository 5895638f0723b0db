"""Shared storage of a phase and the network that reaches it (docs/bom.md, "Storage").

Training: capacity = dataset (tokens x ``dataset_bytes_per_token``: raw text and tokenised shards)
+ checkpoints (total parameters x ``checkpoint_bytes_per_param``, bf16 weights + fp32 master
weights + two Adam moments = 2 + 4 + 8 = 14 bytes, x ``checkpoints_kept``), x ``storage_headroom``.
Write bandwidth: one checkpoint drains to storage in ``checkpoint_write_fraction`` of the
checkpoint interval the goodput model chose (gpuplan/training/goodput.py, Young/Daly). Building
blocks = the larger of what capacity and bandwidth need.

Serving: a model store (weights x ``model_store_copies`` versions) when the fleet has more than
one server; one server loads from its local disks.

The training storage network is a converged Ethernet fabric (storage, in-band management and user
access) as the DGX GB200 SuperPOD builds it (RA-11338-001: Spectrum-4 storage/in-band fabric, node
side 5:3): one 400G port per server (the bandwidth of a DGX's two 200G storage ports), the
storage nodes' ports, the fabric's default switch, a fat tree at ``storage_fabric_ratio``.
"""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.core.cost_contract import StorageSizing
from gpuplan.fabric.facility import part_for, part_line
from gpuplan.fabric.sizing import ClosDesign, ClosSpec, size_clos
from gpuplan.core.contract import BomItem

#: The converged storage / front-end fabric of a training cluster (catalog/network/fabrics.toml).
STORAGE_FABRIC = "ethernet-400g"


@dataclass(frozen=True)
class StorageNeed:
    """What the planner knows about a phase's data: the model and, for training, the run."""

    phase: str
    total_params: float
    weights_bytes: float = 0.0
    tokens: float = 0.0
    checkpoint_interval_hours: float | None = None


def size_storage(need: StorageNeed, servers: int, catalog: Catalog) -> StorageSizing | None:
    """Capacity and write bandwidth, and the building blocks that give both (None: none needed)."""
    cal = catalog.table("bom")
    if need.phase == "training":
        role, part = "training", part_for(catalog, "storage-block")
        dataset = need.tokens * cal.dataset_bytes_per_token / 1e12
        ckpt = need.total_params * cal.checkpoint_bytes_per_param / 1e12
        kept = int(cal.checkpoints_kept)
        interval = need.checkpoint_interval_hours
        if interval is None or not math.isfinite(interval) or interval <= 0:
            interval = None
            write_s = float(catalog.table("training").checkpoint_save_hours) * 3600
        else:
            write_s = interval * 3600 * cal.checkpoint_write_fraction
        write = ckpt * 1e3 / write_s if write_s > 0 else 0.0
    else:
        if servers < 2:
            return None
        role, part = "model-store", part_for(catalog, "model-store")
        dataset, kept, interval, write = 0.0, int(cal.model_store_copies), None, 0.0
        ckpt = need.weights_bytes / 1e12
    usable = (dataset + ckpt * kept) * cal.storage_headroom
    if part is None or not part.usable_tb:
        return None
    units = max(1, math.ceil(usable / part.usable_tb - 1e-9))
    if part.write_gb_per_s:
        units = max(units, math.ceil(write / part.write_gb_per_s - 1e-9))
    return StorageSizing(role=role, dataset_tb=dataset, checkpoint_tb=ckpt, checkpoints_kept=kept,  # type: ignore[arg-type]
                         usable_tb_needed=usable, write_gb_per_s_needed=write,
                         checkpoint_interval_min=None if interval is None else interval * 60,
                         checkpoint_write_fraction=float(cal.checkpoint_write_fraction), part=part.id, units=units,
                         usable_tb=units * part.usable_tb, write_gb_per_s=units * (part.write_gb_per_s or 0.0))


def storage_lines(sizing: StorageSizing, catalog: Catalog) -> list[BomItem]:
    part = catalog.parts.get(sizing.part)
    note = (f"{sizing.usable_tb_needed:,.1f} TB usable and {sizing.write_gb_per_s_needed:,.1f} GB/s of checkpoint "
            f"writes needed" if sizing.role == "training" else f"model store, {sizing.usable_tb_needed:,.1f} TB")
    return [part_line(part, sizing.part, "storage", sizing.role, sizing.units, catalog, note)]


@dataclass(frozen=True)
class StorageNet:
    """The converged storage / front-end fabric of a training phase."""

    design: ClosDesign
    switch_id: str
    port_gbit: float
    nic_id: str | None
    nics: int


def storage_network(servers: int, sizing: StorageSizing, catalog: Catalog) -> StorageNet | None:
    """Servers' dual-port NICs and the storage nodes' ports on one fat tree of the fabric's switch."""
    from gpuplan.fabric.parts import pick_nic, switch_for

    fab = catalog.fabrics.get(STORAGE_FABRIC)
    if fab is None:
        return None
    part = catalog.parts.get(sizing.part)
    nic = pick_nic(catalog, fab, gpu=None, ports=1)
    per_server = nic.ports if nic else 1
    storage_ports = sizing.units * (part.ports or 0) * max(1, int((part.port_gbit or fab.port_gbit) // fab.port_gbit)) \
        if part else 0
    endpoints = servers * per_server + storage_ports
    ratio = float(catalog.table("bom").storage_fabric_ratio)
    switch_id, radix = switch_for(fab, catalog, endpoints, ratio)
    design = size_clos(ClosSpec(radix=radix, nodes=endpoints, rails=1, layout="fat-tree", oversubscription=ratio))
    return StorageNet(design=design, switch_id=switch_id, port_gbit=fab.port_gbit, nic_id=nic.id if nic else None,
                      nics=servers)


__all__ = ["STORAGE_FABRIC", "StorageNeed", "StorageNet", "size_storage", "storage_lines", "storage_network"]
