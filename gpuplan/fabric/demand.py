"""What a phase planner asks of the network: the traffic its chosen layout puts on the fabric."""

from __future__ import annotations

from dataclasses import dataclass
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
    #: Serving: request/response traffic per node to the front-end network, Gb/s.
    frontend_gbit_per_node: float = 0.0
    #: Serving with disaggregated prefill/decode: KV-cache transfer Gb/s per GPU.
    kv_transfer_gbit_per_gpu: float = 0.0
