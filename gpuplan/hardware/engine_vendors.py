"""Which GPU vendors each serving engine runs on: the one rule the serving planner (which sizes only
GPUs the profile's engine runs on) and ``gpuplan deploy`` (which refuses a plan's GPU its engine
does not run on) share.

* TensorRT-LLM builds CUDA engines: NVIDIA GPUs only (TensorRT-LLM 1.x docs, "Support Matrix").
* vLLM and SGLang: NVIDIA (CUDA) and AMD (ROCm) builds (vLLM "GPU installation" and SGLang
  "Install" docs, 2025), the vendors whose launch ``gpuplan deploy`` writes.
"""

from __future__ import annotations

#: Engine id -> the GPU vendors (catalog ``vendor``) it runs on.
ENGINE_VENDORS: dict[str, tuple[str, ...]] = {"vllm": ("nvidia", "amd"), "sglang": ("nvidia", "amd"),
                                              "trtllm": ("nvidia",)}
#: Engine id -> the name its project uses.
ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
VENDOR_LABELS = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel"}


def runs_on(engine: str, vendor: str) -> bool:
    """Whether ``engine`` runs on GPUs of ``vendor`` (an engine without a rule runs anywhere)."""
    return vendor in ENGINE_VENDORS.get(engine, (vendor,))


def vendor_refusal(engine: str, vendor: str) -> str | None:
    """``"TensorRT-LLM does not run on AMD GPUs"``, or None where ``engine`` runs on ``vendor``."""
    if runs_on(engine, vendor):
        return None
    return f"{ENGINE_LABELS.get(engine, engine)} does not run on {VENDOR_LABELS.get(vendor, vendor)} GPUs"
