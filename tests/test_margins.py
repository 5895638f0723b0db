"""Margins and per-phase constraints (issue 15): memory headroom, the serving load margin,
[training.constraints] / [serving.constraints], and the shipped examples honour them."""

from __future__ import annotations

import pytest

from gpuplan.planning.compose import plan_workload
from gpuplan.model.profile import load_profile_text, load_workload
from tests.conftest import EXAMPLES

SPLIT = """
[model]
preset = "llama-2-7b"
[training]
tokens = 1e11
sequence_length = 4096
deadline_days = 14
[training.constraints]
allow_gpus = ["a100-sxm-80gb"]
memory_headroom = 0.2
[serving]
qps = 2
precision = "int8"
[serving.constraints]
allow_gpus = ["t4"]
[constraints]
allow_vendors = ["nvidia"]
pricing = "capex"
"""


def test_phase_constraints_override_field_by_field(catalog):
    w = load_profile_text(SPLIT, "p.toml", catalog)
    t, s = w.for_phase("training").constraints, w.for_phase("serving").constraints
    assert t.allow_gpus == ("a100-sxm-80gb",) and s.allow_gpus == ("t4-pcie-16gb",)
    assert t.pricing == s.pricing == "capex"
    assert t.memory_headroom == 0.2 and s.memory_headroom == 0.05  # the base default
    plan = plan_workload(w, catalog)
    assert plan.training.gpu == "a100-sxm-80gb" and plan.serving.gpu == "t4-pcie-16gb"
    m = plan.training.memory
    assert m.headroom_gib >= 0.2 * m.capacity_gib


def test_margins_are_listed_in_the_assumptions(catalog):
    plan = plan_workload(load_profile_text(SPLIT, "p.toml", catalog), catalog)
    fields = {a.field: a.value for a in plan.assumptions}
    assert fields["constraints.memory_headroom"] == "0.05"
    assert fields["serving.max_load_fraction"] == "0.85"
    assert "serving.replica_start_s" in fields


def test_bad_margin_is_refused(catalog):
    from gpuplan.core.errors import InputError

    with pytest.raises(InputError):
        load_profile_text(SPLIT.replace("qps = 2", "qps = 2\nmax_load_fraction = 1.5"), "p.toml", catalog)


EXAMPLE_FILES = sorted(p for p in EXAMPLES.glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_keeps_its_margins(catalog, path):
    plan = plan_workload(load_workload(path, catalog), catalog)
    if plan.training is not None and plan.training.feasible:
        m = plan.training.memory
        assert m.headroom_gib >= 0.05 * m.capacity_gib - 1e-6
    if plan.serving is not None and plan.serving.feasible:
        s = plan.serving
        assert s.peak_load_fraction <= 0.85 + 1e-9
        used = s.weights_gib_per_gpu + s.kv_gib_per_gpu
        assert used <= 0.95 * catalog.gpus[s.gpu].memory_usable_gib + 1e-6


SMALL = """
[model]
preset = "llama-3.1-8b"
[serving]
qps = 1
[constraints]
allow_gpus = ["h100-sxm-80gb"]
pricing = "{pricing}"
"""


def test_idle_gpus_of_a_whole_server_are_in_the_headline_and_json(catalog):
    from gpuplan.render.text import headline

    s = plan_workload(load_profile_text(SMALL.format(pricing="capex"), "p.toml", catalog), catalog).serving
    assert (s.gpus, s.nodes, s.gpus_idle) == (2, 1, 6)
    assert "2 x h100-sxm-80gb (1 node, 6 idle)" in headline("SERVING", s, "capex")
    # under cloud pricing the catalog's 2-GPU instance is rented: nothing idle, billed for 2
    c = plan_workload(load_profile_text(SMALL.format(pricing="cloud"), "p.toml", catalog), catalog).serving
    assert c.gpus_idle == 0
    assert c.cloud_usd_per_hour == pytest.approx(2 * catalog.gpus["h100-sxm-80gb"].cloud_usd_per_gpu_hour)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_reports_its_idle_gpus(catalog, path):
    plan = plan_workload(load_workload(path, catalog), catalog)
    for phase in (plan.training, plan.serving):
        if phase is not None and phase.feasible:
            gpu = catalog.gpus[phase.gpu]
            paid = (gpu.billed_gpus(phase.gpus) if plan.pricing == "cloud" else phase.nodes * gpu.gpus_per_node)
            assert "gpus_idle" in phase.model_dump() and phase.gpus_idle == paid - phase.gpus


def test_front_end_is_dual_homed_and_sized_for_weight_loading(catalog):
    w = load_workload(EXAMPLES / "llama-70b-train-serve.toml", catalog)
    s = plan_workload(w, catalog, phases=("serving",)).serving
    ic, topo = s.interconnect, s.topology
    weights_gbit = s.weights_gib_per_gpu * 2**30 * s.gpus_per_replica * 8 / 1e9 / w.serving.replica_start_s
    assert ic.frontend_gbit_per_node >= weights_gbit > 5  # a 70B FP8 replica within 60 s
    assert topo.clos.planes == 2 and topo.leaf_switches >= 2
    faster = load_profile_text((EXAMPLES / "llama-70b-train-serve.toml").read_text().replace(
        "spare_replicas = 2", "spare_replicas = 2\nreplica_start_s = 5"), "p.toml", catalog)
    quick = plan_workload(faster, catalog, phases=("serving",)).serving
    assert quick.interconnect.frontend_gbit_per_node > 10 * weights_gbit
    assert quick.interconnect.nic_gbit_per_gpu > ic.nic_gbit_per_gpu  # a faster or second port per plane
