"""A disaggregated plan chosen under ``disaggregation = auto`` states one design: its GPU count,
replicas, interval, fleet, autoscaling and ``gpuplan check`` all follow the chosen pools
(review: a 70B profile at 50 QPS whose JSON said 2 replicas of 34 GPUs for a 40-GPU fleet)."""

from __future__ import annotations

import json
import math

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload

# Llama-3.1-70B, training on 480 H100s, serving 50 QPS at TTFT 1.5 s and TPOT 30 ms (defaults:
# 1024/256 tokens, 1 spare, capex): auto picks scale-out prefill/decode pools over 48 aggregated GPUs
# (44 before the prompts entered budget-filled steps: a 1,024-token prompt now rides one step instead
# of a share of every step, so the mean TPOT is longer and the aggregated TP4 replica carries less).
# (TPOT 40 ms until the GEMM knee and the all-reduce were fitted to measured kernels: at 40 ms the
# aggregated plan is now the cheaper, at 25 ms a scale-up 2P1D group wins.)
PROFILE = """name = "review-70b"
[model]
preset = "llama-3.1-70b"
[training]
tokens = "2T"
gpus = 480
[training.constraints]
allow_gpus = ["h100-sxm-80gb"]
[serving]
qps = 50
ttft_ms = 1500
tpot_ms = 30
[serving.constraints]
allow_gpus = ["h100-sxm-80gb"]
"""


@pytest.fixture(scope="module")
def plan(catalog):
    w = load_profile_text(PROFILE, "review.toml", catalog)
    return plan_workload(w, catalog)


def test_replicas_and_spares_add_up_to_the_pools_gpus(plan):
    s = plan.serving
    d = s.disaggregation
    assert d is not None and d.chosen and d.mode == "auto" and d.placement == "scale-out"
    pre, dec = d.pools
    # by hand: 10 TP2 prefill + 1 spare = 22 GPUs, 3 TP4 decode + 1 spare = 16 GPUs
    assert (pre.workers, pre.spare_workers, pre.gpus_per_worker) == (10, 1, 2)
    assert (dec.workers, dec.spare_workers, dec.gpus_per_worker) == (3, 1, 4)
    assert s.gpus == pre.gpus + dec.gpus == 22 + 16 == 38
    # one 10P3D group of 20 + 12 GPUs, the spare workers outside it
    assert (s.replicas, s.spare_replicas, s.gpus_per_replica, s.spare_gpus) == (1, 0, 32, 6)
    assert s.replicas * s.gpus_per_replica + s.spare_gpus == s.gpus
    assert d.gpus == s.gpus and d.total_gpus == 32


def test_the_gpu_and_capex_intervals_contain_the_estimate(plan):
    s = plan.serving
    lo, hi = s.intervals["gpus_for_qps"]
    assert lo <= s.gpus <= hi
    c_lo, c_hi = s.intervals["capex_usd"]
    assert c_lo <= s.capex_usd <= c_hi
    # each pool's active workers scale by the band (max_qps's interval is the rate's), spares stay
    q_lo, q_hi = s.intervals["max_qps"]
    low, high = s.max_qps / q_hi, s.max_qps / q_lo
    pools = s.disaggregation.pools
    assert lo == pytest.approx(sum((math.ceil(p.workers * low - 1e-9) + p.spare_workers) * p.gpus_per_worker
                                   for p in pools))
    assert hi == pytest.approx(sum((math.ceil(p.workers * high - 1e-9) + p.spare_workers) * p.gpus_per_worker
                                   for p in pools))


def test_autoscaling_and_fleet_count_the_same_gpus(plan):
    s, f = plan.serving, plan.fleet
    a = s.autoscaling
    assert (a.min_replicas, a.max_replicas) == (1, 1)  # constant demand: the one group, spares always in
    sliced = next(x for x in f.strategies if x.name == "time-sliced")
    assert "peak serving (1 x 32 GPUs + 6 spare = 38)" in " ".join(sliced.reasons)
    converged = next(x for x in f.strategies if x.name == "converged")
    assert "after training 442 GPUs idle" in " ".join(converged.reasons)  # 480 - 38


def test_the_reasons_name_both_aggregated_counts_and_auto_wording(plan):
    s = plan.serving
    d = s.disaggregation
    assert d.aggregated_gpus == 44  # 11 active TP4 replicas of the 48-GPU aggregated plan
    assert "aggregated 48 x h100-sxm-80gb (44 carrying the load)" in d.reason
    agg = s.alternatives[0]
    assert agg.gpus == 48 and not agg.layout.disaggregated
    assert "profile asks" not in agg.reason and "more than the disaggregated fleet" in agg.reason


def test_check_needs_the_plans_gpus(cli, tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(PROFILE)
    c = tmp_path / "c.toml"
    c.write_text('phase = "serving"\ngpu = "h100-sxm-80gb"\ngpus = 16\n')
    r = cli("check", str(p), "--against", str(c), "-f", "json")
    assert r.code != 0
    gate = next(g for g in json.loads(r.out)["gates"] if g["name"] == "capacity")
    assert gate["limit"] == 38 and "1 x 10P3D group of 32 GPUs + 6 GPUs of spare" in gate["message"]
