"""TensorRT-LLM pads a decode-only step's batch to the CUDA graph's next captured size, per
attention-DP rank, up to the executor's batch limit (docs/serving-model.md, "Graph padding")."""

from __future__ import annotations

import pytest

from gpuplan.ci.validate import validate_files
from gpuplan.serving.engine import bench_batch_limit, graph_batch, resolve_engine

#: The perf overviews' llm_options.yml (v0.20 and 1.2.0 tables).
SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192)


def test_trtllm_bench_batch_limit_by_hand():
    # bench/build/tuning.py finetune_setting: 64 at least, then multiples of 32 below 256, of 128
    # below 1,024, of 256 above, the count capped at 4,096.
    assert bench_batch_limit(10) == 64
    assert bench_batch_limit(151) == 160
    assert bench_batch_limit(604) == 640
    assert bench_batch_limit(2772) == 2816
    assert bench_batch_limit(9000) == 4096


def test_padding_to_the_next_captured_size_by_hand():
    # One rank of 604 sequences (limit 640): the next size, 1,024, is above the limit, which is
    # captured itself, so the graph runs 640.
    assert graph_batch(604, SIZES, 640) == 640
    # Attention DP over 4 ranks, 151 each: the limit is the group's (640), so each rank runs 256.
    assert graph_batch(151, SIZES, 640) == 256
    # A captured size runs as it is; past the limit the step runs unpadded (no graph).
    assert graph_batch(512, SIZES, 640) == 512
    assert graph_batch(700, SIZES, 640) == 700
    assert graph_batch(700, (), 4096) == 700


def test_only_the_pytorch_backend_pads(k):
    # 604 sequences over 4 ranks: 4 x 256 = 1,024 rows in the graph.
    assert resolve_engine(k, "trtllm").graph_tokens(604, 4) == 1024
    assert resolve_engine(k, "trtllm", "0.6.1").graph_tokens(604, 4) == 604
    assert resolve_engine(k, "vllm").graph_tokens(604, 4) == 604


def test_llama_70b_b200_long_outputs_come_within_tolerance(catalog):
    """TensorRT-LLM perf-overview (commit 00f37686), Llama 3.3 70B on one B200, FP4, 1000/2000:
    6,271 output tokens/s (tests/serving/data/trtllm-perf-overview.toml). The cache holds 265
    sequences, trtllm-bench's limit is 384 and the decode-only steps run the 384 graph; before
    padding the row was predicted 25.3 % fast, now 12.8 %."""
    rep = validate_files(["tests/serving/data/trtllm-perf-overview.toml"], catalog, kinds=("serving",))
    fig = next(f for c in rep.cases if c.id == "po-llama-3.1-70b-b200-fp4-tp1-1000-2000" for f in c.figures)
    assert fig.measured == 6271
    assert fig.passed
    assert fig.predicted == pytest.approx(fig.measured * 1.128, rel=0.01)
