"""The links a serving replica's collectives run over, and their times.

A replica is ``tp x dp x pp`` GPUs. Its groups use, from fastest to slowest: the scale-up domain
(NVLink/XGMI; a PCIe card's domain is 1), the PCIe switches of one server (for groups larger
than an NVLink bridge pair but inside a server), and the scale-out fabric between servers.
Times are the alpha-beta formulas of :mod:`gpuplan.physics.collectives` plus a per-call launch cost
(``collective_launch_us`` in calibration/serving.toml). An all-reduce inside an NVSwitch domain
instead takes the fastest of the algorithms measured on that NVLink generation (``[all_reduce]``
in calibration/serving.toml: NCCL's ring protocols and NVLS, and for engines with custom kernels
their one-shot and two-shot peer-to-peer all-reduce), latencies end to end. AMD's XGMI domain
takes its own measured rows (RCCL's protocols and vLLM's custom kernels); being a full mesh of
peer links, a group of g GPUs reaches only g-1 links' worth of the line rate.
"""

from __future__ import annotations

import math
from dataclasses import replace
from gpuplan.core.memo import memo
from gpuplan.core.records import cached_property, dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu
from gpuplan.hardware.serving_calibration import AllReduceFit
from gpuplan.physics.collectives import (
    AllReduceAlgorithm,
    Network,
    Tier,
    all_reduce_s,
    algorithm_steps_and_bytes,
    all_to_all_s,
    hierarchical_all_reduce_s,
    p2p_s,
)
from gpuplan.physics.network import GB, network_for

#: Launch time a custom all-reduce kernel saves against NCCL's where no measured algorithms
#: apply (``collective_launch_us`` is NCCL's): NCCL's smallest all-reduce takes ~8 us on 2 GPUs
#: (nccl-tests), TensorRT-LLM's and vLLM's custom kernels over NVLink P2P ~5 us (vLLM
#: custom_all_reduce PR #2192: 1.5-2x lower latency than NCCL below 1 MB).
CUSTOM_ALL_REDUCE_SAVING_US = 3.0


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
    #: Measured all-reduce algorithms of the scale-up domain (NCCL's); empty: alpha-beta model.
    nccl_all_reduce: tuple[AllReduceAlgorithm, ...] = ()
    #: The engine's custom peer-to-peer kernels measured on the same domain.
    custom_all_reduce: tuple[AllReduceAlgorithm, ...] = ()
    #: A full-mesh domain (XGMI): one peer link's share of the aggregate line rate (1/7 on an
    #: 8-GPU MI300X board); None for a switched domain, where any group gets the full rate.
    mesh_link_share: float | None = None

    @cached_property
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

    def all_reduce_s(self, size_bytes: float, group: int, custom: bool = False) -> float:
        """All-reduce of ``size_bytes`` over ``group`` GPUs, hierarchical across servers.

        ``custom``: the engine runs its own peer-to-peer kernels (TensorRT-LLM, vLLM) beside NCCL.
        Inside a scale-up domain with measured algorithms (NVSwitch, XGMI) the fastest of them is
        taken, on a mesh at the g-1 peer links the group uses; elsewhere
        the alpha-beta ring, where custom kernels move the ring's ``2(n-1)/n`` bytes even if the
        switch could reduce (NVLS) and launch ``CUSTOM_ALL_REDUCE_SAVING_US`` faster than NCCL."""
        if group <= 1 or size_bytes <= 0:
            return 0.0
        terms = self.measured_terms(group, custom)
        if terms is not None:
            # fastest_all_reduce_s term for term: ``(base + steps * step) + moved * size / bandwidth``,
            # the least kept as min() keeps it.
            best = terms[0][0] + terms[0][1] * size_bytes / terms[0][2]
            for fixed, moved, bw in terms[1:]:
                t = fixed + moved * size_bytes / bw
                if t < best:
                    best = t
            return best
        saving = CUSTOM_ALL_REDUCE_SAVING_US * 1e-6 if custom else 0.0
        if group <= self.local_domain:
            tier = self.tier(group)
            assert tier is not None
            if custom:
                tier = Tier(tier.bandwidth_bytes_per_s, tier.latency_s, False)
            return all_reduce_s(size_bytes, group, tier) + self.launch_s - saving
        if self.network.scaleout is None:
            return math.inf
        inner = self.local_domain
        inner_tier = self.tier(inner)
        assert inner_tier is not None
        net = Network(scaleup=inner_tier, scaleout=self.network.scaleout, scaleup_domain=inner)
        return hierarchical_all_reduce_s(size_bytes, inner, math.ceil(group / inner), net) + self.launch_s - saving

    def measured_terms(self, group: int, custom: bool) -> tuple[tuple[float, float, float], ...] | None:
        """The measured algorithms' size-free terms :meth:`all_reduce_s` takes the fastest of on
        ``group`` GPUs (memoised), or None where it takes the alpha-beta model instead."""
        if group > self.scaleup_domain or not self.nccl_all_reduce:
            return None
        terms = self._measured.get((group, custom))
        if terms is None:
            terms = self._measured[(group, custom)] = self._measured_terms(group, custom)
        return terms

    @cached_property
    def _measured(self) -> dict[tuple[int, bool], tuple[tuple[float, float, float], ...]]:
        """The measured algorithms' size-free terms by (group, custom), filled as groups are asked for."""
        return {}

    def _measured_terms(self, group: int, custom: bool) -> tuple[tuple[float, float, float], ...]:
        """``(base + steps * step, moved, bandwidth)`` of each measured algorithm on ``group`` GPUs
        (:func:`~gpuplan.physics.collectives.algorithm_all_reduce_s`'s terms that do not depend
        on the size), on a mesh at the g-1 peer links' share of the line rate."""
        algs = self.nccl_all_reduce + (self.custom_all_reduce if custom else ())
        share = 1.0 if self.mesh_link_share is None else min(1.0, self.mesh_link_share * (group - 1))
        if share < 1.0:
            algs = tuple(replace(a, bandwidth_bytes_per_s=a.bandwidth_bytes_per_s * share) for a in algs)
        out = []
        for a in algs:
            steps, moved = algorithm_steps_and_bytes(a.kind, group)
            out.append((a.base_s + steps * a.step_s, moved, a.bandwidth_bytes_per_s))
        return tuple(out)

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


#: The measured all-reduce fits by scale-up technology, in their order, as plain rows (kind, base
#: seconds, step seconds, line fraction, custom): each GPU's links (19 a default plan) walked the
#: ~21 catalog records. Keyed by the fits' identity and held in the entry, so the id is not
#: reused while the entry lives. Bounded.
_FITS: dict[int, tuple[tuple[AllReduceFit, ...], dict[str, list[tuple[str, float, float, float, bool]]]]] = memo()


def _fits_by_tech(fits: tuple[AllReduceFit, ...]) -> dict[str, list[tuple[str, float, float, float, bool]]]:
    hit = _FITS.get(id(fits))
    if hit is None:
        if len(_FITS) >= 16:
            _FITS.clear()
        by: dict[str, list[tuple[str, float, float, float, bool]]] = {}
        for f in fits:
            by.setdefault(f.scaleup_tech, []).append((f.kind, f.base_us * 1e-6, f.step_us * 1e-6, f.line_fraction, f.custom))
        hit = _FITS[id(fits)] = (fits, by)
    return hit[1]


def measured_all_reduce(gpu: Gpu, fits: tuple[AllReduceFit, ...]) -> tuple[tuple[AllReduceAlgorithm, ...],
                                                                             tuple[AllReduceAlgorithm, ...]]:
    """(NCCL's or RCCL's, custom kernels') measured all-reduce algorithms on ``gpu``'s scale-up
    domain, each at its fitted share of the GPU's NVLink/XGMI line rate; NVLS only where the switch
    reduces."""
    line = gpu.scaleup_uni_gb_per_s * GB
    reduces = gpu.efficiency.scaleup_in_network_reduction  # read once, not per fit
    nccl, custom = [], []
    for kind, base_s, step_s, fraction, own in _fits_by_tech(fits).get(gpu.scaleup_tech, ()):
        if kind == "in_network" and not reduces:
            continue
        alg = AllReduceAlgorithm(kind, base_s, step_s, fraction * line)
        (custom if own else nccl).append(alg)
    if not nccl:
        return (), ()
    return tuple(nccl), tuple(custom)


def links_for(gpu: Gpu, catalog: Catalog, launch_us: float, all_reduce: tuple[AllReduceFit, ...] = ()) -> Links:
    """The links of ``gpu``'s reference server (scale-out at its reference NIC speed); ``all_reduce``:
    the measured all-reduce algorithms (calibration/serving.toml ``[all_reduce]``)."""
    cal = catalog.table("collectives")
    net = network_for(gpu, catalog)
    pcie_lat = cal.pcie_step_latency_us * 1e-6
    if gpu.scaleup_tech == "pcie":
        pcie = net.scaleup
    else:
        pcie = Tier(gpu.host_link_uni_gb_per_s * GB * gpu.efficiency.scaleup_busbw, pcie_lat, False)
    nccl, custom = measured_all_reduce(gpu, all_reduce)
    mesh = gpu.scaleup_p2p_uni_gb_per_s / gpu.scaleup_uni_gb_per_s if gpu.scaleup_p2p_uni_gb_per_s else None
    return Links(network=net, pcie=pcie, scaleup_domain=max(1, gpu.scaleup_domain),
                 gpus_per_node=gpu.gpus_per_node, launch_s=launch_us * 1e-6,
                 nccl_all_reduce=nccl, custom_all_reduce=custom, mesh_link_share=mesh)
