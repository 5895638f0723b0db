"""MoE layers as they execute (gpuplan/training/moe.py, layer_time.py): the dispatcher, the host
time of the expert loop, the token movement, the EP all-to-all overlap."""

from __future__ import annotations

import pytest

from gpuplan.training import moe
from gpuplan.training.layer_time import ep_overlaps
from gpuplan.training.layout import Layout
from tests.training.conftest import arch_of

QWEN3_30B = dict(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, gated_mlp=True, vocab=151936,
                 experts=128, active_experts=8, expert_ffn=768, ffn=6144)


def test_the_flex_dispatcher_runs_where_nvlink_spans_a_rack(cal, catalog):
    """NeMo 25.11 set moe_flex_dispatcher_backend = "hybridep" on every GB200 MoE recipe and on
    no H100 or B200 one: megatron-core's "flex-rack-scale" picks it by the scale-up domain."""
    fw = cal.framework("megatron-core")
    gb200, h100 = catalog.gpu("gb200-nvl72"), catalog.gpu("h100-sxm-80gb")
    assert moe.dispatcher(None, fw, gb200.scaleup_domain, gb200.gpus_per_node) == "flex"
    assert moe.dispatcher(None, fw, h100.scaleup_domain, h100.gpus_per_node) == "alltoall"
    assert moe.dispatcher("alltoall", fw, 72, 4) == "alltoall"   # a run that names it keeps it


def test_ep_overlap_needs_interleaving_no_full_recompute_and_the_all_to_all_dispatcher(cal):
    fw = cal.framework("megatron-core")
    lay = Layout(tp=1, pp=2, dp=8, ep=8, vp=12)
    assert ep_overlaps(fw, lay, True, "alltoall")
    assert not ep_overlaps(fw, lay, False, "alltoall")              # PP > 1 without VP
    assert not ep_overlaps(fw, lay._replace(recompute="full"), True, "alltoall")
    assert not ep_overlaps(fw, lay, True, "flex")
    assert not ep_overlaps(cal.framework("megatron-lm"), lay, True, "alltoall")


def test_the_host_time_of_the_expert_loop_is_its_launches_beyond_its_gemms(cal):
    """16 local experts (128 / EP 8), MXFP8: per expert 3 + 2 x 1 launches forward and 5 + 2 x 1
    backward at moe_launch_us each. Unpaired, the loop's GEMM time hides as much; paired with
    another micro-batch's backward (the EP overlap), nothing does."""
    arch = arch_of(**QWEN3_30B)
    lay = Layout(tp=1, pp=1, dp=8, ep=8)
    us = cal.moe_launch_us * 1e-6
    fwd, bwd = 16 * 5 * us, 16 * 7 * us
    assert moe.host_seconds(arch, lay, cal, "fp8", True) == pytest.approx((fwd, bwd))
    assert moe.host_seconds(arch, lay, cal, "fp8", True, (fwd / 4, 10.0)) == pytest.approx((0.75 * fwd, 0.0))
    assert moe.host_seconds(arch, lay, cal, "fp8", True, (fwd, bwd), paired=True) == pytest.approx((fwd, bwd))
    # Per-tensor current scaling: amax, scale and cast per quantized input (TE
    # Float8CurrentScalingQuantizer::quantize): 3 + 2 x 3 forward.
    assert moe.host_seconds(arch, lay, cal, "fp8", False)[0] == pytest.approx(16 * 9 * us)


def test_token_movement_of_the_all_to_all_dispatcher(cal):
    """Per token, one direction, 16-bit: permute 2k, sort and unsort 4k with several local
    experts, unpermute k + 1 elements of h; FP8 adds the experts' input casts. With HybridEP the
    global permutation is fused into the dispatch, the received copies still go through one
    permute out of its buffer and back (Megatron-LM deepseek-v3-gb200-optimization section 2.5):
    read and write k x h each way, 4k."""
    arch = arch_of(**QWEN3_30B)
    h, k, ffn = 2048, 8, 768
    moved = 2 * 1000 * h * (2 * k + 4 * k + k + 1)
    assert moe.movement_bytes(arch, 1000, 16, cal, "bf16", True) == pytest.approx(moved)
    assert moe.movement_bytes(arch, 1000, 1, cal, "bf16", True) == pytest.approx(2 * 1000 * h * (3 * k + 1))
    casts = cal.fp8_cast_bytes * 1000 * k * (h + ffn)
    assert moe.movement_bytes(arch, 1000, 16, cal, "fp8", True) == pytest.approx(moved + casts)
    assert moe.movement_bytes(arch, 1000, 16, cal, "fp8", True, "flex") == pytest.approx(2 * 1000 * h * 4 * k + casts)
