"""gpuplan.planning.compose: the gates a CI job relies on fail closed when a price is missing."""

from __future__ import annotations

import pytest

from gpuplan.hardware import load_catalog
from gpuplan.planning.compose import plan_workload
from gpuplan.model.profile import load_profile_text
from tests.conftest import EXAMPLES

SERVING = """
[model]
preset = "llama-3.1-8b"
[serving]
qps = 10
prompt_tokens = 1000
output_tokens = 250
precision = "fp8"
ttft_ms = 3000
tpot_ms = 80
[constraints]
pricing = "capex"
"""


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _plan(text, catalog):
    return plan_workload(load_profile_text(text, "p.toml", catalog), catalog)


def test_a_budget_below_every_priced_option_is_infeasible_not_an_unpriced_pick(unpriced_catalog):
    """An unpriced GPU (h100-nvl-94gb without its server price) must not slip under a budget."""
    plan = _plan(SERVING + "budget_usd = 1000\n", unpriced_catalog)
    assert not plan.serving.feasible
    why = "; ".join(plan.serving.infeasible)
    assert "budget cannot be checked" in why and "exceeds the budget $1,000" in why
    assert [f.code for f in plan.findings if f.severity == "error"] == ["serving-infeasible"]


def test_a_budget_that_fits_picks_the_cheapest_priced_option(catalog):
    plan = _plan(SERVING + "budget_usd = 150000\n", catalog)
    assert plan.serving.feasible and plan.serving.gpu == "l4-pcie-24gb"
    assert plan.serving.capex_usd is not None and plan.serving.capex_usd <= 150000
    assert not [f for f in plan.findings if f.severity == "error"]


def test_unpriced_server_makes_capex_unpriced_not_the_network_subtotal(unpriced_catalog):
    """mi325x-oam-256gb with a cloud rate but no server price: capex is None, not the other lines' $."""
    catalog = unpriced_catalog
    text = SERVING.replace('pricing = "capex"', 'pricing = "cloud"\nallow_gpus = ["mi325x-oam-256gb"]')
    plan = _plan(text.replace('preset = "llama-3.1-8b"', 'preset = "llama-3.1-70b"'), catalog)
    s = plan.serving
    assert s.feasible and s.gpu == "mi325x-oam-256gb"
    assert s.capex_usd is None and s.bom.capex_usd > s.bom.network_capex_usd > 0
    assert s.tco is None  # no cost of ownership on a partial capex
    assert "mi325x-oam-256gb" in s.bom.unpriced_parts
    assert s.cloud_usd_per_hour == pytest.approx(s.nodes * 8 * catalog.gpu("mi325x-oam-256gb").cloud_usd_per_gpu_hour)


def test_training_budget_on_an_unpriced_gpu_fails_closed(unpriced_catalog):
    text = ('[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e11\ndeadline_days = 30\n'
            '[constraints]\nallow_gpus = ["h800-sxm-80gb"]\nbudget_usd = 1e9\n')
    plan = _plan(text, unpriced_catalog)
    assert not plan.training.feasible
    assert any("budget cannot be checked" in why for why in plan.training.infeasible)


@pytest.mark.parametrize("gpu,noted", [("h100-sxm-80gb", False), ("gb200-nvl72", False), ("mi300x-oam-192gb", True)])
def test_training_on_a_gpu_without_a_published_run_carries_a_note(catalog, gpu, noted):
    """The validated GPUs are those with a training regime in calibration/residuals.toml (the NeMo
    25.11 runs put B200, B300 and GB200 there beside A100 and H100). GB200 was called unvalidated by a
    hand list of two GPUs while its interval line cited 9 published runs on it."""
    text = ('[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e11\ndeadline_days = 30\n'
            f'[constraints]\nallow_gpus = ["{gpu}"]\n')
    plan = _plan(text, catalog)
    assert plan.training.feasible
    notes = [f for f in plan.findings if f.code == "training-unvalidated-gpu"]
    assert bool(notes) is noted
    assert any("no published training run" in r for r in plan.training.reasons) is noted
    if noted:
        assert notes[0].severity == "note"
        assert notes[0].message == (
            "calibration: no published training run on mi300x-oam-192gb is among the validation cases (they "
            "cover a100-sxm-80gb, b200-sxm-180gb, b300-sxm-288gb, gb200-nvl72, h100-sxm-80gb); its step time "
            "extrapolates the catalog's efficiency figures for it")


def test_training_lists_the_next_best_layouts_with_their_breakdown(catalog):
    text = ('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 2e12\ndeadline_days = 60\n'
            '[constraints]\nallow_gpus = ["h100-sxm-80gb"]\n')
    t = _plan(text, catalog).training
    assert t.feasible and 1 <= len(t.layout_alternatives) <= 3
    chosen = (t.layout.tp, t.layout.pp, t.layout.vp, t.layout.dp, t.layout.cp, t.layout.micro_batch,
              t.layout.recompute, t.layout.zero)
    seen = set()
    for o in t.layout_alternatives:
        key = (o.layout.tp, o.layout.pp, o.layout.vp, o.layout.dp, o.layout.cp, o.layout.micro_batch,
               o.layout.recompute, o.layout.zero)
        assert key != chosen and key not in seen
        seen.add(key)
        b = o.breakdown
        assert b.step_time_s == pytest.approx(o.step_time_s)
        assert b.compute_s > 0 and 0 < o.mfu < 1 and o.memory_headroom_gib >= 0


def test_more_gpus_than_any_fabric_reaches_is_an_infeasible_plan_not_bad_input(catalog):
    text = '[model]\npreset = "llama-3.1-405b"\n[training]\ntokens = 1e12\ngpus = 1048576\n'
    plan = _plan(text, catalog)
    assert not plan.training.feasible
    assert "four-tier fabrics are not modelled" in plan.training.infeasible[0]
    # the reason says how far three tiers reach (400 GbE on 128-port SN5600: 128^3 / 4 endpoints)
    assert "endpoints exceed three tiers" in plan.training.infeasible[0]
    assert "(at most 524,288)" in plan.training.infeasible[0]
    assert [f.code for f in plan.findings if f.severity == "error"] == ["training-infeasible"]


def test_a_fleet_in_one_server_warns_that_its_spares_do_not_cover_a_server_failure(catalog):
    plan = _plan(SERVING, catalog)          # 8B at 10 QPS: six L4 replicas in one 8-slot server
    assert plan.serving.nodes == 1 and plan.serving.spare_replicas == 1
    (warning,) = [f for f in plan.findings if f.code == "serving-single-server"]
    assert warning.severity == "warning" and warning.field == "serving.spare_replicas"
    bigger = _plan(SERVING.replace("qps = 10", "qps = 100") + 'allow_gpus = ["l4-pcie-24gb"]\n', catalog)
    assert bigger.serving.nodes > 1
    assert not [f for f in bigger.findings if f.code == "serving-single-server"]


def test_cloud_training_plan_keeps_its_next_best_line_once_on_its_own_network(catalog):
    """with_network re-plans the chosen layout on the designed fabric; the comparison stays."""
    text = ('[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e12\ndeadline_days = 30\n'
            '[constraints]\npricing = "cloud"\nallow_gpus = ["a100-sxm-80gb", "h100-sxm-80gb"]\n')
    t = _plan(text, catalog).training
    assert t.feasible and t.interconnect is not None and t.interconnect.scaleout_fabric is not None
    other = ({"a100-sxm-80gb", "h100-sxm-80gb"} - {t.gpu}).pop()
    assert [r for r in t.reasons if r.startswith("next best: ")][0].startswith(f"next best: {other} (")


def test_next_best_layouts_are_those_of_the_gpu_that_wins_the_capex_rerank(catalog):
    """The layouts are searched once, after the rerank: they must be the winner's own."""
    from dataclasses import replace

    from gpuplan.training.planner import plan_training

    w = load_profile_text((EXAMPLES / "default.toml").read_text(), "default.toml", catalog)
    t = plan_workload(w, catalog).training
    assert t.feasible and any(r.startswith("ranked on capex with each option's own network") for r in t.reasons)
    only = replace(w, constraints=replace(w.constraints, allow_gpus=(t.gpu,)))
    alone = plan_training(only, catalog).plan
    assert alone.layout == t.layout
    assert t.layout_alternatives == alone.layout_alternatives and len(t.layout_alternatives) == 3


def test_the_capex_ranking_names_the_parts_its_totals_leave_out(catalog):
    from tests.conftest import without_prices

    w = load_profile_text((EXAMPLES / "default.toml").read_text(), "default.toml", catalog)
    t = plan_workload(w, catalog).training
    note = next(r for r in t.reasons if r.startswith("ranked on capex"))
    assert t.bom.unpriced_parts == [] and "leaves out" not in note  # every shipped part is priced
    bare = without_prices(catalog, switches=("sn2201",))  # an OOB switch without a price
    t = plan_workload(w, bare).training
    note = next(r for r in t.reasons if r.startswith("ranked on capex"))
    assert t.bom.unpriced_parts == ["sn2201"]
    assert note.endswith("every total leaves out the unpriced sn2201")


BUDGET = ('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 2e12\nsequence_length = 8192\n'
          'global_batch_tokens = 16e6\nbudget_usd = 20e6\n[constraints]\nallow_gpus = ["h100-sxm-80gb"]\n')


def test_a_training_budget_covers_the_network_as_well_as_the_servers(catalog):
    """The search fits servers to the budget; the fabric must fit beside them, not on top."""
    plan = _plan(BUDGET, catalog)
    t = plan.training
    assert t.feasible and t.capex_usd <= 20e6 and t.bom.network_capex_usd > 0
    assert t.capex_usd == pytest.approx(t.bom.capex_usd)
    assert any(r.startswith("budget: servers fitted to $") for r in t.reasons)
    assert not [f for f in plan.findings if f.severity == "error"]


def test_a_training_budget_the_network_breaks_is_an_error_finding(catalog, monkeypatch):
    import gpuplan.planning.compose

    monkeypatch.setattr(gpuplan.planning.compose, "MAX_BUDGET_PASSES", 0)  # no second pass: servers alone fit
    plan = _plan(BUDGET, catalog)
    t = plan.training
    assert t.capex_usd > 20e6
    over = [f for f in plan.findings if f.code == "training-over-budget"]
    assert len(over) == 1 and over[0].field == "training.budget_usd" and over[0].severity == "error"
    # 64 H100 servers x $294,000 (catalog node_price_usd); the rest (network, storage, racks, power,
    # cooling) is what the search did not price. The split was "servers + network" and counted
    # storage, racks, power and cooling as servers; it is the serving gate's split now.
    assert t.nodes == 64 and t.bom.capex_by_category_usd["server"] == 64 * 294_000
    assert over[0].message == (f"training capex ${t.capex_usd:,.0f} (servers $18,816,000 + the rest of the bill "
                               f"${t.capex_usd - 18_816_000:,.0f}) exceeds the $20,000,000 training budget: the "
                               "layout search fits the servers to the budget, the rest of the bill designed for "
                               "them does not fit beside them")


def _main_set_only(catalog):
    """The catalog with the residual table of the main training cases alone (shared/validation/
    training.toml, packaged as gpuplan/ci/cases): Megatron-LM 2021-2022 in fp16, Llama 2 and 3 in
    bf16, all dense, on A100 and H100: the coverage the hand lists ``validated_precisions = ["bf16",
    "fp16"]`` and ``validated_moe = false`` described before the frontier and published-extra runs."""
    from dataclasses import replace

    from gpuplan.ci.residuals import build_table, collect
    from gpuplan.ci.validate import PACKAGED

    table = build_table(collect([str(PACKAGED / "training.toml")], catalog), source="main set", day="2026-11-28")
    return replace(catalog, tables={**catalog.tables, "residuals": table})


@pytest.mark.parametrize("preset,precision", [("llama-2-7b", "bf16"), ("llama-2-7b", "fp8"),
                                              ("mixtral-8x7b", "bf16"), ("mixtral-8x7b", "fp8")])
def test_fp8_and_moe_training_are_validated_by_the_runs_in_the_residual_table(catalog, preset, precision):
    """The NeMo 25.11-26.04 runs in calibration/residuals.toml train in fp8 (FP8-CS and MXFP8) and
    include mixture-of-experts models (Qwen3-30B-A3B, Qwen3-235B-A22B, DeepSeek-V3) on H100: an
    fp8 or MoE plan on H100 carries no unvalidated-regime note, and its interval line cites the
    runs. The hand lists said "no published run of fp8 training (the cases are bf16 and fp16)" and
    "no published run of a mixture-of-experts model" beside "20 published runs on
    h100-sxm-80gb/megatron-core" and "4 published runs on h100-sxm-80gb/megatron-core/moe"."""
    text = (f'[model]\npreset = "{preset}"\n[training]\ntokens = 1e11\ndeadline_days = 30\nprecision = "{precision}"\n'
            '[constraints]\nallow_gpus = ["h100-sxm-80gb"]\n')
    plan = _plan(text, catalog)
    assert plan.training.feasible
    assert [f for f in plan.findings if f.code.startswith("training-unvalidated")] == []
    moe = "/moe" if preset == "mixtral-8x7b" else ""
    assert plan.training.interval_basis.endswith(f"published runs on h100-sxm-80gb/megatron-core{moe}")


@pytest.mark.parametrize("preset,precision,field,message", [
    ("llama-2-7b", "bf16", None, None),
    ("llama-2-7b", "fp8", "training.precision",
     "calibration: no published run of fp8 training is among the validation cases (their precisions: bf16, fp16): "
     "its step time is an extrapolation"),
    ("mixtral-8x7b", "bf16", "model",
     "calibration: no published run of a mixture-of-experts model is among the validation cases (their models: "
     "dense only): its step time is an extrapolation"),
    ("mixtral-8x7b", "fp8", "training.precision",
     "calibration: no published run of fp8 training or of a mixture-of-experts model is among the validation "
     "cases (their precisions: bf16, fp16; their models: dense only): its step time is an extrapolation"),
])
def test_training_outside_the_validated_precisions_and_model_kinds_carries_a_note(catalog, preset, precision,
                                                                                  field, message):
    """With the main set's residual table alone (fp16 and bf16, dense), fp8 and MoE plans are
    outside it and say what the cases cover."""
    main = _main_set_only(catalog)
    text = (f'[model]\npreset = "{preset}"\n[training]\ntokens = 1e11\ndeadline_days = 30\nprecision = "{precision}"\n'
            '[constraints]\nallow_gpus = ["h100-sxm-80gb"]\n')
    plan = _plan(text, main)
    assert plan.training.feasible
    notes = [f for f in plan.findings if f.code == "training-unvalidated-regime"]
    if message is None:
        assert notes == []
    else:
        assert len(notes) == 1 and notes[0].severity == "note"
        assert (notes[0].field, notes[0].message) == (field, message)


def test_a_catalog_without_a_residual_table_validates_no_training_regime(catalog):
    from dataclasses import replace

    bare = replace(catalog, tables={k: v for k, v in catalog.tables.items() if k != "residuals"})
    text = ('[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e11\ndeadline_days = 30\n'
            '[constraints]\nallow_gpus = ["h100-sxm-80gb"]\n')
    notes = {f.code: f.message for f in _plan(text, bare).findings if f.code.startswith("training-unvalidated")}
    assert notes == {
        "training-unvalidated-gpu": "calibration: no published training run on h100-sxm-80gb is among the validation "
                                    "cases (they cover no GPU); its step time extrapolates the catalog's efficiency "
                                    "figures for it",
        "training-unvalidated-regime": "calibration: no published run of bf16 training is among the validation cases "
                                       "(their precisions: none): its step time is an extrapolation"}


def test_a_layout_within_three_percent_of_memory_gets_a_warning(catalog):
    """Llama 3.1 70B at 4,096 tokens on H100 in 90 days, no headroom kept: the cheapest layout
    fills all but 0.5% of the usable memory."""
    text = ('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 15e12\nsequence_length = 4096\n'
            'deadline_days = 90\n[constraints]\nallow_gpus = ["h100-sxm-80gb"]\nmemory_headroom = 0.0\n')
    plan = _plan(text, catalog)
    m = plan.training.memory
    tight = [f for f in plan.findings if f.code == "training-memory-tight"]
    assert m.headroom_gib < 0.03 * m.capacity_gib
    assert len(tight) == 1 and tight[0].severity == "warning" and f"{m.total_gib:.1f} of" in tight[0].message
    roomy = _plan(text.replace("h100-sxm-80gb", "b300-sxm-288gb"), catalog)
    assert roomy.training.memory.headroom_gib > 0.03 * roomy.training.memory.capacity_gib
    assert not [f for f in roomy.findings if f.code == "training-memory-tight"]


@pytest.mark.parametrize("text,field", [
    (SERVING + "budget_usd = 1\n", "constraints.budget_usd"),
    (SERVING + "power_limit_kw = 0.5\n", "constraints.power_limit_kw"),
    (SERVING.replace("tpot_ms = 80", "tpot_ms = 0.5"), "serving.tpot_ms"),
    (SERVING.replace("ttft_ms = 3000", "ttft_ms = 1"), "serving.ttft_ms"),
    ('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 2e12\ndeadline_days = 60\n'
     '[constraints]\npower_limit_kw = 50\n', "constraints.power_limit_kw"),
    ('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 2e12\ndeadline_days = 1\n', "training.deadline_days"),
])
def test_an_infeasible_phase_points_at_the_field_that_makes_it_so(catalog, text, field):
    plan = _plan(text, catalog)
    errors = [f for f in plan.findings if f.code.endswith("-infeasible")]
    assert len(errors) == 1 and errors[0].field == field, errors
