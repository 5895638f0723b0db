"""The links of a serving replica (gpuplan/serving/links.py) on a made-up network whose times are
worked out by hand: scale-up 400 GB/s, PCIe 25 GB/s, scale-out 50 GB/s per GPU, no latency."""

from __future__ import annotations

import math

import pytest

from gpuplan.physics.collectives import Network, Tier
from gpuplan.serving.links import Links, links_for

NVLINK, PCIE, FABRIC = Tier(400e9, 0.0), Tier(25e9, 0.0), Tier(50e9, 0.0)
GB = 1e9


def _links(domain: int = 8, per_node: int = 8, scaleout: Tier | None = FABRIC, launch_s: float = 0.0) -> Links:
    return Links(network=Network(scaleup=NVLINK, scaleout=scaleout, scaleup_domain=domain), pcie=PCIE,
                 scaleup_domain=domain, gpus_per_node=per_node, launch_s=launch_s)


def test_tier_by_group_size():
    bridged = _links(domain=2, per_node=8)   # NVLink-bridged pairs of PCIe cards
    assert bridged.tier(2) is NVLINK
    assert bridged.tier(4) is PCIE
    assert bridged.tier(16) is FABRIC
    assert bridged.local_domain == 8


def test_ring_all_reduce_inside_the_domain():
    # 1 GB over 4 GPUs: a ring moves 2 x 3/4 x 1 GB = 1.5 GB per GPU at 400 GB/s = 3.75 ms,
    # plus a 10 us launch.
    assert _links(launch_s=10e-6).all_reduce_s(GB, 4) == pytest.approx(3.75e-3 + 10e-6)
    assert _links().all_reduce_s(GB, 1) == 0.0


def test_all_reduce_across_servers_is_hierarchical():
    # 1 GB over 16 GPUs on two 8-GPU servers: reduce-scatter inside (7/8 GB at 400 GB/s =
    # 2.1875 ms), all-reduce of each 125 MB shard between the 2 servers (2 x 1/2 x 125 MB at
    # 50 GB/s = 2.5 ms), all-gather inside (2.1875 ms): 6.875 ms.
    assert _links().all_reduce_s(GB, 16) == pytest.approx(6.875e-3)


def test_no_fabric_cannot_join_servers():
    assert _links(scaleout=None).all_reduce_s(GB, 16) == math.inf
    assert _links(scaleout=None).all_to_all_s(GB, 16) == math.inf
    assert _links(scaleout=None).handoff_s(GB, None) == math.inf


def test_all_to_all_and_handoff():
    # All-to-all over 16 GPUs on the fabric: each sends 15/16 of 1 GB at 50 GB/s = 18.75 ms.
    assert _links().all_to_all_s(GB, 16) == pytest.approx(18.75e-3)
    # A 100 MB hand-off between servers: 100 MB / 50 GB/s = 2 ms; inside a server on NVLink 0.25 ms.
    assert _links().handoff_s(100e6, None) == pytest.approx(2e-3)
    assert _links().handoff_s(100e6, 8) == pytest.approx(0.25e-3)


def test_links_of_the_catalog_reference_servers(catalog):
    hgx = links_for(catalog.gpus["h100-sxm-80gb"], catalog, launch_us=5.0)
    assert (hgx.scaleup_domain, hgx.gpus_per_node, hgx.has_scaleout) == (8, 8, True)
    assert hgx.launch_s == pytest.approx(5e-6)
    # Eight H100 PCIe cards in NVLink-bridged pairs: the pair is the domain, PCIe joins the server.
    pcie = links_for(catalog.gpus["h100-pcie-80gb"], catalog, launch_us=5.0)
    assert pcie.scaleup_domain == 2 and pcie.local_domain == 8
    assert pcie.tier(4) is pcie.pcie


@pytest.mark.parametrize(("gpu", "n", "elements", "custom", "measured_us"), [
    # TensorRT-LLM 1.3.0rc10 AllReduce, strategy AUTO, in a CUDA graph (aiconfigurator
    # systems/data/<sku>/comm/trtllm/1.3.0rc10/custom_allreduce_perf.parquet, bf16):
    ("h100-sxm-80gb", 8, 4096, True, 3.6),            # one token of a 4,096-wide model: one-shot
    ("h100-sxm-80gb", 8, 131072, True, 10.2),         # 32 tokens: still one-shot
    ("h100-sxm-80gb", 2, 1048576, True, 9.4),         # 2 GPUs keep the one-shot kernel to 4M elements
    ("h200-sxm-141gb", 8, 16777216, True, 195.1),     # 1,024 tokens of 16,384 (Llama 405B): NCCL
    ("b200-sxm-180gb", 4, 16777216, True, 122.6),
    # nccl-tests all_reduce_perf, NCCL 2.29.2 (comm/nccl/2.29.2/nccl_perf.parquet, fp16):
    ("h100-sxm-80gb", 8, 256, False, 15.6),
    ("h100-sxm-80gb", 8, 67108864, False, 578.7),     # 128 MiB: NVLS
])
def test_all_reduce_on_nvswitch_matches_measured_kernels(catalog, gpu, n, elements, custom, measured_us):
    k = catalog.table("serving")
    links = links_for(catalog.gpus[gpu], catalog, k.collective_launch_us, k.all_reduce.algorithm)
    assert links.all_reduce_s(elements * 2, n, custom) * 1e6 == pytest.approx(measured_us, rel=0.12)


def test_custom_kernels_win_small_messages_and_hand_large_ones_to_nccl(catalog):
    """TensorRT-LLM AUTO on 8 H100 (same tables): one token of 4,096 takes 3.6 us against NCCL's
    16.0 us; at 64M elements both run NCCL (575.9 and 578.7 us)."""
    k = catalog.table("serving")
    links = links_for(catalog.gpus["h100-sxm-80gb"], catalog, k.collective_launch_us, k.all_reduce.algorithm)
    assert links.all_reduce_s(8192, 8, custom=True) < links.all_reduce_s(8192, 8) / 3
    big = 2 * 67108864
    assert links.all_reduce_s(big, 8, custom=True) == pytest.approx(links.all_reduce_s(big, 8))
    # No measured algorithms on an NVLink-bridged pair: the alpha-beta ring and launch.
    pcie = links_for(catalog.gpus["h100-pcie-80gb"], catalog, k.collective_launch_us, k.all_reduce.algorithm)
    assert not pcie.nccl_all_reduce


@pytest.mark.parametrize(("gpu", "n", "size_bytes", "custom", "measured_us", "rel"), [
    # RCCL 2.22.3 rccl-tests all_reduce on 8 MI300X (Azure AI-benchmarking-guide, ND MI300X v5,
    # bf209abb 2025-03-27): busbw 1.13 GB/s at 32 KiB = 32,768 x 7/4 / 1.13 GB/s = 50.7 us;
    # 131.57 GB/s at 8 MiB = 111.6 us; 290.81 GB/s at 128 MiB = 807.7 us.
    ("mi300x-oam-192gb", 8, 32768, False, 50.7, 0.05),
    ("mi300x-oam-192gb", 8, 8388608, False, 111.6, 0.08),
    ("mi300x-oam-192gb", 8, 134217728, False, 807.7, 0.05),
    # vLLM's custom all-reduce on 2 MI300-class GPUs (ROCm/aiter #801, fp16, "vllm cr"): 7.30 us at
    # 32 KiB, 703.69 us at 32 MiB (one 64 GB/s XGMI link between the pair).
    ("mi300x-oam-192gb", 2, 32768, True, 7.30, 0.05),
    ("mi300x-oam-192gb", 2, 33554432, True, 703.69, 0.05),
    # The same kernel on 8 MI355X (vllm-project/vllm #39080, bf16 x 3,072 hidden): 4 tokens 6.3 us,
    # 256 tokens 24.2 us.
    ("mi355x-oam-288gb", 8, 4 * 3072 * 2, True, 6.3, 0.10),
    ("mi355x-oam-288gb", 8, 256 * 3072 * 2, True, 24.2, 0.05),
])
def test_all_reduce_on_xgmi_matches_published_tables(catalog, gpu, n, size_bytes, custom, measured_us, rel):
    k = catalog.table("serving")
    links = links_for(catalog.gpus[gpu], catalog, k.collective_launch_us, k.all_reduce.algorithm)
    assert links.all_reduce_s(size_bytes, n, custom) * 1e6 == pytest.approx(measured_us, rel=rel)


def test_xgmi_pair_gets_one_peer_link(catalog):
    """MI300X over 2 GPUs: RCCL's all-reduce bus bandwidth is about 48 GB/s (one 64 GB/s XGMI link)
    against 313 GB/s on 8 (ml-engineering network notes; Azure 313.9 at 1 GiB): at 1 GiB the pair's
    busbw (S / t at n = 2) comes out within 10 % of 48 GB/s, and 8 GPUs within 5 % of 313.9."""
    k = catalog.table("serving")
    links = links_for(catalog.gpus["mi300x-oam-192gb"], catalog, k.collective_launch_us, k.all_reduce.algorithm)
    size = 2.0 ** 30
    assert size / links.all_reduce_s(size, 2) / 1e9 == pytest.approx(48.0, rel=0.10)
    assert size * 7 / 4 / links.all_reduce_s(size, 8) / 1e9 == pytest.approx(313.9, rel=0.05)
