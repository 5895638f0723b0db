"""A synthetic but self-consistent plan: both phases, a BOM with a priced and an unpriced item,
findings, alternatives and assumptions. Renderers are golden-tested against it, so their goldens do
not move when the planners' calibration does.

The numbers hang together (capex = sum of priced BOM lines, gpus = replicas x gpus per replica,
ridge = peak / bandwidth, ...) so a renderer that shows the wrong field is caught by a real value.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from gpuplan.core.contract import (
    AssumptionOut,
    Bom,
    BomItem,
    ClosParameters,
    DisaggregationComparison,
    Finding,
    Interconnect,
    MemoryBreakdown,
    ModelSummary,
    Plan,
    PlanTco,
    Roofline,
    RooflinePoint,
    ServingLayout,
    ServingOption,
    ServingPlan,
    Tco,
    Topology,
    TrainingBreakdown,
    TrainingLayout,
    TrainingLayoutOption,
    TrainingOption,
    TrainingPlan,
    TrainingRoofline,
)

ROOT = Path(__file__).resolve().parents[2]
#: Repository-relative path of the profile the synthetic plan claims to come from.
PROFILE = "tests/render/data/synthetic-70b.toml"
PROFILE_TEXT = (ROOT / PROFILE).read_text(encoding="utf-8")
PROFILE_SHA256 = hashlib.sha256(PROFILE_TEXT.encode()).hexdigest()
CATALOG_SHA256 = "c" * 64


def _item(category, part_id, description, quantity, unit_price, unit_power, tier=None, source="synthetic-source"):
    return BomItem(category=category, tier=tier, part_id=part_id, description=description, quantity=quantity,
                   unit_price_usd=unit_price, unit_power_w=unit_power,
                   total_price_usd=None if unit_price is None else unit_price * quantity,
                   total_power_w=None if unit_power is None else unit_power * quantity,
                   source=source if unit_price is not None else None,
                   price_date="2025-06" if unit_price is not None else None)


def _bom(items: list[BomItem], racks: int, rack_power_kw: float) -> Bom:
    capex = sum(i.total_price_usd or 0.0 for i in items)
    power = sum(i.total_power_w or 0.0 for i in items) / 1000
    net = [i for i in items if i.category != "server"]
    return Bom(items=items, capex_usd=capex, unpriced_parts=sorted(i.part_id for i in items if i.unit_price_usd is None),
               power_kw=power, network_capex_usd=sum(i.total_price_usd or 0.0 for i in net),
               network_power_kw=sum(i.total_power_w or 0.0 for i in net) / 1000, racks=racks,
               rack_power_kw=rack_power_kw,
               unpowered_parts=sorted(i.part_id for i in items if i.unit_power_w is None))


def training_bom(nodes: int = 128, gpu_server: str = "dgx-h100", server_price: float = 350_000.0,
                 server_power: float = 10_200.0) -> Bom:
    gpus = nodes * 8
    leaf, spine = gpus // 32, gpus // 64
    return _bom([
        _item("server", gpu_server, f"{gpu_server} (8 GPUs)", nodes, server_price, server_power),
        _item("nic", "cx7-400g", "ConnectX-7 400G", gpus, 2_000.0, 25.0),
        _item("switch", "qm9700", "Quantum-2 QM9700 64x400G", leaf, 30_000.0, 1_700.0, tier="leaf"),
        _item("switch", "qm9700", "Quantum-2 QM9700 64x400G", spine, 30_000.0, 1_700.0, tier="spine"),
        _item("transceiver", "osfp-2x400g-sr8", "OSFP 2x400G SR8 twin-port", gpus // 2 + leaf * 32, None, 15.0,
              tier="leaf"),
        _item("cable", "mpo-fiber-50m", "MPO-12 fibre, 50 m", gpus * 2, 100.0, None),
    ], racks=nodes // 4, rack_power_kw=4 * server_power / 1000)


def _tco(capex: float, it_kw: float, gpus: int, *, cloud_rate: float, run_gpu_hours: float | None = None,
         tokens_per_s: float | None = None) -> Tco:
    """Cost of ownership by the docs/bom.md rules: 4 years, PUE 1.5, $0.08/kWh, 80% use, 10% support,
    cloud at 40% off on-demand."""
    energy = it_kw * 1.5 * 8766 * 0.08 * 0.8
    support = capex * 0.1
    opex = energy + support
    total = capex + 4 * opex
    per_hour = total / (gpus * 8766 * 4 * 0.8)
    rent = gpus * cloud_rate * 0.6 * 8766 / 12
    return Tco(horizon_years=4.0, capex_usd=capex, opex_usd_per_year=opex, energy_usd_per_year=energy,
               support_usd_per_year=support, colocation_usd_per_year=0.0, total_usd=total, usd_per_gpu_hour=per_hour,
               usd_per_training_run=per_hour * run_gpu_hours if run_gpu_hours else None,
               usd_per_million_tokens=total / (tokens_per_s * 3600 * 8766 * 4 * 0.8 / 1e6) if tokens_per_s else None,
               utilization=0.8, pue=1.5, facility_power_kw=it_kw * 1.5, cloud_total_usd=rent * 48,
               cloud_reserved_discount=0.4, breakeven_months=-(-int(capex) // int(rent - opex / 12)))


def _facility(bom: Bom, servers_per_rack: int) -> Bom:
    return bom.model_copy(update={"cooling": "rear-door", "servers_per_rack": servers_per_rack, "pue": 1.5,
                                  "facility_power_kw": bom.power_kw * 1.5})


def training_plan(nodes: int = 128, gpu: str = "h100-sxm-80gb") -> TrainingPlan:
    gpus = nodes * 8
    bom = _facility(training_bom(nodes), 4)
    step = 5.82 * 128 / nodes
    tokens_per_s = 4_194_304 / step
    steady = 2.0e12 / tokens_per_s / 86_400
    wall = steady / 0.9
    gpu_hours = wall * 24 * gpus
    return TrainingPlan(
        feasible=True, gpu=gpu, gpus=gpus, nodes=nodes,
        layout=TrainingLayout(tp=8, pp=4, dp=gpus // 32, cp=1, ep=1, vp=2, micro_batch=1, num_micro_batches=16,
                              global_batch_sequences=512, recompute="selective", sequence_parallel=True, zero=1),
        precision="bf16", step_time_s=step, mfu=0.412, hfu=0.455, model_tflops_per_gpu=407.5,
        tokens_per_s=tokens_per_s, total_flops=8.47e23, steady_state_days=steady, goodput=0.9,
        wall_clock_days=wall, gpu_hours=gpu_hours,
        breakdown=TrainingBreakdown(compute_s=4.9, recompute_s=0.35, tp_comm_s=0.21, pp_comm_s=0.05, dp_comm_s=0.08,
                                    ep_comm_s=0.0, cp_comm_s=0.0, bubble_s=0.18, optimizer_s=0.05, step_time_s=5.82,
                                    dp_bandwidth_to_hide_gbit_per_gpu=180.0),
        memory=MemoryBreakdown(weights_gib=4.11, gradients_gib=4.11, optimizer_gib=1.54, activations_gib=38.2,
                               overhead_gib=6.0, total_gib=53.96, capacity_gib=79.1, headroom_gib=25.14),
        bound="compute: matmuls at 41% MFU; tensor-parallel all-reduce stays on NVLink",
        roofline=TrainingRoofline(peak_tflops=989.0, mem_bw_tbps=3.35, ridge_flops_per_byte=295.224,
                                  points=[RooflinePoint(name="layer GEMMs (4,096 tokens per micro-batch, TP8)",
                                                        flops_per_byte=1530.2, bound="compute")]),
        interconnect=Interconnect(scaleup_tech="nvlink4", scaleup_domain_gpus=8, scaleup_uni_gbps=450.0,
                                  scaleout_fabric="ib-ndr", scaleout_kind="infiniband", nic="cx7-400g",
                                  nics_per_node=8, nic_gbit_per_gpu=400.0, required_gbit_per_gpu=180.0, rails=8,
                                  reasons=["DP gradient all-reduce needs 180 Gb/s per GPU to stay hidden",
                                           "one 400G NIC per GPU, rail-aligned"], gpus_per_node=8),
        topology=Topology(kind="rail-optimized-fat-tree", switch="qm9700", port_gbit=400.0, tiers=2,
                          oversubscription=1.0, nodes=nodes, endpoints=gpus, max_endpoints=2048,
                          leaf_switches=gpus // 32, spine_switches=gpus // 64, core_switches=0,
                          node_leaf_links=gpus, leaf_spine_links=gpus, spine_core_links=0,
                          bisection_gbit=gpus * 200.0, max_switch_hops=3, equal_cost_paths=gpus // 64,
                          scalable_unit_nodes=32, graph_checked=True,
                          clos=ClosParameters(switch_radix=64, rails=8, leaf_down_ports=32, leaf_up_ports=32)),
        bom=bom, capex_usd=bom.capex_usd, power_kw=bom.power_kw, cloud_usd_per_hour=gpus * 2.99,
        run_cost_usd=gpu_hours * 2.99,
        alternatives=[
            TrainingOption(gpu="h200-sxm-141gb", gpus=768, nodes=96,
                           layout=TrainingLayout(tp=8, pp=2, dp=48, cp=1, ep=1, vp=1, micro_batch=1,
                                                 num_micro_batches=8, global_batch_sequences=512, recompute="none",
                                                 sequence_parallel=True, zero=1),
                           step_time_s=7.1, mfu=0.43, wall_clock_days=43.6, gpu_hours=803_635.0,
                           cost_usd=48_100_000.0, meets_target=True, bound="compute"),
            TrainingOption(gpu="a100-sxm-80gb", gpus=2048, nodes=256,
                           layout=TrainingLayout(tp=8, pp=8, dp=32, cp=1, ep=1, vp=1, micro_batch=1,
                                                 num_micro_batches=32, global_batch_sequences=512, recompute="full",
                                                 sequence_parallel=True, zero=1),
                           step_time_s=9.8, mfu=0.52, wall_clock_days=60.2, gpu_hours=2_958_950.0,
                           cost_usd=None, meets_target=False, bound="compute"),
        ],
        reasons=[f"{gpus:,} x {gpu} finish 2T tokens in {wall:.1f} days, inside the 60-day deadline",
                 "cheapest capex among the GPUs that meet the deadline"],
        infeasible=[],
        layout_alternatives=[TrainingLayoutOption(
            layout=TrainingLayout(tp=8, pp=8, dp=gpus // 64, cp=1, ep=1, vp=1, micro_batch=1, num_micro_batches=32,
                                  global_batch_sequences=512, recompute="selective", sequence_parallel=True, zero=1),
            gpus=gpus, step_time_s=6.1, mfu=0.393, wall_clock_days=wall * 6.1 / step,
            breakdown=TrainingBreakdown(compute_s=4.9, recompute_s=0.35, tp_comm_s=0.21, pp_comm_s=0.09, dp_comm_s=0.05,
                                        ep_comm_s=0.0, cp_comm_s=0.0, bubble_s=0.43, optimizer_s=0.05, step_time_s=6.1,
                                        dp_bandwidth_to_hide_gbit_per_gpu=170.0),
            memory_headroom_gib=31.2)],
        tco=_tco(bom.capex_usd, bom.power_kw, gpus, cloud_rate=2.99, run_gpu_hours=gpu_hours),
    )


def serving_plan() -> ServingPlan:
    bom = _bom([
        _item("server", "dgx-h100", "dgx-h100 (8 GPUs)", 3, 350_000.0, 10_200.0),
        _item("nic", "cx7-400g", "ConnectX-7 400G", 3, 2_000.0, 25.0),
        _item("switch", "sn5600", "Spectrum-4 SN5600 64x800G", 1, 45_000.0, 1_800.0, tier="leaf"),
        _item("cable", "dac-400g-3m", "400G DAC, 3 m", 3, 150.0, None),
    ], racks=1, rack_power_kw=32.475)
    bom = _facility(bom, 3)
    return ServingPlan(
        feasible=True, gpu="h100-sxm-80gb", gpus=24, nodes=3, replicas=6, spare_replicas=1, gpus_per_replica=4,
        layout=ServingLayout(tp=4, pp=1, ep=1, concurrency=64, disaggregated=False),
        precision="fp8", kv_precision="fp8", compute_dtype="fp8", weights_gib_per_gpu=16.4, kv_bytes_per_token_per_gpu=40_960.0,
        kv_gib_per_gpu=52.1, max_sequences_per_replica=640, ttft_ms_mean=420.0, ttft_ms_p99=1380.0,
        latency_percentile="p99", ttft_ms_at_percentile=1380.0, tpot_ms=38.5,
        e2e_ms_mean=15_820.0, prefill_ms=310.0, qps_per_replica=4.2, max_qps=21.0, output_tokens_per_s=8_000.0,
        utilization=0.95, bound="memory bandwidth: decode streams weights and KV at 62 FLOP/byte",
        roofline=Roofline(peak_tflops=1979.0, mem_bw_tbps=3.35, ridge_flops_per_byte=590.746,
                          prefill_flops_per_byte=1850.0, decode_flops_per_byte=62.0,
                          prefill_bound="compute", decode_bound="memory", prefill_achieved_tflops=1_100.0,
                          decode_achieved_tflops=150.0),
        disaggregation=DisaggregationComparison(prefill_gpus=8, decode_gpus=16, total_gpus=24, aggregated_gpus=24,
                                                kv_transfer_gbit_per_s=45.0, recommended=False,
                                                reason="same GPU count; aggregated serving is simpler"),
        interconnect=Interconnect(scaleup_tech="nvlink4", scaleup_domain_gpus=8, scaleup_uni_gbps=450.0,
                                  scaleout_fabric="eth-400g", scaleout_kind="ethernet", nic="cx7-400g",
                                  nics_per_node=1, nic_gbit_per_gpu=50.0, required_gbit_per_gpu=12.5, rails=1,
                                  reasons=["replicas fit in one node; the NIC carries requests only"],
                                  frontend_fabric="eth-400g", frontend_gbit_per_node=2.5, gpus_per_node=8),
        topology=Topology(kind="single-switch", switch="sn5600", port_gbit=400.0, tiers=1, oversubscription=1.0,
                          nodes=3, endpoints=3, max_endpoints=64, leaf_switches=1, spine_switches=0,
                          core_switches=0, node_leaf_links=3, leaf_spine_links=0, spine_core_links=0,
                          bisection_gbit=600.0, max_switch_hops=1, equal_cost_paths=1, scalable_unit_nodes=None,
                          graph_checked=True,
                          clos=ClosParameters(switch_radix=64, rails=1, leaf_down_ports=3, leaf_up_ports=0)),
        bom=bom, capex_usd=bom.capex_usd, power_kw=bom.power_kw, cloud_usd_per_hour=24 * 2.99,
        usd_per_million_output_tokens=2.49,
        tco=_tco(bom.capex_usd, bom.power_kw, 24, cloud_rate=2.99, tokens_per_s=8_000.0),
        alternatives=[
            ServingOption(gpu="h200-sxm-141gb", gpus=16, replicas=4, layout=ServingLayout(tp=4, pp=1, ep=1,
                                                                                           concurrency=96,
                                                                                           disaggregated=False),
                          ttft_ms_p99=1210.0, tpot_ms=31.0, max_qps=22.5, cost_usd=1_310_000.0,
                          usd_per_million_output_tokens=2.61, meets_target=True, bound="memory bandwidth",
                          reason="meets the targets; $1.31M capex against $1.10M"),
            ServingOption(gpu="l40s-48gb", gpus=48, replicas=6, layout=ServingLayout(tp=8, pp=1, ep=1,
                                                                                      concurrency=16,
                                                                                      disaggregated=False),
                          ttft_ms_p99=2900.0, tpot_ms=71.0, max_qps=12.0, cost_usd=None,
                          usd_per_million_output_tokens=None, meets_target=False, bound="memory bandwidth",
                          reason="TTFT p99 2900 ms misses the 2000 ms target"),
        ],
        reasons=["6 replicas of 4 x h100-sxm-80gb serve 20 req/s with one spare",
                 "TTFT p99 1380 ms and TPOT 38.5 ms are inside the 2000 ms and 50 ms targets"],
        infeasible=[],
    )


FINDINGS = [
    Finding(severity="error", code="training-over-budget", phase="training", field="constraints.budget_usd",
            message="training capex $48,492,800 exceeds the budget $45,000,000"),
    Finding(severity="warning", code="training-unpriced", phase="training", field="training",
            message="training BOM has parts without a catalog price (not in capex): osfp-2x400g-sr8"),
    Finding(severity="note", code="serving-disaggregation", phase="serving", field=None,
            message="disaggregated prefill/decode needs the same 24 GPUs; aggregated kept"),
]

ASSUMPTIONS = [
    AssumptionOut(field="training.global_batch_tokens", value="4194304",
                  reason="not given; by model size after GPT-3, Llama 2 and Llama 3 runs"),
    AssumptionOut(field="serving.spare_replicas", value="1", reason="N+1 availability headroom"),
    AssumptionOut(field="constraints.pricing", value="capex", reason="cost objective: purchase price (capex)"),
]


def synthetic_plan(**update) -> Plan:
    """The plan golden files are made from; ``update`` replaces top-level fields."""
    plan = Plan(
        schema_version="1.0", gpuplan_version="0.1.0", catalog_version="2026.11.21", catalog_sha256=CATALOG_SHA256,
        input_sha256=PROFILE_SHA256, profile=PROFILE, workload="synthetic-70b",
        model=ModelSummary(name="llama-3.1-70b", total_params=70_553_706_496, active_params=70_553_706_496,
                           layers=80, hidden=8192, heads=64, kv_heads=8, experts=1, kv_bytes_per_token_bf16=327_680),
        pricing="capex", assumptions=ASSUMPTIONS, training=training_plan(), serving=serving_plan(),
        findings=FINDINGS,
    )
    plan = plan.model_copy(update=update)
    phases = [p.tco for p in (plan.training, plan.serving) if p is not None and p.tco is not None]
    whole = PlanTco(horizon_years=4.0, capex_usd=sum(t.capex_usd for t in phases),
                    opex_usd_per_year=sum(t.opex_usd_per_year for t in phases),
                    total_usd=sum(t.total_usd for t in phases),
                    cloud_total_usd=sum(t.cloud_total_usd or 0.0 for t in phases)) if phases else None
    return plan.model_copy(update={"tco": whole})


def variant_plan() -> Plan:
    """The 'new' side of golden diffs: more training nodes, no budget error, serving unchanged."""
    return synthetic_plan(training=training_plan(nodes=160), findings=[FINDINGS[1]])


def serving_only_plan() -> Plan:
    return synthetic_plan(training=None, findings=[FINDINGS[2]])


def infeasible_plan() -> Plan:
    """Training infeasible (the GPU count cannot hold the model), serving absent."""
    t = TrainingPlan(feasible=False, gpu=None, gpus=0, nodes=0, layout=None, precision="bf16", step_time_s=0.0,
                     mfu=0.0, hfu=0.0, model_tflops_per_gpu=0.0, tokens_per_s=0.0, total_flops=8.47e23,
                     steady_state_days=0.0, goodput=0.0, wall_clock_days=0.0, gpu_hours=0.0, breakdown=None,
                     memory=None, bound="memory", interconnect=None, topology=None, bom=None, capex_usd=None,
                     power_kw=0.0, cloud_usd_per_hour=None, run_cost_usd=None, alternatives=[], reasons=[],
                     infeasible=["h100-sxm-80gb: 8 GPUs cannot hold 70.6B parameters with optimizer state"])
    return synthetic_plan(training=t, serving=None, findings=[
        Finding(severity="error", code="training-infeasible", phase="training", field="training.deadline_days",
                message=t.infeasible[0])])
