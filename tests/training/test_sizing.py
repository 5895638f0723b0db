"""Fixed GPU counts a user can buy (issue 15): uneven pipeline stages, batches that are not powers
of two, the nearest counts that work, and check of a 60-node cluster."""

from __future__ import annotations

import pytest

from gpuplan.planning.compose import plan_workload
from gpuplan.model.profile import load_profile_text
from gpuplan.training.sizing import batch_options
from gpuplan.training.stages import imbalance, pipeline_depths, rank_layers, stage_layers, stage_split
from tests.conftest import EXAMPLES

PROFILE = """
[model]
preset = "llama-3.1-70b"
[training]
tokens = 1e12
sequence_length = 8192
global_batch_tokens = 16e6
gpus = {gpus}
[constraints]
allow_gpus = ["h100-sxm-80gb"]
"""


def test_uneven_first_and_last_stages():
    assert stage_split(80, 15) == (1, 6, 1)          # 13 middle stages of 6, the ends lighter
    assert stage_layers(80, 15) == [1] + [6] * 13 + [1]
    assert stage_split(80, 8) == (10, 10, 10)
    assert sum(stage_layers(80, 79)) == 80 and max(stage_layers(80, 79)) == 2
    assert imbalance(80, rank_layers(80, 8)) == 0 and imbalance(80, rank_layers(80, 15)) == pytest.approx(1 - 80 / 90)
    # NeMo's 405B split, 15 + 16 x 6 + 15 on 8 ranks: 126 of 128 layer slots busy.
    assert imbalance(126, rank_layers(126, 8, "account-embedding-loss")) == pytest.approx(2 / 128)
    depths = pipeline_depths(80)
    assert {1, 2, 5, 8, 15, 27, 40, 79, 80} <= set(depths) and 30 not in depths  # 28 x 3 > 80
    for p in depths:
        assert sum(stage_layers(80, p)) == 80 and max(stage_layers(80, p)) == -(-80 // p)


def test_batch_options_nearest_multiple_of_a_dp():
    assert batch_options(1953.125, {127}) == [1905, 2032]
    assert batch_options(1024, {4, 127})[0] == 1024


@pytest.mark.parametrize("gpus", [480, 1016, 1000])
def test_real_cluster_sizes_plan_on_exactly_that_many_gpus(catalog, gpus):
    w = load_profile_text(PROFILE.format(gpus=gpus), "p.toml", catalog)
    t = plan_workload(w, catalog, phases=("training",)).training
    assert t.feasible and t.gpus == gpus
    lay = t.layout
    assert lay.tp * lay.pp * lay.cp * lay.dp == gpus
    assert lay.global_batch_sequences % (lay.dp * lay.micro_batch) == 0
    if lay.global_batch_sequences != 2048:  # not the power of two: the plan says which batch and why
        assert any(r.startswith("global batch:") and "nearest the requested" in r for r in t.reasons)
    assert abs(lay.global_batch_sequences * 8192 / 16e6 - 1) < 0.05


def test_1016_gpus_use_a_batch_dp_127_divides(catalog):
    w = load_profile_text(PROFILE.format(gpus=1016), "p.toml", catalog)
    t = plan_workload(w, catalog, phases=("training",)).training
    assert t.layout.dp % 127 == 0 and t.layout.global_batch_sequences in (1905, 2032)


def test_unusable_count_names_the_nearest_counts_that_work(catalog):
    w = load_profile_text(PROFILE.format(gpus=8), "p.toml", catalog)
    t = plan_workload(w, catalog, phases=("training",)).training
    assert not t.feasible
    assert "the nearest counts that work: 24 GPUs" in t.infeasible[0]


def test_check_of_a_60_node_cluster_passes(cli):
    r = cli("check", str(EXAMPLES / "llama-70b-480-h100.toml"), "--against",
            str(EXAMPLES / "clusters" / "h100-60-nodes-ndr.toml"))
    assert r.code == 0, r
    assert "PASSED" in r.out


def test_a_fixed_count_keeps_the_batch_nearest_the_request_when_a_larger_one_is_barely_faster(catalog):
    """70B, 4M-token batches (1,024 x 4,096) on 127 H100 servers: DP 127 makes 1,016 the nearest
    batch; 1,524 (+49%, DP 508 x 3) plans about 2% faster, inside the 5% tolerance, so the profile's
    batch stays (it was swapped for 1,524 while the fastest of the four nearest was kept)."""
    text = PROFILE.format(gpus=1016).replace("sequence_length = 8192", "sequence_length = 4096").replace(
        "global_batch_tokens = 16e6", "global_batch_tokens = 4194304")
    t = plan_workload(load_profile_text(text, "p.toml", catalog), catalog, phases=("training",)).training
    assert t.layout.global_batch_sequences == 1016 and t.layout.dp == 127
