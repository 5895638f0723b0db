"""Helpers shared by the fabric and BOM tests: traffic demands and the test price book."""

from __future__ import annotations

from pathlib import Path

from gpuplan.fabric.demand import TrafficDemand

PRICE_BOOK = Path(__file__).resolve().parent / "data" / "price_book"


def training_demand(gpu: str = "h100-sxm-80gb", gpus: int = 1024, gpus_per_node: int = 8, *,
                    need: float = 8.0, groups: tuple[str, ...] = ("dp",)) -> TrafficDemand:
    return TrafficDemand(phase="training", gpu=gpu, gpus=gpus, gpus_per_node=gpus_per_node, cross_node_groups=groups,
                         scaleout_bytes_per_gpu=2.1e9, window_s=4.3, required_gbit_per_gpu=need, rail_aligned=True,
                         sync_bytes_per_gpu=2.1e9, sync_window_s=2.1)


def serving_demand(gpu: str = "h100-sxm-80gb", gpus: int = 1024, gpus_per_node: int = 8, *,
                   frontend: float = 5.0, groups: tuple[str, ...] = (), need: float = 0.0,
                   kv: float = 0.0, rail_aligned: bool = False) -> TrafficDemand:
    return TrafficDemand(phase="serving", gpu=gpu, gpus=gpus, gpus_per_node=gpus_per_node, cross_node_groups=groups,
                         scaleout_bytes_per_gpu=need * 1e9 / 8, window_s=1.0, required_gbit_per_gpu=need,
                         rail_aligned=rail_aligned, frontend_gbit_per_node=frontend, kv_transfer_gbit_per_gpu=kv)
