"""The fabric's view of a training layout: scale-out bytes per GPU per step and the bandwidth that
keeps them hidden (the :class:`~gpuplan.fabric.demand.TrafficDemand` the interconnect is chosen for)."""

from __future__ import annotations

from gpuplan.core.records import dataclass

from gpuplan.fabric.demand import TrafficDemand, data_gbit
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.physics.network import default_fabric
from gpuplan.training.layout import Group, groups
from gpuplan.training.search import Evaluation


@dataclass(frozen=True)
class ScaleoutNeed:
    """What a training layout asks of the scale-out network, per GPU and step."""

    sync_bytes: float      # DP gradient sync (and weight gather) bytes over scale-out
    sync_window_s: float   # the compute window that sync overlaps (within the pipeline)
    other_bytes: float     # pipeline / CP / EP sends over scale-out
    pipeline_s: float      # the time those spread over
    efficiency: float      # achievable fraction of the line rate (the reference fabric's)
    other_groups: tuple[str, ...] = ()  # which groups send ``other_bytes`` ("pp", "cp", "ep")

    @property
    def sync_gbit(self) -> float:
        return data_gbit(self.sync_bytes, self.sync_window_s)

    @property
    def other_gbit(self) -> float:
        return data_gbit(self.other_bytes, self.pipeline_s)

    @property
    def line_gbit(self) -> float:
        """Line rate that keeps both hidden: during the sync's window the pipeline sends go on
        (the backward sends activation gradients while the gradients are reduced), so the two
        data rates add; the link delivers ``efficiency`` of its line rate."""
        return (self.sync_gbit + self.other_gbit) / self.efficiency


def scaleout_need(gpu: Gpu, e: Evaluation, catalog: Catalog) -> ScaleoutNeed:
    """The chosen layout's scale-out data rates and the line rate that hides them."""
    window = e.step.pipeline or e.step_time
    dp_bytes = e.step.scaleout_bytes.get("dp", 0.0)
    other = sum(e.step.scaleout_bytes.values()) - dp_bytes
    # The DP window lies inside the pipeline (the last backward, the first forward); ZeRO-2/3's
    # per-micro-batch windows add up to at most the pipeline too.
    sync_window = min(e.step.dp_window, window) if e.step.dp_window > 0 else 0.0
    fab = default_fabric(gpu, catalog, gpu.reference_scaleout_gbit_per_gpu) if gpu.reference_scaleout_gbit_per_gpu else None
    eff = fab.efficiency if fab is not None else 1.0
    return ScaleoutNeed(sync_bytes=dp_bytes, sync_window_s=sync_window, other_bytes=other, pipeline_s=window,
                        efficiency=eff, other_groups=tuple(k for k, v in sorted(e.step.scaleout_bytes.items())
                                                           if k != "dp" and v > 0))


def traffic_demand(gpu: Gpu, e: Evaluation, catalog: Catalog) -> TrafficDemand:
    """Scale-out traffic of the chosen layout (bytes per GPU per step over the fabric)."""
    lay = e.layout
    grp = groups(lay)
    domain = gpu.scaleup_domain
    crossing = tuple(k for k in ("tp", "cp", "ep", "dp", "pp") if grp[k].crosses(domain))
    need = scaleout_need(gpu, e, catalog)
    rail = "ep" not in crossing and all(_rail_aligned(k, grp[k], domain) for k in crossing)
    return TrafficDemand(phase="training", gpu=gpu.id, gpus=e.gpus, gpus_per_node=gpu.gpus_per_node,
                         cross_node_groups=crossing, scaleout_bytes_per_gpu=need.sync_bytes + need.other_bytes,
                         window_s=need.pipeline_s, required_gbit_per_gpu=need.line_gbit, rail_aligned=rail,
                         sync_bytes_per_gpu=need.sync_bytes, sync_window_s=need.sync_window_s,
                         link_efficiency=need.efficiency)


def _rail_aligned(kind: str, group: Group, domain: int) -> bool:
    """Whether a group's cross-domain traffic stays between GPUs of the same local rank.

    Members one domain apart (stride a multiple of the domain) always are; collectives over a
    group with several members per domain are too (NCCL reduces inside first, then each local
    rank talks to its peers); point-to-point neighbours (PP, CP rings) are not unless aligned.
    """
    if group.stride % domain == 0:
        return True
    return kind == "dp" and domain % group.stride == 0
