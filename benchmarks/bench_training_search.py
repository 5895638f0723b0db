"""Time the training planner on a 405B profile over the whole catalog (a script, not a test).

    python benchmarks/bench_training_search.py [--repeat N]

Profile: model preset llama-3.1-405b, 15e12 tokens, sequence 8192, deadline 90 days, every
catalog GPU allowed. Prints the best wall time over the repeats (catalog loading excluded),
the layouts bounded and evaluated, and the recommendation. Target: under 1 s on 2 cores.
"""

from __future__ import annotations

import argparse
import time

from gpuplan.catalog import load_catalog
from gpuplan.network import network_for
from gpuplan.profile import load_profile_text
from gpuplan.training.calibration import calibration
from gpuplan.training.planner import job_of, plan_training, supports, target_of
from gpuplan.training.search import Evaluator, Fixed, search

PROFILE = """
[model]
preset = "llama-3.1-405b"

[training]
tokens = 15e12
sequence_length = 8192
deadline_days = 90
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    catalog = load_catalog()
    workload = load_profile_text(PROFILE, "bench-405b.toml", catalog)
    times, cpu = [], []
    result = None
    for _ in range(max(1, args.repeat)):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = plan_training(workload, catalog)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    assert result is not None
    plan = result.plan
    bounded = evaluated = 0
    cal, job, target = calibration(catalog), job_of(workload), target_of(workload)
    for gid in sorted(workload.constraints.allow_gpus):
        gpu = catalog.gpus[gid]
        if not supports(gpu, job.precision):
            continue
        found = search(Evaluator(job, gpu, network_for(gpu, catalog), cal), Fixed(), target)
        bounded += found.bounded
        evaluated += found.evaluated
    print(f"plan_training, 405B, {len(workload.constraints.allow_gpus)} GPU types: "
          f"best {min(times):.3f} s, median {sorted(times)[len(times) // 2]:.3f} s over {len(times)} runs "
          f"(CPU time best {min(cpu):.3f} s)")
    print(f"layouts bounded {bounded:,}, evaluated {evaluated:,}")
    print(f"recommended: {plan.gpu} x {plan.gpus:,}, {plan.wall_clock_days:.1f} days, MFU {plan.mfu:.1%}")


if __name__ == "__main__":
    main()
