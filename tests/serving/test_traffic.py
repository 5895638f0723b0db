"""What a serving fleet asks of the network (gpuplan/serving/traffic.py), worked out by hand."""

from __future__ import annotations

import pytest

from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.serving.model import Layout, build_replica
from gpuplan.serving.traffic import serving_demand, weight_load_gbit_per_node
from tests.conftest import plan_file


def _replica(catalog, layout):
    from gpuplan.model.arch import ArchitectureSpec, resolve

    arch = resolve(ArchitectureSpec.model_validate(catalog.lookup("model", "llama-3.1-70b").arch_fields()))[0]
    k = serving_constants(catalog)
    return build_replica(catalog.gpus["h100-sxm-80gb"], arch, layout, "bf16", "bf16", k, catalog)


def test_a_replica_inside_one_server_sends_nothing_over_the_fabric(catalog):
    d = serving_demand(_replica(catalog, Layout(tp=8)), active=3, replicas=4, nodes=4, qps=10.0,
                       prompt=1000, output=200)
    assert d.cross_node_groups == ()
    assert d.required_gbit_per_gpu == 0.0
    assert (d.gpus, d.rail_aligned) == (32, True)


def test_a_pipeline_boundary_between_servers(catalog):
    k = serving_constants(catalog)
    assert k.activation_bytes == 2  # the hidden state crosses a stage boundary in 16 bits
    # TP8 x PP2 on 8-GPU servers: the stage boundary crosses the fabric. 10 req/s on one active
    # replica x (1,000 + 200) tokens = 12,000 tokens/s, each 8,192 x 2 bytes, split over the 8
    # TP ranks: 12,000 x 16,384 / 8 = 24.576 MB/s = 0.196608 Gb/s per GPU.
    d = serving_demand(_replica(catalog, Layout(tp=8, pp=2)), active=1, replicas=1, nodes=2, qps=10.0,
                       prompt=1000, output=200)
    assert d.cross_node_groups == ("pp",)
    assert d.required_gbit_per_gpu == pytest.approx(0.196608)
    assert d.rail_aligned


def test_weight_load_of_a_new_replica(catalog):
    replica = _replica(catalog, Layout(tp=8))
    # Llama 3.1 70B: 70,553,706,496 parameters x 2 bytes (BF16) = 141.107 GB, all on the one
    # server holding the TP8 replica; loaded in 60 s: 141.107e9 x 8 bits / 60 s = 18.814 Gb/s.
    assert weight_load_gbit_per_node(replica, 60.0) == pytest.approx(18.8143, rel=1e-4)
    assert weight_load_gbit_per_node(replica, None) == 0.0


def test_the_front_end_reason_splits_requests_from_weight_loading():
    """examples/llama-70b-train-serve.toml, 21 one-GPU B200 replicas on 3 servers. Requests and
    responses: 50 QPS x (3,000 x 4 B + 500 x 200 B + 1,000 B) x 8 / 3 servers = 0.0151 Gb/s per node;
    a new replica's weights (Llama 3.1 70B: 68.45B params in fp8 + the 2 x 1.05B embedding and head
    in bf16 = 72.66 GB) within the 60 s start: 9.69 Gb/s. The reason said "9.7 Gb/s of requests and
    responses per node", 640 times what the requests send."""
    from pathlib import Path

    from gpuplan.hardware import load_catalog

    path = Path(__file__).resolve().parents[2] / "examples" / "llama-70b-train-serve.toml"
    catalog = load_catalog()
    s = plan_file(path, catalog, "serving").serving
    assert s.interconnect.frontend_gbit_per_node == pytest.approx(0.015067 + 9.6875, rel=1e-3)
    front = [r for r in s.interconnect.reasons if r.startswith("Front end:")]
    assert front == ["Front end: 9.7 Gb/s per node: requests and responses 0.0151, loading a new replica's "
                     "weights 9.69 -> 1 x 100G Ethernet per node (Ethernet 100 GbE (RoCEv2))."]
