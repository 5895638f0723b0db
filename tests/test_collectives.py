"""Collective formulas pinned to the NCCL bus-bandwidth conventions."""

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
    ring_all_reduce_s,
)

GB = 1e9


def test_ring_all_reduce_matches_nccl_busbw():
    # nccl-tests PERFORMANCE.md: busbw = algbw * 2(n-1)/n. 8 GPUs at 365 GB/s ring busbw (H100):
    # 512 MiB all-reduce -> time = S * 2(n-1)/n / busbw.
    t = Tier(365 * GB, 0.0)
    s = 512 * 2**20
    assert ring_all_reduce_s(s, 8, t) == pytest.approx(s * 2 * 7 / 8 / (365 * GB))
    assert ring_all_reduce_s(s, 8, t) * 1e3 == pytest.approx(2.573, rel=1e-3)


def test_latency_term_dominates_small_messages():
    t = Tier(365 * GB, 1.5e-6)
    assert ring_all_reduce_s(16 * 1024, 8, t) == pytest.approx(2 * 7 * 1.5e-6 + 2 * 7 / 8 * 16384 / (365 * GB))
    assert ring_all_reduce_s(1, 1, t) == 0.0


def test_in_network_reduction_halves_the_bandwidth_term():
    t = Tier(400 * GB, 0.0, in_network_reduction=True)
    s = 1e9
    assert in_network_all_reduce_s(s, 8, t) == pytest.approx(s / (400 * GB))
    assert all_reduce_s(s, 8, t) == pytest.approx(s / (400 * GB))
    assert all_reduce_s(s, 8, Tier(400 * GB, 0.0)) == pytest.approx(1.75 * s / (400 * GB))


def test_all_gather_and_p2p():
    t = Tier(100 * GB, 2e-6)
    assert all_gather_s(1e9, 4, t) == pytest.approx(0.75 * 1e9 / (100 * GB) + 3 * 2e-6)
    assert p2p_s(1e9, t) == pytest.approx(0.01 + 2e-6)


def test_hierarchical_all_reduce_moves_one_shard_across_nodes():
    up, out = Tier(360 * GB, 0.0), Tier(46 * GB, 0.0)
    net = Network(scaleup=up, scaleout=out, scaleup_domain=8)
    s = 8e9
    inside = 2 * 7 / 8 * s / (360 * GB)
    across = 2 * 15 / 16 * (s / 8) / (46 * GB)
    assert hierarchical_all_reduce_s(s, 8, 16, net) == pytest.approx(inside + across)


def test_mesh_scaleup_gives_small_groups_few_links():
    # MI300X: 64 GB/s per XGMI peer link; TP=2 sees one link, TP=8 the 448 GB/s aggregate.
    net = Network(scaleup=Tier(448 * GB, 0.0), scaleout=None, scaleup_domain=8, scaleup_p2p_bytes_per_s=64 * GB)
    assert net.scaleup_for(2).bandwidth_bytes_per_s == 64 * GB
    assert net.scaleup_for(8).bandwidth_bytes_per_s == 448 * GB
