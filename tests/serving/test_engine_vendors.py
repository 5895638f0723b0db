"""The serving planner sizes only GPUs the profile's engine runs on (the rule ``gpuplan deploy``
applies, gpuplan/hardware/engine_vendors.py): TensorRT-LLM builds CUDA engines, NVIDIA only
(TensorRT-LLM support matrix); vLLM and SGLang ship ROCm builds as well (their install docs)."""

from __future__ import annotations

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from gpuplan.serving.planner import plan_disaggregated, plan_serving

#: The reviewer's profile: Mixtral 8x22B at 50 requests/s. Before the fix, TensorRT-LLM was
#: planned on 16 x mi355x-oam-288gb (20 disaggregated), which gpuplan deploy then refused.
MOE = '[model]\npreset = "mixtral-8x22b"\n[serving]\nqps = 50\nengine = "{engine}"\ndisaggregation = "{mode}"\n'
AMD = ("mi300x-oam-192gb", "mi325x-oam-256gb", "mi355x-oam-288gb")


def _workload(catalog, engine, mode="never", extra=""):
    return load_profile_text(MOE.format(engine=engine, mode=mode) + extra, "moe.toml", catalog)


def test_trtllm_plans_nvidia_only_and_says_why_amd_is_left_out(catalog):
    plan = plan_serving(_workload(catalog, "trtllm"), catalog).plan
    assert plan.feasible and catalog.gpus[plan.gpu].vendor == "nvidia"
    why = {a.gpu: a.reason for a in plan.alternatives}
    for gid in AMD:
        assert why[gid] == "TensorRT-LLM does not run on AMD GPUs"
    assert why["gaudi3-oam-128gb"] == "TensorRT-LLM does not run on Intel GPUs"


def test_trtllm_disaggregated_search_and_plan_stay_on_nvidia(catalog):
    workload = _workload(catalog, "trtllm", "always")
    finalists = plan_disaggregated(workload, catalog)
    assert finalists
    for fleet in finalists:
        assert {fleet.prefill.replica.gpu.vendor, fleet.decode.replica.gpu.vendor} == {"nvidia"}
    serving = plan_workload(workload, catalog, phases=("serving",)).serving
    assert serving.feasible and serving.layout.disaggregated and catalog.gpus[serving.gpu].vendor == "nvidia"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_vllm_and_sglang_still_plan_amd(catalog, engine):
    workload = _workload(catalog, engine, extra='[constraints]\nallow_vendors = ["amd"]\n')
    plan = plan_serving(workload, catalog).plan
    assert plan.feasible and plan.gpu in AMD
    assert any(f.decode.replica.gpu.vendor == "amd" for f in plan_disaggregated(workload, catalog))


def test_no_gpu_the_engine_runs_on_is_an_infeasible_plan(catalog):
    workload = _workload(catalog, "trtllm", "auto", '[constraints]\nallow_vendors = ["amd"]\n')
    plan = plan_workload(workload, catalog, phases=("serving",)).serving
    assert not plan.feasible and plan.gpus == 0
    assert plan.infeasible[0] == "no allowed GPU runs the trtllm engine: TensorRT-LLM does not run on AMD GPUs"
    assert {a.gpu: a.reason for a in plan.alternatives} == dict.fromkeys(AMD, "TensorRT-LLM does not run on AMD GPUs")
    assert plan_disaggregated(workload, catalog) == []
