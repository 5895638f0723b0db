"""FSDP (ZeRO-3) on GPU counts that are not powers of two (review of issue 15's fixed counts):
the model states shard over every GPU, and the batch follows a DP the framework can run."""

from __future__ import annotations

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from gpuplan.training.layout import Layout
from gpuplan.training.memory import GIB
from gpuplan.training.search import min_model_parallel
from gpuplan.training.sizing import fixed_count_dps

PROFILE = """
[model]
preset = "llama-3.1-70b"
[training]
framework = "fsdp"
tokens = "2T"
gpus = {gpus}
[training.constraints]
allow_gpus = ["h100-sxm-80gb"]
"""


def _plan(catalog, gpus):
    w = load_profile_text(PROFILE.format(gpus=gpus), "p.toml", catalog)
    return plan_workload(w, catalog, phases=("training",)).training


def test_zero3_states_of_70b_on_480_gpus_fit(preset, evaluator):
    """Hand calculation: Llama 3.1 70B has 70.55e9 parameters; mixed-adam-fp32-grads keeps 2 + 4 + 12 =
    18 B each, which ZeRO-3 on TP2 x DP240 shards 480 ways: 2.65e9 B; FSDP also holds two gathered
    layers of 16-bit weights (855.6e6 parameters a layer: QKV 8192 x (8192 + 2 x 1024), out 8192^2,
    MLP 3 x 8192 x 28672), split by TP2: 2 x 2 x 427.8e6 = 1.71e9 B. 4.36e9 B = 4.06 GiB of 80."""
    ev = evaluator(preset("llama-3.1-70b"), gpu="h100-sxm-80gb", seq=8192, batch=480, precision="bf16",
                   framework="fsdp")
    w, g, o = ev.states(Layout(tp=2, pp=1, dp=240, zero=3))
    assert (w + g + o) / GIB == pytest.approx(4.06, rel=0.03)
    # ZeRO-3 shards the states over every GPU: no TP x PP floor (ZeRO-1 needed 6: 6 B/param of
    # 16-bit weights and fp32 gradients stay whole, 423e9 B / 6 = 70.6 GB with the overhead fits 80 GB).
    assert min_model_parallel(ev) == 1
    mcore = evaluator(preset("llama-3.1-70b"), gpu="h100-sxm-80gb", seq=8192, batch=480, precision="bf16",
                      framework="megatron-core")
    assert min_model_parallel(mcore) == 6


def test_fsdp_dp_values_have_no_pipeline(preset, evaluator):
    ev = evaluator(preset("llama-3.1-70b"), gpu="h100-sxm-80gb", seq=8192, batch=480, precision="bf16",
                   framework="fsdp")
    # TP x CP of 1 to 16 (TP 1-8, CP 1-2 at 8,192 tokens); no pipeline: no DP 480 / (8 x 3) = 20.
    assert fixed_count_dps(ev, 480) == {480, 240, 120, 60, 30}


def test_fsdp_plans_on_480_gpus_near_472_and_488(catalog):
    """480 = 2^5 x 15 GPUs: no DP divides the power-of-two batch of 1,024 sequences (4M tokens of
    4,096), but DP 240 divides 960: it plans, and its days sit between 472's and 488's (the same
    per-GPU speed: days scale as 1 / GPUs, 488 / 480 = 1.7%)."""
    p472, p480, p488 = (_plan(catalog, n) for n in (472, 480, 488))
    assert p480.feasible and p480.gpus == 480
    lay = p480.layout
    assert lay.pp == 1 and lay.tp * lay.dp == 480
    assert lay.global_batch_sequences % (lay.dp * lay.micro_batch) == 0
    assert abs(lay.global_batch_sequences / 1024 - 1) < 0.1
    assert p488.wall_clock_days < p480.wall_clock_days < p472.wall_clock_days
    assert p472.wall_clock_days / p480.wall_clock_days == pytest.approx(480 / 472, rel=0.02)
    # TP8 x DP59 at 17 micro-batches took ~200 days (13% MFU): 472 now takes a wide DP too.
    assert p472.layout.dp > 59 and p472.mfu > 0.4
    assert not any("TP*PP" in r for r in p480.reasons)
