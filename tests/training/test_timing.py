"""Step-time model: collectives per placed group, pipeline bubble, DP overlap, compute curves."""

from __future__ import annotations

import math

import pytest

from gpuplan.physics.collectives import Network, Tier
from gpuplan.training.layout import Group, Layout, dense_layers_per_rank, groups
from gpuplan.training.timing import (
    gemm_s,
    group_all_to_all,
    group_collective,
    stage_layout,
    stated_stage,
)
from gpuplan.training.stages import rank_layers
from tests.training.conftest import GPT_22B, GPT_175B, arch_of

GB = 1e9
BIG = 1024 * 2**20  # 1 GiB = 1,073,741,824 B: past the NCCL ramp, the large-message bus bandwidth
NET = Network(scaleup=Tier(200 * GB, 1e-6), scaleout=Tier(40 * GB, 5e-6), scaleup_domain=8)
# Every expected time below is worked out by hand on NET: 200 GB/s and 1 us per step inside a
# node of 8, 40 GB/s and 5 us per step across nodes.


def test_ring_all_reduce_inside_the_domain(cal):
    # 2 x 7/8 x 1,073,741,824 B = 1,879,048,192 B / 200 GB/s = 9.39524 ms, + 14 steps x 1 us = 9.40924 ms.
    t, cross, up = group_collective("ar", BIG, Group(8, 1), NET, cal)
    assert t == pytest.approx(9.40924e-3, rel=1e-5)
    assert cross == 0 and up == t


def test_reduce_scatter_and_all_gather(cal):
    # 3/4 x 1,073,741,824 B = 805,306,368 B / 200 GB/s = 4.02653 ms, + 3 steps x 1 us = 4.02953 ms.
    rs, _, _ = group_collective("rs", BIG, Group(4, 1), NET, cal)
    ag, _, _ = group_collective("ag", BIG, Group(4, 1), NET, cal)
    assert rs == ag == pytest.approx(4.02953e-3, rel=1e-5)


def test_one_member_per_node_uses_the_scale_out_ring(cal):
    # DP with TP8 inside: stride 8 = one GPU per node, same local rank (rail-aligned).
    # 2 x 15/16 x 1 GiB = 2,013,265,920 B cross the fabric: / 40 GB/s = 50.33165 ms, + 30 steps x
    # 5 us = 50.48165 ms; nothing on NVLink.
    t, cross, up = group_collective("ar", BIG, Group(16, 8), NET, cal)
    assert t == pytest.approx(50.48165e-3, rel=1e-5)
    assert cross == 2_013_265_920 and up == 0


def test_hierarchical_all_reduce_across_nodes(cal):
    # 32 ranks at stride 1: 8 per node, 4 nodes. Inside: reduce-scatter + all-gather, 2 x (7/8 x
    # 1 GiB / 200 GB/s + 7 x 1 us) = 9.40924 ms. Across: all-reduce of the 134,217,728 B shard over 4
    # nodes, 2 x 3/4 x 134,217,728 = 201,326,592 B / 40 GB/s = 5.03316 ms + 6 x 5 us = 5.06316 ms.
    # Total 14.47241 ms, a third of the flat 32-rank ring at the fabric rate (2 x 31/32 x 1 GiB / 40 GB/s).
    t, cross, up = group_collective("ar", BIG, Group(32, 1), NET, cal)
    assert t == pytest.approx(14.47241e-3, rel=1e-5)
    assert cross == 201_326_592
    assert up == pytest.approx(9.40924e-3, rel=1e-5)
    assert t < 0.3 * (2 * 31 / 32 * BIG / (40 * GB))


def test_a_group_that_fills_one_domain_and_part_of_another_crosses(cal):
    # 12 ranks at stride 1 on nodes of 8: 8 in one node, 4 in the next, so 2 nodes, not 12 // 8 = 1
    # (which put the whole all-reduce on NVLink: GB200's DP64 at stride 2 in 72-GPU racks). The
    # 1 GiB / 8 = 134,217,728 B shard is all-reduced across 2: 2 x 1/2 x 134,217,728 = 134,217,728 B
    # over the fabric; a reduce-scatter moves half that.
    _, cross, _ = group_collective("ar", BIG, Group(12, 1), NET, cal)
    assert cross == 134_217_728
    _, cross, _ = group_collective("rs", BIG, Group(12, 1), NET, cal)
    assert cross == 67_108_864


def test_small_messages_ramp_below_the_bus_bandwidth(cal):
    # 16 MiB sits on the NCCL ramp: 70 % of the bus bandwidth (training.toml). 2 x 7/8 x 16,777,216 B
    # = 29,360,128 B / (200 GB/s x 0.70) = 209.715 us, + 14 us = 223.715 us.
    small = 16 * 2**20
    assert cal.collective_fraction(small) == pytest.approx(0.70)
    assert cal.collective_fraction(BIG) == 1.0
    t, _, _ = group_collective("ar", small, Group(8, 1), NET, cal)
    assert t == pytest.approx(223.715e-6, rel=1e-5)


def test_no_scale_out_network_makes_crossing_groups_impossible(cal):
    lonely = Network(scaleup=Tier(200 * GB, 1e-6), scaleout=None, scaleup_domain=8)
    assert math.isinf(group_collective("ar", BIG, Group(16, 1), lonely, cal)[0])


def test_all_to_all_splits_traffic_by_tier(cal):
    # 16 ranks on 2 nodes: of its 1 GiB each rank keeps 1/16, sends 7/16 on NVLink (469,762,048 B /
    # 200 GB/s = 2.349 ms) and 8/16 across (536,870,912 B / 40 GB/s = 13.42177 ms) at the same time;
    # the slower tier plus 15 steps x 5 us = 13.49677 ms.
    t, cross = group_all_to_all(BIG, Group(16, 1), NET, cal)
    assert cross == 536_870_912
    assert t == pytest.approx(13.49677e-3, rel=1e-5)


def test_group_placement_order_tp_cp_dp_pp():
    g = groups(Layout(tp=8, pp=4, dp=16, cp=2, ep=4))
    assert (g["tp"].size, g["tp"].stride) == (8, 1)
    assert (g["cp"].size, g["cp"].stride) == (2, 8)
    assert (g["ep"].size, g["ep"].stride) == (4, 16)
    assert (g["dp"].size, g["dp"].stride) == (32, 8)  # gradients reduce over DP x CP
    assert (g["pp"].size, g["pp"].stride) == (4, 256)
    assert not g["tp"].crosses(8) and g["cp"].crosses(8) and g["pp"].crosses(8)
    assert g["tp"].local(8) == 8 and g["dp"].local(8) == 1


def test_gemm_size_curve(cal, evaluator):
    ev = evaluator(arch_of(**GPT_22B))
    big = gemm_s(1e12, 0.0, ev.hw, cal)
    small = gemm_s(1e9, 0.0, ev.hw, cal)
    # On the A100 (MAMF 312 x 0.87 = 271 TFLOP/s) 1 TFLOP takes 3.7 ms at the ceiling: the flat
    # top, 0.95 of it; 1 GFLOP takes 3.7 us: Calculon's 0.60.
    assert big == pytest.approx(1e12 / (312e12 * 0.87 * 0.95))
    assert small == pytest.approx(1e9 / (312e12 * 0.87 * 0.60), rel=2e-3)
    # The same GFLOP in FP8 on an H100 (1979 x 0.71 = 1405 TFLOP/s) takes 0.71 us at its
    # ceiling, so it reaches less of it: 0.1 + 0.5 ln(0.712/0.037) / ln(3.7/0.037) = 0.421.
    h100 = evaluator(arch_of(**GPT_22B), gpu="h100-sxm-80gb", precision="fp8", framework=None)
    ideal = 1e9 / (1978.9e12 * 0.71)
    assert gemm_s(1e9, 0.0, h100.hw, cal) == pytest.approx(ideal / 0.421, rel=5e-3)
    # Calculon's no-overlap mode: the HBM traffic time is added.
    assert gemm_s(1e12, 2e9, ev.hw, cal) == pytest.approx(big + 2e9 / (2.039e12 * 0.82))


def test_pipeline_bubble_is_p_minus_1_over_v_m(evaluator):
    # Narayanan 2021 section 2.2: bubble fraction (p - 1) / (v m) of the ideal pipeline time.
    ev = evaluator(arch_of(**GPT_175B), batch=64)
    for vp in (1, 3):
        lay = Layout(tp=8, pp=8, dp=1, vp=vp, micro_batch=1, recompute="full", sequence_parallel=True, zero=0)
        e = ev.evaluate(lay)
        s = e.step
        per_mb = (s.compute + s.recompute + s.tp_comm + s.cp_comm + s.ep_comm) / 64
        assert s.bubble == pytest.approx((8 - 1) / vp * per_mb, rel=1e-9)
        assert s.bubble / (64 * per_mb) == pytest.approx(7 / (vp * 64))


def test_pipeline_sends_scale_with_interleaving(evaluator):
    ev = evaluator(arch_of(**GPT_175B), batch=64)
    base = Layout(tp=8, pp=8, dp=1, micro_batch=1, recompute="full", sequence_parallel=True, zero=0)
    p1 = ev.evaluate(base).step.pp_comm
    p3 = ev.evaluate(base._replace(vp=3)).step.pp_comm
    # (2 m v + 2 (p - 1)) hops of the same size
    assert p3 / p1 == pytest.approx((2 * 64 * 3 + 14) / (2 * 64 + 14))


def test_the_lm_head_sits_on_the_last_stage_of_the_split():
    assert stated_stage(rank_layers(96, 8), 0.35) == (12, True)     # even split: the last stage carries it
    assert stated_stage(rank_layers(126, 16), 0.66) == (8, False)   # Llama 3: a 7-layer stage takes the head
    assert stated_stage(rank_layers(126, 16), 1.5) == (7, True)
    assert stage_layout(32, 1, 0.2) == (32, True)


def test_stage_layout_balances_a_multi_token_prediction_tail_as_the_recipes_do():
    """Megatron-Bridge recipes/deepseek/deepseek_v3.py (v0.3.0) lays DeepSeek-V3's 61 layers out
    with the MTP module and the loss on the last stage: PP 16 [E+4, 4 x 14, 1+MTP+L] (slowest: 4
    layers), PP 8 [E+8, 8 x 6, 5+MTP+L] (8) and PP 4 [E+16, 16, 16, 13+MTP+L] (16). With the tail
    (MTP block, projection, two output heads) about three layers, the balanced split matches."""
    assert stage_layout(61, 16, 3.0) == (4, False)
    assert stage_layout(61, 8, 3.0) == (8, False)
    assert stage_layout(61, 4, 3.0) == (16, False)
    # Without the balancing the default split (15, 16, 16, 14) puts the tail on 14 layers: 14 + 3 = 17.
    assert stated_stage(rank_layers(61, 4), 3.0) == (14, True)


def test_dense_layers_lead_the_model_on_the_first_rank():
    """DeepSeek-V3's three dense layers (first_k_dense_replace = 3) sit in the first chunk: PP 4
    VP 4 (the GB200 recipe: chunks of 4 layers, the first rank holds chunks 0, 4, 8, 12) and
    PP 16 leave every other rank with MoE layers only; with PP 8 VP 4 (61/32 = 1.9 layers a chunk)
    they spill into the second rank's first chunk (Megatron-LM
    deepseek-v3-gb200-optimization: 'Et|(tt|)*30L', the first stage one layer)."""
    assert dense_layers_per_rank(3, 61, 4, 4) == (0.0, 3.0)
    assert dense_layers_per_rank(3, 61, 16, 1) == (0.0, 3.0)
    few, most = dense_layers_per_rank(3, 61, 8, 4)
    assert few == 0.0 and most == pytest.approx(61 / 32)
    assert dense_layers_per_rank(3, 61, 1, 1) == (3.0, 3.0)


def test_dp_sync_hides_behind_the_last_backward(evaluator, catalog):
    ev = evaluator(arch_of(**GPT_22B), batch=256, seq=2048, framework="megatron-core")
    # One micro-batch of 8 sequences per step: its backward and forward are the overlap window.
    lay = Layout(tp=8, pp=1, dp=32, micro_batch=8, recompute="full", sequence_parallel=True, zero=1)
    s = ev.evaluate(lay).step
    assert s.dp_window > 0
    # The exposed DP time is only the overlap slowdown when the window covers the traffic.
    assert s.dp_comm < 0.05 * s.dp_window
    slow = Network(scaleup=ev.hw.net.scaleup, scaleout=Tier(0.5 * GB, 5e-6), scaleup_domain=8)
    s2 = evaluator(arch_of(**GPT_22B), batch=256, network=slow, framework="megatron-core").evaluate(lay).step
    assert s2.dp_comm > 1.0  # a 4 Gb/s network cannot hide 9 GB of fp32 gradients
    assert s2.dp_gbit_to_hide == pytest.approx(s.dp_gbit_to_hide)


def test_dp_sync_after_the_flush_in_megatron_lm(evaluator):
    """Megatron-LM before --overlap-grad-reduce (2023) all-reduced the FP16 gradients after the
    pipeline flush: nothing hides them. 22B on TP8 x DP32: 22e9/8 parameters x 2 B, a ring over
    32 nodes of the catalog's 200 Gb/s per GPU."""
    lay = Layout(tp=8, pp=1, dp=32, micro_batch=8, recompute="full", sequence_parallel=True, zero=0)
    lm = evaluator(arch_of(**GPT_22B), batch=256).evaluate(lay).step
    core = evaluator(arch_of(**GPT_22B), batch=256, framework="megatron-core").evaluate(lay).step
    assert lm.dp_window == 0.0 and core.dp_window > 0
    assert lm.dp_comm > 10 * core.dp_comm
    assert lm.scaleout_bytes["dp"] == pytest.approx(core.scaleout_bytes["dp"] / 2)  # 16-bit, not fp32


def test_host_time_per_step_micro_batch_and_straggler(evaluator, cal):
    """host = per-step time + micro-batches x per-micro-batch time + the busy step times the
    slowest of N GPUs' expected lag, sigma sqrt(2 ln N) (timing.straggler)."""
    ev = evaluator(arch_of(**GPT_22B), batch=4)
    lay = Layout(tp=8, pp=1, dp=1, micro_batch=4, recompute="full", sequence_parallel=True, zero=0)
    s = ev.evaluate(lay).step
    busy = s.total - s.host
    lag = cal.straggler_sigma * math.sqrt(2 * math.log(8))
    assert s.host == pytest.approx(cal.host_step_s + 1 * cal.host_microbatch_s + busy * lag)
    assert s.total == pytest.approx(s.compute + s.recompute + s.tp_comm + s.pp_comm + s.dp_comm + s.ep_comm
                                    + s.cp_comm + s.bubble + s.optimizer + s.host)


def test_flash_attention_is_faster_than_materialized(evaluator):
    arch = arch_of(layers=24, hidden=2304, heads=24, vocab=51200)
    lay = Layout(tp=1, pp=1, dp=1, micro_batch=4, zero=0)
    flash = evaluator(arch, precision="bf16").evaluate(lay).step_time
    mat = evaluator(arch, precision="fp16").evaluate(lay).step_time
    assert flash < mat


def test_context_parallel_exchange_is_hidden_by_long_attention(evaluator, preset):
    arch = preset("llama-3.1-8b")
    ev = evaluator(arch, gpu="h100-sxm-80gb", seq=131072, batch=8, precision="bf16")
    s = ev.evaluate(Layout(tp=8, pp=1, dp=1, cp=8, micro_batch=1, recompute="full",
                           sequence_parallel=True, zero=1)).step
    assert 0 < s.cp_comm < 0.05 * s.total


def test_expert_parallel_all_to_all(evaluator, preset):
    arch = preset("mixtral-8x7b")
    ev = evaluator(arch, gpu="h100-sxm-80gb", seq=4096, batch=64, precision="bf16")
    inside = ev.evaluate(Layout(tp=1, pp=4, dp=8, ep=8, micro_batch=1, zero=1)).step.ep_comm
    assert inside > 0
    e16 = ev.evaluate(Layout(tp=1, pp=2, dp=16, ep=16, micro_batch=1, zero=1))
    assert e16.step.ep_comm / 2 > inside / 4  # 16-way EP crosses nodes: slower per byte
    assert "ep" in e16.step.scaleout_bytes


def test_interleaved_pipeline_sends_hide_in_the_steady_state(evaluator):
    """Megatron-Core overlaps the steady-state sends of the interleaved schedule (overlap_p2p_comm,
    default since 2023); the warm-up and the flush, 2 (p - 1) v sends, stay exposed. Megatron-LM
    2021-2022 exposed all 2 m v + 2 (p - 1). PP 8 x VP 3, m = 64: 42 of 398 sends exposed, the
    other 356 at the scale-out slowdown 0.02 (the pipeline group crosses nodes)."""
    lay = Layout(tp=8, pp=8, dp=1, vp=3, micro_batch=1, recompute="full", sequence_parallel=True, zero=0)
    lm = evaluator(arch_of(**GPT_175B), batch=64).evaluate(lay).step
    core = evaluator(arch_of(**GPT_175B), batch=64, framework="megatron-core").evaluate(lay).step
    assert core.pp_comm / lm.pp_comm == pytest.approx((42 + 0.02 * 356) / 398)


def test_fp8_quantize_kernels_cost_hbm_time(evaluator):
    """Each FP8 GEMM input and output gradient is cast by its own kernel: 4 B per element with
    block scaling (MXFP8), 6 B with per-tensor current scaling (an amax pass first), none in BF16."""
    from gpuplan.training.layer_time import _fp8_casts
    arch = arch_of(**GPT_22B)
    lay = Layout(tp=8, pp=1, dp=1, micro_batch=1, sequence_parallel=True)
    b200 = evaluator(arch, gpu="b200-sxm-180gb", precision="fp8", framework=None)
    h100 = evaluator(arch, gpu="h100-sxm-80gb", precision="fp8", framework=None)
    mx = _fp8_casts(b200.job, b200.hw, b200.cal, lay, False, 2048.0)
    cs = _fp8_casts(h100.job, h100.hw, h100.cal, lay, False, 2048.0)
    assert cs[0] * h100.hw.mem_bw / (mx[0] * b200.hw.mem_bw) == pytest.approx(6 / 4)
    bf16 = evaluator(arch, gpu="b200-sxm-180gb", precision="bf16", framework=None)
    assert _fp8_casts(bf16.job, bf16.hw, bf16.cal, lay, False, 2048.0) == (0.0, 0.0)


def test_zero2_reduces_per_micro_batch_only_without_a_pipeline(evaluator, preset):
    """Llama 3.1 70B on 480 H100 (examples/llama-70b-480-h100.toml): TP 4, PP 15, DP 8, VP 6,
    256 micro-batches. The DP group (8 ranks 4 apart) has 2 members per 8-GPU node, 4 nodes; its
    stage holds (6 x 855,654,400 + 1,050,673,152) / 4 = 1,546,149,888 parameters a GPU, and a
    reduce-scatter sends 3/4 of each GPU's half over the scale-out network. ZeRO-1 (Megatron-Core's
    distributed optimizer): one fp32 reduce-scatter + one 16-bit all-gather a step,
    1,546,149,888 x (4 + 2) x 3/8 = 3,478,837,248 B. ZeRO-2 would reduce-scatter after each of the
    256 micro-batches (595 GB), but a pipeline accumulates whole gradients (Megatron-Core no_sync):
    with PP it moves what ZeRO-1 does. Without PP (DeepSpeed ZeRO-2, Megatron-FSDP optim_grads)
    the reduce-scatter runs every micro-batch."""
    ev = evaluator(preset("llama-3.1-70b"), gpu="h100-sxm-80gb", seq=8192, batch=2048, precision="bf16",
                   framework="megatron-core")
    lay = Layout(tp=4, pp=15, dp=8, vp=6, micro_batch=1, sequence_parallel=True, zero=1)
    one, two = ev.evaluate(lay).step, ev.evaluate(lay.but(zero=2)).step
    assert one.scaleout_bytes["dp"] == pytest.approx(3_478_837_248, rel=1e-12)
    assert two.scaleout_bytes["dp"] == one.scaleout_bytes["dp"] and two.dp_comm == one.dp_comm
    # PP 1 (TP 8, DP 60, 4 micro-batches of 8): 80 layers + embedding + head over TP 8, DP 60 ranks
    # 8 apart, one per node: each reduce-scatter sends 59/60 of the array.
    flat = Layout(tp=8, pp=1, dp=60, micro_batch=8, recompute="full", sequence_parallel=True, zero=2)
    params = (80 * 855_654_400 + 2 * 1_050_673_152) / 8
    s = evaluator(preset("llama-3.1-70b"), gpu="h100-sxm-80gb", seq=8192, batch=1920, precision="bf16",
                  framework="megatron-core").evaluate(flat).step
    assert s.scaleout_bytes["dp"] == pytest.approx(params * (4 * 4 + 2) * 59 / 60, rel=1e-12)
