"""CLI test fixtures: golden files, a fixed terminal width, the test catalog overlay and a synthetic
planner standing in for ``gpuplan.planning.compose.plan_workload`` (so the commands run end to end while the
real planners are being written, and their goldens do not move with calibration)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuplan.core.contract import AssumptionOut, Finding, Plan
from tests.render import golden as _golden
from tests.render.fixtures import serving_plan, synthetic_plan, training_plan

ROOT = Path(__file__).resolve().parents[2]
DATA = Path("tests/cli/data")  # relative: tests chdir to ROOT, so paths in outputs are stable
CATALOG = str(DATA / "catalog")
PROFILE = str(DATA / "profile.toml")


def pytest_addoption(parser: pytest.Parser) -> None:
    _golden.add_option(parser)


@pytest.fixture
def golden(request):
    return lambda name, text: _golden.check(request.config, name, text)


@pytest.fixture(autouse=True)
def _terminal(monkeypatch):
    """Run from the repository root with an 80-column, colourless terminal."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def fake_plan_workload(workload, catalog, *, phases=("training", "serving")) -> Plan:
    """The synthetic plan, shaped by the workload: its GPU, its GPU count (training), its gates."""
    gpu = workload.constraints.allow_gpus[0]
    training = serving = None
    if workload.training is not None and "training" in phases:
        nodes = (workload.training.gpus or 1024) // 8
        training = training_plan(nodes=nodes, gpu=gpu)
    if workload.serving is not None and "serving" in phases:
        serving = serving_plan().model_copy(update={"gpu": gpu})
    findings = []
    c = workload.constraints
    for name, phase in (("training", training), ("serving", serving)):
        if phase is not None and c.budget_usd is not None and phase.capex_usd > c.budget_usd:
            findings.append(Finding(severity="error", code=f"{name}-over-budget", phase=name,
                                    field="constraints.budget_usd",
                                    message=f"{name} capex ${phase.capex_usd:,.0f} exceeds the budget "
                                            f"${c.budget_usd:,.0f}"))
    return synthetic_plan(profile=workload.source, input_sha256=workload.input_sha256, workload=workload.name,
                          catalog_version=catalog.version, catalog_sha256="c" * 64, training=training,
                          serving=serving, findings=findings,
                          assumptions=[AssumptionOut(field=a.field, value=a.value, reason=a.reason)
                                       for a in workload.assumptions])


@pytest.fixture
def planner(monkeypatch):
    """Replace the real planner with :func:`fake_plan_workload`; returns the calls it got."""
    import gpuplan.planning.compose

    calls = []

    def plan(workload, catalog, *, phases=("training", "serving")):
        calls.append(dataclasses.replace(workload))
        return fake_plan_workload(workload, catalog, phases=phases)

    monkeypatch.setattr(gpuplan.planning.compose, "plan_workload", plan)
    return calls
