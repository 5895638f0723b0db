"""The fabric's view of a training layout: scale-out bytes per GPU per step and the bandwidth that
keeps them hidden (the :class:`~gpuplan.fabric.demand.TrafficDemand` the interconnect is chosen for)."""

from __future__ import annotations

from gpuplan.fabric.demand import TrafficDemand
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.physics.network import default_fabric
from gpuplan.training.layout import Group, groups
from gpuplan.training.search import Evaluation


def traffic_demand(gpu: Gpu, e: Evaluation, catalog: Catalog) -> TrafficDemand:
    """Scale-out traffic of the chosen layout (bytes per GPU per step over the fabric)."""
    lay = e.layout
    grp = groups(lay)
    domain = gpu.scaleup_domain
    crossing = tuple(k for k in ("tp", "cp", "ep", "dp", "pp") if grp[k].crosses(domain))
    total = sum(e.step.scaleout_bytes.values())
    window = e.step.pipeline or e.step_time
    dp_bytes = e.step.scaleout_bytes.get("dp", 0.0)
    other = total - dp_bytes
    rate = max(dp_bytes / e.step.dp_window if e.step.dp_window > 0 else 0.0, other / window if window > 0 else 0.0)
    fab = default_fabric(gpu, catalog, gpu.reference_scaleout_gbit_per_gpu) if gpu.reference_scaleout_gbit_per_gpu else None
    eff = fab.efficiency if fab is not None else 1.0
    required = rate * 8 / 1e9 / eff
    rail = "ep" not in crossing and all(_rail_aligned(k, grp[k], domain) for k in crossing)
    return TrafficDemand(phase="training", gpu=gpu.id, gpus=e.gpus, gpus_per_node=gpu.gpus_per_node,
                         cross_node_groups=crossing, scaleout_bytes_per_gpu=total, window_s=window,
                         required_gbit_per_gpu=required, rail_aligned=rail)


def _rail_aligned(kind: str, group: Group, domain: int) -> bool:
    """Whether a group's cross-domain traffic stays between GPUs of the same local rank.

    Members one domain apart (stride a multiple of the domain) always are; collectives over a
    group with several members per domain are too (NCCL reduces inside first, then each local
    rank talks to its peers); point-to-point neighbours (PP, CP rings) are not unless aligned.
    """
    if group.stride % domain == 0:
        return True
    return kind == "dp" and domain % group.stride == 0
