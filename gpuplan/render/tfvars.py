"""``*.auto.tfvars.json``: the plan as typed Terraform variables (docs/terraform.md).

Three variables: ``gpuplan`` (provenance and findings), ``gpuplan_training`` and
``gpuplan_serving`` (null when the phase was not planned). Numbers stay numbers, nested blocks stay
objects, and an infeasible phase keeps every attribute (null where there is no value), so one
``object({...})`` type declaration fits every plan. :data:`PHASE_SHAPE` is the single description
of those objects; ``tf-external`` flattens the same shape.
"""

from __future__ import annotations

import json
from typing import Any

from gpuplan.core.contract import Plan, ServingPlan, TrainingPlan
from gpuplan.render import RenderOptions
from gpuplan.render.json_ import stable

META = ("schema_version", "gpuplan_version", "catalog_version", "catalog_sha256", "input_sha256", "profile",
        "workload", "pricing")
FINDING = ("severity", "code", "phase", "field", "message")
NETWORK = ("scaleup_tech", "scaleup_domain_gpus", "scaleup_uni_gb_per_s", "scaleout_fabric", "scaleout_kind", "nic",
           "nics_per_node", "nic_gbit_per_gpu", "required_gbit_per_gpu", "rails")
TOPOLOGY = ("kind", "switch", "port_gbit", "tiers", "oversubscription", "nodes", "endpoints", "leaf_switches",
            "spine_switches", "core_switches", "node_leaf_links", "leaf_spine_links", "spine_core_links",
            "scalable_unit_nodes")
BOM_ITEM = ("category", "tier", "part_id", "quantity", "unit_price_usd", "total_price_usd", "total_power_w")
TRAINING_LAYOUT = ("tp", "pp", "dp", "cp", "ep", "vp", "micro_batch", "num_micro_batches", "global_batch_sequences",
                   "zero", "recompute", "sequence_parallel")
SERVING_LAYOUT = ("tp", "pp", "ep", "concurrency", "disaggregated")
#: The cost of ownership (docs/json.md, render/cost.py TCO_KEYS).
TCO = ("horizon_years", "capex_usd", "opex_usd_per_year", "total_usd", "usd_per_gpu_hour", "cloud_total_usd",
       "breakeven_months")

#: Attributes of each phase object: a name maps to None (a scalar of the phase), a tuple (an object
#: with those attributes, null when absent) or a list of one tuple (a list of such objects).
COMMON: dict[str, Any] = {
    "feasible": None, "gpu": None, "gpus": None, "nodes": None, "capex_usd": None, "power_kw": None,
    "cloud_usd_per_hour": None, "racks": None, "unpriced_parts": [None], "network": NETWORK,
    "topology": TOPOLOGY, "bom": [BOM_ITEM], "tco": TCO,
}
PHASE_SHAPE: dict[str, dict[str, Any]] = {
    "training": {**COMMON, "layout": TRAINING_LAYOUT, "wall_clock_days": None, "step_time_s": None, "mfu": None,
                 "tokens_per_s": None, "gpu_hours": None, "run_cost_usd": None},
    "serving": {**COMMON, "layout": SERVING_LAYOUT, "replicas": None, "spare_replicas": None,
                "gpus_per_replica": None, "ttft_ms_p99": None, "tpot_ms": None, "max_qps": None,
                "usd_per_million_output_tokens": None},
}


def _pick(obj: object, fields: tuple[str, ...]) -> dict[str, Any] | None:
    return None if obj is None else {f: getattr(obj, f) for f in fields}


def phase_object(name: str, phase: TrainingPlan | ServingPlan | None) -> dict[str, Any] | None:
    """The phase as a Terraform object following :data:`PHASE_SHAPE` (None when not planned)."""
    if phase is None:
        return None
    bom = phase.bom
    sources: dict[str, Any] = {
        "racks": bom.racks if bom else None,
        "unpriced_parts": list(bom.unpriced_parts) if bom else [],
        "network": phase.interconnect, "topology": phase.topology, "layout": phase.layout,
        "bom": list(bom.items) if bom else [],
    }
    out: dict[str, Any] = {}
    for key, shape in PHASE_SHAPE[name].items():
        value = sources[key] if key in sources else getattr(phase, key)
        if isinstance(shape, tuple):
            out[key] = _pick(value, shape)
        elif isinstance(shape, list) and isinstance(shape[0], tuple):
            out[key] = [_pick(v, shape[0]) for v in value]
        else:
            out[key] = value
    return out


def variables(plan: Plan) -> dict[str, Any]:
    meta = {k: getattr(plan, k) for k in META}
    meta["model"] = plan.model.name
    meta["findings"] = [_pick(f, FINDING) for f in plan.findings]
    meta["errors"] = sum(1 for f in plan.findings if f.severity == "error")
    meta["warnings"] = sum(1 for f in plan.findings if f.severity == "warning")
    return stable({"gpuplan": meta, "gpuplan_training": phase_object("training", plan.training),
                   "gpuplan_serving": phase_object("serving", plan.serving)})


def render(plan: Plan, options: RenderOptions) -> str:
    return json.dumps(variables(plan), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
