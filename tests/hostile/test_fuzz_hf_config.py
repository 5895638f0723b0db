"""Property: any Hugging Face ``config.json`` named by ``model.hf_config`` plans or fails in one line.

Configs start from plausible Llama / Mixtral / DeepSeek / GPT-2 shapes; then keys are dropped,
renamed, nested under ``text_config`` or given hostile values (strings, floats, booleans, lists,
huge and negative numbers, 1e400). Raw JSON text and arbitrary bytes are fuzzed as well.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.hostile.conftest import assert_outcome, hostile_values, plan_text, run_cli, twin

HF_KEYS = [
    "model_type", "num_hidden_layers", "n_layer", "num_layers", "hidden_size", "n_embd", "d_model",
    "num_attention_heads", "n_head", "num_heads", "num_key_value_heads", "num_kv_heads", "n_head_kv",
    "multi_query", "intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size", "hidden_act",
    "activation_function", "num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok",
    "moe_topk", "moe_intermediate_size", "n_shared_experts", "num_shared_experts", "first_k_dense_replace",
    "shared_expert_intermediate_size", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank", "v_head_dim",
    "qk_nope_head_dim", "vocab_size", "tie_word_embeddings", "head_dim", "sliding_window", "text_config",
]
MODEL_TYPES = ["llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "deepseek_v3", "gpt2", "falcon", "opt",
               "gemma2", "unknown", "", "LLAMA"]
#: Sizes near the edge of the limits (docs/profile.md) and past them.
EDGE_INTS = [1, 2, 3, 1 << 20, (1 << 20) + 1, 1 << 31, 1 << 63, 10**30, 10**300, -1, 0]


@st.composite
def base_configs(draw: Any) -> dict[str, Any]:
    heads = draw(st.sampled_from([1, 2, 4, 8, 16, 32, 64]))
    cfg: dict[str, Any] = {
        "model_type": draw(st.sampled_from(MODEL_TYPES)),
        "num_hidden_layers": draw(st.integers(1, 64)),
        "hidden_size": heads * draw(st.sampled_from([16, 32, 64, 128])),
        "num_attention_heads": heads,
        "vocab_size": draw(st.integers(256, 200_000)),
    }
    if draw(st.booleans()):
        cfg["num_key_value_heads"] = draw(st.sampled_from([1, heads, max(1, heads // 4)]))
    if draw(st.booleans()):
        cfg["intermediate_size"] = draw(st.integers(64, 30_000))
    if draw(st.booleans()):
        cfg["hidden_act"] = draw(st.sampled_from(["silu", "gelu", "gelu_new", "relu", "swiglu"]))
    shape = draw(st.sampled_from(["dense", "dense", "mixtral", "deepseek", "qwen-moe", "gpt2"]))
    if shape == "mixtral":
        cfg.update(num_local_experts=draw(st.integers(1, 16)), num_experts_per_tok=draw(st.integers(1, 2)))
    elif shape == "deepseek":
        cfg.update(n_routed_experts=draw(st.integers(2, 64)), num_experts_per_tok=draw(st.integers(1, 2)),
                   moe_intermediate_size=draw(st.integers(64, 4096)), n_shared_experts=draw(st.integers(0, 2)),
                   first_k_dense_replace=draw(st.integers(0, 1)))
        if draw(st.booleans()):
            cfg.update(kv_lora_rank=draw(st.sampled_from([64, 512])), qk_rope_head_dim=64,
                       q_lora_rank=draw(st.sampled_from([None, 1536])), v_head_dim=128, qk_nope_head_dim=128)
    elif shape == "qwen-moe":
        cfg.update(num_experts=draw(st.integers(2, 64)), num_experts_per_tok=2, moe_intermediate_size=512,
                   shared_expert_intermediate_size=draw(st.sampled_from([512, 2048, 0, 7, "x", 1e400])))
    elif shape == "gpt2":
        cfg = {"model_type": "gpt2", "n_layer": cfg["num_hidden_layers"], "n_embd": cfg["hidden_size"],
               "n_head": heads, "vocab_size": cfg["vocab_size"], "activation_function": "gelu_new"}
    return cfg


@st.composite
def hf_configs(draw: Any) -> Any:
    cfg = draw(base_configs())
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["hostile", "hostile", "edge", "drop", "nest", "float"]))
        key = draw(st.sampled_from(HF_KEYS))
        if op == "hostile":
            cfg[key] = draw(hostile_values())
        elif op == "edge":
            cfg[key] = draw(st.sampled_from(EDGE_INTS))
        elif op == "float" and isinstance(cfg.get(key), int):
            cfg[key] = float(cfg[key])
        elif op == "drop":
            cfg.pop(key, None)
        elif op == "nest":
            cfg = {"model_type": "llava", "text_config": cfg, "vision_config": {"hidden_size": 1024}}
    if draw(st.integers(0, 19)) == 0:  # not an object at all
        return draw(st.one_of(st.lists(st.integers(), max_size=3), st.integers(), st.text(max_size=5), st.none()))
    return cfg


PROFILE = '[model]\nhf_config = "config.json"\n[serving]\nqps = 1\ncontext_length = 4096\n'


def _plan_with_config(raw: str | bytes) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.json"
        config.write_bytes(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
        return plan_text(PROFILE, str(Path(tmp) / "profile.toml"), phases=("serving",))


def _hf_config(cfg: Any) -> None:
    """A plausible config with keys dropped, nested or given hostile values."""
    _plan_with_config(json.dumps(cfg, allow_nan=True, default=str))


test_hf_config, test_hf_config_slow = twin(_hf_config, hf_configs(), fast=200)


@st.composite
def raw_json(draw: Any) -> str:
    text = json.dumps(draw(base_configs()))
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from(["1e400", "-1e400", "NaN", "Infinity", "9" * 5000, "[" * 50, "{", "}", ",",
                                      '"num_hidden_layers": 2,', '"a": 1, "a": 2,', "\\ud800", "\x00", "\ufeff", "//"]))
        text = text[:k] + piece + text[k:]
    return text


def _raw_json(text: str) -> None:
    """JSON text with syntax damage, duplicate keys, NaN, 1e400, 5000-digit numbers, deep nesting."""
    _plan_with_config(text)


test_raw_json, test_raw_json_slow = twin(_raw_json, raw_json(), fast=300)


def _config_bytes(data: bytes) -> None:
    """Arbitrary bytes as config.json."""
    _plan_with_config(data)


test_config_bytes, test_config_bytes_slow = twin(
    _config_bytes, st.one_of(st.binary(max_size=80), st.binary(max_size=20).map(lambda b: b'{"a": ' + b + b"}")),
    fast=300)


def _cli_hf_config(cfg: Any) -> None:
    """End to end through ``gpuplan recommend``."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "config.json").write_text(json.dumps(cfg, allow_nan=True, default=str), encoding="utf-8")
        (Path(tmp) / "p.toml").write_text(PROFILE + '[constraints]\nallow_gpus = ["h100", "mi300x"]\n',
                                          encoding="utf-8")
        assert_outcome(run_cli("recommend", str(Path(tmp) / "p.toml"), "--format", "json", cwd=tmp), json_out=True)


test_cli_hf_config, test_cli_hf_config_slow = twin(_cli_hf_config, hf_configs(), fast=40)


def test_hf_config_symlink_to_a_device_is_refused(tmp_path):
    """A committed symlink config.json -> /dev/zero must not read forever."""
    link = tmp_path / "config.json"
    link.symlink_to("/dev/zero")
    (tmp_path / "p.toml").write_text(PROFILE)
    r = run_cli("recommend", str(tmp_path / "p.toml"))
    assert_outcome(r, allowed=(2,))
    assert "is outside the directory" in r.err  # the link leaves the profile's tree: not even opened
    r = run_cli("recommend", str(tmp_path / "p.toml"), "--allow-outside-paths")
    assert_outcome(r, allowed=(2,))
    assert "not a regular file (a device)" in r.err


def test_shared_expert_size_that_is_not_a_number(tmp_path):
    cfg = {"model_type": "qwen2_moe", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
           "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
           "shared_expert_intermediate_size": "lots"}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert plan_text(PROFILE, str(tmp_path / "p.toml")) == "plan"
