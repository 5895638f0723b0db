"""The links a serving replica's collectives run over, and their times.

A replica is ``tp x dp x pp`` GPUs. Its groups use, from fastest to slowest: the scale-up domain
(NVLink/XGMI; a PCIe card's domain is 1), the PCIe switches of one server (for groups larger
than an NVLink bridge pair but inside a server), and the scale-out fabric between servers.
Times are the alpha-beta formulas of :mod:`gpuplan.physics.collectives` plus a per-call launch cost
(``collective_launch_us`` in calibration/serving.toml).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.physics.collectives import (
    Network,
    Tier,
    all_reduce_s,
    all_to_all_s,
    hierarchical_all_reduce_s,
    p2p_s,
)
from gpuplan.physics.network import GB, network_for


@dataclass(frozen=True)
class Links:
    """The tiers one GPU of a serving replica sees."""

    network: Network
    #: PCIe inside a server (between NVLink-bridged pairs, or between PCIe cards).
    pcie: Tier
    #: GPUs one scale-up domain holds (NVLink/XGMI); 1 for PCIe cards.
    scaleup_domain: int
    gpus_per_node: int
    launch_s: float

    @property
    def local_domain(self) -> int:
        """GPUs reachable without the scale-out fabric: the larger of the NVLink domain and a server."""
        return max(self.scaleup_domain, self.gpus_per_node)

    @property
    def has_scaleout(self) -> bool:
        return self.network.scaleout is not None

    def tier(self, group: int) -> Tier | None:
        """The slowest tier a group of ``group`` consecutive GPUs crosses (None: no fabric)."""
        if group <= self.scaleup_domain:
            return self.network.scaleup_for(group)
        if group <= self.gpus_per_node:
            return self.pcie
        return self.network.scaleout

    def all_reduce_s(self, size_bytes: float, group: int, in_network: bool = True) -> float:
        """All-reduce of ``size_bytes`` over ``group`` GPUs, hierarchical across servers.

        ``in_network`` False: peer-to-peer kernels (an engine's custom all-reduce) that move the
        ring's ``2(n-1)/n`` bytes even where the switch could reduce (NVLS)."""
        if group <= 1 or size_bytes <= 0:
            return 0.0
        if group <= self.local_domain:
            tier = self.tier(group)
            assert tier is not None
            if not in_network:
                tier = Tier(tier.bandwidth_bytes_per_s, tier.latency_s, False)
            return all_reduce_s(size_bytes, group, tier) + self.launch_s
        if self.network.scaleout is None:
            return math.inf
        inner = self.local_domain
        inner_tier = self.tier(inner)
        assert inner_tier is not None
        net = Network(scaleup=inner_tier, scaleout=self.network.scaleout, scaleup_domain=inner)
        return hierarchical_all_reduce_s(size_bytes, inner, math.ceil(group / inner), net) + self.launch_s

    def all_to_all_s(self, size_bytes: float, group: int) -> float:
        """All-to-all where each of ``group`` GPUs holds ``size_bytes`` (over the slowest tier)."""
        if group <= 1 or size_bytes <= 0:
            return 0.0
        tier = self.tier(group)
        if tier is None:
            return math.inf
        return all_to_all_s(size_bytes, group, tier) + self.launch_s

    def handoff_s(self, size_bytes: float, span: int | None) -> float:
        """Pipeline hand-off of ``size_bytes`` between two stages occupying ``span`` consecutive GPUs
        (``None``: the stages sit in different servers, the hand-off crosses the scale-out fabric)."""
        if size_bytes <= 0:
            return 0.0
        tier = self.network.scaleout if span is None else self.tier(min(span, self.local_domain))
        if tier is None:
            return math.inf
        return p2p_s(size_bytes, tier) + self.launch_s


def links_for(gpu: Gpu, catalog: Catalog, launch_us: float) -> Links:
    """The links of ``gpu``'s reference server (scale-out at its reference NIC speed)."""
    cal = catalog.table("collectives")
    net = network_for(gpu, catalog)
    pcie_lat = cal.pcie_step_latency_us * 1e-6
    if gpu.scaleup_tech == "pcie":
        pcie = net.scaleup
    else:
        pcie = Tier(gpu.host_link_uni_gb_per_s * GB * gpu.efficiency.scaleup_busbw, pcie_lat, False)
    return Links(network=net, pcie=pcie, scaleup_domain=max(1, gpu.scaleup_domain),
                 gpus_per_node=gpu.gpus_per_node, launch_s=launch_us * 1e-6)
