"""gpuplan.physics.network: the two-tier network a GPU's server sees, from catalog records.

The fabric record is the catalog's NDR InfiniBand with round test figures put in (base latency
5 us, 0.5 us per switch hop, 90 % efficiency), so every expected value below is worked out by
hand and does not move when the catalog is recalibrated."""

from __future__ import annotations

import pytest

from gpuplan.hardware import load_catalog
from gpuplan.physics.network import network_for


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def fabric(catalog):
    return catalog.fabrics["ib-ndr"].model_copy(update={"base_latency_us": 5.0, "hop_latency_us": 0.5,
                                                        "efficiency": 0.9})


def test_scaleout_latency_follows_the_designed_hops(catalog, fabric):
    """Before a fabric is designed: the two-tier worst case, leaf-spine-leaf = 3 switch hops:
    5 + 3 x 0.5 = 6.5 us. A three-tier fabric's worst path is leaf-spine-core-spine-leaf = 5 hops:
    5 + 5 x 0.5 = 7.5 us. The hop count changes the latency only, never the bandwidth."""
    gpu = catalog.gpu("h100-sxm-80gb")
    default = network_for(gpu, catalog, fabric).scaleout
    three_tier = network_for(gpu, catalog, fabric, hops=5).scaleout
    assert default.latency_s == pytest.approx(6.5e-6)
    assert network_for(gpu, catalog, fabric, hops=3).scaleout.latency_s == pytest.approx(6.5e-6)
    assert three_tier.latency_s == pytest.approx(7.5e-6)
    assert three_tier.bandwidth_bytes_per_s == default.bandwidth_bytes_per_s


def test_scaleout_bandwidth_is_the_nic_rate_at_the_fabric_efficiency(catalog, fabric):
    """400 Gb/s per GPU = 50 GB/s, at 90 % = 45 GB/s; a 2:1 leaf halves what crosses it: 22.5 GB/s.
    An oversubscription below 1 (more uplink than downlink) gives no more than the NIC."""
    gpu = catalog.gpu("h100-sxm-80gb")
    assert network_for(gpu, catalog, fabric, gbit_per_gpu=400).scaleout.bandwidth_bytes_per_s == pytest.approx(45e9)
    half = network_for(gpu, catalog, fabric, gbit_per_gpu=400, oversubscription=2.0).scaleout
    assert half.bandwidth_bytes_per_s == pytest.approx(22.5e9)
    wide = network_for(gpu, catalog, fabric, gbit_per_gpu=400, oversubscription=0.5).scaleout
    assert wide.bandwidth_bytes_per_s == pytest.approx(45e9)


def test_a_server_without_scale_out_nics_has_no_scale_out_tier(catalog):
    gpu = catalog.gpu("h100-sxm-80gb")
    assert network_for(gpu, catalog, gbit_per_gpu=0).scaleout is None
