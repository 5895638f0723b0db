"""(b) Training search throughput: the layout search of a 405B pretraining job over the whole
catalog (catalog loading excluded), with the layouts it bounded and evaluated per second.

    python benchmarks/bench_training_search.py [--repeat 5]

Profile: benchmarks/profiles/frontier-405b-both.toml without its [serving] table (llama-3.1-405b,
15.6T tokens, sequence 8192, deadline 80 days, every catalog GPU allowed).
"""

from __future__ import annotations

import argparse

from common import PROFILES, best_of

PROFILE = PROFILES / "frontier-405b-both.toml"


def training_search(repeat: int) -> dict:
    import gpuplan.training.candidates as candidates
    import gpuplan.training.planner as tplan
    from gpuplan.planning.memo import clear_memos
    from gpuplan.hardware import load_catalog
    from gpuplan.model.profile import load_profile_text

    catalog = load_catalog()
    text = PROFILE.read_text(encoding="utf-8")
    text = text[:text.index("\n[serving]\n")] + text[text.index("\n[constraints]\n"):]
    workload = load_profile_text(text, PROFILE.name, catalog)
    counts = {"bounded": 0, "evaluated": 0}
    real = tplan.search

    def counting(*args, **kwargs):  # what plan_training calls, counted
        found = real(*args, **kwargs)
        counts["bounded"] += found.bounded
        counts["evaluated"] += found.evaluated
        return found

    best, median, cpu, result = best_of(lambda: tplan.plan_training(workload, catalog), repeat)
    tplan.search = candidates.search = counting  # the per-GPU searches and the next best layouts'
    try:
        clear_memos()  # count a search from scratch, not the memo hits of the runs above
        tplan.plan_training(workload, catalog)
    finally:
        tplan.search = candidates.search = real
    plan = result.plan  # type: ignore[attr-defined]
    return {"best_s": best, "median_s": median, "cpu_s": cpu, "gpu_types": len(workload.constraints.allow_gpus),
            "bounded": counts["bounded"], "evaluated": counts["evaluated"],
            "bounded_per_s": counts["bounded"] / best, "evaluated_per_s": counts["evaluated"] / best,
            "choice": f"{plan.gpu} x{plan.gpus} {plan.wall_clock_days:.1f} days"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    r = training_search(parser.parse_args().repeat)
    print(f"plan_training 405B over {r['gpu_types']} GPU types: best {r['best_s']:.3f} s, median {r['median_s']:.3f} s")
    print(f"shapes bounded {r['bounded']:,} ({r['bounded_per_s']:,.0f}/s), layouts evaluated {r['evaluated']:,} "
          f"({r['evaluated_per_s']:,.0f}/s); choice {r['choice']}")


if __name__ == "__main__":
    main()
