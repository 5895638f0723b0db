"""Splits of the layers over pipeline stages that published runs state (stages.rank_layers), pinned
to the recipes and run logs that give them; memory and stage time follow the split."""

from __future__ import annotations

import re

import pytest

from gpuplan.core.errors import InputError
from gpuplan.model.case import CaseInput
from gpuplan.training.cases import predict
from gpuplan.training.memory import Stage, pipeline_stages
from gpuplan.training.stages import layout_layers, rank_layers, stage_split
from gpuplan.training.timing import stated_stage
from tests.training.conftest import arch_of

#: DeepSeek-V3 (config.json: 61 layers, 3 of them dense, 256 routed experts of 8 active, MLA).
DEEPSEEK_V3 = {"layers": 61, "hidden": 7168, "heads": 128, "vocab": 129280, "ffn": 18432, "gated_mlp": True,
               "experts": 256, "active_experts": 8, "shared_experts": 1, "expert_ffn": 2048,
               "dense_layers": 3, "kv_lora_rank": 512, "rope_head_dim": 64}
#: Megatron-Bridge recipes/deepseek/deepseek_v3.py layout_map[(4, 4)] and [(16, 1)] with one MTP
#: layer, written as a Megatron-Core layout string: the embedding and 4 layers, 14 chunks of 4,
#: then 1 layer, the MTP layer and the loss (16 chunks).
DSV3_LAYOUT = "Et*4|(t*4|)*14tmL"


def test_account_for_embedding_and_loss_is_nemos_405b_split():
    """NeMo's Llama 3.1 405B recipe (account_for_embedding/loss_in_pipeline_split): 126 + 2 = 128
    slots, 16 a rank on 8 ranks (8 a rank on 16), rank 0 and the last one less."""
    assert rank_layers(126, 8, "account-embedding-loss", vp=8) == (15,) + (16,) * 6 + (15,)
    assert rank_layers(126, 16, "account-embedding-loss", vp=4) == (7,) + (8,) * 14 + (7,)
    # Qwen3-235B-A22B (94 layers) on 8 ranks x 3 virtual stages: 96 / 8 = 12, 12 / 3 = 4.
    assert rank_layers(94, 8, "account-embedding-loss", vp=3) == (11,) + (12,) * 6 + (11,)
    # BLOOM (bigscience tr11-176B-ml README): [embed | 5 blocks], 6 blocks x 10, [5 blocks | embed].
    assert rank_layers(70, 12, "account-embedding-loss") == (5,) + (6,) * 10 + (5,)
    assert rank_layers(127, 8, "account-loss") == (16,) * 7 + (15,)


def test_the_default_split_puts_the_lighter_end_last():
    """Left to the planner, the middle ranks hold ceil(L/p) and the rest goes to the ends, the last
    (which also computes the loss) no heavier than the first: 126 layers on 8 stages is NeMo's split."""
    assert stage_split(126, 8) == (15, 16, 15)
    assert stage_split(61, 8) == (7, 8, 6)       # the H100 recipe's layout "Et|(tt|)*30mL"
    assert stage_split(80, 7) == (10, 12, 10)
    assert rank_layers(80, 15) == (1,) + (6,) * 13 + (1,)


def test_layout_strings_place_chunks_round_robin():
    """Chunk i of a Megatron-Core layout sits on rank i mod p (layout[vp_rank * pp + pp_rank])."""
    assert layout_layers(DSV3_LAYOUT, 4) == ((16, 16, 16, 13), 4)
    assert layout_layers(DSV3_LAYOUT, 16) == ((4,) * 15 + (1,), 1)
    assert layout_layers("Et|(tt|)*30mL", 8) == ((7, 8, 8, 8, 8, 8, 8, 6), 4)


@pytest.mark.parametrize("split, message", [
    ("account-embedding-loss", "80 layers + 2 do not split evenly over 8 stages x 5 virtual stages"),
    ("Et*4|(t*4|)*14tL", "the layout places 61 decoder layers, the model has 80"),
    ("Et*4|(t*4|)*14tX", "unknown layer type 'X'"),
    ("even", "expected one of balanced, account-embedding-loss"),
])
def test_a_split_that_does_not_apply_says_why(split, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        rank_layers(80, 8, split, vp=5)


def test_a_case_with_a_split_that_does_not_apply_is_an_input_error(catalog, preset):
    run = {"gpu": "h100-sxm-80gb", "gpus": 64, "sequence_length": 8192, "global_batch_sequences": 128,
           "tp": 4, "pp": 8, "vp": 5, "pipeline_split": "account-embedding-loss"}
    case = CaseInput(id="t", file="cases.toml", arch=preset("llama-3.1-70b"), run=run,
                     figures=("iteration_time_s",))
    with pytest.raises(InputError) as exc:
        predict(case, catalog)
    assert exc.value.field == "case[t].run.pipeline_split"
    assert "80 layers + 2 do not split evenly over 8 stages x 5 virtual stages" in exc.value.one_line()
    no_pp = CaseInput(id="t", file="cases.toml", arch=preset("llama-3.1-70b"),
                      run={**{k: v for k, v in run.items() if k != "pp"}}, figures=("iteration_time_s",))
    with pytest.raises(InputError, match="needs pp"):
        predict(no_pp, catalog)


def test_memory_reads_the_ranks_of_a_stated_layout():
    """DeepSeek-V3 on 4 ranks x 4 virtual stages as NeMo lays it out: rank 0 holds the embedding
    with 16 layers, the last rank 13 with the output layer; the default split gives rank 0 15."""
    arch = arch_of(**DEEPSEEK_V3)
    emb = float(129280 * 7168)
    assert pipeline_stages(arch, 4, DSV3_LAYOUT) == (Stage(0, 16, emb, False), Stage(1, 16, 0.0, False),
                                                     Stage(3, 13, emb, True))
    assert pipeline_stages(arch, 4)[0] == Stage(0, 15, emb, False)


def test_the_slowest_stage_of_a_stated_split():
    """405B on 8 ranks (15 + 16 x 6 + 15) with a head of 0.65 layers: the last rank's 15.65 layers
    are under a middle rank's 16. DeepSeek-V3 on 16 ranks (4 ... 4, 1) with an MTP layer and the
    head worth 3.4 layers: 4.4 on the last rank."""
    assert stated_stage((15,) + (16,) * 6 + (15,), 0.65) == (16, False)
    assert stated_stage((4,) * 15 + (1,), 3.4) == (1, True)
    assert stated_stage((4,) * 15 + (1,), 2.5) == (4, False)


def test_a_profile_split_keeps_the_search_to_the_depths_it_divides(workload):
    """[training] pipeline_split = "account-embedding-loss" for the 405B: 128 slots divide over
    1, 2, 4, ..., 64 stages only; an unknown name is an input error naming the field."""
    from gpuplan.training.stages import pipeline_depths

    assert pipeline_depths(126, "account-embedding-loss") == [1, 2, 4, 8, 16, 32, 64]
    w = workload('[model]\npreset = "llama-3.1-405b"\n[training]\ntokens = 1e12\n'
                 'pipeline_split = "account-embedding-loss"\n')
    assert w.training.pipeline_split == "account-embedding-loss"
    with pytest.raises(InputError) as exc:
        workload('[model]\npreset = "llama-3.1-405b"\n[training]\ntokens = 1e12\npipeline_split = "even"\n')
    assert exc.value.field == "training.pipeline_split"
