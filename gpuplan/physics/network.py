"""Build the two-tier :class:`~gpuplan.physics.collectives.Network` a GPU sees from catalog records."""

from __future__ import annotations

from gpuplan.core.memo import memo
from gpuplan.core.units import GB
from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import CollectivesCalibration, Fabric, Gpu
from gpuplan.physics.collectives import Network, new_tier



#: :func:`network_for` of a GPU's reference server (no fabric, speed, oversubscription or hops given)
#: by (GPU, catalog): the serving replicas' links and the training searches ask for each GPU's
#: several times. A network is a frozen record of floats read from these two alone, and both are
#: keyed by identity and held in the entry, so their ids are not reused while it lives. Bounded.
_REFERENCE: dict[tuple[int, int], tuple[Gpu, Catalog, Network]] = memo()


def network_for(gpu: Gpu, catalog: Catalog, fabric: Fabric | None = None, *, gbit_per_gpu: float | None = None,
                oversubscription: float = 1.0, hops: int | None = None) -> Network:
    """:func:`_network_for`; that of the reference server memoised in :data:`_REFERENCE`."""
    if fabric is None and gbit_per_gpu is None and oversubscription == 1.0 and hops is None:
        key = (id(gpu), id(catalog))
        hit = _REFERENCE.get(key)
        if hit is None:
            if len(_REFERENCE) >= 256:
                _REFERENCE.clear()
            hit = _REFERENCE[key] = (gpu, catalog, _network_for(gpu, catalog))
        return hit[2]
    return _network_for(gpu, catalog, fabric, gbit_per_gpu=gbit_per_gpu, oversubscription=oversubscription, hops=hops)


def _network_for(gpu: Gpu, catalog: Catalog, fabric: Fabric | None = None, *, gbit_per_gpu: float | None = None,
                 oversubscription: float = 1.0, hops: int | None = None) -> Network:
    """The network of ``gpu``'s reference server attached to ``fabric`` at ``gbit_per_gpu``.

    Without a fabric the reference server's scale-out NIC speed is used over the matching catalog
    fabric (InfiniBand for NVIDIA, Ethernet otherwise); a server without scale-out NICs gets none.
    ``hops``: switch hops of the worst path in the designed topology (default: the calibration's
    two-tier worst case, used before a fabric is designed).
    """
    cal: CollectivesCalibration = catalog.table("collectives")
    pcie = gpu.scaleup_tech == "pcie"
    step_us = cal.pcie_step_latency_us if pcie else cal.scaleup_step_latency_us
    up_bw = gpu.scaleup_uni_gb_per_s * GB * gpu.efficiency.scaleup_busbw
    scaleup = new_tier(up_bw, step_us * 1e-6, gpu.efficiency.scaleup_in_network_reduction)
    p2p = gpu.scaleup_p2p_uni_gb_per_s * GB * gpu.efficiency.scaleup_busbw if gpu.scaleup_p2p_uni_gb_per_s else None
    gbit = gbit_per_gpu if gbit_per_gpu is not None else gpu.reference_scaleout_gbit_per_gpu
    if fabric is None and gbit > 0:
        fabric = default_fabric(gpu, catalog, gbit)
    scaleout = None
    if fabric is not None and gbit > 0:
        hops = cal.scaleout_hops if hops is None else hops
        latency = (fabric.base_latency_us + hops * fabric.hop_latency_us) * 1e-6
        bw = gbit / 8 * GB * fabric.efficiency / max(oversubscription, 1.0)
        scaleout = new_tier(bw, latency, fabric.in_network_reduction)
    domain = max(gpu.scaleup_domain, 1)
    return Network(scaleup=scaleup, scaleout=scaleout, scaleup_domain=domain, scaleup_p2p_bytes_per_s=p2p)


#: :func:`default_fabric` by (catalog, the GPU's vendor and reference NIC, speed): all it reads. The
#: catalog is keyed by identity and held in the entry. Bounded.
_DEFAULT: dict[tuple[object, ...], tuple[Catalog, Fabric | None]] = memo()


def default_fabric(gpu: Gpu, catalog: Catalog, gbit: float) -> Fabric | None:
    """:func:`_default_fabric`, memoised in :data:`_DEFAULT` (it reads the GPU's vendor and
    reference NIC alone)."""
    key = (id(catalog), gpu.vendor, gpu.reference_nic, gbit)
    hit = _DEFAULT.get(key)
    if hit is None:
        if len(_DEFAULT) >= 256:
            _DEFAULT.clear()
        hit = _DEFAULT[key] = (catalog, _default_fabric(gpu, catalog, gbit))
    return hit[1]


def _default_fabric(gpu: Gpu, catalog: Catalog, gbit: float) -> Fabric | None:
    """The catalog fabric of the reference server's NIC port speed (``gbit`` per GPU when the
    server has no reference NIC): InfiniBand for NVIDIA servers when the NIC speaks it, else Ethernet."""
    port = gbit
    kinds: tuple[str, ...] = ("infiniband", "ethernet") if gpu.vendor == "nvidia" else ("ethernet", "infiniband")
    if gpu.reference_nic is not None:
        nic = catalog.nics[gpu.reference_nic]
        port = nic.port_gbit
        kinds = tuple(k for k in kinds if k in nic.kinds) or kinds
    for kind in kinds:
        for fab in sorted(catalog.fabrics.values(), key=lambda f: f.id):
            if fab.kind == kind and abs(fab.port_gbit - port) < 1e-6:
                return fab
    # Several ports per GPU (Gaudi 3: 3 x 200GbE): the fastest port speed that divides the rate.
    for kind in kinds:
        fits = [f for f in catalog.fabrics.values() if f.kind == kind and port % f.port_gbit < 1e-6]
        if fits:
            return max(fits, key=lambda f: (f.port_gbit, f.id))
    return None
