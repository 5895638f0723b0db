"""Physically plausible ranges of catalog figures, checked once at load (docs/catalog.md,
"Plausible ranges"): a schema field declared ``_r(Positive, "memory_label_gb")`` refuses a value outside
its range with the file, record and field."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator

#: Physically plausible range of each catalog figure: (low, high, unit), both ends included.
#: Far beyond any shipping part, so a real record never hits one; an overlay value outside is a
#: typo or hostile (1e300 GiB would overflow the planners) and is refused at load with the file,
#: record and field. Documented in docs/catalog.md ("Plausible ranges"); a test keeps both equal.
RANGES: dict[str, tuple[float, float, str]] = {
    "memory_label_gb": (1, 4096, "GB"),
    "memory_usable_gib": (1, 4096, "GiB"),
    "mem_bw_tb_per_s": (0.05, 100, "TB/s"),
    "fp64_dense_tflops": (0, 10_000, "TFLOP/s"),
    "dense_tflops": (1, 100_000, "TFLOP/s (TOPS for integer formats; every other dense and sparse peak)"),
    "scaleup_uni_gb_per_s": (1, 100_000, "GB/s"),
    "scaleup_p2p_uni_gb_per_s": (1, 100_000, "GB/s"),
    "host_link_uni_gb_per_s": (1, 100_000, "GB/s"),
    "reference_scaleout_gbit_per_gpu": (0, 100_000, "Gb/s"),
    "port_gbit": (1, 100_000, "Gb/s (fabrics, NICs)"),
    "gbit": (1, 100_000, "Gb/s (optics)"),
    "tdp_w": (1, 20_000, "W"),
    "host_cpu_max_ghz": (0.5, 10, "GHz"),
    "node_power_kw": (0.01, 1_000, "kW"),
    "power_w": (0, 100_000, "W (switches, NICs, optics)"),
    "price_usd": (0.01, 1e8, "USD"),
    "node_price_usd": (1, 1e9, "USD"),
    "cloud_usd_per_gpu_hour": (0.001, 10_000, "USD per GPU-hour"),
    "efficiency": (0.01, 1, "fraction (fabric efficiency and every GPU efficiency figure)"),
    "hop_latency_us": (0.001, 1e6, "microseconds"),
    "base_latency_us": (0.001, 1e6, "microseconds"),
    "reach_m": (0.1, 1e6, "m"),
    "scaleup_domain": (1, 100_000, "GPUs"),
    "gpus_per_node": (1, 1_024, "GPUs"),
    "scaleup_switch_trays": (1, 1_000, "switch trays per scale-up domain"),
    "rack_units": (1, 100, "U (node_rack_units, switch rack_units)"),
    "ports": (1, 1_024, "ports, switch radix and cages"),
    "lanes_per_cage": (1, 64, "lanes"),
    "links_per_module": (1, 64, "links"),
    "step_latency_us": (0, 1e6, "microseconds (calibration/collectives.toml)"),
    "scaleout_hops": (1, 64, "hops (calibration/collectives.toml)"),
    "rack_power_kw": (1, 10_000, "kW (calibration/bom.toml)"),
}


def _plausible(name: str) -> AfterValidator:
    low, high, unit = RANGES[name]

    def check(value: Any) -> Any:
        if not low <= value <= high:
            raise ValueError(f"outside the plausible range {_number(low)} to {_number(high)} {unit.split(' (')[0]} "
                             "(docs/catalog.md, \"Plausible ranges\")")
        return value

    return AfterValidator(check)


def _number(x: float) -> str:
    return f"{int(x):,}" if x == int(x) else f"{x:g}"


def _r(kind: Any, name: str) -> Any:
    return Annotated[kind, _plausible(name)]
