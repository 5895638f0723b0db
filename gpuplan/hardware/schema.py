"""The records of the catalog files in ``catalog/`` (hardware/record.py: plain frozen records; their
pydantic schemas, which derive from them, are hardware/schema_records.py).

Units are part of every key (``mem_bw_tb_per_s``, ``scaleup_uni_gb_per_s``). Conventions:

* ``*_tflops`` / ``*_tops`` are **dense** peaks (no 2:4 sparsity), per GPU, 1e12 op/s.
* ``*_gbps`` on links and NICs is per GPU, **one direction**, in GB/s (1e9 bytes/s) unless the key
  says ``gbit`` (line rates of ports, Gb/s).
* ``memory_label_gb`` is the vendor label, which for HBM is GiB; ``memory_usable_gib`` is what a
  program can allocate.
* Every figure is sourced: ``sources`` maps a figure group (see ``*_GROUPS``) to a source id in
  ``catalog/sources.toml``. The consistency test checks that each group a record sets is sourced.
"""


from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuplan.model.arch import ArchitectureSpec
from gpuplan.core.types import Fraction, Id, NonNegative, Positive, PositiveInt
from gpuplan.hardware.record import Record
from gpuplan.hardware.fabric_calibration import BomCalibration, CollectivesCalibration  # noqa: F401  (re-exported)
from gpuplan.hardware.plausible import RANGES, _r  # noqa: F401  (re-exported)

#: A dense or sparse compute peak (TFLOP/s, or TOPS for integer formats).
Tflops = _r(Positive, "dense_tflops")
Confidence = Literal["V", "S", "M", "C", "D"]
DType = Literal["fp64", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"]


class Source(Record):
    """A publication or dataset figures are taken from."""

    id: Id
    title: str
    url: str | None = None
    date: Annotated[str, Field(pattern=r"^\d{4}(-\d{2}){0,2}$")]
    confidence: Confidence
    note: str | None = None


class GpuEfficiency(Record):
    """Measured fractions of the datasheet peaks, one set per GPU (never per validation case)."""

    #: Max achievable matmul FLOP/s over peak (MAMF / peak), per dtype.
    matmul_bf16: _r(Fraction, "efficiency")
    matmul_fp8: _r(Fraction, "efficiency") | None = None
    matmul_fp4: _r(Fraction, "efficiency") | None = None
    #: Achieved HBM bandwidth of a large streaming read (skinny GEMM, decode) over spec.
    mem_bw: _r(Fraction, "efficiency")
    #: Bandwidth of the decode attention kernels' KV-cache read over spec, where measured (their
    #: latency against KV bytes, past a fixed op latency); absent: ``mem_bw``.
    attention_mem_bw: _r(Fraction, "efficiency") | None = None
    #: Ring collective bus bandwidth over the scale-up one-direction link rate.
    scaleup_busbw: _r(Fraction, "efficiency")
    #: In-network reduction on the scale-up domain (NVLS / NVLink SHARP).
    scaleup_in_network_reduction: bool = False


def billed_of(terms: tuple[tuple[int, ...], bool, int], gpus: int) -> int:
    """:meth:`Gpu.billed_gpus` of the GPU's :attr:`Gpu.billing_terms`."""
    sizes, pcie, per_node = terms
    if sizes:  # whole instances of the largest size, the remainder on the smallest that holds it
        big = sizes[-1]
        full, rest = divmod(gpus, big)
        return full * big + (next(s for s in sizes if s >= rest) if rest else 0)
    if pcie:
        return gpus
    return -(-gpus // per_node) * per_node


class Gpu(Record):
    """One accelerator SKU with its reference server."""

    id: Id
    aliases: list[Id] = []
    vendor: Literal["nvidia", "amd", "intel"]
    name: str
    arch: str
    form_factor: Literal["sxm", "oam", "pcie", "superchip"]
    launch: str
    # memory
    memory_label_gb: _r(Positive, "memory_label_gb")
    memory_usable_gib: _r(Positive, "memory_usable_gib")
    mem_bw_tb_per_s: _r(Positive, "mem_bw_tb_per_s")
    memory_type: str
    # dense compute peaks; None = the format has no tensor-core path on this GPU
    fp64_dense_tflops: _r(NonNegative, "fp64_dense_tflops") | None = None
    tf32_dense_tflops: Tflops | None = None
    bf16_dense_tflops: Tflops | None = None
    fp16_dense_tflops: Tflops
    fp8_dense_tflops: Tflops | None = None
    int8_dense_tops: Tflops | None = None
    fp4_dense_tflops: Tflops | None = None
    int4_dense_tops: Tflops | None = None
    # the vendor's printed sparse figures, kept to check that dense ones are not sparse ones
    bf16_sparse_tflops: Tflops | None = None
    fp8_sparse_tflops: Tflops | None = None
    fp4_sparse_tflops: Tflops | None = None
    # scale-up domain (NVLink / XGMI / on-die RoCE); PCIe cards have none (domain 1)
    scaleup_tech: str
    scaleup_uni_gb_per_s: _r(Positive, "scaleup_uni_gb_per_s")
    scaleup_domain: _r(PositiveInt, "scaleup_domain")
    #: Bandwidth between one pair of GPUs when the domain is a point-to-point mesh (XGMI).
    scaleup_p2p_uni_gb_per_s: _r(Positive, "scaleup_p2p_uni_gb_per_s") | None = None
    #: Switch trays of one rack-scale scale-up domain (9 NVLink switch trays in a GB200 NVL72);
    #: None where the domain is one server's baseboard (its switches are inside the server).
    scaleup_switch_trays: _r(PositiveInt, "scaleup_switch_trays") | None = None
    host_link: str
    host_link_uni_gb_per_s: _r(Positive, "host_link_uni_gb_per_s")
    tdp_w: _r(Positive, "tdp_w")
    #: Highest single-core clock of the reference server's host CPU (the serving engine's
    #: per-request Python work runs on one core); None where the catalog does not name the host.
    host_cpu_max_ghz: _r(Positive, "host_cpu_max_ghz") | None = None
    # reference server
    server_name: str
    gpus_per_node: _r(PositiveInt, "gpus_per_node")
    node_power_kw: _r(Positive, "node_power_kw")
    #: Price of one server with its GPUs, CPUs, memory and local disks, without compute-fabric
    #: NICs and optics (those are separate BOM lines).
    node_price_usd: _r(Positive, "node_price_usd") | None = None
    node_rack_units: _r(PositiveInt, "rack_units")
    #: node_price_usd is an estimate (GPU price x count + a sibling's platform cost, or a sibling's
    #: price scaled), with its +/- fraction; the BOM marks the server line ``estimate``.
    node_price_estimate: bool = False
    node_price_uncertainty: Fraction | None = None
    #: Servers per compute rack in the vendor's reference rack layout (the rack's power is this x
    #: node_power_kw); None = as many as the rack power budget and 42 U allow.
    rack_servers: PositiveInt | None = None
    #: The reference server is built for direct liquid cooling (cold plates; GB200 NVL72, MI355X).
    liquid_cooled: bool = False
    #: Scale-out NICs and speed per GPU of the reference server.
    reference_nic: Id | None = None
    reference_scaleout_gbit_per_gpu: _r(NonNegative, "reference_scaleout_gbit_per_gpu")
    price_usd: _r(Positive, "price_usd") | None = None
    price_date: str | None = None
    cloud_usd_per_gpu_hour: _r(Positive, "cloud_usd_per_gpu_hour") | None = None
    cloud_date: str | None = None
    #: GPUs per cloud instance size rented for this GPU (e.g. [1, 2, 4, 8]); None: by the whole
    #: server for baseboard GPUs, by the card for PCIe.
    cloud_instance_gpus: list[PositiveInt] | None = None
    efficiency: GpuEfficiency
    sources: dict[str, Id]

    def peak_tflops(self, dtype: str) -> float | None:
        """Dense peak for a compute dtype (int8/int4 in TOPS), None if unsupported."""
        return {
            "fp64": self.fp64_dense_tflops,
            "tf32": self.tf32_dense_tflops,
            "bf16": self.bf16_dense_tflops,
            "fp16": self.fp16_dense_tflops,
            "fp8": self.fp8_dense_tflops,
            "int8": self.int8_dense_tops,
            "fp4": self.fp4_dense_tflops,
            "int4": self.int4_dense_tops,
        }.get(dtype)

    @property
    def purchase_unit_nodes(self) -> int:
        """Servers bought together: a rack-scale superchip system (GB200 NVL72) is sold, powered and
        wired as one rack of ``scaleup_domain / gpus_per_node`` trays; anything else by the server."""
        if self.form_factor == "superchip" and self.scaleup_domain > self.gpus_per_node:
            return -(-self.scaleup_domain // self.gpus_per_node)
        return 1

    def servers_for(self, gpus: int) -> int:
        """Servers to buy for ``gpus`` GPUs (:func:`servers_to_buy`)."""
        return servers_to_buy(gpus, self.gpus_per_node, self.purchase_unit_nodes)

    def billed_gpus(self, gpus: int) -> int:
        """GPUs a cloud bills for ``gpus`` in use: PCIe cards one by one, everything else by the
        whole server it rents (an 8-GPU baseboard; a 4-GPU GB200 tray, as clouds rent NVL72 by
        the tray-sized instance, not by the rack that capex buys)."""
        return billed_of(self.billing_terms, gpus)

    @property
    def billing_terms(self) -> tuple[tuple[int, ...], bool, int]:
        """What :meth:`billed_gpus` reads: (cloud instance sizes sorted, PCIe, GPUs a server)."""
        return tuple(sorted(set(self.cloud_instance_gpus or ()))), self.form_factor == "pcie", self.gpus_per_node

    def matmul_efficiency(self, dtype: str) -> float:
        """Measured matmul efficiency for a dtype; falls back to the bf16 figure."""
        eff = self.efficiency
        by = {"fp8": eff.matmul_fp8, "int8": eff.matmul_fp8, "fp4": eff.matmul_fp4, "int4": eff.matmul_fp4}
        return by.get(dtype) or eff.matmul_bf16


GPU_GROUPS: dict[str, tuple[str, ...]] = {
    "compute": ("fp64_dense_tflops", "tf32_dense_tflops", "bf16_dense_tflops", "fp16_dense_tflops",
                "fp8_dense_tflops", "int8_dense_tops", "fp4_dense_tflops", "int4_dense_tops"),
    "memory": ("memory_label_gb", "memory_usable_gib", "mem_bw_tb_per_s"),
    "scaleup": ("scaleup_uni_gb_per_s", "scaleup_domain", "scaleup_p2p_uni_gb_per_s", "host_link_uni_gb_per_s",
                "scaleup_switch_trays"),
    "power": ("tdp_w", "node_power_kw"),
    "host_cpu": ("host_cpu_max_ghz",),
    "server": ("gpus_per_node", "node_rack_units", "reference_scaleout_gbit_per_gpu", "rack_servers",
               "liquid_cooled"),
    "price": ("price_usd", "node_price_usd"),
    "cloud": ("cloud_usd_per_gpu_hour", "cloud_instance_gpus"),
    "efficiency": ("efficiency",),
}


class Fabric(Record):
    """A scale-out network technology at one port speed (``ib-ndr``, ``ethernet-400g``)."""

    id: Id
    name: str
    kind: Literal["infiniband", "ethernet"]
    port_gbit: _r(Positive, "port_gbit")
    #: Achievable data rate over line rate for large messages (NCCL bus bandwidth per NIC).
    efficiency: _r(Fraction, "efficiency")
    #: Added latency per switch hop, microseconds.
    hop_latency_us: _r(Positive, "hop_latency_us")
    #: Fixed latency of one collective step (NIC, software), microseconds.
    base_latency_us: _r(Positive, "base_latency_us")
    in_network_reduction: bool
    default_switch: Id
    default_nic: Id
    sources: dict[str, Id]


class Switch(Record):
    id: Id
    name: str
    vendor: str
    kinds: list[Literal["infiniband", "ethernet"]]
    #: Radix at each supported port speed, keyed by Gb/s ("400" = 64 ports of 400G).
    radix_by_gbit: dict[str, _r(PositiveInt, "ports")]
    #: Physical cages (e.g. 32 twin-port OSFP on a QM9700).
    cages: _r(PositiveInt, "ports")
    lanes_per_cage: _r(PositiveInt, "lanes_per_cage")
    power_w: _r(Positive, "power_w") | None = None
    price_usd: _r(Positive, "price_usd") | None = None
    price_date: str | None = None
    #: The price is an estimate by a stated method (the source's note), not an observed price;
    #: ``price_uncertainty`` is its +/- fraction (docs/bom.md, "Estimates").
    price_estimate: bool = False
    price_uncertainty: Fraction | None = None
    rack_units: _r(PositiveInt, "rack_units")
    sources: dict[str, Id]

    def radix(self, gbit: float) -> int | None:
        return self.radix_by_gbit.get(f"{gbit:g}")


class Nic(Record):
    id: Id
    name: str
    kinds: list[Literal["infiniband", "ethernet"]]
    ports: _r(PositiveInt, "ports")
    port_gbit: _r(Positive, "port_gbit")
    power_w: _r(Positive, "power_w") | None = None
    price_usd: _r(Positive, "price_usd") | None = None
    price_date: str | None = None
    #: The price is an estimate by a stated method (the source's note), not an observed price;
    #: ``price_uncertainty`` is its +/- fraction (docs/bom.md, "Estimates").
    price_estimate: bool = False
    price_uncertainty: Fraction | None = None
    sources: dict[str, Id]


class Optic(Record):
    """A transceiver module, active optical cable, copper cable or fibre."""

    id: Id
    name: str
    kind: Literal["transceiver", "aoc", "dac", "fiber"]
    gbit: _r(Positive, "gbit")
    #: Links carried by one module (twin-port 800G OSFP carries two 400G links).
    links_per_module: _r(PositiveInt, "links_per_module") = 1
    reach_m: _r(Positive, "reach_m")
    end: Literal["switch", "node", "any"]
    #: Fibre a transceiver needs, or a fibre cable is (SR = multimode, DR = single-mode); None for
    #: copper and active optical cables. Modules and fibre of one link must match.
    fiber_mode: Literal["multimode", "single-mode"] | None = None
    power_w: _r(NonNegative, "power_w") | None = None
    price_usd: _r(Positive, "price_usd") | None = None
    price_date: str | None = None
    #: The price is an estimate by a stated method (the source's note), not an observed price;
    #: ``price_uncertainty`` is its +/- fraction (docs/bom.md, "Estimates").
    price_estimate: bool = False
    price_uncertainty: Fraction | None = None
    sources: dict[str, Id]


class Part(Record):
    """A facility, storage or management part: racks, PDUs, power shelves, CDUs, rear-door heat
    exchangers, storage building blocks, head nodes (docs/bom.md)."""

    id: Id
    name: str
    category: Literal["rack", "storage", "management", "power", "cooling"]
    #: What one unit is for (``compute-rack``, ``pdu``, ``cdu``, ``storage-block``, ``head-node``...):
    #: the BOM picks parts by role.
    role: str
    power_w: NonNegative | None = None
    #: 0 for a part priced inside another line (an NVL72 rack's enclosure and power shelves).
    price_usd: NonNegative | None = None
    price_date: str | None = None
    price_estimate: bool = False
    price_uncertainty: Fraction | None = None
    rack_units: NonNegative | None = None
    #: Power or heat a unit carries (PDU, power shelf, CDU, rear-door heat exchanger), kW.
    capacity_kw: Positive | None = None
    #: Storage building block: usable capacity (after data protection), decimal TB.
    usable_tb: Positive | None = None
    #: Storage building block: sustained write / read bandwidth, GB/s (1e9 B/s).
    write_gb_per_s: Positive | None = None
    read_gb_per_s: Positive | None = None
    #: Servers in one unit (each with a management port): a 4-node storage chassis has 4.
    nodes: PositiveInt = 1
    #: Network ports of one unit and their line rate (storage nodes on the storage fabric).
    ports: PositiveInt | None = None
    port_gbit: Positive | None = None
    sources: dict[str, Id]


class ModelPreset(Record, leading=(*ArchitectureSpec.model_fields, "id", "name", "published_params_b", "sources")):
    """A published model architecture with its source: the fields of
    :class:`~gpuplan.model.arch.ArchitectureSpec`, then ``id``, ``name``, ``published_params_b``
    and ``sources`` (declared with their types in hardware/schema_records.py, whose schema derives
    from ArchitectureSpec; tests/catalog/test_records.py checks that both name the same fields)."""

    arch_fields = ArchitectureSpec.arch_fields


class CatalogMeta(Record):
    version: str
    description: str = ""


def servers_to_buy(gpus: int, gpus_per_node: int, unit_nodes: int) -> int:
    """Servers to buy for ``gpus`` GPUs: whole servers, rounded up to whole purchase units of
    ``unit_nodes`` servers (the trays a job leaves idle in the last NVL72 rack are its hot spares)."""
    return -(-(-(-gpus // gpus_per_node)) // unit_nodes) * unit_nodes
