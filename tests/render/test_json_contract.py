"""The JSON contract of issue 6: every key a consumer is promised is in the plan and in the schema."""

from __future__ import annotations

import json

import pytest

from gpuplan.render import render
from tests.render.fixtures import ROOT, synthetic_plan

TOP = ["schema_version", "gpuplan_version", "catalog_version", "catalog_sha256", "input_sha256", "assumptions",
       "training", "serving"]
PHASE = ["feasible", "gpu", "gpus", "nodes", "layout", "interconnect", "topology", "bom", "capex_usd", "power_kw",
         "cloud_usd_per_hour", "alternatives", "reasons"]
TRAINING = PHASE + ["step_time_s", "mfu", "wall_clock_days", "gpu_hours"]
SERVING = PHASE + ["replicas", "gpus_per_replica", "ttft_ms_p99", "tpot_ms", "max_qps"]
BOM_ITEM = ["quantity", "unit_price_usd", "unit_power_w", "source"]


@pytest.fixture(scope="module")
def data():
    return json.loads(render(synthetic_plan(), "json"))


@pytest.fixture(scope="module")
def schema():
    return json.loads((ROOT / "schema" / "plan.schema.json").read_text(encoding="utf-8"))


def _resolve(schema: dict, node: dict) -> dict:
    """Follow $ref and nullable anyOf to the object definition."""
    while True:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        elif "anyOf" in node:
            node = next(x for x in node["anyOf"] if x.get("type") != "null")
        else:
            return node


def test_plan_json_has_every_promised_key(data):
    assert [k for k in TOP if k not in data] == []
    assert [k for k in TRAINING if k not in data["training"]] == []
    assert [k for k in SERVING if k not in data["serving"]] == []
    for phase in ("training", "serving"):
        for item in data[phase]["bom"]["items"]:
            assert [k for k in BOM_ITEM if k not in item] == []
    assert all({"field", "value", "reason"} <= set(a) for a in data["assumptions"])


def test_promised_keys_are_in_the_schema(schema):
    assert [k for k in TOP if k not in schema["properties"]] == []
    training = _resolve(schema, schema["properties"]["training"])
    serving = _resolve(schema, schema["properties"]["serving"])
    assert [k for k in TRAINING if k not in training["properties"]] == []
    assert [k for k in SERVING if k not in serving["properties"]] == []


def test_numbers_are_numbers_and_keys_are_snake_case(data):
    def walk(node, path=""):
        if isinstance(node, dict):
            for key, value in node.items():
                assert key == key.lower() and " " not in key and "-" not in key, f"{path}.{key}"
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for value in node:
                walk(value, path)

    walk(data)
    t = data["training"]
    for key in ("step_time_s", "mfu", "wall_clock_days", "gpu_hours", "capex_usd", "power_kw"):
        assert isinstance(t[key], (int, float)) and not isinstance(t[key], bool), key
    assert isinstance(t["gpus"], int) and isinstance(t["nodes"], int)


def test_capex_by_category_adds_up_to_capex_to_the_cent():
    """Dollar maps are rounded as dollars: 6 significant digits had put frontier-405b-training's
    categories $439 off its capex."""
    from gpuplan.core.stable_json import stable

    assert stable({"capex_usd": 18_600_371.25, "capex_by_category_usd": {"switch": 18_600_371.25}}) == \
        {"capex_usd": 18_600_371.25, "capex_by_category_usd": {"switch": 18_600_371.25}}
    assert stable({"mfu_by_case": {"a": 0.123456789}}) == {"mfu_by_case": {"a": 0.123457}}  # not dollars: 6 digits
