"""A GPU's layouts sized cheapest cost floor first stop where the floor (one active replica plus
the spares) passes the cost of a sized layout that meets the targets: the GPU's best option is
the one of sizing them all (issue 21)."""

from __future__ import annotations

from pathlib import Path

from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.model.profile import load_workload
from gpuplan.planning.memo import clear_memos
from gpuplan.serving.planner import _demand, _gpu_options

ROOT = Path(__file__).resolve().parents[2]


def test_the_lean_sizing_finds_each_gpus_best_option_and_sizes_fewer_layouts(catalog):
    workload = load_workload(ROOT / "examples" / "default.toml", catalog).for_phase("serving")
    k, demand = serving_constants(catalog), _demand(workload)
    sized = full = 0
    for gid in ("mi355x-oam-288gb", "h100-sxm-80gb", "b200-sxm-180gb", "a100-sxm-80gb"):
        clear_memos()
        lean, _ = _gpu_options(catalog.gpus[gid], workload, demand, k, catalog, lean=True)
        clear_memos()
        every, _ = _gpu_options(catalog.gpus[gid], workload, demand, k, catalog)
        assert lean[0].meets and every[0].meets
        assert (lean[0].replica.layout, lean[0].replicas, lean[0].objective) == \
            (every[0].replica.layout, every[0].replicas, every[0].objective)
        sized, full = sized + len(lean), full + len(every)
    # 70B FP8 at 20 QPS: the TP8 x PP pipelines (16 to 128 GPUs a replica) cost more before sizing
    assert full == 32 and sized < 24
