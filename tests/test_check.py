"""gpuplan.ci.check with the shipped catalog: the gates read the statistics the planner sized for."""

from __future__ import annotations

import pytest

from gpuplan.hardware import load_catalog
from gpuplan.ci.check import run_check
from gpuplan.planning.compose import plan_workload
from gpuplan.model.profile import load_profile_text

P50 = """
[model]
preset = "llama-3.1-8b"
[serving]
qps = 20
prompt_tokens = 4000
output_tokens = 200
precision = "fp8"
ttft_ms = 50
tpot_ms = 50
latency_percentile = "p50"
[constraints]
allow_gpus = ["h100-sxm-80gb"]
"""


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_ttft_gate_reads_the_profiles_percentile_not_p99(catalog):
    w = load_profile_text(P50, "p.toml", catalog)
    s = plan_workload(w, catalog).serving
    assert s.feasible and s.latency_percentile == "p50"
    assert s.nodes == 1 and s.ttft_ms_at_percentile <= 50 < s.ttft_ms_p99  # a p99 gate would fail it
    result = run_check(w, catalog, 'phase = "serving"\ngpu = "h100-sxm-80gb"\nnodes = 1\n', "c.toml")
    ttft = next(g for g in result.gates if g.name == "ttft")
    assert ttft.passed and ttft.limit == 50 and "TTFT p50" in ttft.message
    assert ttft.value <= 50


def test_an_unpriced_cluster_fails_a_budget_closed_as_recommend_does(unpriced_catalog):
    # h100-nvl-94gb without its server price (the shipped catalog estimates one)
    catalog = unpriced_catalog
    w = load_profile_text(P50.replace("h100-sxm-80gb", "h100-nvl-94gb").replace("ttft_ms = 50", "ttft_ms = 2000")
                          + "budget_usd = 1e9\n", "p.toml", catalog)
    result = run_check(w, catalog, 'phase = "serving"\ngpu = "h100-nvl-94gb"\nnodes = 1\n', "c.toml")
    budget = next(g for g in result.gates if g.name == "budget")
    assert not budget.passed and budget.severity == "error" and not result.passed


TRAIN_480 = """
[model]
preset = "llama-3.1-70b"
[training]
tokens = 1e12
sequence_length = 8192
global_batch_tokens = 16e6
deadline_days = 29
[constraints]
allow_gpus = ["h100-sxm-80gb"]
"""


def _ib_and_ethernet(catalog, ethernet_extra: str):
    """The 480-GPU job checked against 60 H100 nodes on 400G InfiniBand and on 100G Ethernet."""
    w = load_profile_text(TRAIN_480, "p.toml", catalog)
    ib = run_check(w, catalog, 'gpu = "h100-sxm-80gb"\nnodes = 60\nfabric = "ib-ndr"\nnic_gbit_per_gpu = 400\n',
                   "ib.toml")
    eth = run_check(w, catalog, 'gpu = "h100-sxm-80gb"\nnodes = 60\nfabric = "ethernet-100g"\n'
                    'nic_gbit_per_gpu = 100\n' + ethernet_extra, "eth.toml")
    return ib, eth


def test_check_times_training_on_the_clusters_own_fabric(catalog):
    """Issue 15: a 100G Ethernet cluster at 4:1 had been timed on the InfiniBand the planner designs."""
    ib, eth = _ib_and_ethernet(catalog, "oversubscription = 4.0\n")
    days = {r.cluster_file: next(g for g in r.gates if g.name == "deadline") for r in (ib, eth)}
    assert days["ib.toml"].passed and not days["eth.toml"].passed
    assert days["eth.toml"].value > days["ib.toml"].value * 1.1
    assert "ethernet-100g at 100 Gb/s per GPU, 4:1" in days["eth.toml"].message
    net = next(g for g in eth.gates if g.name == "network")
    assert not net.passed and net.severity == "warning"  # its cost is in the days, not a second error
    assert eth.errors == 1


def test_check_prices_and_reports_the_clusters_own_network(catalog):
    """A new user's report: an Ethernet cluster was checked with the InfiniBand bill and power."""
    ib, eth = _ib_and_ethernet(catalog, "oversubscription = 8.0\npower_limit_kw = 1000\n")
    t = eth.plan.training
    ic = t.interconnect
    # 8 rails of 100G per DGX H100 on dual-port ConnectX-6 Dx: 4 NICs per node, 8:1 at the leaves
    assert (ic.scaleout_fabric, ic.nic, ic.nic_gbit_per_gpu, ic.nics_per_node) == \
        ("ethernet-100g", "cx6dx-100g", 100.0, 4)
    assert (t.topology.oversubscription, t.topology.switch) == (8.0, "sn4600c")
    # 60 nodes x 4 NICs; the storage network keeps its own 400G NICs (tier "storage")
    assert [(i.part_id, i.quantity) for i in t.bom.items if (i.category, i.tier) == ("nic", "compute")] == \
        [("cx6dx-100g", 240)]
    assert t.capex_usd < ib.plan.training.capex_usd  # 100G Ethernet parts cost less than NDR's
    power = next(g for g in eth.gates if g.name == "power")
    assert power.value == pytest.approx(t.power_kw) and power.value < ib.plan.training.power_kw
    fabric = next(g for g in eth.gates if g.name == "fabric")
    assert fabric.message == ("the days, bill of materials and power are computed on the cluster's "
                              "ethernet-100g at 100 Gb/s per GPU, 8:1")


def test_infeasible_cluster_fails_the_gate_of_its_real_cause(catalog):
    w = load_profile_text(TRAIN_480, "p.toml", catalog)
    r = run_check(w, catalog, 'gpu = "h100-sxm-80gb"\ngpus = 8\n', "c.toml")
    failed = [g for g in r.gates if not g.passed]
    assert [g.name for g in failed] == ["fits-memory"]
    assert failed[0].message.startswith("8 x h100-sxm-80gb: does not fit on 8 GPUs")
    assert failed[0].message.count("h100-sxm-80gb") == 1 and "nearest counts that work: 24" in failed[0].message


def test_a_cluster_that_fits_only_without_the_headroom_warns(catalog):
    """16 H100 hold a 70B job at 78.6 of 79.1 GiB: it runs, below the 5% memory headroom."""
    w = load_profile_text(TRAIN_480.replace("deadline_days = 29", "gpus = 480"), "p.toml", catalog)
    r = run_check(w, catalog, 'gpu = "h100-sxm-80gb"\ngpus = 16\n', "c.toml")
    gates = {g.name: g for g in r.gates}
    assert gates["fits-memory"].passed
    head = gates["memory-headroom"]
    assert not head.passed and head.severity == "warning" and head.value < 0.05 == head.limit
    assert r.passed and r.errors == 0 and r.warnings == 1


def test_a_serving_cluster_on_the_plans_own_fabric_passes_the_fabric_gate(catalog):
    """docs/ci.md lists `fabric` for serving ("the cluster's fabric is the one the plan's figures
    assume"), but a serving cluster that named the plan's own fabric got no fabric gate at all, only
    a mismatch did. Llama 3.1 8B at 20 QPS on one H100 server: the front end is ethernet-100g."""
    w = load_profile_text(P50, "p.toml", catalog)
    result = run_check(w, catalog, 'phase = "serving"\ngpu = "h100-sxm-80gb"\nnodes = 1\nfabric = "ethernet-100g"\n',
                       "c.toml")
    fabric = next(g for g in result.gates if g.name == "fabric")
    assert fabric.passed and fabric.severity == "warning" and fabric.field == "fabric"
    assert fabric.message == "the plan's figures assume ethernet-100g, the cluster's fabric"
