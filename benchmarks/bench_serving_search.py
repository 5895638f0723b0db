"""(b) Serving search throughput: plan_serving of every example with a [serving] table, widened
to every catalog GPU, with the replica layouts sized per second (each sizing is a search over
batch sizes against the latency targets).

    python benchmarks/bench_serving_search.py [--repeat 5] [PROFILE.toml ...]
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from common import EXAMPLES, best_of


def serving_search(repeat: int, paths: list[Path] | None = None) -> dict:
    import gpuplan.serving.planner as splan
    from gpuplan.hardware import load_catalog
    from gpuplan.model.profile import load_workload

    catalog = load_catalog()
    every = tuple(sorted(catalog.gpus))
    rows = []
    for path in paths or sorted(EXAMPLES.glob("*.toml")):
        workload = load_workload(path, catalog)
        if workload.serving is None:
            continue
        workload = dataclasses.replace(
            workload, constraints=dataclasses.replace(workload.constraints, allow_gpus=every))
        count = [0]
        real = splan.evaluate

        def counting(*args, count=count, real=real, **kwargs):  # what plan_serving calls per layout, counted
            count[0] += 1
            return real(*args, **kwargs)

        splan.evaluate = counting
        try:
            splan.plan_serving(workload, catalog)
        finally:
            splan.evaluate = real
        best, median, cpu, result = best_of(lambda w=workload: splan.plan_serving(w, catalog), repeat)
        plan = result.plan  # type: ignore[attr-defined]
        choice = f"{plan.gpu} x{plan.gpus} TP{plan.layout.tp} PP{plan.layout.pp}" if plan.feasible else "infeasible"
        rows.append({"profile": path.name, "best_s": best, "median_s": median, "cpu_s": cpu, "layouts": count[0],
                     "layouts_per_s": count[0] / best, "choice": choice})
    total_layouts = sum(r["layouts"] for r in rows)
    total_s = sum(r["best_s"] for r in rows)
    return {"rows": rows, "gpu_types": len(every), "layouts": total_layouts, "best_s": total_s,
            "cpu_s": sum(r["cpu_s"] for r in rows),
            "layouts_per_s": total_layouts / total_s if total_s else 0.0,
            "slowest_s": max((r["best_s"] for r in rows), default=0.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    r = serving_search(args.repeat, args.profiles or None)
    print(f"{'profile':28} {'gpus':>4} {'best ms':>8} {'median ms':>9} {'layouts':>7} {'per s':>7}  choice")
    for row in r["rows"]:
        print(f"{row['profile']:28} {r['gpu_types']:>4} {row['best_s'] * 1e3:8.1f} {row['median_s'] * 1e3:9.1f} "
              f"{row['layouts']:>7} {row['layouts_per_s']:7.0f}  {row['choice']}")
    print(f"all: {r['layouts']} layouts in {r['best_s']:.3f} s = {r['layouts_per_s']:.0f} layouts/s")


if __name__ == "__main__":
    main()
