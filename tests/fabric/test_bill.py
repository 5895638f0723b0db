"""The whole bill (issue 16): storage, management, power, cooling, estimates and cost of ownership.

Figures are pinned to hand calculations written out here or to published reference designs
(RA-11338-001 for GB200 NVL72), never to the formulas restated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.hardware import load_catalog
from gpuplan.fabric.facility import cooling_for, rack_plan
from gpuplan.fabric.tco import phase_tco
from gpuplan.core.contract import Bom
from gpuplan.planning.compose import plan_workload
from gpuplan.model.profile import load_profile_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def load_profile(path: str, catalog):
    return load_profile_text(Path(path).read_text(encoding="utf-8"), path, catalog)


@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


def _categories(bom):
    return {i.category for i in bom.items}


def test_the_built_in_default_is_fully_priced_with_the_whole_bill(cli):
    """Issue 16, 'done when', on `gpuplan recommend -f json` without a profile."""
    import json

    r = cli("recommend", "-f", "json")
    assert r.code == 0, r
    plan = json.loads(r.out)
    for name, needed in (("training", {"storage", "management", "power", "cooling"}),
                         ("serving", {"management", "power", "cooling"})):
        phase = plan[name]
        assert phase["bom"]["unpriced_parts"] == []
        assert not [r for r in phase["reasons"] if "unpriced" in r]
        assert needed <= {i["category"] for i in phase["bom"]["items"]}
        assert set(phase["tco"]) >= {"horizon_years", "capex_usd", "opex_usd_per_year", "total_usd",
                                     "usd_per_gpu_hour", "cloud_total_usd", "breakeven_months"}
    assert plan["tco"]["total_usd"] == pytest.approx(plan["training"]["tco"]["total_usd"]
                                                     + plan["serving"]["tco"]["total_usd"], abs=0.02)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_shipped_plan_is_fully_priced_with_the_whole_bill(shipped, path):
    """Issue 16, 'done when': no unpriced part, the categories present, a tco per phase."""
    plan = plan_workload(load_profile(str(path), shipped), shipped)
    phases = [p for p in (plan.training, plan.serving) if p is not None and p.feasible]
    assert phases
    for phase in phases:
        assert phase.bom.unpriced_parts == [], phase.bom.unpriced_parts
        assert {"management", "power", "cooling", "rack", "server"} <= _categories(phase.bom)
        assert phase.tco is not None and phase.tco.capex_usd == phase.bom.capex_usd
        assert all(i.total_price_usd is not None for i in phase.bom.items if i.tier != "inside-server")
        # the runners-up the capex ranking priced are complete too (no "without unpriced ...")
        assert not [r for r in phase.reasons if r.startswith("ranked on capex") and "unpriced" in r]
    if plan.training is not None and plan.training.feasible:
        assert "storage" in _categories(plan.training.bom)
        assert any((i.tier or "").startswith("storage-") for i in plan.training.bom.items)  # its network
    assert plan.tco is not None


def test_gb200_nvl72_plan_is_liquid_cooled_in_120_kw_racks(shipped):
    """examples/frontier-405b-training.toml lands on GB200 NVL72: 18 trays x 6.7 kW = 120.6 kW racks
    (NVIDIA quotes ~120 kW, RA-11338-001 SU of 8 racks = 1.2 MW), 8 power shelves per rack (RA)."""
    plan = plan_workload(load_profile(str(ROOT / "examples" / "frontier-405b-training.toml"), shipped), shipped)
    t = plan.training
    assert t.gpu == "gb200-nvl72"
    bom = t.bom
    assert bom.cooling == "liquid" and bom.rack_power_kw == pytest.approx(120.6)
    assert bom.pue == 1.2  # the liquid default
    racks = sum(i.quantity for i in bom.items if i.part_id == "nvl72-rack")
    # 6,144 GPUs = 1,536 trays, bought as whole racks: 86 racks of 18 trays (48 GPUs idle)
    assert (t.gpus, t.gpus_idle) == (6144, 48)
    assert racks == t.nodes // 18 == 86
    assert sum(i.quantity for i in bom.items if i.part_id == "nvl72-power-shelf") == 8 * racks
    # 86 racks x 120.6 kW = 10,371.6 kW: ceil(10,371.6 / 1,350) + 1 spare = 9 in-row CDUs,
    # cheaper than 86 x ceil(120.6 / 100) = 172 in-rack ones
    cdu = next(i for i in bom.items if i.category == "cooling" and i.tier == "compute")
    assert (cdu.part_id, cdu.quantity) == ("cdu-inrow-1350kw", 9) and cdu.estimate


def test_rack_density_and_cooling_by_server_model(shipped):
    # B300: four DGX B300 per rack, 4 x 14.5 = 58 kW -> rear-door heat exchangers (20 < 58 <= 60)
    b300 = rack_plan(shipped.gpu("b300-sxm-288gb"), 64, shipped)
    assert (b300.servers_per_rack, b300.rack_kw, b300.cooling) == (4, 58.0, "rear-door")
    # H100: RA-11333-001's four DGX H100 per rack, 40.8 kW
    h100 = rack_plan(shipped.gpu("h100-sxm-80gb"), 128, shipped)
    assert (h100.servers_per_rack, h100.rack_kw, h100.cooling) == (4, pytest.approx(40.8), "rear-door")
    # MI355X is built for cold plates (1.4 kW per GPU): liquid whatever the rack's power
    assert cooling_for(shipped.gpu("mi355x-oam-288gb"), 14.0, shipped) == "liquid"
    # L4 inference servers: 1.8 kW each, 41 // 1.8 = 22 by power but 42 U / 2 U = 21 by space
    l4 = rack_plan(shipped.gpu("l4-pcie-24gb"), 40, shipped)
    assert (l4.servers_per_rack, l4.cooling) == (21, "rear-door")  # 21 x 1.8 = 37.8 kW


def test_training_storage_is_sized_from_the_workload(shipped):
    """The built-in default: Llama 3.1 70B (70,553,706,496 parameters), 2T tokens, 224 MI355X.

    dataset 2e12 tokens x 8 B = 16 TB; one checkpoint 70,553,706,496 x 14 B = 987.75 GB, 5 kept
    = 4.94 TB; (16 + 4.94) x 1.3 headroom = 27.22 TB. Goodput: an interruption every
    1 / (2.19e-5 x 224) = 203.85 h, checkpoint every sqrt(2 x 0.005 h x 203.85 h) = 1.4278 h
    = 85.67 min; 5% of it is 257.0 s, so 987.75 GB / 257.0 s = 3.843 GB/s. One building block
    (294.9 TB, 80 GB/s) covers both."""
    plan = plan_workload(load_profile(str(ROOT / "examples" / "default.toml"), shipped), shipped)
    st = plan.training.bom.storage
    assert plan.training.gpus == 224
    assert st.dataset_tb == pytest.approx(16.0)
    assert st.checkpoint_tb == pytest.approx(0.98775, rel=1e-4)
    assert st.usable_tb_needed == pytest.approx(27.22, rel=1e-3)
    assert st.checkpoint_interval_min == pytest.approx(85.67, rel=1e-3)
    assert st.write_gb_per_s_needed == pytest.approx(3.843, rel=1e-3)
    assert st.units == 1


def test_checkpoint_bandwidth_can_decide_the_storage(shipped):
    """Frontier 405B on 6,144 GPUs: an interruption every 1 / (2.19e-5 x 6,144) = 7.432 h, checkpoint
    every sqrt(0.01 x 7.432) h = 16.36 min; 5% = 49.07 s for 405.85e9 x 14 B = 5.68 TB -> 115.8 GB/s,
    two 80 GB/s blocks although (124.8 + 5 x 5.68) x 1.3 = 199.2 TB fits in one."""
    plan = plan_workload(load_profile(str(ROOT / "examples" / "frontier-405b-training.toml"), shipped), shipped)
    st = plan.training.bom.storage
    assert plan.training.gpus == 6144
    assert st.checkpoint_interval_min == pytest.approx(16.357, rel=1e-3)
    assert st.write_gb_per_s_needed == pytest.approx(115.79, rel=1e-3)
    assert st.usable_tb_needed == pytest.approx(199.17, rel=1e-3) and st.usable_tb_needed < 294.9
    assert st.units == 2


def test_serving_gets_a_model_store_only_across_servers(shipped):
    text = ('[model]\npreset = "llama-3.1-70b"\n[serving]\nqps = 50\nprompt_tokens = 3000\noutput_tokens = 500\n'
            'context_length = 32768\nprecision = "fp8"\nttft_ms = 1500\ntpot_ms = 40\n'
            '[constraints]\nallow_gpus = ["b200-sxm-180gb"]\n')
    s = plan_workload(load_profile_text(text, "p.toml", shipped), shipped).serving
    assert s.nodes > 1
    assert s.bom.storage is not None and s.bom.storage.role == "model-store"
    # Llama 3.1 70B in FP8: 68,451,041,280 linear parameters at 1 B + 2,101,346,304 embedding/LM-head
    # and 1,318,912 norm parameters at 2 B = 72,656,371,712 B of weights; x 3 versions (current,
    # previous, canary) x 1.3 headroom = 0.28336 TB, well inside one 122.9 TB model store.
    assert s.weights_gib_per_gpu * s.gpus_per_replica * 2**30 == 72_656_371_712
    assert s.bom.storage.usable_tb_needed == pytest.approx(0.28336, rel=1e-4)
    assert s.bom.storage.units == 1


def test_cost_of_ownership_by_hand():
    """$1M of capex, 100 kW of IT load, 64 H100 (on-demand $3.78/GPU-h), [constraints] PUE 1.3,
    3 years, $0.10/kWh, 50% use, colocation $150/kW-month:
    energy 130 kW x 8,766 h x $0.10 x 0.5 = $56,979/y; support 10% = $100,000/y; colocation
    100 x 150 x 12 = $180,000/y; opex $336,979/y; total 1,000,000 + 3 x 336,979 = $2,010,937;
    per GPU-hour 2,010,937 / (64 x 8,766 x 3 x 0.5 = 841,536) = $2.3896. Rented at 40% off:
    64 x 3.78 x 0.6 x 8,766 / 12 = $106,033.54/month, $3,817,207.30 over 36 months; owning costs
    1,000,000 + m x 28,081.58 <= m x 106,033.54 from m = 12.83, month 13."""
    catalog = load_catalog()
    bom = Bom(items=[], capex_usd=1_000_000.0, unpriced_parts=[], power_kw=100.0, network_capex_usd=0.0,
              network_power_kw=0.0, racks=3, pue=1.3)
    given = (("horizon_years", 3.0), ("usd_per_kwh", 0.10), ("utilization", 0.5), ("colocation_usd_per_kw_month", 150.0))
    tco = phase_tco(bom, catalog.gpu("h100-sxm-80gb"), 64, given, catalog, run_gpu_hours=10_000)
    assert tco.energy_usd_per_year == pytest.approx(56_979.0)
    assert tco.support_usd_per_year == pytest.approx(100_000.0)
    assert tco.colocation_usd_per_year == pytest.approx(180_000.0)
    assert tco.total_usd == pytest.approx(2_010_937.0)
    assert tco.usd_per_gpu_hour == pytest.approx(2.38960, rel=1e-5)
    assert tco.usd_per_training_run == pytest.approx(23_896.0, rel=1e-4)
    assert tco.cloud_total_usd == pytest.approx(3_817_207.30, rel=1e-8)
    assert tco.breakeven_months == 13


def test_constraints_set_pue_and_horizon(shipped):
    base = ('[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 10\nprompt_tokens = 1000\noutput_tokens = 250\n'
            'context_length = 8192\nprecision = "fp8"\nttft_ms = 3000\ntpot_ms = 80\n[constraints]\n'
            'allow_gpus = ["l4-pcie-24gb"]\n')
    default = plan_workload(load_profile_text(base, "p.toml", shipped), shipped).serving
    assert default.tco.horizon_years == 4.0 and default.tco.pue == 1.5  # air-cooled rack: the air default
    site = plan_workload(load_profile_text(base + "pue = 1.1\nhorizon_years = 5\nusd_per_kwh = 0.2\n", "p.toml",
                                           shipped), shipped).serving
    assert site.tco.pue == 1.1 and site.tco.horizon_years == 5.0
    assert site.bom.facility_power_kw == pytest.approx(site.bom.power_kw * 1.1)
    # energy scales with PUE x price: 1.1 x 0.2 / (1.5 x 0.08) = 1.8333
    assert site.tco.energy_usd_per_year == pytest.approx(default.tco.energy_usd_per_year * 1.1 * 0.2 / (1.5 * 0.08))


def test_catalog_parts_lists_every_part_with_price_date_source_and_estimate(cli):
    import json

    r = cli("catalog", "parts", "-f", "json")
    assert r.code == 0, r
    rows = {(p["kind"], p["id"]): p for p in json.loads(r.out)}
    rack = rows[("rack", "rack-42u")]
    assert rack["price_usd"] == 2500 and rack["estimate"] and rack["price_uncertainty"] == 0.4
    assert rack["source"] == "gpuplan-facility-estimates" and rack["price_date"] == "2026-11"
    q3400 = rows[("switch", "q3400")]  # QM9700 $32,870 / 64 x 2 per 800G port x 144 = $147,915
    assert q3400["estimate"] and q3400["price_usd"] == pytest.approx(32_870 / 64 * 2 * 144, rel=1e-3)
    mi325x = rows[("server", "mi325x-oam-256gb")]  # 8 x (15,000 + 24,000) / 2 + 54,000
    assert mi325x["estimate"] and mi325x["price_usd"] == 8 * 19_500 + 54_000
    for row in rows.values():
        assert (row["price_usd"] is None) == (row["source"] is None), row
        assert not row["estimate"] or row["price_uncertainty"], row  # an estimate states its spread
    table = cli("catalog", "parts")
    assert "yes, +/-40%" in table.out and "q3400" in table.out
