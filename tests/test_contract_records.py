"""The plan's result classes are plain frozen dataclasses (gpuplan/core/contract_base.py): built by
records without compiling anything, dumped as pydantic's own serializer dumps them, published
(rounded) as the JSON rounds them, and a saved plan's closest fix read under either key."""

from __future__ import annotations

import dataclasses

import pytest

import gpuplan.core.contract as contract
from gpuplan.core import contract_fabric, contract_fleet, contract_serving, contract_training, cost_contract
from gpuplan.core.contract_base import _Out, _adapter
from gpuplan.core.fix_contract import ClosestFix
from gpuplan.core.stable_json import stable
from tests.render.fixtures import synthetic_plan, variant_plan

CLASSES = sorted({c for m in (contract, contract_fabric, contract_fleet, contract_serving, contract_training,
                              cost_contract) for c in vars(m).values()
                  if isinstance(c, type) and issubclass(c, _Out) and c is not _Out} | {ClosestFix},
                 key=lambda c: c.__qualname__)


def test_every_result_class_takes_the_fast_path():
    assert len(CLASSES) >= 30
    for cls in CLASSES:
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
        assert cls.__eq__.__code__.co_filename.endswith("records.py"), cls  # not the standard library's
        assert cls.__init__.__code__.co_filename.endswith("records.py"), cls  # the shared, uncompiled one


@pytest.mark.parametrize("make", [synthetic_plan, variant_plan])
def test_dump_is_pydantics_own(make):
    plan = make()
    assert plan.model_dump(mode="json", by_alias=True) == _adapter(contract.Plan).dump_python(
        plan, mode="json", by_alias=True)


def test_an_int_in_a_float_field_is_dumped_and_published_as_a_float():
    plan = synthetic_plan()
    topo = plan.training.topology.model_copy(update={"port_gbit": 400, "bisection_gbit": 25_600})
    odd = plan.model_copy(update={"training": plan.training.model_copy(update={"topology": topo})})
    data = odd.model_dump(mode="json", by_alias=True)["training"]["topology"]
    assert (data["port_gbit"], data["bisection_gbit"]) == (400.0, 25600.0)
    assert data == _adapter(contract.Topology).dump_python(topo, mode="json", by_alias=True)
    assert type(odd.published().training.topology.port_gbit) is float


@pytest.mark.parametrize("make", [synthetic_plan, variant_plan])
def test_published_is_the_json_read_back(make):
    plan = make()
    again = contract.Plan.from_data(stable(plan.model_dump(mode="json", by_alias=True)))
    assert repr(plan.published()) == repr(again)  # repr: 1 and 1.0 differ there, not under ==


def test_closest_fix_reads_from_or_from_():
    fix = {"constraint": "serving.qps", "to": "5", "message": "m"}
    for key in ("from", "from_"):
        assert ClosestFix.model_validate({**fix, key: "10"}).from_ == "10"
    assert ClosestFix(**fix, from_="10").model_dump(mode="json", by_alias=True)["from"] == "10"
