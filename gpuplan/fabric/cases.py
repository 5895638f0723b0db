"""Predict the figures of fabric validation cases (published switch, cable and optics counts).

A case's ``[case.run]`` table is validated by :class:`FabricRun` (unknown keys and bad values
are InputErrors naming the file and the field). The prediction is the closed-form sizing of
:mod:`gpuplan.fabric.sizing` and the module counting of :mod:`gpuplan.fabric.media`, the same
code the planners use.

``reserved_nodes_per_unit``: RA-11333-001 Table 4 gives 31, 63, 95 and 127 nodes for 1-4 SU of
32 node slots, i.e. the UFM takes one node slot of the whole fabric, not one per unit (one per
unit would leave 62/94/126). The value is therefore applied once, after the last node.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuplan.fabric.bom import nodes_per_rack
from gpuplan.model.case import CaseInput, NotModelled
from gpuplan.hardware.loader import Catalog
from gpuplan.core.errors import InputError
from gpuplan.fabric.media import choose_media, count_modules
from gpuplan.fabric.sizing import ClosSpec, SizingError, size_clos
from gpuplan.core.io import pydantic_error
from gpuplan.core.types import Id, NonNegativeInt, PositiveInt

FIGURES = ("leaf_switches", "spine_switches", "core_switches", "node_leaf_links", "leaf_spine_links",
           "spine_core_links", "switch_transceivers", "node_transceivers", "max_endpoints")


class FabricRun(BaseModel):
    """The ``[case.run]`` table of a fabric case (shared/validation/README.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    gpu: Id
    nodes: PositiveInt
    gpus_per_node: PositiveInt | None = None
    fabric: Id
    switch: Id | None = None
    rail_optimized: bool = True
    oversubscription: float = Field(default=1.0, gt=0, le=64, allow_inf_nan=False)
    scalable_unit_nodes: PositiveInt | None = None
    reserved_nodes_per_unit: NonNegativeInt = 0
    planes: PositiveInt = 1


def parse_run(case: CaseInput) -> FabricRun:
    try:
        return FabricRun.model_validate(case.run)
    except ValidationError as exc:
        raise pydantic_error(exc, file=case.file, prefix=f"case[{case.id}].run",
                             known_fields={f"case[{case.id}].run": list(FabricRun.model_fields)}) from None


def predict(case: CaseInput, catalog: Catalog) -> dict[str, float]:
    unknown = [f for f in case.figures if f not in FIGURES]
    if unknown:
        raise NotModelled(f"no fabric model for {', '.join(unknown)}")
    run = parse_run(case)
    where = f"case[{case.id}].run"
    gpu = catalog.gpu(run.gpu, file=case.file, field_path=f"{where}.gpu")
    fabric = catalog.lookup("fabric", run.fabric, file=case.file, field_path=f"{where}.fabric")
    switch = catalog.lookup("switch", run.switch or fabric.default_switch, file=case.file, field_path=f"{where}.switch")
    radix = switch.radix(fabric.port_gbit)
    if not radix:
        raise InputError(f"switch {switch.id} has no {fabric.port_gbit:g}G ports", file=case.file,
                         field=f"{where}.switch")
    try:
        design = size_clos(ClosSpec(radix=radix, nodes=run.nodes, rails=run.gpus_per_node or gpu.gpus_per_node,
                                    planes=run.planes, layout="rail-optimized" if run.rail_optimized else "fat-tree",
                                    oversubscription=run.oversubscription,
                                    scalable_unit_nodes=run.scalable_unit_nodes,
                                    reserved_node_slots=run.reserved_nodes_per_unit))
    except SizingError as exc:
        raise InputError(str(exc), file=case.file, field=where) from None
    media = choose_media(design, switch, fabric.port_gbit, gpu, nodes_per_rack(gpu, catalog), catalog)
    counts = count_modules(design, media)
    return {
        "leaf_switches": design.leaf_switches,
        "spine_switches": design.spine_switches,
        "core_switches": design.core_switches,
        # The published counts are cables: one twin-port cable serves every plane its NIC feeds.
        "node_leaf_links": media.cables(design.node_leaf_links),
        "leaf_spine_links": media.cables(design.leaf_spine_links),
        "spine_core_links": media.cables(design.spine_core_links),
        "switch_transceivers": counts.switch_total,
        "node_transceivers": counts.node_modules,
        "max_endpoints": design.max_endpoints,
    }
