"""The serving front end: dual-homed, sized for requests, responses and weight loading.

Every server has its front-end ports in two independent planes (A and B, one leaf-spine or one
switch each): a failed link, NIC port or switch leaves each server reachable through the other
plane, as an engineer builds any network a service runs on (Juniper AI inference JVD: dual-homed
front end; NVIDIA enterprise RA: in-band network on redundant switches). Each plane alone carries
the server's whole front-end traffic (:func:`~gpuplan.fabric.interconnect.choose_frontend`): the
requests and streamed tokens at the peak, plus a replica loading its weights within ``[serving]
replica_start_s`` (serving/traffic.py). The design is made once, by ``design_fabric``; the BOM
prices both planes from it.
"""

from __future__ import annotations

from gpuplan.core.records import dataclass

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Fabric, Nic
from gpuplan.fabric.parts import choose_frontend, frontend_ratio, pick_nic, switch_for
from gpuplan.fabric.sizing import ClosDesign, ClosSpec, size_clos

#: Independent front-end planes each server is homed to.
FRONTEND_PLANES = 2


@dataclass(frozen=True)
class FrontEnd:
    """A dual-homed front end: its Ethernet fabric, ports per node in each plane, leaf
    oversubscription, switch, Clos design (``planes`` = FRONTEND_PLANES) and NIC."""

    fabric: Fabric
    ports: int
    ratio: float
    switch_id: str
    design: ClosDesign
    nic: Nic | None

    @property
    def nics_per_node(self) -> int:
        return frontend_nics(self.nic, self.ports)


def frontend_design(gbit_per_node: float, nodes: int, catalog: Catalog, *, oversubscription: float | None = None,
                    su: int | None = None, reserved: int = 0) -> FrontEnd:
    """The dual-homed front end of ``nodes`` servers that each send ``gbit_per_node``."""
    front, ports = choose_frontend(gbit_per_node, catalog)
    ratio = oversubscription or frontend_ratio(gbit_per_node, front, ports)
    switch_id, radix = switch_for(front, catalog, nodes * ports, ratio)
    design = size_clos(ClosSpec(radix=radix, nodes=nodes, rails=ports, planes=FRONTEND_PLANES, layout="fat-tree",
                                oversubscription=ratio, scalable_unit_nodes=su, reserved_node_slots=reserved))
    nic = pick_nic(catalog, front, gpu=None, ports=ports * FRONTEND_PLANES)
    return FrontEnd(fabric=front, ports=ports, ratio=ratio, switch_id=switch_id, design=design, nic=nic)


def frontend_nics(nic: Nic | None, ports: int) -> int:
    """NICs per server for ``ports`` front-end ports in each plane (a dual-port NIC homes to both)."""
    return -(-ports * FRONTEND_PLANES // nic.ports) if nic else 0
