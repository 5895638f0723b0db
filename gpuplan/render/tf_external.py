"""Terraform's ``external`` data source protocol: one flat JSON object whose values are all strings.

The keys are the tfvars shape flattened with ``_``: ``training_gpus``, ``training_layout_tp``,
``serving_network_nic``, ... (docs/terraform.md lists them). The key set is the same for every plan:
a phase that was not planned, or a block that does not exist, gives empty strings, and
``<phase>_planned`` says which. Numbers are written as JSON writes them (``tonumber()`` reads them
back), booleans as ``"true"``/``"false"``, lists of objects as compact JSON (``jsondecode()``).
"""

from __future__ import annotations

import json
from typing import Any

from gpuplan.core.contract import Plan
from gpuplan.render import RenderOptions
from gpuplan.render.tfvars import PHASE_SHAPE, variables


def scalar(value: Any) -> str:
    """One value as the protocol's string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def flat(plan: Plan) -> dict[str, str]:
    data = variables(plan)
    out: dict[str, str] = {}
    for key, value in data["gpuplan"].items():
        out[key] = scalar(value)
    for phase, shape in PHASE_SHAPE.items():
        obj = data[f"gpuplan_{phase}"]
        out[f"{phase}_planned"] = scalar(obj is not None)
        for key, sub in shape.items():
            value = None if obj is None else obj[key]
            if isinstance(sub, tuple):
                for field in sub:
                    out[f"{phase}_{key}_{field}"] = scalar(None if value is None else value[field])
            else:
                out[f"{phase}_{key}"] = scalar(value)
    return dict(sorted(out.items()))


def render(plan: Plan, options: RenderOptions) -> str:
    return json.dumps(flat(plan), indent=2, ensure_ascii=False) + "\n"
