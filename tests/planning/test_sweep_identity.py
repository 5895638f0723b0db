"""A sweep point is what a separate ``gpuplan recommend`` of that point says (issue 21).

A sweep reuses work across its points (replica capacities, the training search's groups and
evaluations, deadline searches whose result holds for other deadlines, checked fabrics) and plans
each point only as far as its summary reads (``plan_summary``). None of that may change a figure:
each point is compared with a full plan of the same profile, in a fresh process (nothing reused)
and in process (full precision, before the JSON rounds).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.hardware.loader import load_catalog
from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from gpuplan.planning.sweep import TrainingSummary, ServingSummary, parse_set, plan_order, run_sweep, summarize

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples" / "chat-8b-serving.toml"
TRAIN = ROOT / "examples" / "llama-70b-train-serve.toml"


def _gpuplan(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "gpuplan", *args, "--format", "json"], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def _profile_at(tmp_path: Path, source: Path, line: str, value: object) -> Path:
    """The profile with one ``key = value`` line of its table replaced (a separate recommend)."""
    key = line.split("=")[0].strip()
    text = source.read_text()
    assert text.count(f"\n{line}\n") == 1
    path = tmp_path / f"{source.stem}-{key}-{value}.toml"
    path.write_text(text.replace(f"\n{line}\n", f"\n{key} = {value}\n"))
    return path


@pytest.mark.parametrize("source, field, line, values, phase", [
    (CHAT, "serving.qps", "qps = 10", (5, 71, 200), "both"),
    (TRAIN, "training.deadline_days", "deadline_days = 90", (30, 77, 180), "training"),
])
def test_each_point_is_a_separate_recommend(tmp_path, source, field, line, values, phase):
    swept = _gpuplan("sweep", str(source), "--phase", phase, "--set", f"{field}={','.join(map(str, values))}")
    assert [p["values"] for p in swept["sweep"]] == [{field: v} for v in values]
    for point, value in zip(swept["sweep"], values):
        plan = _gpuplan("recommend", str(_profile_at(tmp_path, source, line, value)), "--phase", phase)
        for name, summary in (("training", TrainingSummary), ("serving", ServingSummary)):
            if point[name] is None:
                assert plan.get(name) is None or phase != "both"
                continue
            assert point[name] == {k: plan[name][k] for k in summary.model_fields}, (name, value)


@pytest.mark.slow
@pytest.mark.parametrize("source, specs, phases, drop", [
    (CHAT, ["serving.qps=5:200:12"], ("serving",), ""),
    (CHAT, ["serving.qps=3,40", "constraints.pricing=cloud,capex", "serving.tpot_ms=20,80"], ("serving",), ""),
    (TRAIN, ["training.deadline_days=30:180:12"], ("training",), ""),
    (TRAIN, ["training.deadline_days=45,120", "constraints.pricing=cloud,capex"], ("training",), ""),
    (TRAIN, ["training.budget_usd=2e7,9e7"], ("training",), "deadline_days = 90\n"),
])
def test_every_point_in_full_precision(source, specs, phases, drop):
    """Wider grids than the fresh-process test, compared before rounding: deadlines both ways
    (the interval memo), cloud pricing (no capex cutoff), budgets and a serving grid."""
    catalog = load_catalog()
    text = source.read_text().replace(drop, "")
    result = run_sweep(text, str(source), [parse_set(s) for s in specs], catalog, overlays=[], phases=phases)
    for point in result.sweep:
        workload = load_profile_text(text, str(source), catalog, overrides=point.values)
        assert point == summarize(point.values, plan_workload(workload, catalog, phases=phases)), point.values


def test_the_loosest_deadline_is_planned_first():
    points = [{"training.deadline_days": d, "serving.qps": q} for q in (1, 2) for d in (30, 90, 60)]
    order = plan_order(points)
    assert [points[i]["training.deadline_days"] for i in order] == [90, 90, 60, 60, 30, 30]
    assert [points[i]["serving.qps"] for i in order] == [1, 2, 1, 2, 1, 2]  # otherwise the grid's order
    qps = [{"serving.qps": q} for q in (3, 1, 2)]
    assert plan_order(qps) == [0, 1, 2]
