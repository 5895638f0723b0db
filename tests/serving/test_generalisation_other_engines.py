"""Published serving measurements of other engines: an unseen check of the serving mechanisms.

``data/published-other-engines.toml`` holds vLLM and SGLang runs that no factor was fitted to:
vLLM on 8x MI300X (Llama 3.1 405B FP8, static batches 1-256 and offline, Oracle 2024), vLLM 0.5.3,
0.6.0, 0.7.3 and 0.16.0 and SGLang 0.3.0 / 0.4.1 / 0.5.6 / 0.5.7 on A100, H100, H200 and B200 (Llama 3.1
8B/70B/405B dense, DeepSeek-V3/R1 MoE with MLA, MiniMax-M2.5 MoE with GQA), offline, static-batch
and fixed-concurrency scenarios. The
model misses most of them today, always on the fast side (docs/validation.md, "Other engines"):
early MoE/MLA releases (SGLang 0.4.1, vLLM 0.7.3 AWQ) run 1.8-11x slower than predicted while the 2026
releases (SGLang 0.5.6/0.5.7, vLLM 0.16) are mostly within 4-17 %, the MI300X rows 27-101 % fast, the SGLang
offline rows batch beyond what the engine schedules (the request count of each run, where its source
states it, now bounds the batch). The guard is today's median and count
within the 25 % tolerance, recorded when the file was added (a floor to ratchet, not a target).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from gpuplan.ci.validate import validate_files
from gpuplan.serving.engine import resolve_engine

DATA = Path(__file__).parent / "data" / "published-other-engines.toml"


def _errors(catalog) -> dict[tuple[str, str], float]:
    report = validate_files([str(DATA)], catalog)
    assert [c.id for c in report.cases if c.status in ("not_modelled", "error")] == []   # every row modelled
    return {(c.id, f.name): f.error for c in report.cases for f in c.figures}


def test_other_engines_generalise_no_worse_than_when_added(catalog):
    errors = _errors(catalog)
    assert len(errors) == 39
    # 37.7 % when added; 36.95 % with the offline rows' request counts and release; 32.5 % with MI300X
    # efficiencies measured on the part; 45.3 % since the GEMM knee and the TP all-reduce follow
    # measured kernels (benchmarks/fit_gemm.py, fit_allreduce.py): every miss was already on the fast
    # side, and the additive knee and the ring's 23 us one-token all-reduce had been slowing them
    # (what they miss lies outside the kernels: early MLA/MoE releases, engine host time;
    # docs/validation.md); 35.3 % with the XGMI all-reduce fitted to rccl-tests (the Oracle MI300X
    # rows); 30.5 % with the host time of vLLM V0 and pre-0.4 SGLang, which runs between GPU steps.
    # 12 of 39 within 25 % when added, 7 with the knee, 14 with the XGMI fit, 18 with the host time,
    # 19 with vLLM's static batches run through its chunked-prefill scheduler.
    assert statistics.median(errors.values()) <= 0.31
    assert sum(e <= 0.25 for e in errors.values()) >= 19


def test_engines_without_an_overlap_scheduler_pay_their_host_time_between_steps(catalog):
    """sgl-project/sglang benchmark/benchmark_vllm_060 (ShareGPT, 5,000 prompts at request rate inf,
    Llama 3.1 8B on one A100 80 GB): SGLang 0.3.0 4,281.51 and vLLM 0.6.0 4,132.37 output tokens/s.
    With the GPU steps alone the model was 39 % and 34 % fast (SGLang keeps ~1,400 sequences, vLLM
    256); with the per-sequence host time added between steps (vLLM V0's synchronous loop, SGLang
    before v0.4's overlap scheduler) both land inside the 25 % tolerance (vLLM 0.6.0 70B on 4x H100,
    3,700.64 tok/s, as well: 35 % -> 21 % fast)."""
    errors = _errors(catalog)
    for row in ("sglang-0.3.0-llama3.1-8b-a100-bf16-tp1-sharegpt-offline",
                "vllm-0.6.0-llama3.1-8b-a100-bf16-tp1-sharegpt-offline",
                "vllm-0.6.0-llama3.1-70b-h100-bf16-tp4-sharegpt-offline"):
        assert errors[(row, "output_tokens_per_s")] <= 0.25, row


def test_sglang_overlaps_its_host_time_from_v0_4(k):
    """LMSYS 'SGLang v0.4' (2024-12-04): the zero-overhead (overlap) scheduler prepares batch n+1
    while the GPU runs batch n; 0.3.x ran the CPU work between batches. At 1,536 sequences a step the
    host time is the 45 ms TensorRT-LLM PR #10273 measured on a 3.1 GHz Grace core."""
    old, new = resolve_engine(k, "sglang", "0.3.0"), resolve_engine(k, "sglang", "0.4.1")
    assert (old.features.host_overlap, new.features.host_overlap) == (False, True)
    assert old.host_s(1536, 3.1) == pytest.approx(0.045, rel=0.01)
    assert resolve_engine(k, "vllm", "0.6.0").features.host_overlap is False
    # vLLM V1 (0.8 on) carries no per-sequence host figure yet.
    assert resolve_engine(k, "vllm", "0.8.0").host_s(1536, 3.1) == 0.0


def test_recent_sglang_deepseek_moe_rows_hold(catalog):
    """SGLang 0.5.6 on 8x B200 (DeepSeek-R1 FP4, TP8 EP8) at 4-32 requests in flight: 59.7, 104.8,
    169.3 and 282.4 output tokens/s per GPU (InferenceX #870); predicted within 10 % when added,
    within 22 % (14-21 % fast) since the all-reduce follows measured kernels (5-6 us a call on
    8 B200 at these batches instead of 23 us)."""
    errors = _errors(catalog)
    rows = [f"inferencex-sglang-0.5.6-dsr1-b200-fp4-tp8-ep8-conc{c}-1k1k" for c in (4, 8, 16, 32)]
    assert max(errors[(r, "output_tokens_per_s_per_gpu")] for r in rows) <= 0.22


def test_vllm_v0_turns_chunked_prefill_on_for_long_context_models(k):
    """vLLM V0 from 0.5.3 enables chunked prefill by itself above 32K tokens of model length
    (vllm-project/vllm#6666) with a 512-token step budget (SchedulerConfig), not on ROCm from 0.6.5
    (#11146) and not for MLA models from 0.7.1 (#12642); V1 (0.8 on) schedules this way always."""
    from gpuplan.serving.engine import on_context

    def sched(version: str, context: int | None, vendor: str = "nvidia", mla: bool = False):
        f = on_context(resolve_engine(k, "vllm", version), context, vendor, mla).features
        return f.scheduling, f.max_step_tokens

    llama31 = 131072  # Llama 3.1 config.json max_position_embeddings
    assert sched("0.5.2", llama31) == ("prefill_first", 2048)
    assert sched("0.5.3", llama31) == ("mixed", 512)
    assert sched("0.6.0", 4096) == ("prefill_first", 2048)      # --max_model_len 4096
    assert sched("0.6.0", 32768) == ("prefill_first", 2048)     # the threshold is "more than 32K"
    assert sched("0.6.2", llama31, vendor="amd") == ("mixed", 512)
    assert sched("0.6.5", llama31, vendor="amd") == ("prefill_first", 2048)
    assert sched("0.7.3", 163840, mla=True) == ("prefill_first", 2048)   # DeepSeek-V3
    assert sched("0.7.3", llama31) == ("mixed", 512)


def test_llama_405b_blog_row_runs_under_the_long_context_scheduler(catalog):
    """vLLM blog 2024-07-23: `vllm serve meta-llama/Meta-Llama-3.1-405B-Instruct-FP8
    --tensor-parallel-size 8` on 8x H100, 1,024/128 tokens: 291.53 output tokens/s. The plain
    command keeps Llama 3.1's 128K length, so vLLM 0.5.3 runs 512-token mixed steps: the prediction
    drops from 2.6x to 2.2x the measurement (still the set's largest dense miss; docs/validation.md)."""
    errors = _errors(catalog)
    assert 1.0 < errors[("vllm-blog-llama3.1-405b-h100-fp8-tp8-1024-128", "output_tokens_per_s")] < 1.3


def test_vllm_static_batches_run_through_the_chunked_prefill_scheduler(catalog):
    """Oracle OCI blog (2024-10-10), vLLM benchmark_latency on 8x MI300X, Llama 3.1 405B FP8, 128/128:
    batch 128 1,585 and batch 256 1,846 output tokens/s (latency 10.34 and 17.75 s). benchmark_latency
    hands the batch to LLM.generate, and vLLM 0.6.2 ran Llama 3.1 (128K) with chunked prefill, 512
    tokens a step, decodes first: the 32,768 prompt tokens of batch 256 take ~90 mixed steps, not 4
    prefill steps. With the batch prefilled first the model was 25 % and 15 % fast; now both are
    within 10 %, and batches 1-64 stay within 12 %."""
    errors = _errors(catalog)
    row = "oci-vllm-llama3.1-405b-mi300x-fp8-tp8-bs{}-128-128"
    assert errors[(row.format(256), "output_tokens_per_s")] <= 0.10
    assert errors[(row.format(128), "output_tokens_per_s")] <= 0.10
    for b in (1, 2, 4, 8, 16, 32, 64):
        assert errors[(row.format(b), "output_tokens_per_s")] <= 0.12, b


def test_a_batch_that_fits_one_step_budget_is_one_prefill_then_decodes(catalog, k):
    """Hand check of serving/static_mixed.py: when every prompt fits one step (4 x 922 tokens under
    an 8,192-token budget) the run is one prefill step of the 4 prompts and 921 decode steps of 4."""
    from gpuplan.model.arch import ArchitectureSpec, resolve
    from gpuplan.serving.model import Layout, build_replica
    from gpuplan.serving.static_mixed import static_batch_chunked_s

    arch, _ = resolve(ArchitectureSpec.model_validate(catalog.lookup("model", "llama-3.1-8b").arch_fields()))
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), arch, Layout(tp=1), "bf16", "bf16", k, catalog,
                        engine=resolve_engine(k, "vllm", "0.16.0"))
    ctx = rep.decode_context(922, 922)
    by_hand = rep.step(0, ctx, 4, 922).total_s + 921 * rep.decode_step(4, ctx).total_s
    assert static_batch_chunked_s(rep, 4, 922, 922, 8192) == pytest.approx(by_hand, rel=1e-9)
    # With a 512-token budget the same batch needs 8 chunk steps before its last prompt is done.
    assert static_batch_chunked_s(rep, 4, 922, 922, 512) > by_hand
