"""Shared fixtures: the built-in catalog (loaded once) and an in-process CLI runner."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from gpuplan.hardware import load_catalog

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED_VALIDATION = ROOT.parent / "shared" / "validation"


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


def plan_file(path, catalog, phase: str):
    """The plan of the profile at ``path`` (an example or a test's data file) for one ``phase``, in
    process, as ``gpuplan recommend --phase`` plans it."""
    from gpuplan.model.profile import load_profile_text
    from gpuplan.planning.compose import plan_workload

    return plan_workload(load_profile_text(Path(path).read_text(encoding="utf-8"), str(path), catalog), catalog,
                         phases=(phase,))


def without_prices(catalog, *gpu_ids, switches=()):
    """The catalog with these GPUs' server prices (and these switches' prices) taken out: every
    shipped part has a price or a marked estimate, so the unpriced paths are tested on a copy."""
    gpus = dict(catalog.gpus)
    for g in gpu_ids:
        gpus[g] = gpus[g].model_copy(update={"node_price_usd": None, "price_usd": None, "node_price_estimate": False})
    sws = dict(catalog.switches)
    for s in switches:
        sws[s] = sws[s].model_copy(update={"price_usd": None, "price_estimate": False})
    return replace(catalog, gpus=gpus, switches=sws)


@pytest.fixture(scope="session")
def unpriced_catalog():
    """h100-nvl-94gb, mi325x-oam-256gb and h800-sxm-80gb without a server price."""
    return without_prices(load_catalog(), "h100-nvl-94gb", "mi325x-oam-256gb", "h800-sxm-80gb")


@dataclass
class Run:
    code: int
    out: str
    err: str

    def __str__(self) -> str:  # shown by pytest when an assertion fails
        return f"exit {self.code}\n--- stderr ---\n{self.err[-3000:]}\n--- stdout ---\n{self.out[:2000]}"


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run ``gpuplan ARGS`` in-process; returns exit code, stdout and stderr."""
    from gpuplan.cli.app import main

    monkeypatch.delenv("GPUPLAN_CATALOG", raising=False)
    monkeypatch.delenv("GPUPLAN_DEBUG", raising=False)

    def run(*args: str) -> Run:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def pytest_addoption(parser):
    """``--update-golden`` rewrites the golden files (tests/golden/) instead of comparing."""
    from tests.render import golden

    golden.add_option(parser)
