"""One fixed serving configuration (gpuplan/serving/fixed.py): figures worked out by hand."""

from __future__ import annotations

import pytest

from gpuplan.serving.fixed import evaluate_fixed
from gpuplan.serving.model import Layout


def _arch(catalog, name):
    from gpuplan.model.arch import ArchitectureSpec, resolve

    return resolve(ArchitectureSpec.model_validate(catalog.lookup("model", name).arch_fields()))[0]


def test_llama_70b_tp8_on_h100(catalog):
    r = evaluate_fixed(_arch(catalog, "llama-3.1-70b"), catalog.gpus["h100-sxm-80gb"], Layout(tp=8), "bf16",
                       1000, 200, catalog, batch=16)
    # 70,553,706,496 parameters x 2 bytes / 8 GPUs / 2^30 = 16.43 GiB of weights per GPU.
    assert r.weights_gib_per_gpu == pytest.approx(16.43, abs=0.01)
    assert (r.gpu, r.batch, r.compute_dtype) == ("h100-sxm-80gb", 16, "bf16")
    assert r.fits and r.max_sequences >= 16
    # TPOT and the per-sequence decode rate are one step seen two ways: 1,000 / TPOT(ms).
    assert r.decode_tokens_per_s == pytest.approx(1000.0 / r.tpot_ms)
    # Decode of 16 sequences reads at least the 16.43 GiB of weights per step: at the H100's
    # 3.35 TB/s peak that is 16.43 x 2^30 / 3.35e12 = 5.27 ms, a floor on TPOT.
    assert r.tpot_ms > 5.27


def test_a_model_that_does_not_fit_one_gpu(catalog):
    # 141 GB of BF16 weights cannot sit in one 80 GB H100: no sequence fits.
    r = evaluate_fixed(_arch(catalog, "llama-3.1-70b"), catalog.gpus["h100-sxm-80gb"], Layout(), "bf16",
                       1000, 200, catalog, batch=1)
    assert not r.fits


def test_an_offline_run_holds_no_more_sequences_than_it_sent(catalog):
    """SGLang v0.4.1.post2 (sgl-project/sglang#2643): DeepSeek-V3 FP8 with DP attention over 8 H200,
    ``bench_serving --num-prompts 5000`` (ShareGPT, 229 prompt and 196 output tokens on average). The
    eight caches hold over 28,000 such sequences; a run of 5,000 requests admits them all at once and
    is one batch of 5,000 run to completion, not a steady state at the full cache."""
    from gpuplan.hardware.serving_calibration import serving_constants
    from gpuplan.serving.capacity import static_batch_tokens_per_s
    from gpuplan.serving.engine import resolve_engine
    from gpuplan.serving.model import build_replica

    arch, gpu, lay = _arch(catalog, "deepseek-v3"), catalog.gpus["h200-sxm-141gb"], Layout(tp=1, ep=8)
    eng = resolve_engine(serving_constants(catalog), "sglang", "0.4.1")
    unbounded = evaluate_fixed(arch, gpu, lay, "fp8", 229, 196, catalog, engine=eng)
    sent = evaluate_fixed(arch, gpu, lay, "fp8", 229, 196, catalog, engine=eng, requests=5000)
    assert unbounded.batch > 28000 and sent.batch == 5000
    rep = build_replica(gpu, arch, lay, "fp8", "fp8", serving_constants(catalog), catalog, engine=eng)
    assert sent.output_tokens_per_s == pytest.approx(static_batch_tokens_per_s(rep, 5000, 229, 196))
    # More requests than the cache holds: the steady state at the full cache, as without a count.
    many = evaluate_fixed(arch, gpu, lay, "fp8", 229, 196, catalog, engine=eng, requests=1_000_000)
    assert (many.batch, many.output_tokens_per_s) == (unbounded.batch, unbounded.output_tokens_per_s)


def test_requests_belong_to_offline_runs(catalog):
    from gpuplan.core.errors import InputError
    from gpuplan.model.case import CaseInput
    from gpuplan.serving.cases import predict

    run = dict(gpu="h100-sxm-80gb", tp=1, batch=8, requests=100, prompt_tokens=128, output_tokens=128)
    with pytest.raises(InputError, match="requests"):
        predict(CaseInput(id="t", file="cases.toml", arch=_arch(catalog, "llama-3.1-8b"), run=run,
                          figures=("output_tokens_per_s",)), catalog)
