"""Collectives over placed parallel groups at the NCCL bandwidth ramp (training timing).

A group (layout.Group) sits inside one scale-up domain, across domains with several members
per domain (hierarchical: scale-up part, then scale-out part), or one member per domain (a
ring on the scale-out tier); see ``group_collective`` and ``group_all_to_all``.
"""

from __future__ import annotations

import math

from gpuplan.core.memo import memo
from gpuplan.physics.collectives import (
    Network,
    Tier,
    new_tier,
    all_gather_s,
    all_reduce_s,
    hierarchical_all_reduce_s,
    reduce_scatter_s,
)
from gpuplan.hardware.training_calibration import TrainingCalibration
from gpuplan.training.layout import Group


# -- collectives over placed groups ------------------------------------------------------------
def ramp(tier: Tier, size_bytes: float, cal: TrainingCalibration) -> Tier:
    """``tier`` with its bandwidth at the NCCL ramp for a buffer of ``size_bytes``."""
    frac = cal.collective_fraction(size_bytes)
    return new_tier(tier.bandwidth_bytes_per_s * frac, tier.latency_s, tier.in_network_reduction)


#: Ramped networks by (network identity, buffer size, calibration identity): a layout search asks
#: for the same few buffer sizes thousands of times. The network and calibration are held in the
#: entry so their ids stay their own. Bounded: cleared when full.
_RAMPED: dict[tuple[int, float, int], tuple[Network, Network, TrainingCalibration]] = memo()


def _ramped(net: Network, size_bytes: float, cal: TrainingCalibration) -> Network:
    key = (id(net), size_bytes, id(cal))
    hit = _RAMPED.get(key)
    if hit is None:
        if len(_RAMPED) >= 4096:
            _RAMPED.clear()
        hit = _RAMPED[key] = (_ramp_network(net, size_bytes, cal), net, cal)
    return hit[0]


def _ramp_network(net: Network, size_bytes: float, cal: TrainingCalibration) -> Network:
    up = ramp(net.scaleup, size_bytes, cal)
    out = ramp(net.scaleout, size_bytes, cal) if net.scaleout is not None else None
    p2p = net.scaleup_p2p_bytes_per_s * cal.collective_fraction(size_bytes) if net.scaleup_p2p_bytes_per_s else None
    return Network(scaleup=up, scaleout=out, scaleup_domain=net.scaleup_domain, scaleup_p2p_bytes_per_s=p2p)


#: Collectives and send tiers by (kind, buffer size, group placement, network and calibration
#: identity): a layout search asks for the same few thousand (the TP collectives of every
#: recompute setting, the DP sync of every ZeRO stage, the sends of every micro-batch count). The
#: network and calibration are held in the entry so their ids stay their own. Bounded: cleared
#: when full.
_COLLECTIVES: dict[tuple[object, ...], tuple[object, Network, TrainingCalibration]] = memo()


def group_collective(kind: str, size_bytes: float, group: Group, net: Network,
                     cal: TrainingCalibration) -> tuple[float, float, float]:
    """:func:`_group_collective`, memoised (``_COLLECTIVES``)."""
    key = (kind, size_bytes, group.size, group.stride, id(net), id(cal))
    hit = _COLLECTIVES.get(key)
    if hit is None:
        if len(_COLLECTIVES) >= 16384:
            _COLLECTIVES.clear()
        hit = _COLLECTIVES[key] = (_group_collective(kind, size_bytes, group, net, cal), net, cal)
    return hit[0]  # type: ignore[return-value]


def _group_collective(kind: str, size_bytes: float, group: Group, net: Network,
                      cal: TrainingCalibration) -> tuple[float, float, float]:
    """(seconds, bytes per GPU over the scale-out tier, seconds on the scale-up tier) of an
    all-reduce ("ar"), reduce-scatter ("rs") or all-gather ("ag") of an array of
    ``size_bytes`` over a placed group, at the NCCL bandwidth ramp for that size.

    Inside one domain: one ring (or NVLS) on the scale-up tier. Across domains with several
    members per domain: reduce-scatter inside, the 1/local shard across, all-gather inside
    (``collectives.hierarchical_all_reduce_s``). One member per domain: a ring on scale-out.
    """
    n = group.size
    if n <= 1 or size_bytes <= 0:
        return 0.0, 0.0, 0.0
    net = _ramped(net, size_bytes, cal)
    local = group.local(net.scaleup_domain)
    if local >= n:
        tier = net.scaleup_for(n)
        fn = {"ar": all_reduce_s, "rs": reduce_scatter_s, "ag": all_gather_s}[kind]
        t = fn(size_bytes, n, tier)
        return t, 0.0, t
    if net.scaleout is None:
        return math.inf, math.inf, 0.0
    outer = -(-n // local)  # a group of n spans ceil(n / local) domains, the last one partly filled
    shard = size_bytes / local
    up = net.scaleup_for(local)
    inside = reduce_scatter_s(size_bytes, local, up) if local > 1 else 0.0
    if kind == "ar":
        cross = 2 * (outer - 1) / outer * shard
        if local == 1:
            return all_reduce_s(size_bytes, n, net.scaleout), cross, 0.0
        total = hierarchical_all_reduce_s(size_bytes, local, outer, net)
        return total, cross, 2.0 * inside
    cross = (outer - 1) / outer * shard
    return inside + reduce_scatter_s(shard, outer, net.scaleout), cross, inside


def group_all_to_all(size_bytes: float, group: Group, net: Network,
                     cal: TrainingCalibration, copies: int = 1) -> tuple[float, float]:
    """(seconds, scale-out bytes) of an all-to-all where each GPU holds ``size_bytes`` and keeps
    1/n: the share for peers in the domain goes over scale-up, the rest over scale-out, in
    parallel (the slower wins), one latency per peer (scaling book, "How to think about GPUs").

    ``copies`` > 1: the buffer is ``copies`` routed copies of each token (MoE top-k) and the
    dispatch is hierarchical (DeepEP / HybridEP; DeepSeek-V3 section 3.2.2): a token crosses
    the scale-out tier once per destination domain, then is forwarded over scale-up to each
    expert there. With uniform routing a token reaches ``(D-1)(1 - (1 - 1/D)^k)`` remote domains
    out of ``D``, instead of sending ``k (D-1)/D`` copies across."""
    n = group.size
    if n <= 1 or size_bytes <= 0:
        return 0.0, 0.0
    net = _ramped(net, size_bytes, cal)
    local = group.local(net.scaleup_domain)
    up = net.scaleup_for(local) if local > 1 else net.scaleup
    inside = size_bytes * (local - 1) / n / up.bandwidth_bytes_per_s
    if local >= n:
        return inside + (n - 1) * up.latency_s, 0.0
    if net.scaleout is None:
        return math.inf, math.inf
    cross = size_bytes * (n - local) / n
    if copies > 1 and local > 1:
        domains = -(-n // local)
        reached = (domains - 1) * (1.0 - (1.0 - 1.0 / domains) ** copies)
        cross = min(cross, size_bytes / copies * reached)
        inside += size_bytes * (n - local) / n / up.bandwidth_bytes_per_s   # forwarding at the far end
    outside = cross / net.scaleout.bandwidth_bytes_per_s
    return max(inside, outside) + (n - 1) * net.scaleout.latency_s, cross


def group_tier(group: Group, net: Network, size_bytes: float, cal: TrainingCalibration) -> Tier:
    """The tier a point-to-point send of ``size_bytes`` between neighbours of ``group`` uses
    (the slowest hop), at the NCCL ramp for that size; memoised (``_COLLECTIVES``)."""
    key = ("tier", size_bytes, group.size, group.stride, id(net), id(cal))
    hit = _COLLECTIVES.get(key)
    if hit is None:
        if len(_COLLECTIVES) >= 16384:
            _COLLECTIVES.clear()
        hit = _COLLECTIVES[key] = (_group_tier(group, net, size_bytes, cal), net, cal)
    return hit[0]  # type: ignore[return-value]


def _group_tier(group: Group, net: Network, size_bytes: float, cal: TrainingCalibration) -> Tier:
    if group.crosses(net.scaleup_domain) and net.scaleout is not None:
        return ramp(net.scaleout, size_bytes, cal)
    return ramp(net.scaleup_for(max(2, group.local(net.scaleup_domain))), size_bytes, cal)
