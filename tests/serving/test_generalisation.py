"""Published serving measurements beyond the shared cases: one set of factors must keep generalising.

The tables in ``data/`` are every row of the TensorRT-LLM performance overview (2025, PyTorch
backend, H100/H200/B200/GB200, dense and MoE, 128 to 20,000 prompt tokens), of its 1.2.0 release
(per-GPU throughput, long outputs of 8,192 and 32,768 tokens, attention-data-parallel MoE layouts)
and of the v0.5/v0.6.1 performance tables (2023, static batches and first-token latency). Not every
row passes (docs/validation.md: the Qwen3-30B-A3B rows at a thousand and more sequences in flight,
the attention-data-parallel MoE rows); the guard is the median and the count within 25 %, recorded
when the fused-MoE module costs landed.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from gpuplan.ci.validate import validate_files

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name, max_median, min_within", [
    ("trtllm-perf-overview.toml", 0.075, 128),  # 12.6 %, 116 of 147 before engines; 7.4 %, 126 before
                                                #   the fused-MoE costs (Qwen3-235B B200 rows -8 points);
                                                #   129 before the host time per sequence (worst 289 % -> 95 %);
                                                #   8.2 %, 130 before the GEMM knee and the TP all-reduce were
                                                #   fitted to measured kernels (7.4 %, 132: the near-ridge decode
                                                #   rows 10-19 % slow now pass; Llama 405B on 4 B200 +13..+30 %
                                                #   -> 0..+16 %; the 405B H100/H200 TP8 long-output rows turn fast);
                                                #   6.65 %, 132 before decode attention was fitted to measured
                                                #   kernels (6.89 %, 128: four B200/GB200 FP4 rows already
                                                #   21-25 % fast pass 25 %, the 8B 20000/2000 rows -8.5 -> -4 %)
    ("trtllm-perf-overview-1.2.toml", 0.175, 41),  # unseen: dense 4 % median, MoE DEP rows 30-100 % fast;
                                                   #   16.7 % before the kernel-fitted knee, 17.2 % after;
                                                   #   16.9 %, 41 (was 42) with the fitted decode attention
    ("trtllm-v0.5-v0.6.toml", 0.07, 46),         # was 8.4 %, 39 of 51; 7.9 %, 46 -> 6.4 %, 46 (knee and
                                                 #   all-reduce fitted to measured kernels) -> 5.6 %, 46
                                                 #   (decode attention fitted to measured kernels)
])
def test_published_tables_generalise(catalog, name, max_median, min_within):
    report = validate_files([str(DATA / name)], catalog)
    errors = [f.error for c in report.cases for f in c.figures if f.error is not None]
    assert len(errors) == sum(len(c.figures) for c in report.cases)     # every row is modelled
    assert statistics.median(errors) <= max_median
    assert sum(e <= 0.25 for e in errors) >= min_within


def test_published_extra_cases_pass(catalog):
    report = validate_files([str(DATA / "published-extra.toml")], catalog)
    assert report.ok, [(c.id, c.message) for c in report.cases if c.status != "pass"]


#: Frontier serving cases the model still misses (docs/validation.md, "Frontier"): Qwen3-30B-A3B
#: on one B200 at 1,000/1,000 keeps ~1,500 sequences in flight. The host time per scheduled
#: sequence (engine feature) stays under the GPU step there on the x86 host (35 of 40 ms); the
#: same model's prompt-heavy rows (2048/128, 5000/500) are 45-53 % fast on B200 and GB200 alike,
#: so part of the miss is on the GPU side of its mixed steps and is not yet explained.
FRONTIER_MISSES = {"trtllm-po-qwen3-30b-a3b-b200-fp4-tp1-1000-1000"}


def test_frontier_serving_cases_are_modelled_and_pass_but_the_known_misses(catalog):
    from gpuplan.ci.validate import packaged_files

    rep = validate_files([packaged_files(("serving",))["<packaged>/frontier/serving.toml"]], catalog)
    assert [c.id for c in rep.cases if c.status in ("not_modelled", "error")] == []
    assert {c.id for c in rep.cases if c.status != "pass"} <= FRONTIER_MISSES
    # The MoE miss was 72 % fast before the fused-MoE module costs, 50 % before decode attention
    # read the cache at the measured 0.93 of the B200's spec (its mem_bw is 0.77): 59 %.
    miss = next(f for c in rep.cases if c.id in FRONTIER_MISSES for f in c.figures)
    assert miss.error is not None and miss.error < 0.60
