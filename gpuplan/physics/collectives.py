"""Collective communication time: latency + bandwidth terms per tier (alpha-beta model).

Ring formulas follow NCCL's bus-bandwidth conventions (nccl-tests ``doc/PERFORMANCE.md``):
an all-reduce of S bytes over n ranks moves 2(n-1)/n * S per rank, reduce-scatter and all-gather
(n-1)/n * S (S = the full array). In-network reduction (NVLS, SHARP) sends each byte up once and
receives the result once, so an all-reduce costs about S / busbw (Jeaugey, NCCL; scaling book
"How to think about GPUs"). Where a group spans several tiers (GPUs inside a node and across
nodes), the collective is hierarchical: reduce-scatter inside the scale-up domain, the reduced
shard across nodes, all-gather inside again.

Bandwidths are bytes/s per GPU, one direction; latencies are seconds per algorithm step.
"""

from __future__ import annotations

from gpuplan.core.records import constructor, dataclass, hash_once
from typing import Literal


@dataclass(frozen=True)
class Tier:
    """One level of the network as seen by one GPU."""

    #: Achievable bytes/s per GPU per direction (line rate x efficiency / oversubscription).
    bandwidth_bytes_per_s: float
    #: Seconds per algorithm step (one hop of a ring, one send).
    latency_s: float
    #: In-network reduction (NVLS on NVSwitch, SHARP on InfiniBand).
    in_network_reduction: bool = False


#: ``Tier(bandwidth, latency, in_network_reduction)``, all three given, set at once (a plan ramps
#: about a thousand tiers: half the time of ``__init__``).
new_tier = constructor(Tier)


@hash_once
@dataclass(frozen=True)
class Network:
    """The two tiers a parallel group can sit on, and how big the fast one is."""

    scaleup: Tier
    scaleout: Tier | None
    scaleup_domain: int
    #: When the scale-up domain is a point-to-point mesh (AMD XGMI), the bandwidth of one peer link.
    scaleup_p2p_bytes_per_s: float | None = None

    def scaleup_for(self, group: int) -> Tier:
        """A mesh gives a group of g GPUs only g-1 of its peer links (XGMI: 64 GB/s each)."""
        if self.scaleup_p2p_bytes_per_s is None or group >= self.scaleup_domain:
            return self.scaleup
        bw = min(self.scaleup.bandwidth_bytes_per_s, self.scaleup_p2p_bytes_per_s * max(1, group - 1))
        return new_tier(bw, self.scaleup.latency_s, self.scaleup.in_network_reduction)


def ring_all_reduce_s(size_bytes: float, n: int, tier: Tier) -> float:
    """Ring all-reduce: 2(n-1)/n * S / B + 2(n-1) * alpha."""
    if n <= 1 or size_bytes <= 0:
        return 0.0
    return 2 * (n - 1) / n * size_bytes / tier.bandwidth_bytes_per_s + 2 * (n - 1) * tier.latency_s


def in_network_all_reduce_s(size_bytes: float, n: int, tier: Tier) -> float:
    """Switch-reduced all-reduce (NVLS/SHARP): each byte leaves and returns once, S / B + 2 * alpha."""
    if n <= 1 or size_bytes <= 0:
        return 0.0
    return size_bytes / tier.bandwidth_bytes_per_s + 2 * tier.latency_s


def all_reduce_s(size_bytes: float, n: int, tier: Tier) -> float:
    """The faster of ring and (where the tier has it) in-network all-reduce."""
    ring = ring_all_reduce_s(size_bytes, n, tier)
    if tier.in_network_reduction and n > 2:
        return min(ring, in_network_all_reduce_s(size_bytes, n, tier))
    return ring


#: How an all-reduce algorithm's latency steps and bytes per GPU grow with the group size n:
#: ring (NCCL LL/LL128/Simple protocols): 2(n-1) steps, 2(n-1)/n x S; in-network (NVLS): 2 steps,
#: S (each byte leaves and returns once); one-shot (each GPU reads its n-1 peers' whole buffers
#: and reduces them itself): n-1 steps, (n-1) x S; two-shot (peer-to-peer reduce-scatter, then
#: all-gather): 2(n-1) steps, 2(n-1)/n x S (TensorRT-LLM customAllReduceKernels.cu, vLLM
#: custom_all_reduce.cuh).
AlgorithmKind = Literal["ring", "in_network", "one_shot", "two_shot"]


@dataclass(frozen=True)
class AllReduceAlgorithm:
    """One all-reduce implementation: ``base + steps(n) x step + bytes(n) x S / bandwidth``."""

    kind: AlgorithmKind
    base_s: float
    step_s: float
    #: Bytes/s per GPU per direction the algorithm's data term reaches.
    bandwidth_bytes_per_s: float


def algorithm_steps_and_bytes(kind: AlgorithmKind, n: int) -> tuple[float, float]:
    """(latency steps, bytes moved per GPU as a multiple of S) of ``kind`` over ``n`` ranks."""
    if kind == "in_network":
        return 2.0, 1.0
    if kind == "one_shot":
        return n - 1, n - 1
    return 2 * (n - 1), 2 * (n - 1) / n  # ring and two-shot


def algorithm_all_reduce_s(size_bytes: float, n: int, alg: AllReduceAlgorithm) -> float:
    """All-reduce of ``size_bytes`` over ``n`` ranks with one algorithm (alpha-beta per kind)."""
    if n <= 1 or size_bytes <= 0:
        return 0.0
    steps, moved = algorithm_steps_and_bytes(alg.kind, n)
    return alg.base_s + steps * alg.step_s + moved * size_bytes / alg.bandwidth_bytes_per_s


def fastest_all_reduce_s(size_bytes: float, n: int, algorithms: tuple[AllReduceAlgorithm, ...]) -> float:
    """The fastest of ``algorithms`` at this size: what NCCL's tuner (algorithm x protocol by its
    latency/bandwidth model) and TensorRT-LLM's AllReduceStrategy AUTO (a table of the fastest
    measured strategy per TP, hidden size and token count) both pick."""
    if n <= 1 or size_bytes <= 0:
        return 0.0
    return min(algorithm_all_reduce_s(size_bytes, n, a) for a in algorithms)


def reduce_scatter_s(size_bytes: float, n: int, tier: Tier) -> float:
    """Ring reduce-scatter of an S-byte array: (n-1)/n * S / B + (n-1) * alpha."""
    if n <= 1 or size_bytes <= 0:
        return 0.0
    return (n - 1) / n * size_bytes / tier.bandwidth_bytes_per_s + (n - 1) * tier.latency_s


all_gather_s = reduce_scatter_s


def all_to_all_s(size_bytes: float, n: int, tier: Tier) -> float:
    """All-to-all where each rank holds S bytes and keeps 1/n: (n-1)/n * S / B + (n-1) * alpha."""
    return reduce_scatter_s(size_bytes, n, tier)


def p2p_s(size_bytes: float, tier: Tier) -> float:
    """One point-to-point send: S / B + alpha."""
    if size_bytes <= 0:
        return 0.0
    return size_bytes / tier.bandwidth_bytes_per_s + tier.latency_s


def hierarchical_all_reduce_s(size_bytes: float, inner: int, outer: int, net: Network) -> float:
    """All-reduce over ``inner`` ranks on the scale-up tier times ``outer`` ranks across nodes.

    Reduce-scatter inside the domain, all-reduce of each 1/inner shard across nodes (all inner
    ranks in parallel, each on its own NIC), all-gather inside again.
    """
    if outer <= 1 or net.scaleout is None:
        return all_reduce_s(size_bytes, inner * outer, net.scaleup_for(inner * outer))
    up = net.scaleup_for(inner)
    inside = reduce_scatter_s(size_bytes, inner, up) + all_gather_s(size_bytes, inner, up)
    across = all_reduce_s(size_bytes / max(inner, 1), outer, net.scaleout)
    return inside + across
