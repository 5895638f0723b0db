"""What a phase planner asks of the network: the traffic its chosen layout puts on the fabric."""

from __future__ import annotations

from gpuplan.core.records import dataclass
from typing import Literal


@dataclass(frozen=True)
class TrafficDemand:
    phase: Literal["training", "serving"]
    gpu: str
    gpus: int
    gpus_per_node: int
    #: Parallel groups whose members sit in different nodes ("dp", "pp", "ep", "cp", "tp").
    cross_node_groups: tuple[str, ...]
    #: Bytes each GPU sends over the scale-out fabric per step (training) or per second (serving).
    scaleout_bytes_per_gpu: float
    #: Time the traffic may take without slowing the job: the overlappable compute window of a
    #: training step, or one second for serving rates.
    window_s: float
    #: Scale-out Gb/s per GPU that keeps the exposed communication within budget.
    required_gbit_per_gpu: float
    #: All cross-node traffic goes between GPUs of the same local rank (suits rail optimization).
    rail_aligned: bool
    #: Training: the DP gradient sync's share of ``scaleout_bytes_per_gpu`` and the overlap window
    #: it must fit in (the rest, pipeline/CP/EP sends, spreads over ``window_s``).
    sync_bytes_per_gpu: float = 0.0
    sync_window_s: float = 0.0
    #: Achievable fraction of the line rate the need was sized with (the fabric's efficiency).
    link_efficiency: float = 1.0
    #: Serving: front-end traffic per node, Gb/s: requests and responses, plus a new replica's
    #: weights loaded within its start time (``frontend_weight_gbit_per_node`` of it).
    frontend_gbit_per_node: float = 0.0
    #: Serving: the weight-loading share of ``frontend_gbit_per_node``, Gb/s.
    frontend_weight_gbit_per_node: float = 0.0
    #: Serving with disaggregated prefill/decode: KV-cache transfer Gb/s per GPU.
    kv_transfer_gbit_per_gpu: float = 0.0


def data_gbit(nbytes: float, seconds: float) -> float:
    """Data rate in Gb/s of ``nbytes`` spread over ``seconds`` (0 without a window)."""
    return nbytes * 8 / seconds / 1e9 if seconds > 0 else 0.0


def gbit_text(value: float) -> str:
    """Gb/s for a sentence: 3 significant digits below 100, whole numbers with separators above."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def training_traffic_text(demand: TrafficDemand, groups: str, need: float) -> str:
    """The training traffic sentence after ``groups``, its subject and verb ("DP gradient sync
    moves"): the average over the pipeline, the gradient sync's burst in its overlap window on top
    of the other sends, and the line rate that hides both."""
    window = demand.window_s
    total, sync = demand.scaleout_bytes_per_gpu, demand.sync_bytes_per_gpu
    avg = data_gbit(total, window)
    text = (f"{groups} {total / 1e9:.3g} GB per GPU per step, over the pipeline's {window:.3g} s "
            f"({gbit_text(avg)} Gb/s on average)")
    if sync > 0 and demand.sync_window_s > 0:
        other, burst = data_gbit(total - sync, window), data_gbit(sync, demand.sync_window_s)
        text += (f"; the gradient sync's {sync / 1e9:.3g} GB must fit its {demand.sync_window_s:.3g} s overlap window "
                 f"({gbit_text(burst)} Gb/s)" + (f" while the other sends run ({gbit_text(other)} Gb/s)" if other > 0 else ""))
    return (text + f": needs {gbit_text(need)} Gb/s of line rate per GPU (at {demand.link_efficiency:.0%} link "
            f"efficiency) to stay hidden.")


def frontend_text(demand: TrafficDemand) -> str:
    """The front end's need per node and what makes it up: the requests and responses, and a new
    replica's weights loaded within its start time (most of it for a large model at a modest QPS)."""
    total = demand.frontend_gbit_per_node
    weights = demand.frontend_weight_gbit_per_node
    if weights <= 0:
        return f"{total:.3g} Gb/s of requests and responses per node"
    return (f"{total:.3g} Gb/s per node: requests and responses {total - weights:.3g}, loading a new replica's "
            f"weights {weights:.3g}")
