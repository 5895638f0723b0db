"""``gpuplan deploy`` end to end on the chat example (the real planner), and its bad inputs."""

from __future__ import annotations

import json

import pytest

CHAT = "examples/chat-8b-serving.toml"


def test_vllm_command_has_tensor_parallel_size(cli):
    r = cli("deploy", CHAT, "--engine", "vllm")
    assert r.code == 0, r
    comment, launch = r.out.split("\n", 1)
    # the plan's autoscaling bounds: the active replicas at the (constant) peak and the spare: 4 + 1
    # (3 + 1, "4 to 5", before prompts entered budget-filled steps: 3.5 -> 3.2 requests/s a replica)
    assert comment.startswith("# vLLM 0.33.0: one replica on 1 x ") and "; run 5 replicas" in comment
    assert launch.startswith("vllm serve meta-llama/Llama-3.1-8B")
    assert "--tensor-parallel-size 1" in r.out and "--max-model-len 8192" in r.out


def test_sglang_command_has_tp(cli):
    r = cli("deploy", CHAT, "--engine", "sglang")
    assert r.code == 0, r
    assert "--tp-size 1" in r.out and "--context-length 8192" in r.out


def test_k8s_json_is_a_list_with_a_deployment_and_an_hpa(cli):
    r = cli("deploy", CHAT, "--engine", "vllm", "--k8s", "--format", "json")
    assert r.code == 0, r
    doc = json.loads(r.out)
    by_kind = {o["kind"]: o for o in doc["items"]}
    assert set(by_kind) == {"Deployment", "HorizontalPodAutoscaler"}
    hpa = by_kind["HorizontalPodAutoscaler"]["spec"]
    assert 1 <= hpa["minReplicas"] <= hpa["maxReplicas"]
    assert by_kind["Deployment"]["spec"]["replicas"] == hpa["minReplicas"]


def test_reads_a_saved_plan_and_writes_a_file(cli, tmp_path):
    plan = tmp_path / "plan.json"
    assert cli("recommend", CHAT, "--phase", "serving", "--format", "json", "-o", str(plan)).code == 0
    out = tmp_path / "serve.yaml"
    r = cli("deploy", str(plan), "--engine", "trtllm", "--k8s", "--format", "yaml", "-o", str(out))
    assert r.code == 0, r
    assert r.out == "" and "kind: HorizontalPodAutoscaler" in out.read_text()


@pytest.mark.parametrize("args, where", [
    (["--engine", "vlm"], "--engine: unknown engine 'vlm' (did you mean 'vllm'?)"),
    (["--engine", "vllm", "--format", "toml"], "--format: unknown format 'toml'"),
    (["--engine", "sglang", "--model", ""], "--model"),
])
def test_bad_flags_are_one_line_and_exit_2(cli, args, where):
    r = cli("deploy", CHAT, *args)
    assert r.code == 2 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1 and where in r.err, r


def test_training_only_profile_has_nothing_to_deploy(cli):
    r = cli("deploy", "examples/frontier-405b-training.toml", "--engine", "vllm")
    assert r.code == 2 and r.out == ""
    assert r.err.count("\n") == 1 and "no serving phase" in r.err, r


def test_engine_defaults_to_the_profiles_then_vllm(cli, tmp_path):
    """Without --engine: the engine the plan was made for (the profile's [serving] engine, recorded
    in a saved plan since schema 2.2); a profile without one gets vLLM, the planner's default
    engine (docs/deploy.md)."""
    trt = tmp_path / "trt.toml"
    trt.write_text('[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 5\nengine = "trtllm"\n')
    r = cli("deploy", str(trt))
    assert r.code == 0, r
    assert r.out.startswith("# TensorRT-LLM 1.2.1: ") and "trtllm-serve meta-llama/Llama-3.1-8B" in r.out
    saved = tmp_path / "trt.json"
    r = cli("recommend", str(trt), "--format", "json", "--out", str(saved))
    assert r.code == 0, r
    r = cli("deploy", str(saved))
    assert r.code == 0, r
    assert r.out.startswith("# TensorRT-LLM 1.2.1: "), r.out[:80]
    r = cli("deploy", CHAT)
    assert r.code == 0, r
    assert r.out.startswith("# vLLM 0.33.0: ")
