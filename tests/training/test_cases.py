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
FRONTIER = SHARED_VALIDATION / "frontier" / "training.toml"
#: Public cases the model still misses (docs/validation.md, "Frontier"). The NeMo 25.11 row of
#: Qwen3-30B-A3B on 16 H100 lists micro-batch 2 and VP 24, the layout columns of the 25.09
#: token-drop row it replaced (Megatron-Bridge commit 97ad8cc6f); the 25.11 recipe runs
#: micro-batch 1 and VP 12 with the EP overlap (commit cb62f862 replaced micro_batch_size=2 by
#: moe_a2a_overlap=True; tag v0.2.0, table commit 00b7660b), and the 26.02 row with that layout
#: spends the same 16.7 ms per MoE layer and micro-batch as the 25.11 row read at micro-batch 1
#: (16.2 ms). gpuplan predicts the recipe's layout within 2%, the row as written 53% too fast.
KNOWN_MISSES = {"nemo2511-h100-qwen3-30b-a3b-fp8"}


@pytest.fixture(scope="module")
def report(catalog):
    if not CASES.exists():
        pytest.skip("shared validation cases not present")
    return validate_files([str(CASES)], catalog)


@pytest.fixture(scope="module")
def public(catalog):
    """The main and the frontier training cases: one set of factors for both."""
    if not CASES.exists() or not FRONTIER.exists():
        pytest.skip("shared validation cases not present")
    return validate_files([str(CASES), str(FRONTIER)], catalog, kinds=("training",))


def test_every_training_case_passes(report):
    failing = [(c.id, c.status, c.message, [(f.predicted, f.measured) for f in c.figures])
               for c in report.cases if c.status != "pass"]
    assert not failing
    assert report.ok


def test_every_public_training_case_passes_frontier_included_but_the_known_misses(public):
    assert [c.id for c in public.cases if c.status in ("not_modelled", "error")] == []
    failing = {c.id for c in public.cases if c.status != "pass"}
    assert failing <= KNOWN_MISSES, failing
    assert public.summary.median_error is not None and public.summary.median_error <= 0.08


def test_errors_stay_well_inside_tolerance(report):
    """Every figure within 80% of its case's tolerance (GPU-hours end to end carry 25%)."""
    s = report.summary
    assert s.median_error is not None and s.median_error < 0.08
    worst = max(f.error / f.tolerance for c in report.cases for f in c.figures)
    assert worst < 0.8


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


def test_the_recipe_layout_of_the_h100_qwen3_30b_row_is_reproduced(catalog, tmp_path):
    """The known miss above, run with the layout its recipe sets (micro-batch 1, VP 12): the
    expert loop's host launches after the all-to-all dispatcher's synchronisation, paired with
    the other micro-batch's backward by the EP overlap, give 24.8 s per step (121 TFLOP/s)."""
    if not FRONTIER.exists():
        pytest.skip("shared validation cases not present")
    text = FRONTIER.read_text()
    start = text.index('id = "nemo2511-h100-qwen3-30b-a3b-fp8"')
    block = "[[case]]\n" + text[start:text.index("[[case]]", start)]
    block = block.replace("micro_batch = 2", "micro_batch = 1").replace("vp = 24", "vp = 12")
    (tmp_path / "c.toml").write_text(block)
    (case,) = validate_files([str(tmp_path / "c.toml")], catalog).cases
    assert all(f.error < 0.05 for f in case.figures), [(f.name, f.predicted) for f in case.figures]


EXTRA = Path(__file__).parent / "data" / "published-extra.toml"


@pytest.fixture(scope="module")
def extra(catalog):
    return validate_files([str(EXTRA)], catalog)


def _errors(cases):
    return sorted(f.error for c in cases for f in c.figures)


#: Published runs outside the shared cases the model misses, and why (docs/validation.md).
EXTRA_MISSES = {
    # Llama 2 34B GPU-hours at its 350 W cap, on Meta's FSDP + TP 4 stack: 25.2% under (was 29.7%
    # before the cap law and the stack were modelled); the stack's own steady state (LLaMA 65B,
    # 380 tokens/s/GPU) is within 12%, so what is left is Meta's small-model efficiency and
    # job sizes, not published (docs/validation.md).
    "llama2-34b-pretraining-350w",
    # 26.02 rows whose layout runs faster in gpuplan than in the table: MXFP8 70B at TP2 PP4
    # VP5 on GB200, and Qwen3-235B on B300 with VP 4 and the EP overlap (399 TFLOP/s where B200
    # without either reaches 563; Megatron-Bridge dropped both from the B300 recipe after 26.02,
    # and the 26.04 B300 row, nemo2604-b300-qwen3-235b-a22b-mxfp8, is within 2%).
    "nemo2602-gb200-llama3-70b-mxfp8", "nemo2602-b300-qwen3-235b-a22b-mxfp8",
}


def test_the_same_factors_reproduce_published_runs_outside_the_shared_cases(extra):
    """Rows of Narayanan et al. 2021 and Korthikanti et al. 2022, BLOOM-176B, MT-NLG 530B, Llama 3
    405B, LLaMA 65B and Llama 2 34B, the NeMo 25.09, 25.11, 26.02 and 26.04 performance tables and the Megatron-Core
    r0.8 weak-scaling table (tests/training/data/published-extra.toml): a guard against fitting
    the shared cases."""
    assert extra.summary.cases == 58
    assert {c.id for c in extra.cases if c.status != "pass"} <= EXTRA_MISSES
    assert [c.id for c in extra.cases if c.status in ("not_modelled", "error")] == []
    megatron = _errors(c for c in extra.cases if c.id.startswith(("megatron", "korthikanti")))
    assert len(megatron) == 8 and megatron[len(megatron) // 2] < 0.08 and megatron[-1] < 0.15
    assert extra.summary.median_error < 0.08


def test_megatron_core_weak_scaling_table_within_fifteen_percent(extra):
    """Megatron-Core r0.8.0 on 48-6144 H100 (1.7B-462B GPT, end to end): every row within 15%, the
    median within 11% (gpuplan runs these 2-14% fast: the MAMF ceiling is a best-shape figure)."""
    errs = _errors(c for c in extra.cases if c.id.startswith("mcore080"))
    assert len(errs) == 9 and errs[-1] < 0.15 and errs[len(errs) // 2] < 0.11


@pytest.mark.parametrize("case_id", [
    # 16 small experts per GPU, MXFP8, all-to-all dispatcher after a host synchronisation, no
    # EP overlap (PP 1): 214 model TFLOP/s, a seventh of a dense 8B model's 1576 on the same GPUs.
    "nemo2511-b200-qwen3-30b-a3b-mxfp8",
    # The same on GB200 with HybridEP and micro-batch 4: 547.
    "nemo2511-gb200-qwen3-30b-a3b-mxfp8",
    # 4 experts per GPU (EP 32 of 128), BF16: the GEMMs hide the loop's launches.
    "nemo2511-gb200-qwen3-235b-a22b-bf16",
])
def test_moe_host_time_of_the_expert_loop_reproduces_the_nemo_moe_rows(extra, case_id):
    """moe.host_seconds: the launches of the expert loop beyond its GEMM time, after the
    dispatcher's synchronisation (NeMo 25.11 table, Megatron-Bridge docs/performance-summary.md)."""
    case = next(c for c in extra.cases if c.id == case_id)
    assert case.status == "pass"
    assert all(f.error < 0.10 for f in case.figures)


@pytest.mark.parametrize("case_id", [
    "nemo2511-b200-llama3-8b-fp8", "nemo2511-gb200-llama3-8b-fp8",
    "nemo2511-b200-llama31-405b-fp8", "nemo2511-gb200-llama31-405b-fp8",
])
def test_dense_fp8_on_blackwell_within_twelve_percent(extra, case_id):
    """FP8 GEMMs with 1-byte operands, their quantize kernels (current scaling: amax pass, then
    cast), BF16 LM head and the Megatron-Core TP overlap reproduce the NeMo 25.11 dense FP8 rows
    of B200 and GB200."""
    case = next(c for c in extra.cases if c.id == case_id)
    assert all(f.error < 0.12 for f in case.figures)


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
    assert case.figures[0].predicted == pytest.approx(78.6, rel=0.02)


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


def test_meta_stack_steady_state_within_fifteen_percent(extra):
    """LLaMA 65B on 2,048 A100 at 380 tokens/s/GPU (Touvron et al. 2023a section 2.4), run as
    Meta's FSDP + tensor-parallel stack (framework fsdp, TP 8): the steady state of the software
    that trained Llama 2."""
    case = next(c for c in extra.cases if c.id == "llama1-65b-2048-a100")
    assert case.status == "pass" and case.figures[0].error < 0.15
