"""``gpuplan calibrate``: readers of each measurement format, the fit, its refusals, the overlay."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuplan.ci.calibrate import fit
from gpuplan.ci.measurements import Context, detect, read_measurements
from gpuplan.hardware import load_catalog

DATA = Path(__file__).parent / "data" / "calibrate"
H100 = Context(gpu="h100-sxm-80gb", model="llama-3.1-8b")


def _median_errors(out: str) -> tuple[float, float]:
    m = re.search(r"median error on \d+ measured figures: ([0-9.]+)% before, ([0-9.]+)% after", out)
    assert m, out
    return float(m.group(1)) / 100, float(m.group(2)) / 100


@pytest.mark.parametrize("name,kind", [("h100-nemo-fp8.toml", "cases"), ("megatron.log", "megatron"),
                                       ("nemo.log", "megatron"), ("vllm.json", "bench-json"),
                                       ("sglang.jsonl", "bench-json"), ("trtllm-bench.txt", "trtllm"),
                                       ("nccl-1node.txt", "nccl"), ("nccl-2node.txt", "nccl")])
def test_each_format_is_recognised(name, kind):
    assert detect((DATA / name).read_text()) == kind


def test_readers_take_the_documented_fields():
    m = read_measurements([str(DATA / f) for f in ("megatron.log", "vllm.json", "sglang.jsonl", "trtllm-bench.txt",
                                                   "nccl-1node.txt", "nccl-2node.txt")], H100)
    by = {c.id: c for c in m.cases}
    mega = by["megatron.log#0"]
    assert mega.run["tp"] == 2 and mega.run["gpus"] == 8 and mega.run["sequence_length"] == 4096
    assert mega.run["global_batch_sequences"] == 64 and mega.run["sequence_parallel"] is True
    assert mega.measured["iteration_time_s"] == pytest.approx(3.9218)  # median after the warm-up line
    vllm = by["vllm.json#0"]
    assert vllm.run == {"engine": "vllm", "prompt_tokens": 1024, "output_tokens": 256, "batch": 32,
                        "gpu": "h100-sxm-80gb"}
    assert vllm.measured == {"output_tokens_per_s": 2301.1, "tpot_ms": 10.21}
    sg1 = by["sglang.jsonl#0"]
    assert sg1.run["engine"] == "sglang" and sg1.measured["ttft_ms"] == 36.1  # TTFT only at concurrency 1
    assert "ttft_ms" not in by["sglang.jsonl#1"].measured
    trt = by["trtllm-bench.txt#0"]
    assert trt.run["precision"] == "fp8" and trt.run["scenario"] == "offline" and trt.run["prompt_tokens"] == 128
    assert trt.measured["output_tokens_per_s"] == pytest.approx(23617.536)
    assert [(b.ranks, b.nodes, b.busbw_gb_per_s) for b in m.busbw] == [(8, 1, 361.4), (16, 2, 44.9)]


def test_calibrating_one_gpu_lowers_its_median_error_by_a_third(cli, tmp_path):
    out = tmp_path / "overlay"
    run = cli("calibrate", str(DATA / "h100-nemo-fp8.toml"), "-o", str(out))
    assert run.code == 0, run
    before, after = _median_errors(run.out)
    assert after <= 0.7 * before
    # the fit moves the FP8 matmul efficiency and leaves the kernel gap at the catalog's 2 us: said so,
    # not '2 -> 2'
    assert "h100-sxm-80gb.matmul_fp8: 0.71 -> " in run.out
    assert "training.kernel_gap_us: 2 (unchanged)" in run.out.splitlines()
    # validate and recommend read the overlay
    plain = json.loads(cli("validate", str(DATA / "h100-nemo-fp8.toml"), "--format", "json").out)
    tuned = json.loads(cli("validate", str(DATA / "h100-nemo-fp8.toml"), "--format", "json", "--catalog",
                           str(out)).out)
    assert tuned["summary"]["median_error"] < 0.7 * plain["summary"]["median_error"]
    assert tuned["summary"]["median_error"] == pytest.approx(after, abs=0.001)
    profile = tmp_path / "p.toml"
    profile.write_text('[model]\npreset = "llama-3.1-70b"\n[training]\ntokens = 1e12\nprecision = "fp8"\n'
                       'gpus = 512\n[constraints]\nallow_gpus = ["h100-sxm-80gb"]\n')
    a = json.loads(cli("recommend", str(profile), "--format", "json", "-q").out)["training"]
    b = json.loads(cli("recommend", str(profile), "--format", "json", "-q", "--catalog", str(out)).out)["training"]
    assert b["gpus"] == a["gpus"] == 512 and b["step_time_s"] < a["step_time_s"]


def test_tool_outputs_fit_every_figure_within_bounds(tmp_path):
    files = [str(DATA / f) for f in ("megatron.log", "vllm.json", "sglang.jsonl", "trtllm-bench.txt",
                                     "nccl-1node.txt", "nccl-2node.txt")]
    result = fit(read_measurements(files, H100), load_catalog())
    assert result.median_after < 0.7 * result.median_before
    v = result.values
    assert 0 < v["h100-sxm-80gb.scaleup_busbw"] <= 1 and 0 < v["fabric.ib-ndr.efficiency"] <= 1
    assert v["h100-sxm-80gb.scaleup_busbw"] == pytest.approx(361.4 / 450, rel=1e-3)
    assert 0.2 <= v["h100-sxm-80gb.matmul_bf16"] <= 0.99 and 0.3 <= v["h100-sxm-80gb.mem_bw"] <= 0.98


def test_too_few_points_is_refused_with_one_line(cli, tmp_path):
    run = cli("calibrate", str(DATA / "nemo.log"), "--gpu", "h100-sxm-80gb", "--model", "llama-3.1-8b",
              "--set", "gpus=8", "--set", "tp=2", "--set", "sequence_length=4096", "-o", str(tmp_path / "o"))
    assert run.code == 2 and "too few points" in run.err and len(run.err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_contradictory_points_are_refused(cli, tmp_path):
    text = (DATA / "h100-nemo-fp8.toml").read_text()
    first = text.split("[[case]]")[1]
    twin = first.replace('id = "nemo2511-h100-llama3-8b-fp8-fsdp"', 'id = "twin"').replace("= 744", "= 500")
    bad = tmp_path / "bad.toml"
    bad.write_text(text + "[[case]]" + twin)
    run = cli("calibrate", str(bad), "-o", str(tmp_path / "o"))
    assert run.code == 2 and "contradictory" in run.err and len(run.err.strip().splitlines()) == 1


def test_a_file_of_no_known_format_is_an_input_error(cli, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    run = cli("calibrate", str(junk), "-o", str(tmp_path / "o"))
    assert run.code == 2 and "not a measurement file" in run.err


@pytest.mark.parametrize("name,text", [
    ("a.json", '{"output_throughput": 5}'),
    ("b.json", '{"output_throughput": 5, "completed": 0, "total_input_tokens": 1, "total_output_tokens": 1}'),
    ("c.json", '{"output_throughput": "x", "completed": 3, "total_input_tokens": 3, "total_output_tokens": 3}'),
    ("d.json", '{"output_throughput": 5, "completed": 3, "total_input_tokens": 3, "total_output_tokens": 3, '
               '"max_concurrency": true}'),
    ("e.txt", "#  Rank  0 Group  0 Pid 1 on h device 0 [0x1] X\n#  size count type\n 8 2 float sum -1 1.0 0 0 0\n"),
    ("f.log", "elapsed time per iteration (ms): 5\nelapsed time per iteration (ms): 6\n"),
])
def test_malformed_measurements_are_one_line_input_errors(cli, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    run = cli("calibrate", str(path), "--gpu", "h100-sxm-80gb", "--model", "llama-3.1-8b", "-o", str(tmp_path / "o"))
    assert run.code == 2 and run.err.startswith("gpuplan: error: ") and run.err.count("\n") == 1, run


def test_serving_fit_moves_the_attention_read_rate_with_the_weights_and_the_overlay_keeps_it(tmp_path):
    """H100 has a decode-attention read rate measured apart from its weight reads (0.93 vs 0.84 of
    spec, catalog). A serving fit scales both; the written overlay must carry both, so that a plan
    read through it sees the fitted GPU and its errors are the fit's."""
    from gpuplan.ci.calibrate import errors, overlay_files, write_overlay

    meas = read_measurements([str(DATA / "vllm.json"), str(DATA / "sglang.jsonl")], H100)
    shipped = load_catalog()
    result = fit(meas, shipped)
    fitted = result.catalog.gpus["h100-sxm-80gb"].efficiency
    assert fitted.mem_bw < 0.84 and fitted.attention_mem_bw < 0.93  # both slower than the catalog's
    assert fitted.attention_mem_bw / fitted.mem_bw == pytest.approx(0.93 / 0.84, rel=1e-9)
    out = tmp_path / "overlay"
    write_overlay(out, overlay_files(result, meas, day="2026-11-27"), protect=[])
    assert "attention_mem_bw = " in (out / "calibrated.toml").read_text()
    through = load_catalog([out])
    errs, _ = errors(meas.cases, through)
    # within a point (the overlay rounds each figure to 4 digits); without attention_mem_bw in the
    # overlay the two largest errors move by 1.9 points
    assert sorted(errs) == pytest.approx(sorted(result.after), abs=0.01)
