"""gpuplan.physics.network: the two-tier network a GPU's server sees, from catalog records."""

from __future__ import annotations

import pytest

from gpuplan.hardware import load_catalog
from gpuplan.physics.network import network_for


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_scaleout_latency_follows_the_designed_hops(catalog):
    """Before a fabric is designed: the two-tier worst case (3 hops); after: the topology's own
    worst path (a three-tier fabric has 5: leaf-spine-core-spine-leaf)."""
    gpu = catalog.gpu("h100-sxm-80gb")
    fabric = catalog.fabrics["ib-ndr"]
    default = network_for(gpu, catalog, fabric).scaleout
    three_tier = network_for(gpu, catalog, fabric, hops=5).scaleout
    assert default.latency_s == pytest.approx((fabric.base_latency_us + 3 * fabric.hop_latency_us) * 1e-6)
    assert three_tier.latency_s - default.latency_s == pytest.approx(2 * fabric.hop_latency_us * 1e-6)
    assert three_tier.bandwidth_bytes_per_s == default.bandwidth_bytes_per_s
