"""Read a local Hugging Face ``config.json`` into an :class:`ArchitectureSpec`.

Standard keys of the Llama, Mistral/Mixtral, Qwen2/Qwen2-MoE, DeepSeek-V2/V3, Falcon, GPT-2/NeoX
and OPT families are understood; a config without the three core sizes is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuplan.model.arch import ArchitectureSpec
from gpuplan.core.errors import InputError
from gpuplan.core.io import pydantic_error, read_json

_GATED_TYPES = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v2",
                "deepseek_v3", "gemma", "gemma2", "phi3", "olmo", "olmo2", "granite", "cohere", "internlm2",
                "yi", "baichuan", "dbrx"}
_GATED_ACTS = {"silu", "swiglu", "geglu", "gelu_pytorch_tanh_gated"}


def _count(value: Any) -> int | None:
    """``value`` as a positive integer for arithmetic, or None (the schema then reports it)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _first(cfg: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return None


def read_hf_config(path: Path) -> ArchitectureSpec:
    name = str(path)
    cfg = read_json(path)
    if not isinstance(cfg, dict):
        raise InputError("expected a JSON object", file=name)
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrappers keep the LM here
        cfg = {**cfg, **cfg["text_config"]}
    model_type = str(cfg.get("model_type", "")).lower()
    layers = _first(cfg, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _first(cfg, "hidden_size", "n_embd", "d_model")
    heads = _first(cfg, "num_attention_heads", "n_head", "num_heads")
    missing = [k for k, v in (("num_hidden_layers", layers), ("hidden_size", hidden), ("num_attention_heads", heads)) if v is None]
    if missing:
        raise InputError(f"config has no {', '.join(missing)}; not a transformer LM config", file=name)
    kv = _first(cfg, "num_key_value_heads", "num_kv_heads", "n_head_kv")
    if kv is None and cfg.get("multi_query"):
        kv = 1
    ffn = _first(cfg, "intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size")
    act = str(_first(cfg, "hidden_act", "activation_function") or "").lower()
    gated = model_type in _GATED_TYPES or act in _GATED_ACTS
    if ffn is None and _count(hidden):
        ffn = 4 * hidden
    experts = _first(cfg, "num_local_experts", "n_routed_experts", "num_experts")
    fields: dict[str, Any] = {
        "layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv, "ffn": ffn, "gated_mlp": gated,
        "vocab": cfg.get("vocab_size"), "tied_embeddings": bool(cfg.get("tie_word_embeddings", False)),
        "head_dim": cfg.get("head_dim"), "sliding_window": cfg.get("sliding_window"),
    }
    if experts:
        fields.update(experts=experts, active_experts=_first(cfg, "num_experts_per_tok", "moe_topk"),
                      expert_ffn=_first(cfg, "moe_intermediate_size") or ffn,
                      shared_experts=_first(cfg, "n_shared_experts", "num_shared_experts") or 0,
                      dense_layers=_first(cfg, "first_k_dense_replace") or 0)
        shared_ffn, expert_ffn = _count(cfg.get("shared_expert_intermediate_size")), _count(fields["expert_ffn"])
        if shared_ffn and expert_ffn:
            fields["shared_experts"] = max(1, shared_ffn // expert_ffn)
    if _count(cfg.get("max_position_embeddings")):
        fields["max_context_tokens"] = cfg["max_position_embeddings"]
    if _count(cfg.get("num_nextn_predict_layers")):  # DeepSeek-V3's multi-token-prediction modules
        fields["mtp_layers"] = cfg["num_nextn_predict_layers"]
    if cfg.get("kv_lora_rank"):
        fields.update(kv_lora_rank=cfg["kv_lora_rank"], rope_head_dim=cfg.get("qk_rope_head_dim"),
                      q_lora_rank=cfg.get("q_lora_rank"), v_head_dim=cfg.get("v_head_dim"),
                      head_dim=cfg.get("qk_nope_head_dim"), kv_heads=None)
    fields = {k: v for k, v in fields.items() if v is not None}
    try:
        return ArchitectureSpec.model_validate(fields)
    except ValidationError as exc:
        raise pydantic_error(exc, file=name, prefix="config") from None
