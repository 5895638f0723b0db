"""The JSON contract: the plan as sorted, rounded, byte-stable JSON."""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel

#: Floats are written with this many significant digits: stable across platforms, ample for planning.
SIGNIFICANT_DIGITS = 6


def _is_money(key: str | None) -> bool:
    return key is not None and (key.endswith("_usd") or "_usd_per_" in key)


def stable(value: Any, key: str | None = None) -> Any:
    """Round floats (integers stay integers), recursively: dollar amounts (keys ending in ``_usd``
    or holding ``_usd_per_``) to the cent, everything else to SIGNIFICANT_DIGITS."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite number in plan")
        if value == 0:
            return 0.0
        if _is_money(key) and abs(value) >= 0.01:
            return round(value, 2)
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, dict):
        return {k: stable(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [stable(v, key) for v in value]
    return value


def to_json(obj: BaseModel | dict[str, Any]) -> str:
    from gpuplan.render.safe import json_text

    data = obj.model_dump(mode="json", by_alias=True) if isinstance(obj, BaseModel) else obj
    return json_text(json.dumps(stable(data), indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n")


def render(plan: BaseModel, options: object) -> str:
    return to_json(plan)


#: Check and diff results are pydantic models too: same encoding, same stability.
render_check = render_diff = render
