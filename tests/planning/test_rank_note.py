"""The capex ranking's note (planning/compose.py) says what its totals hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.hardware import load_catalog
from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


def _plan(name: str, catalog, phase: str):
    path = ROOT / "examples" / name
    workload = load_profile_text(path.read_text(encoding="utf-8"), str(path), catalog)
    return plan_workload(workload, catalog, phases=(phase,))


def test_the_capex_ranking_names_what_its_totals_hold(shipped):
    """examples/llama-70b-train-serve.toml's serving: 3 B200 servers $1,122,000 + network $31,349 =
    $1,153,349, but the ranked total $1,320,139 also holds storage $42,000, management $58,590, racks
    $7,500, PDUs $13,200 and rear doors $45,500: the note called it "servers + fabric"."""
    s = _plan("llama-70b-train-serve.toml", shipped, "serving").serving
    by = s.bom.capex_by_category_usd
    assert round(by["server"]) == 1_122_000 and round(s.bom.network_capex_usd) == 31_349
    assert round(s.capex_usd) == 1_320_139 == round(sum(by.values()))
    note = next(r for r in s.reasons if r.startswith("ranked on capex"))
    assert note.startswith("ranked on capex with each option's own network (its whole bill: servers, network, "
                           "storage, management, racks, power, cooling): b200-sxm-180gb $1,320,139")
