"""Property: any catalog overlay directory loads and plans, or fails with one clear line.

An overlay (``--catalog DIR`` / ``GPUPLAN_CATALOG``) arrives in a pull request: shipped records
overridden field by field with scaled or hostile values, copies of shipped records under new ids
with fields changed or dropped, duplicate ids, unknown tables, dangling references, alias
collisions and calibration tables with hostile constants. A catalog that loads is then used to
plan a small workload restricted to the GPU the overlay touched.
"""

from __future__ import annotations

import copy
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.hostile.conftest import (
    assert_input_error,
    assert_outcome,
    builtin_catalog,
    event,
    hostile_values,
    plan_text,
    run_cli,
    to_toml,
    toml_key,
    toml_value,
    twin,
)

KINDS = ("source", "gpu", "fabric", "switch", "nic", "optic", "model")


def _shipped() -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    from gpuplan.hardware.loader import builtin_dir

    root = builtin_dir()
    records: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    calibration: dict[str, dict[str, Any]] = {}
    for path in sorted(root.rglob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if path.relative_to(root).parts[0] == "calibration":
            calibration[path.stem] = data
            continue
        for kind in KINDS:
            records[kind] += data.get(kind, [])
    return records, calibration


SHIPPED, CALIBRATION = _shipped()
SMALL_GPUS = ["h100-sxm-80gb", "mi300x-oam-192gb", "l40s-pcie-48gb"]
NEW_IDS = ["lab-gpu", "x", "h100-sxm-80gb-copy", "a" * 64, "new.switch_1", "Bad-Id", "", "a" * 65, "../x"]


def _scaled(value: Any, factor: float) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return max(0, int(value * factor)) if factor < 1e12 else 10**30
    if isinstance(value, float):
        return value * factor
    return value


@st.composite
def mutated_field(draw: Any, record: dict[str, Any]) -> tuple[str, Any]:
    keys = sorted(record) + ["unknown_field", "price_usdd", "sources", "efficiency"]
    key = draw(st.sampled_from(keys))
    old = record.get(key)
    how = draw(st.sampled_from(["scale", "scale", "hostile", "nested"]))
    if how == "scale" and isinstance(old, (int, float)):
        factor = draw(st.sampled_from([0.0, 1e-9, 0.001, 0.5, 2.0, 1000.0, 1e9, 1e300, -1.0]))
        return key, _scaled(old, factor)
    if how == "nested" and isinstance(old, dict) and old:
        sub = draw(st.sampled_from(sorted(old) + ["unknown"]))
        return key, {sub: draw(st.one_of(hostile_values(), st.just(None).map(lambda _: "no-such-source")))}
    return key, draw(hostile_values())


@st.composite
def records(draw: Any) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(["gpu", "gpu", "gpu", "fabric", "switch", "nic", "optic", "model", "source"]))
    base = draw(st.sampled_from(SHIPPED[kind]))
    how = draw(st.sampled_from(["override", "override", "new", "new", "drop", "alias"]))
    if how == "override":  # a few fields over a shipped record, merged by id
        rec: dict[str, Any] = {"id": base["id"]}
        for _ in range(draw(st.integers(1, 3))):
            k, v = draw(mutated_field(base))
            rec[k] = v
    else:
        rec = copy.deepcopy(base)
        rec["id"] = draw(st.sampled_from(NEW_IDS))
        rec.pop("aliases", None)
        if how == "drop":
            rec.pop(draw(st.sampled_from(sorted(rec))), None)
        elif how == "alias" and kind == "gpu":
            rec["aliases"] = [draw(st.sampled_from(["h100", "a100", "lab", "h100-sxm-80gb"]))]
        for _ in range(draw(st.integers(0, 2))):
            k, v = draw(mutated_field(base))
            rec[k] = v
    return kind, rec


@st.composite
def overlay_files(draw: Any) -> dict[str, str]:
    files: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(["prices.toml", "gpus/lab.toml", "network/x.toml", "a/b/c.toml",
                                     "calibration/training.toml", "calibration/serving.toml",
                                     "calibration/collectives.toml", "catalog.toml", "notes.txt"]))
        if path.startswith("calibration/"):
            stem = Path(path).stem
            table = copy.deepcopy(CALIBRATION[stem])
            for _ in range(draw(st.integers(1, 2))):
                k, v = draw(mutated_field(table))
                table[k] = v
            files[path] = to_toml(table)
            continue
        if path == "catalog.toml":
            files[path] = to_toml({"catalog": draw(st.sampled_from([{"version": "x"}, {"version": 1},
                                                                    {"versio": "1"}, {}]))})
            continue
        lines = []
        for _ in range(draw(st.integers(1, 3))):
            kind, rec = draw(records())
            if draw(st.integers(0, 19)) == 0:
                kind = draw(st.sampled_from(["gpus", "gpuu", "catalog", "calibration"]))
            lines.append(f"[[{kind}]]")
            lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in rec.items()]
            if draw(st.integers(0, 14)) == 0:  # the same id twice in one overlay
                lines.append(f"[[{kind}]]")
                lines.append(f"id = {toml_value(rec.get('id', 'x'))}")
        if draw(st.integers(0, 24)) == 0:
            lines.insert(0, draw(st.sampled_from(["gpu = 1", "[gpu]", "gpu = [1, 2]", "[[source]", "x = ["])))
        files[path] = "\n".join(lines) + "\n"
    return files


def _touched_gpus(files: dict[str, str], catalog: Any) -> list[str]:
    ids = []
    for text in files.values():
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue
        for rec in data.get("gpu", []) if isinstance(data.get("gpu"), list) else []:
            if isinstance(rec, dict) and rec.get("id") in catalog.gpus:
                ids.append(rec["id"])
    return sorted(set(ids)) or SMALL_GPUS


PROFILE = """[model]
preset = "llama-3.1-8b"
[training]
tokens = 1e10
sequence_length = 4096
deadline_days = 30
[serving]
qps = 5
context_length = 8192
[constraints]
allow_gpus = {gpus}
"""


def _overlay(files: dict[str, str]) -> None:
    """An overlay loads (then plans) or is refused in one line."""
    from gpuplan.hardware.loader import load_catalog

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "overlay"
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        try:
            catalog = load_catalog([root])
        except Exception as exc:  # noqa: BLE001 - must be an InputError
            assert_input_error(exc)
            event("overlay refused")
            return
        event("overlay loaded")
        assert catalog.sha256 != builtin_catalog().sha256 or not any(f.endswith(".toml") for f in files)
        gpus = toml_value(_touched_gpus(files, catalog))
        plan_text(PROFILE.format(gpus=gpus), str(Path(tmp) / "p.toml"), catalog)


test_overlay, test_overlay_slow = twin(_overlay, overlay_files(), fast=120)


def _cli_overlay(files: dict[str, str]) -> None:
    """End to end: ``--catalog DIR`` and ``GPUPLAN_CATALOG`` with ``gpuplan catalog gpus`` and ``recommend``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "overlay"
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        assert_outcome(run_cli("catalog", "gpus", "--format", "json", "--catalog", str(root)), json_out=True)
        (Path(tmp) / "p.toml").write_text(PROFILE.format(gpus=toml_value(SMALL_GPUS)), encoding="utf-8")
        r = run_cli("recommend", str(Path(tmp) / "p.toml"), "--phase", "serving", "--format", "json",
                    env={"GPUPLAN_CATALOG": str(root)})
        assert_outcome(r, json_out=True)


test_cli_overlay, test_cli_overlay_slow = twin(_cli_overlay, overlay_files(), fast=40)
