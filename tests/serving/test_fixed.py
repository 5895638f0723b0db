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
