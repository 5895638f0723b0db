"""Fabric validation cases: shared/validation/fabric.toml must pass exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.model.case import CaseInput, NotModelled
from gpuplan.core.errors import InputError
from gpuplan.fabric.cases import predict
from gpuplan.ci.validate import validate_files

FABRIC_CASES = Path(__file__).resolve().parents[3] / "shared" / "validation" / "fabric.toml"

RUN = {"gpu": "h100-sxm-80gb", "nodes": 127, "gpus_per_node": 8, "fabric": "ib-ndr", "switch": "qm9700",
       "rail_optimized": True, "oversubscription": 1.0, "scalable_unit_nodes": 32, "reserved_nodes_per_unit": 1}


def case(run: dict, figures=("leaf_switches",)) -> CaseInput:
    return CaseInput(id="t", file="cases.toml", arch=None, run=run, figures=tuple(figures))


@pytest.mark.skipif(not FABRIC_CASES.exists(), reason="shared validation cases not present")
def test_fabric_toml_passes_exactly(catalog):
    report = validate_files([str(FABRIC_CASES)], catalog)
    assert report.ok, [(c.id, c.status, c.message) for c in report.cases if c.status != "pass"]
    assert report.summary.worst_error == 0.0


def test_four_su_figures(catalog):
    out = predict(case(RUN, ("leaf_switches",)), catalog)
    assert out["switch_transceivers"] == 1536 and out["node_transceivers"] == 508
    assert out["node_leaf_links"] + out["leaf_spine_links"] == 2040  # RA Table 8 fibre cables
    assert out["max_endpoints"] == 2048


def test_single_port_node_optics_off_dgx(catalog):
    run = dict(RUN, gpu="mi300x-oam-192gb", fabric="ethernet-400g", switch="qm9700")
    run["fabric"] = "ib-ndr"
    assert predict(case(run), catalog)["node_transceivers"] == 127 * 8


def test_planes_double_the_fabric(catalog):
    one = predict(case(RUN), catalog)
    two = predict(case(dict(RUN, planes=2)), catalog)
    assert two["leaf_switches"] == 2 * one["leaf_switches"]
    assert two["node_transceivers"] == 2 * one["node_transceivers"]


@pytest.mark.parametrize("run, field", [
    (dict(RUN, nodes=0), "case[t].run.nodes"),
    (dict(RUN, oversubscription=-1), "case[t].run.oversubscription"),
    (dict(RUN, rails=8), "case[t].run.rails"),
    ({k: v for k, v in RUN.items() if k != "gpu"}, "case[t].run.gpu"),
    (dict(RUN, switch="qm9999"), "case[t].run.switch"),
    (dict(RUN, fabric="ib-ndrr"), "case[t].run.fabric"),
    (dict(RUN, switch="sn4600c"), "case[t].run.switch"),
])
def test_bad_run_values_name_file_and_field(catalog, run, field):
    with pytest.raises(InputError) as err:
        predict(case(run), catalog)
    assert err.value.file == "cases.toml"
    assert err.value.field == field


def test_unknown_figure_is_not_modelled(catalog):
    with pytest.raises(NotModelled):
        predict(case(RUN, ("bisection_tbps",)), catalog)


B300_SPX = {"gpu": "b300-sxm-288gb", "nodes": 128, "gpus_per_node": 8, "fabric": "ethernet-400g", "switch": "sn5600",
            "rail_optimized": True, "oversubscription": 1.0, "scalable_unit_nodes": 64, "planes": 2}


def test_one_cable_serves_both_planes_of_a_split_nic(catalog):
    """DGX SuperPOD B300 RA Table 3, 2 SU on two Spectrum-X planes: 32 leaves, 16 spines, 1,024
    node-leaf and 1,024 leaf-spine cables (a CX-8 800G port feeds both 400G planes)."""
    out = predict(case(B300_SPX), catalog)
    assert (out["leaf_switches"], out["spine_switches"]) == (32, 16)
    assert (out["node_leaf_links"], out["leaf_spine_links"]) == (1024, 1024)
    # A NIC at the fabric's own speed feeds one plane: each plane keeps its own cables.
    h100 = predict(case(dict(B300_SPX, gpu="h100-sxm-80gb")), catalog)
    assert h100["node_leaf_links"] == 2048
