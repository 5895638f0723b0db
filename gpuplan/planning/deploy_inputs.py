"""What ``gpuplan deploy`` needs in a serving plan besides the layout, so that it renders the
engine command from the plan alone (docs/deploy.md): the memory terms and the model's repository."""

from __future__ import annotations

from gpuplan.core.contract import ServingDeploy, ServingPlan
from gpuplan.hardware.loader import Catalog
from gpuplan.model.profile import Workload


def with_deploy(plan: ServingPlan, workload: Workload, catalog: Catalog) -> ServingPlan:
    """Add what ``gpuplan deploy`` needs besides the layout, so that it renders from the plan alone."""
    from gpuplan.hardware.serving_calibration import serving_constants

    if not plan.feasible or plan.gpu is None or workload.serving is None:
        return plan
    gpu = catalog.gpus[plan.gpu]
    k = serving_constants(catalog)
    deploy = ServingDeploy(context_length=workload.serving.context_length, gpu_memory_usable_gib=gpu.memory_usable_gib,
                           runtime_overhead_gib=k.runtime_overhead_gib,
                           prefill_chunk_tokens=k.engine.prefill_tokens_per_step, gpu_vendor=gpu.vendor,
                           gpus_per_node=gpu.gpus_per_node)
    return plan.model_copy(update={"deploy": deploy})


def hf_repo(model_name: str, catalog: Catalog) -> str | None:
    """``owner/name`` of a catalog preset whose architecture source is a Hugging Face config."""
    preset = catalog.models.get(model_name)
    source = catalog.sources.get(preset.sources.get("architecture", "")) if preset is not None else None
    url = getattr(source, "url", None) or ""
    prefix = "https://huggingface.co/"
    if not url.startswith(prefix):
        return None
    parts = url[len(prefix):].split("/")
    return "/".join(parts[:2]) if len(parts) >= 2 and all(parts[:2]) else None
