"""Disaggregation as a planned option: chosen on whole cost, with the fabric and BOM of both pools
(gpuplan/planning/disagg_choice.py), and how the plan, the report and ``deploy`` show it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from gpuplan.planning.disagg_choice import _network
from gpuplan.serving.disagg_plan import comparison
from gpuplan.serving.planner import _demand, plan_disaggregated

ROOT = Path(__file__).resolve().parents[2]
FRONTIER = (ROOT / "examples" / "frontier-train-serve-fleet.toml").read_text()


def _serving(catalog, text: str, **overrides):
    w = load_profile_text(text, "test.toml", catalog, overrides or None)
    return w, plan_workload(w, catalog, phases=("serving",), intervals=False).serving


def test_the_frontier_example_runs_xpyd_groups_inside_nvl72_racks(catalog):
    """examples/frontier-train-serve-fleet.toml (Llama-3.1-405B FP8, 600 QPS peak, 2000/500 tokens,
    TTFT p99 2 s, TPOT 50 ms, 2 spares, capex, NVIDIA), disaggregated. By hand from the two worker
    rates: a 3P1D group of TP4 workers carries min(3 r_p, r_d); 600 / 0.85 = 705.9 req/s need
    ceil(705.9 / that) = 66 groups, + 2 spare groups = 68; a group is 16 GPUs, so a 72-GPU NVLink
    rack holds 4 and the fleet is ceil(68 / 4) = 17 racks of 18 trays = 306 servers. (64 groups
    before decode attention paid its measured op latency: a decode worker 11.03 -> 10.77 req/s. Under
    ``auto`` it was chosen, as 93 x 2P1D, until the GEMM knee and the all-reduce were fitted to
    measured kernels; the aggregated fleet is now the cheaper: $50.7M against $51.4M.)"""
    w, s = _serving(catalog, FRONTIER, **{"serving.disaggregation": "always"})
    d = s.disaggregation
    assert d is not None and d.chosen and not d.recommended and d.placement == "scale-up"
    pre, dec = d.pools
    assert (pre.role, dec.role, pre.gpu, dec.gpu) == ("prefill", "decode", "gb200-nvl72", "gb200-nvl72")
    assert (d.prefill_per_group, d.decode_per_group, pre.gpus_per_worker, dec.gpus_per_worker) == (3, 1, 4, 4)
    groups = math.ceil(600 / 0.85 / min(3 * pre.rate_per_worker, dec.rate_per_worker))
    assert d.groups == groups == 66 and d.spare_groups == 2
    assert s.nodes == math.ceil((groups + 2) / (72 // 16)) * 18 == 306
    assert s.gpus == (groups + 2) * 16 and s.gpus_idle == 306 * 4 - s.gpus
    assert d.idle_side == "prefill"
    assert d.idle_fraction == pytest.approx(1 - dec.rate_per_worker / (3 * pre.rate_per_worker))
    # whole bills against whole bills: dearer than the aggregated fleet, the first alternative
    assert d.network_included and s.capex_usd == d.capex_usd > d.aggregated_capex_usd
    agg = s.alternatives[0]
    assert agg.gpu == "gb200-nvl72" and agg.cost_usd == d.aggregated_capex_usd and not agg.layout.disaggregated
    assert s.layout.disaggregated and s.ttft_ms_at_percentile <= 2000 and s.tpot_ms <= 50
    assert s.bom is not None and s.bom.capex_usd == s.capex_usd
    # the KV cache never leaves a rack: no east-west fabric beyond what the workers need
    assert "no KV transfer" in " ".join(s.interconnect.reasons)


def test_never_keeps_the_aggregated_plan_and_reports_no_comparison(catalog):
    _, s = _serving(catalog, FRONTIER, **{"serving.disaggregation": "never"})
    assert s.disaggregation is None and not s.layout.disaggregated and s.gpus == 1200  # 1104 before budget-filled prompt steps,
    # 1132 before decode attention's op latency (15 us a layer at 32 MB and more; a GB200 at these
    # 34-134 MB reads measures 15-37 us a layer, 25-39 modelled: an over-count, docs/serving-model.md)


def test_always_plans_disaggregation_even_when_it_costs_more(catalog):
    text = (ROOT / "examples" / "chat-8b-serving.toml").read_text()
    _, auto = _serving(catalog, text)
    assert not auto.layout.disaggregated and not auto.disaggregation.chosen
    assert "considered" in auto.reasons[-1] and auto.disaggregation.capex_usd is not None
    _, s = _serving(catalog, text, **{"serving.disaggregation": "always"})
    d = s.disaggregation
    assert d.chosen and d.mode == "always" and not d.recommended and s.layout.disaggregated
    assert s.capex_usd >= auto.capex_usd and s.alternatives[0].reason.startswith("aggregated (the profile asks")


HETERO = """[model]
preset = "llama-3.1-70b"
[serving]
qps = 20
prompt_tokens = 8000
output_tokens = 2000
ttft_ms = 5000
tpot_ms = 40
precision = "fp8"
[constraints]
allow_gpus = ["h100-sxm-80gb", "h200-sxm-141gb"]
pricing = "capex"
"""


def test_two_gpu_types_get_one_fabric_and_both_pools_in_the_bom(catalog):
    """Prefill on H100 (the same FLOP/s for less), decode on H200 (more HBM for sequences): the
    fabric carries the KV transfer, QPS x prompt x KV bytes per token over the busier side's GPUs,
    and the BOM lists each pool's servers and a NIC per GPU of both."""
    w = load_profile_text(HETERO, "test.toml", catalog)
    fleet = next(f for f in plan_disaggregated(w, catalog) if f.prefill.replica.gpu.id != f.decode.replica.gpu.id)
    assert (fleet.prefill.replica.gpu.id, fleet.decode.replica.gpu.id) == ("h100-sxm-80gb", "h200-sxm-141gb")
    demand = _demand(w)
    plan = plan_workload(w, catalog, phases=("serving",), intervals=False).serving

    def record(f, recommended, chosen, why, built):
        return comparison(f, demand, plan, mode="always", recommended=recommended, chosen=chosen, reason=why,
                          capex=None, cloud=None, network_included=built is not None)

    s = _network(fleet, w, catalog, plan, demand, record)
    servers = {i.part_id: i.quantity for i in s.bom.items if i.category == "server" and i.tier is None}
    assert servers == {"h100-sxm-80gb": fleet.prefill_fleet.nodes, "h200-sxm-141gb": fleet.decode_fleet.nodes}
    assert s.nodes == s.topology.nodes == fleet.prefill_fleet.nodes + fleet.decode_fleet.nodes
    nics = sum(i.quantity for i in s.bom.items if i.category == "nic" and i.tier == "compute")
    assert nics == 8 * s.nodes  # one scale-out NIC per GPU of both pools
    kv_bytes = 8000 * 2 * 80 * 8 * 128 * 1  # prompt x 2 (K, V) x layers x KV heads x head dim x fp8
    per_gpu = 20 * kv_bytes * 8 / 1e9 / min(fleet.prefill_workers * fleet.prefill.replica.layout.gpus,
                                           fleet.decode_workers * fleet.decode.replica.layout.gpus)
    assert s.interconnect.required_gbit_per_gpu == pytest.approx(per_gpu)
    assert s.interconnect.nic_gbit_per_gpu * 0.9 >= per_gpu
    assert s.capex_usd == s.bom.capex_usd > fleet.fleet.capex_usd  # servers + the network they need


QWEN3_32B = """[model]
name = "qwen3-32b"
layers = 64
hidden = 5120
heads = 64
kv_heads = 8
head_dim = 128
ffn = 25600
gated_mlp = true
vocab = 151936
tied_embeddings = false
[serving]
qps = 43.8
prompt_tokens = 4000
output_tokens = 500
ttft_ms = 300
tpot_ms = 10
latency_percentile = "mean"
precision = "fp8"
kv_precision = "fp8"
spare_replicas = 0
max_load_fraction = 1.0
engine = "trtllm"
[constraints]
allow_gpus = ["h200-sxm-141gb"]
pricing = "capex"
"""


@pytest.mark.xfail(strict=True, reason="since the GEMM knee was fitted to measured kernels (benchmarks/"
                   "fit_gemm.py) gpuplan's aggregated plan carries the load on 34 GPUs (644 tok/s/GPU) where "
                   "AIC's best aggregated gives 410: the aggregated step at TPOT 10 ms with 4,000-token "
                   "prompts is likely too kind, so auto keeps it over the 40-GPU disaggregated plan")
def test_aiconfigurators_published_xpyd_example(catalog):
    """aiconfigurator README (ai-dynamo/aiconfigurator, 2026-08): Qwen3-32B FP8 on 32 H200, ISL 4000,
    OSL 500, TTFT 300 ms, TPOT 10 ms: 4 replicas of 2 TP2 prefill + 1 TP4 decode workers at
    684.79 tok/s/GPU, 1.67x its best aggregated configuration. The same load is 684.79 x 32 / 500 =
    43.8 req/s: gpuplan also splits it and spends about half the GPUs or more on prefill (AIC 16 of
    32; gpuplan 22 of 34 since the all-reduce follows measured kernels, which made decode at TP2
    faster and 4,000-token prefill slower; 20 of 40 before), and comes within 10 % of AIC's
    throughput per GPU (644 tok/s/GPU; 547, -20 %, before)."""
    _, s = _serving(catalog, QWEN3_32B)
    d = s.disaggregation
    assert d.chosen and d.recommended and d.capex_usd < d.aggregated_capex_usd
    assert 0.4 <= d.prefill_gpus / d.total_gpus <= 0.66
    assert 43.8 * 500 / s.gpus == pytest.approx(684.79, rel=0.10)


def test_a_bad_disaggregation_value_is_one_line_and_exit_2(cli, tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 10\ndisaggregation = "sometimes"\n')
    r = cli("recommend", str(p))
    assert r.code == 2 and r.err.count("\n") == 1, r
    assert "serving.disaggregation" in r.err and "'auto', 'never' or 'always'" in r.err


def test_the_plan_json_and_report_carry_the_pools_and_deploy_refuses_them(cli, tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(FRONTIER.replace("[serving]\n", '[serving]\ndisaggregation = "always"\n', 1))
    out = tmp_path / "plan.json"
    assert cli("recommend", str(p), "--phase", "serving", "-f", "json", "-o", str(out)).code == 0
    plan = json.loads(out.read_text())
    assert plan["schema_version"] == "2.3"
    d = plan["serving"]["disaggregation"]
    assert d["chosen"] and [x["role"] for x in d["pools"]] == ["prefill", "decode"]
    text = cli("recommend", str(p), "--phase", "serving").out
    assert "66 x 3P1D + 2 spare groups" in text and "pools" in text and "prefill 198 x gb200-nvl72 TP4" in text
    html = cli("render", str(out), "-f", "html").out
    assert "<th>pools</th>" in html and "66 x 3P1D" in html
    r = cli("deploy", str(out), "--engine", "vllm")
    assert r.code == 2 and "disaggregated" in r.err
