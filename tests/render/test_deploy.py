"""``gpuplan deploy``: engine flags pinned to the releases they were read from, Kubernetes objects
checked against the kubernetes client's models, and the YAML emitter read back by PyYAML."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from gpuplan.core.errors import InputError
from gpuplan.core.contract import ModelSummary, ServingDeploy, ServingLayout
from gpuplan.render.deploy import deploy, dns_name, render_deploy, replica_bounds
from gpuplan.render.yaml_ import dump, dump_all
from gpuplan.serving.deploy_engines import BY_ID, Launch, command, memory_fraction
from tests.render.fixtures import serving_plan, synthetic_plan

#: The release each engine's flag names were read from (see gpuplan/serving/deploy_engines.py):
#: vLLM and SGLang from their released wheels' argument definitions, TensorRT-LLM from
#: trtllm-serve's option list (tensorrt_llm/commands/serve.py) and the 1.x docs.
RELEASES = {"vllm": "0.33.0", "sglang": "0.5.23", "trtllm": "1.2.1"}

DEPLOY = ServingDeploy(context_length=8192, gpu_memory_usable_gib=79.0, runtime_overhead_gib=3.5,
                       prefill_chunk_tokens=8192, gpu_vendor="nvidia", gpus_per_node=8)


def _plan(**serving):
    s = serving_plan().model_copy(update={"deploy": DEPLOY, **serving})
    model = ModelSummary(name="llama-3.1-70b", total_params=70_553_706_496, active_params=70_553_706_496, layers=80,
                         hidden=8192, heads=64, kv_heads=8, experts=0, kv_bytes_per_token_bf16=327_680,
                         hf_repo="meta-llama/Llama-3.1-70B")
    return synthetic_plan(training=None, serving=s).model_copy(update={"model": model})


def _flags(argv):
    """``--flag value`` pairs (a bare flag maps to True)."""
    out, i = {}, 0
    while i < len(argv):
        if argv[i].startswith("--"):
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                out[argv[i]] = argv[i + 1]
                i += 2
                continue
            out[argv[i]] = True
        i += 1
    return out


def test_releases_are_pinned():
    assert {k: e.release for k, e in BY_ID.items()} == RELEASES


def test_vllm_0_33_0_flags():
    cmd = deploy(_plan(), "vllm").command
    assert cmd.argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B"]
    assert _flags(cmd.argv) == {
        "--host": "0.0.0.0", "--port": "8000", "--tensor-parallel-size": "4", "--pipeline-parallel-size": "1",
        "--max-num-seqs": "640", "--max-model-len": "8192", "--kv-cache-dtype": "fp8",
        "--gpu-memory-utilization": "0.91", "--quantization": "fp8", "--enable-chunked-prefill": True,
        "--max-num-batched-tokens": "8192"}


def test_sglang_0_5_23_flags():
    cmd = deploy(_plan(), "sglang").command
    assert cmd.argv[:2] == ["sglang", "serve"]
    assert _flags(cmd.argv) == {
        "--model-path": "meta-llama/Llama-3.1-70B", "--host": "0.0.0.0", "--port": "30000", "--tp-size": "4",
        "--pp-size": "1", "--max-running-requests": "640", "--context-length": "8192",
        "--kv-cache-dtype": "fp8_e4m3", "--mem-fraction-static": "0.86", "--quantization": "fp8",
        "--chunked-prefill-size": "8192", "--enable-metrics": True}


def test_trtllm_1_2_1_flags_and_config():
    cmd = deploy(_plan(), "trtllm").command
    assert cmd.argv[:2] == ["trtllm-serve", "meta-llama/Llama-3.1-70B"]
    assert _flags(cmd.argv) == {
        "--host": "0.0.0.0", "--port": "8000", "--backend": "pytorch", "--tp_size": "4", "--pp_size": "1",
        "--max_batch_size": "640", "--max_num_tokens": "8192", "--max_seq_len": "8192",
        "--kv_cache_free_gpu_memory_fraction": "0.88", "--extra_llm_api_options": "extra-llm-api-config.yml"}
    assert cmd.config == {"kv_cache_config": {"dtype": "fp8"}, "enable_chunked_prefill": True}


def test_memory_fractions_follow_each_engines_basis():
    s = Launch(model="m", tp=1, pp=1, ep=1, attn_dp=1, max_sequences=1, precision="bf16", kv_precision="bf16",
               weights_gib=20.0, kv_gib=40.0, usable_gib=80.0, overhead_gib=4.0)
    assert memory_fraction(BY_ID["vllm"], s) == 0.8  # (20 + 4 + 40) / 80
    assert memory_fraction(BY_ID["sglang"], s) == 0.75  # (20 + 40) / 80
    assert memory_fraction(BY_ID["trtllm"], s) == 0.71  # 40 / (80 - 20 - 4), rounded down


def test_moe_attention_dp_maps_to_each_engine():
    """ep 8 over tp 2: four attention data-parallel groups, experts over all eight GPUs."""
    plan = _plan(layout=ServingLayout(tp=2, pp=1, ep=8, concurrency=64, disaggregated=False), gpus_per_replica=8)
    vllm = _flags(deploy(plan, "vllm").command.argv)
    assert (vllm["--tensor-parallel-size"], vllm["--data-parallel-size"], vllm["--enable-expert-parallel"]) == ("2", "4", True)
    assert vllm["--max-num-seqs"] == "160"  # per data-parallel rank
    sglang = _flags(deploy(plan, "sglang").command.argv)
    assert (sglang["--tp-size"], sglang["--attn-dp-size"], sglang["--ep-size"]) == ("8", "4", "8")
    assert "--enable-dp-attention" not in sglang  # deprecated in 0.5.23
    trt = deploy(plan, "trtllm")
    assert (_flags(trt.command.argv)["--tp_size"], _flags(trt.command.argv)["--ep_size"]) == ("8", "8")
    assert trt.command.config["enable_attention_dp"] is True
    assert any("attention DP" in n for n in trt.notes)


def test_weight_only_precision_leaves_the_method_to_the_checkpoint():
    d = deploy(_plan(precision="int4", kv_precision="fp8"), "vllm")
    assert "--quantization" not in d.command.argv and "--dtype" not in d.command.argv
    assert any("pre-quantised checkpoint" in n for n in d.notes)
    assert _flags(deploy(_plan(precision="bf16", kv_precision="bf16"), "sglang").command.argv)["--dtype"] == "bfloat16"


def test_unsupported_kv_dtype_and_vendor_are_input_errors():
    with pytest.raises(InputError, match="no int8 KV cache"):
        deploy(_plan(kv_precision="int8"), "sglang")
    amd = DEPLOY.model_copy(update={"gpu_vendor": "amd"})
    with pytest.raises(InputError, match="TensorRT-LLM does not run on AMD GPUs"):
        deploy(_plan(deploy=amd), "trtllm")
    with pytest.raises(InputError, match="give --image"):
        deploy(_plan(deploy=amd), "vllm", k8s=True)
    assert deploy(_plan(deploy=amd), "vllm", k8s=True, image="rocm/vllm:latest").objects


def test_plans_without_serving_or_model_repo_are_input_errors():
    with pytest.raises(InputError, match="no serving phase"):
        deploy(synthetic_plan(serving=None), "vllm")
    plan = _plan()
    nameless = plan.model_copy(update={"model": plan.model.model_copy(update={"hf_repo": None})})
    with pytest.raises(InputError, match="give --model"):
        deploy(nameless, "vllm")
    assert deploy(nameless, "vllm", model="/models/llama").command.argv[2] == "/models/llama"
    infeasible = _plan(feasible=False, layout=None, gpu=None)
    with pytest.raises(InputError, match="infeasible"):
        deploy(infeasible, "vllm")


def test_saved_plan_without_deploy_inputs_still_deploys_with_notes():
    d = deploy(_plan(deploy=None), "vllm")
    flags = _flags(d.command.argv)
    assert "--max-model-len" not in flags and "--gpu-memory-utilization" not in flags
    assert sum("saved before gpuplan deploy" in n for n in d.notes) == 2  # context length, memory terms


# -- Kubernetes ------------------------------------------------------------------------------------

@pytest.fixture
def k8s_client():
    """The kubernetes client's models (the ``test`` extra installs it)."""
    return pytest.importorskip("kubernetes.client")


def _strict(data, type_name: str, path: str) -> None:
    """Every key is a field of the kubernetes client's model and every value has its type."""
    from kubernetes import client

    if type_name.lower().startswith("list["):  # "list[X]" in older clients, "List[X]" in newer ones
        assert isinstance(data, list), path
        for i, item in enumerate(data):
            _strict(item, type_name[5:-1], f"{path}[{i}]")
    elif type_name.lower().startswith(("dict(", "dict[")):
        assert isinstance(data, dict), path
        inner = type_name[5:-1].split(", ", 1)[1]
        for key, item in data.items():
            _strict(item, inner, f"{path}.{key}")
    elif type_name == "str":
        assert isinstance(data, str), f"{path}: expected a string, got {data!r}"
    elif type_name == "int":
        assert isinstance(data, int) and not isinstance(data, bool), path
    elif type_name == "bool":
        assert isinstance(data, bool), path
    elif type_name == "object":  # IntOrString, Quantity
        assert isinstance(data, (str, int)), path
    else:
        cls = getattr(client, type_name)
        assert isinstance(data, dict), path
        fields = {json_key: attr for attr, json_key in cls.attribute_map.items()}
        for key, item in data.items():
            assert key in fields, f"{path}.{key} is not a field of {type_name}"
            _strict(item, cls.openapi_types[fields[key]], f"{path}.{key}")


def _model(data, type_name: str):
    """Build the client model (its required-field checks run), as the client reads an API answer."""
    from kubernetes.client import ApiClient

    return ApiClient()._ApiClient__deserialize(data, type_name)  # noqa: SLF001 - the client's own reader


KINDS = {"Deployment": "V1Deployment", "HorizontalPodAutoscaler": "V2HorizontalPodAutoscaler",
         "ConfigMap": "V1ConfigMap"}


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_k8s_objects_fit_the_kubernetes_schema(k8s_client, engine):
    d = deploy(_plan(), engine, k8s=True)
    kinds = [o["kind"] for o in d.objects]
    assert kinds[-2:] == ["Deployment", "HorizontalPodAutoscaler"]
    for obj in d.objects:
        _strict(obj, KINDS[obj["kind"]], obj["kind"])
        _model(obj, KINDS[obj["kind"]])
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", obj["metadata"]["name"])
    dep = _model(d.objects[-2], "V1Deployment")
    container = dep.spec.template.spec.containers[0]
    assert container.resources.limits == {"nvidia.com/gpu": "4"}
    assert [*container.command, *container.args][:2] == d.command.argv[:2]
    assert dep.spec.selector.match_labels.items() <= dep.spec.template.metadata.labels.items()
    assert (dep.spec.strategy.rolling_update.max_surge, dep.spec.strategy.rolling_update.max_unavailable) == (0, 1)
    hpa = _model(d.objects[-1], "V2HorizontalPodAutoscaler")
    assert hpa.spec.scale_target_ref.name == dep.metadata.name
    assert hpa.spec.min_replicas <= hpa.spec.max_replicas == 6


def test_trtllm_config_rides_in_a_configmap():
    d = deploy(_plan(), "trtllm", k8s=True)
    config = d.objects[0]
    assert config["kind"] == "ConfigMap"
    args = d.objects[1]["spec"]["template"]["spec"]["containers"][0]["args"]
    path = args[args.index("--extra_llm_api_options") + 1]
    assert path == "/etc/gpuplan/extra-llm-api-config.yml"
    yaml = pytest.importorskip("yaml")  # PyYAML comes with the kubernetes client (test extra)

    assert yaml.safe_load(config["data"]["extra-llm-api-config.yml"]) == d.command.config


def test_hpa_bounds_come_from_autoscaling_when_the_plan_has_it():
    plain = SimpleNamespace(serving=SimpleNamespace(replicas=6))
    assert replica_bounds(plain) == (6, 6)
    auto = SimpleNamespace(serving=SimpleNamespace(replicas=6, autoscaling=SimpleNamespace(min_replicas=2,
                                                                                           max_replicas=9)))
    assert replica_bounds(auto) == (2, 9)


def test_replica_across_servers_is_refused_for_k8s_and_noted_for_the_command():
    plan = _plan(gpus_per_replica=16, layout=ServingLayout(tp=8, pp=2, ep=1, concurrency=8, disaggregated=False))
    assert any("spans 16 GPUs" in n for n in deploy(plan, "vllm").notes)
    with pytest.raises(InputError, match="LeaderWorkerSet"):
        deploy(plan, "vllm", k8s=True)


# -- output formats -----------------------------------------------------------------------------------

def test_json_and_yaml_outputs_parse_back():
    yaml = pytest.importorskip("yaml")  # PyYAML comes with the kubernetes client (test extra)

    d = deploy(_plan(), "sglang", k8s=True)
    listed = json.loads(render_deploy(d, "json"))
    assert listed["kind"] == "List" and listed["items"] == d.objects
    assert list(yaml.safe_load_all(render_deploy(d, "yaml"))) == d.objects
    assert render_deploy(d, "text") == render_deploy(d, "yaml")
    c = deploy(_plan(), "trtllm")
    as_json = json.loads(render_deploy(c, "json"))
    assert yaml.safe_load(render_deploy(c, "yaml")) == as_json
    assert (as_json["gpus_per_replica"], as_json["min_replicas"], as_json["max_replicas"]) == (4, 6, 6)


def test_text_is_a_runnable_shell_script():
    text = render_deploy(deploy(_plan(), "trtllm"), "text")
    comment, text = text.split("\n", 1)
    assert comment == "# TensorRT-LLM 1.2.1: one replica on 4 x h100-sxm-80gb; run 6 replicas (gpuplan deploy, docs/deploy.md)"
    assert text.startswith("cat > extra-llm-api-config.yml <<'EOF'\n")
    launch = text.split("EOF\n", 2)[-1]
    assert launch.replace(" \\\n    ", " ").split() == deploy(_plan(), "trtllm").command.argv


@pytest.mark.parametrize("value", ["yes", "No", "on", "null", "~", "1.5", "0x1F", "-1", "a: b", "#x", "", "é", "0.0.0.0",
                                   "--flag", "nvidia.com/gpu", "a\nb", "'q'", '"', "true", "1e3", "12:30"])
def test_yaml_scalars_read_back_as_the_same_string(value):
    yaml = pytest.importorskip("yaml")  # PyYAML comes with the kubernetes client (test extra)

    assert yaml.safe_load(dump({"k": value, value: [value, {"x": value}]})) == {"k": value, value: [value, {"x": value}]}


def test_yaml_nested_and_empty_structures():
    yaml = pytest.importorskip("yaml")  # PyYAML comes with the kubernetes client (test extra)

    data = {"a": [], "b": {}, "c": [[1, 2], [{"d": None, "e": True, "f": 1.25}]], "g": [{"h": [{"i": "j"}]}]}
    assert yaml.safe_load(dump(data)) == data
    assert list(yaml.safe_load_all(dump_all([data, {"x": 1}]))) == [data, {"x": 1}]


def test_dns_names():
    assert dns_name("Chat 8B_serving!", "vllm") == "chat-8b-serving-vllm"
    assert len(dns_name("x" * 100, "sglang")) <= 63
    assert dns_name("!!!", "") == "gpuplan-serving"
