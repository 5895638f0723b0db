"""The serving plan's shortcuts give the same floats as the plain evaluations they replace (issue 21:
a cheaper serving plan, byte-identical output)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.physics.collectives import fastest_all_reduce_s
from gpuplan.serving.capacity import Demand, ReplicaCapacity
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.links import links_for
from gpuplan.serving.model import Layout, build_replica

DEMAND = Demand(prompt_tokens=1000, output_tokens=256, ttft_s=2.0, tpot_s=0.05, percentile="p99", context_tokens=8192)


@pytest.mark.parametrize("gpu", ["h100-sxm-80gb", "b200-sxm-180gb", "mi300x-oam-192gb"])
def test_measured_all_reduce_terms_equal_the_physics_function(catalog, k, gpu):
    """Links keeps each measured algorithm's size-free terms per group; the time must equal
    fastest_all_reduce_s over the same algorithms (on XGMI at the g-1 links' share) to the bit."""
    g = catalog.gpu(gpu)
    links = links_for(g, catalog, k.collective_launch_us, k.all_reduce.algorithm)
    assert links.nccl_all_reduce
    for custom in (False, True):
        for group in (2, 4, 8):
            algs = links.nccl_all_reduce + (links.custom_all_reduce if custom else ())
            if links.mesh_link_share is not None and links.mesh_link_share * (group - 1) < 1.0:
                share = links.mesh_link_share * (group - 1)
                algs = tuple(replace(a, bandwidth_bytes_per_s=a.bandwidth_bytes_per_s * share) for a in algs)
            for size in (1.0, 8192.0, 1.7e5, 3.3e6, 1.2e8):
                assert links.all_reduce_s(size, group, custom) == fastest_all_reduce_s(size, group, algs)


def _plain_best(cap: ReplicaCapacity):
    """ReplicaCapacity.best's bisection with every point evaluated in full (the code before issue 21)."""
    lo_c, hi_c = 1e-6, float(cap.max_sequences)
    for _ in range(40):
        mid = 0.5 * (lo_c + hi_c)
        if cap.violations(cap.at(mid)):
            hi_c = mid
        else:
            lo_c = mid
        if hi_c - lo_c <= 1e-3 * max(lo_c, 1.0):
            break
    return cap.at(lo_c)


@pytest.mark.parametrize("tpot_s", [0.012, 0.02, 0.05])
@pytest.mark.parametrize("tp", [1, 2])
def test_best_skips_only_what_the_tpot_limit_decides(catalog, preset, k, tpot_s, tp):
    """A mixed point over the TPOT target is rejected before its chunk step and tail are computed:
    the ceiling is the same workpoint as the full bisection's."""
    rep = build_replica(catalog.gpu("h100-sxm-80gb"), preset("llama-3.1-8b"), Layout(tp=tp), "bf16", "bf16", k,
                        catalog, engine=resolve_engine(k, "vllm"))
    demand = replace(DEMAND, tpot_s=tpot_s)
    fast = ReplicaCapacity(rep, demand)
    assert fast.mixed
    best, _ = fast.best()
    plain = ReplicaCapacity(rep, demand)
    assert plain.violations(plain.at(1e-6)) == [] and plain.violations(plain.at(float(plain.max_sequences)))
    assert best == _plain_best(plain)
