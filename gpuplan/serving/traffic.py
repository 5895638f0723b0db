"""What a serving fleet asks of the network (:class:`~gpuplan.fabric.demand.TrafficDemand`).

Rates per second at the target QPS, per replica ``lam = QPS / active replicas``:

* front end: requests in and streamed tokens out, ``QPS * (prompt * b_in + output * b_out +
  b_req)`` spread over the servers (calibration/serving.toml, [frontend]), plus a new
  replica's weights loaded within ``[serving] replica_start_s`` (a new or replaced replica reads
  its weights from storage over the front end: its GPUs' share on one server);
* a pipeline stage boundary between servers: every token (prompt and output) crosses it once as
  ``hidden * 2`` bytes, each of the ``tp`` ranks sending its ``1/tp`` shard (rail-aligned);
* tensor parallelism past one server: the cross-server step of a hierarchical all-reduce moves
  ``2 (o-1)/o * S / i`` bytes per GPU per all-reduce (``i`` GPUs inside, ``o`` servers), two
  all-reduces per layer per token (rail-aligned);
* expert parallelism past one server: dispatch and combine all-to-all, ``2 * k * hidden * 2``
  bytes per token per MoE layer, the remote share ``1 - local/ep`` of it (not rail-aligned).

``required_gbit_per_gpu`` is the busiest GPU's scale-out bytes/s in Gb/s (window: one second).
"""

from __future__ import annotations

import math

from gpuplan.fabric.demand import TrafficDemand
from gpuplan.serving.model import Replica


def serving_demand(replica: Replica, active: int, replicas: int, nodes: int, qps: float, prompt: int,
                   output: int, replica_start_s: float | None = None) -> TrafficDemand:
    """Traffic of ``replicas`` replicas (``active`` of them carrying the load) on ``nodes`` servers."""
    k = replica.k
    a = replica.arch
    lay = replica.layout
    links = replica.links
    lam = qps / max(active, 1)
    tokens_per_s = lam * (prompt + output)
    act = k.activation_bytes
    local = links.local_domain if links.has_scaleout else max(links.local_domain, lay.gpus)
    groups: list[str] = []
    per_gpu = 0.0
    rail = True
    if lay.pp > 1 and lay.gpus > local:
        groups.append("pp")
        per_gpu = max(per_gpu, tokens_per_s * a.hidden * act / lay.tp)
    if lay.tp > local:
        groups.append("tp")
        outer = math.ceil(lay.tp / local)
        n_ar = a.layers + a.dense_layer_count + (a.moe_layers if lay.ep == 1 else 0)
        per_ar = 2 * (outer - 1) / outer * a.hidden * act / local
        per_gpu += tokens_per_s / lay.dp * n_ar * per_ar
    if lay.ep > 1 and lay.expert_shards > local and a.moe_layers:
        groups.append("ep")
        rail = False
        remote = 1 - local / lay.expert_shards
        per_gpu += tokens_per_s / lay.expert_shards * 2 * a.moe_layers * a.active_experts * a.hidden * act * remote
    front = qps * (prompt * k.frontend.bytes_per_prompt_token + output * k.frontend.bytes_per_output_token
                   + k.frontend.bytes_per_request)
    weights = weight_load_gbit_per_node(replica, replica_start_s)
    return TrafficDemand(
        phase="serving", gpu=replica.gpu.id, gpus=replicas * lay.gpus, gpus_per_node=replica.gpu.gpus_per_node,
        cross_node_groups=tuple(groups), scaleout_bytes_per_gpu=per_gpu, window_s=1.0,
        required_gbit_per_gpu=per_gpu * 8 / 1e9, rail_aligned=rail,
        frontend_gbit_per_node=front * 8 / 1e9 / max(nodes, 1) + weights, frontend_weight_gbit_per_node=weights,
        kv_transfer_gbit_per_gpu=0.0,
    )


def weight_load_gbit_per_node(replica: Replica, replica_start_s: float | None) -> float:
    """Gb/s into one server that loads a new replica's weights within ``replica_start_s`` (the
    replica's GPUs on that server: all of them when it fits one server). 0 without a start time."""
    if not replica_start_s:
        return 0.0
    gpus = min(replica.layout.gpus, replica.gpu.gpus_per_node)
    return replica.resident_weight_bytes * gpus * 8 / 1e9 / replica_start_s
