"""The training validation cases (shared/validation/training.toml) and the run-table schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.model.case import CaseInput, NotModelled
from gpuplan.core.errors import InputError
from gpuplan.training.cases import predict
from gpuplan.ci.validate import validate_files
from tests.conftest import SHARED_VALIDATION
from tests.training.conftest import GPT_22B, arch_of

CASES = SHARED_VALIDATION / "training.toml"


@pytest.fixture(scope="module")
def report(catalog):
    if not CASES.exists():
        pytest.skip("shared validation cases not present")
    return validate_files([str(CASES)], catalog)


def test_every_training_case_passes(report):
    failing = [(c.id, c.status, c.message, [(f.predicted, f.measured) for f in c.figures])
               for c in report.cases if c.status != "pass"]
    assert not failing
    assert report.ok


def test_errors_stay_well_inside_tolerance(report):
    s = report.summary
    assert s.median_error is not None and s.median_error < 0.10
    assert s.worst_error is not None and s.worst_error < 0.15


@pytest.mark.parametrize("case_id, figure, low, high", [
    ("korthikanti-2022-22b-full-recompute", "iteration_time_s", 1.30, 1.60),
    ("korthikanti-2022-175b-selective-sp", "iteration_time_s", 12.5, 16.0),
    ("llama3.1-405b-8k-gpus", "model_tflops_per_gpu", 380, 480),
    ("megatron-2021-gpt-1t", "hardware_tflops_per_gpu", 140, 185),
])
def test_case_predictions_in_physical_range(report, case_id, figure, low, high):
    case = next(c for c in report.cases if c.id == case_id)
    fig = next(f for f in case.figures if f.name == figure)
    assert low < fig.predicted < high


def _case(run, figures=("iteration_time_s",), arch=None):
    return CaseInput(id="t", file="cases.toml", arch=arch or arch_of(**GPT_22B), run=run, figures=figures)


def test_unknown_run_field_is_an_input_error_naming_file_and_field(catalog):
    with pytest.raises(InputError) as exc:
        predict(_case({"gpu": "a100-sxm-80gb", "sequence_length": 2048, "global_batch_sequences": 4,
                       "pipeline": 2}), catalog)
    assert exc.value.file == "cases.toml"
    assert exc.value.field == "case[t].run.pipeline"


def test_bad_value_is_an_input_error(catalog):
    with pytest.raises(InputError) as exc:
        predict(_case({"gpu": "a100-sxm-80gb", "sequence_length": 2048, "global_batch_sequences": 4,
                       "recompute": "some"}), catalog)
    assert exc.value.field == "case[t].run.recompute"


def test_unknown_gpu_is_an_input_error(catalog):
    with pytest.raises(InputError):
        predict(_case({"gpu": "nope-9000", "sequence_length": 2048, "global_batch_sequences": 4}), catalog)


def test_unmodelled_figure_raises_not_modelled(catalog):
    with pytest.raises(NotModelled):
        predict(_case({"gpu": "a100-sxm-80gb", "sequence_length": 2048}, figures=("ttft_ms",)), catalog)


def test_fixed_layout_predicts_memory_figures(catalog):
    run = {"gpu": "a100-sxm-80gb", "gpus": 8, "precision": "fp16", "sequence_length": 2048,
           "global_batch_sequences": 4, "micro_batch": 4, "tp": 8, "pp": 1, "recompute": "selective",
           "sequence_parallel": True, "zero": 0}
    out = predict(_case(run, figures=("model_state_gib", "activation_gib")), catalog)
    assert out["model_state_gib"] == pytest.approx(45.5625, rel=0.10)
    assert out["activation_gib"] == pytest.approx(9.5625, rel=0.10)


def test_total_flops_needs_no_gpu(catalog):
    out = predict(_case({"tokens": 300e9, "sequence_length": 2048}, figures=("total_flops",),
                        arch=arch_of(layers=96, hidden=12288, heads=96, vocab=50257)), catalog)
    assert out["total_flops"] == pytest.approx(3.14e23, rel=0.03)


FRONTIER = SHARED_VALIDATION / "frontier" / "training.toml"
#: Frontier cases the model still misses (docs/validation.md, "Frontier"): the NeMo 25.11 row of
#: Qwen3-30B-A3B on 16 H100 reaches 121 TFLOP/s where the same model on H100 reaches 208 in the
#: 26.02 table; gpuplan predicts 200 (a software difference the case cannot name).
FRONTIER_MISSES = {"nemo2511-h100-qwen3-30b-a3b-fp8"}


def test_frontier_training_cases_are_modelled_and_pass_but_the_known_misses(catalog):
    if not FRONTIER.exists():
        pytest.skip("shared validation cases not present")
    rep = validate_files([str(FRONTIER)], catalog)
    assert [c.id for c in rep.cases if c.status in ("not_modelled", "error")] == []
    assert {c.id for c in rep.cases if c.status != "pass"} <= FRONTIER_MISSES
    assert rep.summary.median_error < 0.10


EXTRA = Path(__file__).parent / "data" / "published-extra.toml"


@pytest.fixture(scope="module")
def extra(catalog):
    return validate_files([str(EXTRA)], catalog)


def _errors(cases):
    return sorted(f.error for c in cases for f in c.figures)


def test_the_same_factors_reproduce_published_runs_outside_the_shared_cases(extra):
    """Six more rows of Narayanan et al. 2021 Table 1, the 530B rows of Korthikanti et al. 2022
    Table 5, BLOOM-176B, MT-NLG 530B, two Llama 3 405B rows (8K and 128K tokens) and ten rows of the NeMo 25.11 performance table (tests/training/data/published-extra.toml):
    a guard against fitting the shared cases."""
    assert [c.id for c in extra.cases if c.status != "pass"] == []
    assert extra.summary.cases == 22
    megatron = _errors(c for c in extra.cases if c.id.startswith(("megatron", "korthikanti")))
    assert len(megatron) == 8 and megatron[len(megatron) // 2] < 0.08 and megatron[-1] < 0.15
    assert extra.summary.median_error < 0.10


@pytest.mark.parametrize("case_id", [
    # Small experts, 16 per GPU, FP8 on B200: 214 model TFLOP/s, a quarter of a dense 8B model's
    # 1576 on the same GPUs. Without the host time of the expert loop gpuplan said 745.
    "nemo2511-b200-qwen3-30b-a3b-mxfp8",
    # 32 experts per GPU (EP 8 of 256): 557 TFLOP/s; gpuplan said 867 without it.
    "nemo2511-b200-deepseek-v3-mxfp8",
    # 4 experts per GPU (EP 32 of 128), BF16: the expert loop costs little.
    "nemo2511-gb200-qwen3-235b-a22b-bf16",
])
def test_moe_host_time_of_the_expert_loop_reproduces_the_nemo_moe_rows(extra, case_id):
    """moe.host_seconds: exposed launches per local expert after the dropless dispatcher's sync
    (NeMo 25.11 table, Megatron-Bridge docs/performance-summary.md)."""
    case = next(c for c in extra.cases if c.id == case_id)
    assert case.status == "pass"
    assert all(f.error < 0.15 for f in case.figures)


@pytest.mark.parametrize("case_id", [
    "nemo2511-b200-llama3-8b-fp8", "nemo2511-gb200-llama3-8b-fp8",
    "nemo2511-b200-llama31-405b-fp8", "nemo2511-gb200-llama31-405b-fp8",
])
def test_dense_fp8_on_blackwell_within_ten_percent(extra, case_id):
    """FP8 GEMMs with 1-byte operands, FP8-saved GEMM inputs, BF16 LM head and the Megatron-Core
    TP overlap reproduce the NeMo 25.11 dense FP8 rows of B200 and GB200."""
    case = next(c for c in extra.cases if c.id == case_id)
    assert all(f.error < 0.10 for f in case.figures)


def test_a_run_over_the_memory_model_is_predicted_at_its_leanest_layout(catalog, tmp_path):
    """Korthikanti 2022 Table 5, 1T selective + SP (71.49 s): at VP 2 gpuplan's memory model puts it
    at 81.2 GiB on an 80 GB A100 (79.5 usable), yet the run happened: predict it, do not skip it."""
    (tmp_path / "c.toml").write_text(
        '[[case]]\nid = "korthikanti-2022-1t-selective-vp2"\nkind = "training"\nsource = "arXiv:2205.05198"\n'
        'tolerance = 0.15\n[case.model]\nlayers = 128\nhidden = 25600\nheads = 160\nvocab = 51200\n'
        '[case.run]\nframework = "megatron-lm"\ngpu = "a100-sxm-80gb"\ngpus = 512\nprecision = "fp16"\nsequence_length = 2048\n'
        'global_batch_sequences = 512\nmicro_batch = 1\ntp = 8\npp = 64\nvp = 2\nrecompute = "selective"\n'
        'sequence_parallel = true\n[case.measured]\niteration_time_s = 71.49\n')
    (case,) = validate_files([str(tmp_path / "c.toml")], catalog).cases
    assert case.status == "pass"
    assert case.figures[0].predicted == pytest.approx(80.5, rel=0.02)


def test_the_summary_gives_each_kind_its_own_median(catalog):
    """Exact fabric counts (error 0) must not hide the training and serving model errors."""
    files = sorted(str(p) for p in SHARED_VALIDATION.glob("*.toml"))
    if len(files) < 3:
        pytest.skip("shared validation cases not present")
    s = validate_files(files, catalog).summary
    assert set(s.by_kind) == {"training", "serving", "fabric"}
    assert sum(k.figures for k in s.by_kind.values()) == sum(
        len(c.figures) for c in validate_files(files, catalog).cases)
    assert s.by_kind["fabric"].median_error == 0.0 and s.median_error == 0.0  # fabric figures dominate
    assert 0.02 < s.by_kind["training"].median_error < 0.10 and 0.02 < s.by_kind["serving"].median_error < 0.10
