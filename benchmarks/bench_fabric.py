"""(d) and (f): plan and graph-check a 131,072- and a 524,288-GPU fabric; time and peak memory,
1K..512K growth.

Usage: python benchmarks/bench_fabric.py [--gpu h100-sxm-80gb] [--max-gpus 524288]

Each size runs in a fresh process so its peak RSS is its own. Targets (docs/fabric-model.md):
131,072 GPUs planned, BOM'd and graph-checked in <= 10 s and <= 2 GiB; 524,288 GPUs (the most
three tiers of 400 GbE reach) in <= 10 s and <= 1 GiB (issue 21), growing linearly.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from common import child_env, growth_exponent, growth_words

TARGET_S, TARGET_MIB = 10.0, 2048.0
#: Issue 21: the largest three-tier fabric of the catalog, linear growth up to it.
SCALE_GPUS, SCALE_TARGET_S, SCALE_TARGET_MIB = 524288, 10.0, 1024.0


def one(gpu_id: str, gpus: int) -> dict:
    t0 = time.perf_counter()
    c0 = time.process_time()
    from gpuplan.fabric.bom import build_bom
    from gpuplan.hardware import load_catalog
    from gpuplan.fabric.demand import TrafficDemand
    from gpuplan.fabric.graph import build_graph, check_graph
    from gpuplan.fabric.interconnect import design_fabric

    catalog = load_catalog()
    gpu = catalog.gpu(gpu_id)
    demand = TrafficDemand(phase="training", gpu=gpu.id, gpus=gpus, gpus_per_node=gpu.gpus_per_node,
                           cross_node_groups=("dp", "pp"), scaleout_bytes_per_gpu=2.1e9, window_s=4.3,
                           required_gbit_per_gpu=8.0, rail_aligned=True)
    t_load = time.perf_counter()
    fabric = design_fabric(demand, gpu, catalog, check=False)
    bom = build_bom("training", gpu, gpus, fabric, catalog)
    interconnect, topology = fabric.interconnect, fabric.topology
    t_plan = time.perf_counter()
    graph = build_graph(topology)
    t_build = time.perf_counter()
    checks = check_graph(graph)
    t_check = time.perf_counter()
    assert checks.ok, checks.violations[:5]
    assert checks.bisection_gbit == topology.bisection_gbit
    assert checks.max_switch_hops == topology.max_switch_hops
    assert checks.equal_cost_paths == topology.equal_cost_paths
    return {
        "gpus": gpus, "fabric": interconnect.scaleout_fabric, "switch": topology.switch, "tiers": topology.tiers,
        "switches": topology.leaf_switches + topology.spine_switches + topology.core_switches,
        "graph_nodes": graph.number_of_nodes(), "graph_edges": graph.number_of_edges(), "links": checks.links,
        "bom_lines": len(bom.items),
        "load_s": round(t_load - t0, 3), "plan_and_bom_s": round(t_plan - t_load, 4),
        "graph_build_s": round(t_build - t_plan, 3), "graph_check_s": round(t_check - t_build, 3),
        "total_s": round(t_check - t0, 3), "total_cpu_s": round(time.process_time() - c0, 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def sizes_up_to(max_gpus: int, min_gpus: int = 1024) -> list[int]:
    out, n = [], min_gpus
    while n <= max_gpus:
        out.append(n)
        n *= 2
    return out


def fabric_rows(gpu: str, sizes: list[int]) -> list[dict]:
    """(d) and (f): one fresh process per size (its peak RSS is its own)."""
    rows = []
    for n in sizes:
        res = subprocess.run([sys.executable, __file__, "--gpu", gpu, "--one", str(n)], check=True,
                             capture_output=True, text=True, env=child_env(installed=False))
        rows.append(json.loads(res.stdout))
    return rows


def growth(rows: list[dict]) -> dict:
    """Growth exponents of plan time, graph build + check time, edges and peak RSS in the GPU count."""
    gpus = [r["gpus"] for r in rows]
    out = {}
    for key in ("plan_and_bom_s", "graph_s", "graph_edges", "links", "peak_rss_mib"):
        vals = [r["graph_build_s"] + r["graph_check_s"] if key == "graph_s" else r[key] for r in rows]
        k = growth_exponent(gpus, vals)
        out[key] = {"exponent": k, "words": growth_words(k)}
    # Graph time in graph edges: 1 when build and check are linear in the graph (the edges grow a
    # little faster than the GPUs where parallel links stop merging into one edge; never past links).
    k = growth_exponent([r["graph_edges"] for r in rows], [r["graph_build_s"] + r["graph_check_s"] for r in rows])
    out["graph_s_in_edges"] = {"exponent": k, "words": growth_words(k)}
    return out


def ok_at(r: dict) -> bool:
    """The targets of a row's size: (d) at 131,072 GPUs, the scale target at 524,288."""
    limit_s, limit_mib = (SCALE_TARGET_S, SCALE_TARGET_MIB) if r["gpus"] >= SCALE_GPUS else (TARGET_S, TARGET_MIB)
    return r["total_s"] <= limit_s and r["peak_rss_mib"] <= limit_mib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h100-sxm-80gb")
    parser.add_argument("--max-gpus", type=int, default=SCALE_GPUS)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.gpu, args.one)))
        return
    header = (f"{'GPUs':>7} {'fabric':>14} {'switch':>8} {'tiers':>5} {'switches':>8} {'edges':>7} "
              f"{'plan+BOM s':>10} {'graph s':>8} {'check s':>8} {'total s':>8} {'peak RSS MiB':>12}")
    print(header)
    rows = fabric_rows(args.gpu, sizes_up_to(args.max_gpus))
    for r in rows:
        print(f"{r['gpus']:>7} {r['fabric']:>14} {r['switch']:>8} {r['tiers']:>5} {r['switches']:>8} "
              f"{r['graph_edges']:>7} {r['plan_and_bom_s']:>10} {r['graph_build_s']:>8} {r['graph_check_s']:>8} "
              f"{r['total_s']:>8} {r['peak_rss_mib']:>12}")
    for key, g in growth(rows).items():
        print(f"{key}: exponent {g['exponent']:.2f} ({g['words']})")
    ok = True
    for r in rows:
        if r["gpus"] in (131072, SCALE_GPUS):
            good = ok_at(r)
            ok = ok and good
            print(f"{r['gpus']} GPUs: {r['total_s']} s, peak RSS {r['peak_rss_mib']} MiB: {'OK' if good else 'OVER TARGET'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
