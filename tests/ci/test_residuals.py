"""The shipped residual table (catalog/calibration/residuals.toml) matches the validation cases.

STALE TABLE? When this test fails after a change to the training or serving model (or to the
cases), regenerate the table with one command from the repository root and commit it:

    gpuplan validate ../shared/validation/*.toml ../shared/validation/frontier/*.toml \\
        tests/*/data/published-extra.toml --residuals -o catalog/calibration/residuals.toml

The shared cases are looked for where GPUPLAN_VALIDATION_DIR points, beside the checkout
(../shared/validation), else in the copy packaged with gpuplan (gpuplan/ci/cases).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuplan.ci.residuals import build_table, collect, leave_one_out
from gpuplan.ci.validate import PACKAGED
from gpuplan.core.io import read_toml
from gpuplan.hardware.intervals import ResidualTable, band_of, t_quantile
from gpuplan.hardware.schemas import validate
from tests.conftest import ROOT, SHARED_VALIDATION


def _shared() -> Path:
    """The published cases: ../shared/validation (or GPUPLAN_VALIDATION_DIR), else the copy
    packaged with gpuplan (gpuplan/ci/cases, the same files)."""
    for d in (Path(os.environ.get("GPUPLAN_VALIDATION_DIR", "")), SHARED_VALIDATION, PACKAGED):
        if str(d) and (d / "training.toml").is_file():
            return d
    pytest.skip("no published cases found (set GPUPLAN_VALIDATION_DIR)")


def _files() -> list[str]:
    shared = _shared()
    return [str(p) for p in (sorted(shared.glob("*.toml")) + sorted(shared.glob("frontier/*.toml"))
                             + sorted(ROOT.glob("tests/*/data/published-extra.toml")))]


@pytest.fixture(scope="module")
def points(catalog):
    return collect(_files(), catalog)


@pytest.mark.residual_table
def test_shipped_table_matches_the_cases(points):
    """Regenerate the table; every regime and setting must match (source and date aside)."""
    shipped = validate(ResidualTable, read_toml(ROOT / "catalog" / "calibration" / "residuals.toml"))
    fresh = build_table(points, source=shipped.source, day=shipped.date)
    assert fresh == shipped, "catalog/calibration/residuals.toml is stale: regenerate it (see this module's docstring)"


def test_leave_one_out_bands_are_honest(points):
    """On cases left out of the table, the 80% band holds about 80% of the time (not far above:
    too wide is useless) with a median half-width of at most 30% of the measured value."""
    overall = next(c for c in leave_one_out(points) if c.kind == "all")
    assert overall.figures >= 30
    assert 0.75 <= overall.share <= 0.90
    assert overall.median_half_width <= 0.30


def test_t_quantile_matches_published_values():
    # Student-t 0.9 quantiles: 1.886 (2 dof), 1.533 (4), 1.372 (10); 0.95: 2.015 (5)
    for p, dof, want in ((0.9, 2, 1.886), (0.9, 4, 1.533), (0.9, 10, 1.372), (0.95, 5, 2.015)):
        assert t_quantile(p, dof) == pytest.approx(want, rel=0.01)


def test_unvalidated_regime_is_wider_and_says_so(catalog):
    table = catalog.table("residuals")
    known = band_of(table, "training", "a100-sxm-80gb/megatron-lm", "nvidia/ampere")
    unknown = band_of(table, "training", "mi300x-oam-192gb/default", "amd/cdna3")
    assert known.scope == "gpu" and unknown.scope == "kind"
    assert unknown.high / unknown.low > known.high / known.low
    assert "unvalidated" in unknown.why


def test_a_catalog_without_the_table_gives_no_band():
    band = band_of(None, "training", "x/y", "a/b")
    assert band.low == band.high == 1.0 and band.scope == "none"


def test_an_unvalidated_band_names_the_runs_of_its_generation_it_could_not_use(catalog):
    """Serving a dense model on B200: the table's only Blackwell serving run is one MoE case
    (DeepSeek on B200 with TensorRT-LLM), too few and of the other kind for a band. The basis said
    "no published run on this GPU generation", which that run contradicts; AMD has none."""
    from gpuplan.hardware.intervals import validated_gpus

    table = catalog.table("residuals")
    b200 = band_of(table, "serving", "b200-sxm-180gb/vllm", "nvidia/blackwell")
    assert b200.why == ("unvalidated regime: too few published runs on this GPU generation and model kind for a "
                        "band of their own (1 on nvidia blackwell moe); the spread of all 13 runs, widened")
    amd = band_of(table, "serving", "mi300x-oam-192gb/vllm", "amd/cdna3")
    assert amd.why == "unvalidated regime: no published run on this GPU generation; the spread of all 13 runs, widened"
    assert validated_gpus(table, "training") == ("a100-sxm-80gb", "b200-sxm-180gb", "b300-sxm-288gb", "gb200-nvl72",
                                                 "h100-sxm-80gb")
    assert validated_gpus(None, "training") == ()


def test_the_validated_precisions_and_model_kinds_are_those_of_the_published_runs(catalog):
    """The table records each regime's precisions: the training runs are fp16 (Megatron-LM
    2021-2022), bf16 (Llama 2 and 3, Megatron-Core 0.8 on H100, NeMo 25.11's GB200 DeepSeek-V3 and
    Qwen3-235B) and fp8 (NeMo 25.11-26.04, FP8-CS and MXFP8), MoE among them (Qwen3, DeepSeek-V3:
    regimes keyed /moe); the serving runs add TensorRT-LLM's fp4 (B200) and gpt-fast's int8 and int4
    (A100)."""
    from gpuplan.hardware.intervals import validated_moe, validated_precisions

    table = catalog.table("residuals")
    a100 = next(r for r in table.regime if r.kind == "training" and r.key == "a100-sxm-80gb/megatron-lm")
    assert a100.precisions == ("fp16",)
    assert validated_precisions(table, "training") == ("bf16", "fp16", "fp8")
    assert validated_moe(table, "training") is True
    assert validated_precisions(table, "serving") == ("bf16", "fp16", "fp4", "fp8", "int4", "int8")
    assert validated_precisions(None, "training") == () and validated_moe(None, "training") is False
