"""Collective times pinned to nccl-tests measurements and the NCCL bus-bandwidth convention.

nccl-tests (doc/PERFORMANCE.md) reports ``algbw = S / t`` and ``busbw = algbw x 2(n-1)/n`` for an
all-reduce, ``algbw x (n-1)/n`` for all-gather and reduce-scatter: busbw is the per-GPU link rate
a ring achieves, the same for any n. A tier whose bandwidth is a measured busbw must therefore
give back the measured time. Every expected value below is a number worked out by hand.
"""

from __future__ import annotations

import pytest

from gpuplan.physics.collectives import (
    Network,
    Tier,
    all_gather_s,
    all_reduce_s,
    hierarchical_all_reduce_s,
    in_network_all_reduce_s,
    p2p_s,
    reduce_scatter_s,
    ring_all_reduce_s,
)

GB = 1e9
MIB_512 = 512 * 2**20  # 536,870,912 bytes: the message size nccl-tests tables quote


def _busbw(size: float, n: int, seconds: float) -> float:
    """nccl-tests' all-reduce bus bandwidth of a measured time."""
    return size / seconds * 2 * (n - 1) / n


def test_ring_all_reduce_reproduces_a_measured_nccl_busbw():
    # stas00/ml-engineering network/README.md (2026-08): 8 x H200, NVLS off, ring all-reduce busbw
    # 367.6 GB/s. 512 MiB: 536,870,912 B x 2 x 7/8 = 939,524,096 B per GPU / 367.6e9 B/s = 2.5558 ms.
    t = ring_all_reduce_s(MIB_512, 8, Tier(367.6 * GB, 0.0))
    assert t * 1e3 == pytest.approx(2.5558, rel=1e-4)
    assert _busbw(MIB_512, 8, t) == pytest.approx(367.6 * GB)
    # busbw does not depend on n: the same link rate on 2 and 64 ranks reads back as 367.6 GB/s.
    for n in (2, 64):
        assert _busbw(MIB_512, n, ring_all_reduce_s(MIB_512, n, Tier(367.6 * GB, 0.0))) == pytest.approx(367.6 * GB)


def test_latency_term_dominates_small_messages():
    # 16 KiB on 8 ranks, 1.5 us per ring step: 2 x 7 = 14 steps = 21 us of latency, against
    # 16,384 x 1.75 / 365e9 = 0.0786 us of transfer: 21.0786 us.
    t = Tier(365 * GB, 1.5e-6)
    assert ring_all_reduce_s(16 * 1024, 8, t) == pytest.approx(21.0786e-6, rel=1e-5)
    # One rank, or nothing to send: no time.
    assert ring_all_reduce_s(1, 1, t) == 0.0
    assert ring_all_reduce_s(0, 8, t) == 0.0


def test_in_network_reduction_sends_each_byte_once():
    # NVLS / SHARP: 1 GB at 400 GB/s leaves and returns once = 2.5 ms; the ring moves 1.75 GB = 4.375 ms.
    sharp = Tier(400 * GB, 0.0, in_network_reduction=True)
    assert in_network_all_reduce_s(1e9, 8, sharp) == pytest.approx(2.5e-3)
    assert all_reduce_s(1e9, 8, sharp) == pytest.approx(2.5e-3)
    assert all_reduce_s(1e9, 8, Tier(400 * GB, 0.0)) == pytest.approx(4.375e-3)
    # nccl-tests issue 290 (2025-03): 476 GB/s NVLS all-reduce busbw on 8 x H100 is in range: above
    # the 450 GB/s NVLink rate because the ring factor 1.75 is applied to an in-network algbw.
    # A tier of 476 / 1.75 = 272 GB/s with in-network reduction reads back as that busbw.
    nvls = Tier(476 / 1.75 * GB, 0.0, in_network_reduction=True)
    assert _busbw(MIB_512, 8, all_reduce_s(MIB_512, 8, nvls)) == pytest.approx(476 * GB)
    # On two ranks the ring is as short as a switch reduction: the ring is kept.
    assert all_reduce_s(1e9, 2, sharp) == pytest.approx(2.5e-3)  # 2 x 1/2 x 1 GB / 400 GB/s


def test_all_gather_reduce_scatter_and_p2p():
    # nccl-tests: all-gather busbw = algbw x (n-1)/n. 1 GB over 4 ranks at 100 GB/s:
    # 0.75 GB / 100 GB/s = 7.5 ms, plus 3 steps x 2 us = 7.506 ms.
    t = Tier(100 * GB, 2e-6)
    assert all_gather_s(1e9, 4, t) == pytest.approx(7.506e-3)
    assert reduce_scatter_s(1e9, 4, t) == pytest.approx(7.506e-3)
    # A 1 GB send at 100 GB/s: 10 ms + 2 us.
    assert p2p_s(1e9, t) == pytest.approx(10.002e-3)
    assert p2p_s(0, t) == 0.0


def test_hierarchical_all_reduce_moves_one_shard_across_nodes():
    # 8 GB over 16 nodes of 8 GPUs: reduce-scatter + all-gather inside at 360 GB/s
    # (2 x 7/8 x 8 GB = 14 GB -> 38.889 ms), then each GPU all-reduces its 1 GB shard over 16 nodes
    # at 46 GB/s (2 x 15/16 x 1 GB = 1.875 GB -> 40.761 ms): 79.650 ms. A flat ring over 128 ranks
    # at the slower rate would take 2 x 127/128 x 8 GB / 46 GB/s = 345.1 ms.
    up, out = Tier(360 * GB, 0.0), Tier(46 * GB, 0.0)
    net = Network(scaleup=up, scaleout=out, scaleup_domain=8)
    assert hierarchical_all_reduce_s(8e9, 8, 16, net) * 1e3 == pytest.approx(79.650, rel=1e-4)
    assert ring_all_reduce_s(8e9, 128, out) * 1e3 == pytest.approx(345.1, rel=1e-3)
    # One node: an all-reduce on the scale-up tier alone (2 x 7/8 x 8 GB / 360 GB/s = 38.889 ms).
    assert hierarchical_all_reduce_s(8e9, 8, 1, net) * 1e3 == pytest.approx(38.889, rel=1e-4)


def test_mesh_scaleup_gives_small_groups_few_links():
    # MI300X: 64 GB/s per XGMI peer link. ml-engineering measures 47.7 GB/s busbw on 2 GPUs (one
    # link) and 312.9 GB/s on 8 (all 7 links of the 448 GB/s mesh): a group of g GPUs gets g-1 links.
    net = Network(scaleup=Tier(448 * GB, 0.0), scaleout=None, scaleup_domain=8, scaleup_p2p_bytes_per_s=64 * GB)
    assert net.scaleup_for(2).bandwidth_bytes_per_s == 64 * GB
    assert net.scaleup_for(4).bandwidth_bytes_per_s == 192 * GB
    assert net.scaleup_for(8).bandwidth_bytes_per_s == 448 * GB


def test_all_reduce_algorithms_by_hand():
    from gpuplan.physics.collectives import AllReduceAlgorithm, algorithm_all_reduce_s, fastest_all_reduce_s

    mb = 1e6
    # 8 GPUs, 1 MB, 100 GB/s, 1 us base, 0.5 us a step:
    ring = AllReduceAlgorithm("ring", 1e-6, 0.5e-6, 100e9)          # 14 steps, 1.75 MB: 1 + 7 + 17.5 us
    nvls = AllReduceAlgorithm("in_network", 1e-6, 0.5e-6, 100e9)    # 2 steps, 1 MB: 1 + 1 + 10 us
    one = AllReduceAlgorithm("one_shot", 1e-6, 0.5e-6, 100e9)       # 7 steps, 7 MB: 1 + 3.5 + 70 us
    two = AllReduceAlgorithm("two_shot", 1e-6, 0.5e-6, 100e9)       # as the ring: 25.5 us
    assert algorithm_all_reduce_s(mb, 8, ring) == pytest.approx(25.5e-6)
    assert algorithm_all_reduce_s(mb, 8, nvls) == pytest.approx(12e-6)
    assert algorithm_all_reduce_s(mb, 8, one) == pytest.approx(74.5e-6)
    assert algorithm_all_reduce_s(mb, 8, two) == pytest.approx(25.5e-6)
    assert fastest_all_reduce_s(mb, 8, (ring, one, nvls)) == pytest.approx(12e-6)
    # 1 kB: the one-shot's 7 kB at 100 GB/s (0.07 us) beats the ring's 14 steps.
    assert fastest_all_reduce_s(1e3, 8, (ring, one)) == pytest.approx(1e-6 + 3.5e-6 + 0.07e-6)
    assert fastest_all_reduce_s(mb, 1, (ring,)) == 0.0
