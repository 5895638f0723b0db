"""Time the serving search (gpuplan.serving.planner.plan_serving) over the whole catalog.

For every example profile with a [serving] table, the allowed GPUs are widened to every GPU of
the catalog and the plan is timed (best and median of --repeat runs, after one warm-up run).

    python benchmarks/bench_serving_search.py [--repeat 5] [PROFILE.toml ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpuplan.catalog import load_catalog  # noqa: E402
from gpuplan.profile import load_workload  # noqa: E402
from gpuplan.serving.planner import plan_serving  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    catalog = load_catalog()
    every = tuple(sorted(catalog.gpus))
    paths = args.profiles or sorted((ROOT / "examples").glob("*.toml"))
    print(f"{'profile':32} {'gpus':>4} {'best ms':>8} {'median ms':>9}  choice")
    worst = 0.0
    for path in paths:
        workload = load_workload(path, catalog)
        if workload.serving is None:
            continue
        workload = dataclasses.replace(workload, constraints=dataclasses.replace(workload.constraints,
                                                                                 allow_gpus=every))
        result = plan_serving(workload, catalog)
        times = []
        for _ in range(max(args.repeat, 1)):
            start = time.perf_counter()
            plan_serving(workload, catalog)
            times.append(time.perf_counter() - start)
        worst = max(worst, max(times))
        plan = result.plan
        choice = (f"{plan.gpu} x{plan.gpus} TP{plan.layout.tp} PP{plan.layout.pp}" if plan.feasible
                  else "infeasible")
        print(f"{path.name:32} {len(every):>4} {min(times) * 1e3:8.1f} {statistics.median(times) * 1e3:9.1f}  {choice}")
    print(f"slowest run: {worst * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
