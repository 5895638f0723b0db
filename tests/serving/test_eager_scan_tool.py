"""benchmarks/scan_eager_prompt_steps.py, the what-if behind the Qwen3-30B-A3B known miss
(docs/serving-model.md): trtllm-bench's step budget by hand from its tuning code, the patch leaves
the library as it found it, and the frontier row's figures the docs quote."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from gpuplan.ci.validate import packaged_files, validate_files
from gpuplan.serving import fixed, mixed, model

ROOT = Path(__file__).resolve().parents[2]
ROW = "trtllm-po-qwen3-30b-a3b-b200-fp4-tp1-1000-1000"


def _tool():
    spec = importlib.util.spec_from_file_location("scan_eager_prompt_steps",
                                                  ROOT / "benchmarks" / "scan_eager_prompt_steps.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_budget_follows_trtllm_bench_tuning():
    # tensorrt_llm/bench/build/tuning.py finetune_setting + benchmark/utils/general.py get_settings
    # (chunked prefill off: max_num_tokens >= max ISL + max_batch_size), by hand:
    budget = _tool().bench_budget
    # 1,542 x (1 + 1000/1000) = 3,084 -> 13 x 256 = 3,328; 1000 + 1,792 (7 x 256) = 2,792
    assert budget(1542, 1000, 1000) == 3328
    # 1,428 x 1.0625 = 1,517 -> the 2,048 floor; 128 + 1,536 = 1,664
    assert budget(1428, 128, 2048) == 2048
    # 1,428 x 17 = 24,276 -> 24 x 1,024 = 24,576
    assert budget(1428, 2048, 128) == 24576
    # 4,079 x 2 = 8,158 -> 16 x 512 = 8,192; 128 + 4,096 = 4,224
    assert budget(4079, 128, 128) == 8192
    # 100 sequences: batch rounds to 128 (multiples of 32, at least 64), tokens to the 2,048 floor
    assert budget(100, 1000, 1000) == 2048
    # 20,000-token prompts: the prompt plus the batch wins
    assert budget(141, 20000, 2000) == 20000 + 160


def test_patch_moves_the_frontier_row_and_restores_the_library(catalog):
    tool = _tool()
    path = packaged_files(("serving",))["<packaged>/frontier/serving.toml"]

    def figure():
        rep = validate_files([path], catalog, kinds=("serving",))
        return next(f for c in rep.cases if c.id == ROW for f in c.figures)

    before = figure()
    assert abs(before.error - 0.496) < 0.002  # 38,632 against 25,828 measured
    originals = (model.Replica.step, fixed.offline_batch, mixed.budget_filled_step)
    with tool.patched_model(0.0, budget=True):
        assert abs(figure().predicted - before.predicted) < 1e-6 * before.predicted
    with tool.patched_model(400.0):
        moved = figure()
    # docs/serving-model.md: +19.7 % at 400 us per layer, inside the 25 % tolerance
    assert moved.passed and abs(moved.error - 0.197) < 0.002
    assert (model.Replica.step, fixed.offline_batch, mixed.budget_filled_step) == originals
    assert figure().predicted == before.predicted
