"""The lean sizing (serving/planner.py ``_gpu_options``) stands each GPU for the option that sizing
every layout would rank first, and leaves unsized the layouts that provably rank after one already
sized: a dearer fleet, or one as dear with more GPUs (issue 21)."""

from __future__ import annotations

from pathlib import Path

from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.model.profile import load_workload
from gpuplan.planning.memo import clear_memos
from gpuplan.serving.planner import _demand, _gpu_options, engine_gpus
from gpuplan.serving.options import representative

ROOT = Path(__file__).resolve().parents[2]


def _options(workload, catalog, gpu, lean):
    options, _ = _gpu_options(catalog.gpus[gpu], workload, _demand(workload), serving_constants(catalog), catalog,
                              lean=lean)
    return options


def test_the_lean_sizing_keeps_each_gpus_best_option(catalog):
    for name in ("default.toml", "chat-8b-serving.toml"):
        workload = load_workload(ROOT / "examples" / name, catalog).for_phase("serving")
        for gpu in engine_gpus(workload, catalog)[0]:
            clear_memos()
            lean = representative(_options(workload, catalog, gpu, True))
            clear_memos()
            full = representative(_options(workload, catalog, gpu, False))
            assert (lean.replica.layout, lean.objective, lean.gpus) == (full.replica.layout, full.objective, full.gpus)


def test_layouts_that_tie_on_cost_with_more_gpus_are_not_sized(catalog):
    """The default profile on a GB200 NVL72: 20 req/s at 85% of a TP1 replica's 5.75 req/s take
    five replicas and the spare, six GPUs of one rack ($2,856,600). The wider layouts up to TP32 fit
    one rack too, at the same cost, and more GPUs (TP2: three replicas at 85% of a bound of 10.7
    req/s each, and the spare, eight): none is sized. The B200 likewise (six TP1 replicas on one
    $374,000 server; TP2 four replicas, eight GPUs, also one server)."""
    workload = load_workload(ROOT / "examples" / "default.toml", catalog).for_phase("serving")
    clear_memos()
    gb200 = _options(workload, catalog, "gb200-nvl72", True)
    assert [(o.replica.layout.tp, o.objective, o.gpus) for o in gb200] == [(1, 2856600.0, 6)]
    b200 = _options(workload, catalog, "b200-sxm-180gb", True)
    assert [(o.replica.layout.tp, o.objective, o.gpus) for o in b200] == [(1, 374000.0, 6)]
    assert len(_options(workload, catalog, "gb200-nvl72", False)) >= 6
