"""(c) A full recommend (both phases, fabric, BOM, JSON) of the 405B profile over the whole
catalog, in process with the catalog loaded; and (f) how it grows with the training GPU count
(1K..128K, [training] gpus = N) and with the catalog size ([constraints] allow_gpus = 1..all).

    python benchmarks/bench_recommend.py [--repeat 3] [--max-gpus 131072]
"""

from __future__ import annotations

import argparse

from bench_fabric import sizes_up_to
from common import PROFILES, best_of, growth_exponent, growth_words

PROFILE = PROFILES / "frontier-405b-both.toml"
#: Issue 21: the full 405B recommend within 0.5 s (it was 1 s in issue 8).
TARGET_S = 0.5
CATALOG_SIZES = (1, 5, 10, 20)


def _recommender():
    from gpuplan.hardware import load_catalog
    from gpuplan.planning.compose import plan_workload
    from gpuplan.model.profile import load_profile_text
    from gpuplan.render import RenderOptions, render

    catalog = load_catalog()

    def recommend(text: str) -> object:
        workload = load_profile_text(text, PROFILE.name, catalog)
        return render(plan_workload(workload, catalog), "json", RenderOptions(color=False))

    return catalog, recommend


def full_recommend(repeat: int) -> dict:
    _, recommend = _recommender()
    text = PROFILE.read_text(encoding="utf-8")
    best, median, cpu, _ = best_of(lambda: recommend(text), repeat)
    return {"best_s": best, "median_s": median, "cpu_s": cpu, "target_s": TARGET_S, "ok": best <= TARGET_S}


def growth_gpus(repeat: int, sizes: list[int]) -> dict:
    """Recommend time with the training GPU count fixed at each of ``sizes``."""
    _, recommend = _recommender()
    base = PROFILE.read_text(encoding="utf-8")
    rows = []
    for n in sizes:
        text = base.replace("deadline_days = 80", f"gpus = {n}")
        t = best_of(lambda text=text: recommend(text), repeat)
        rows.append({"gpus": n, "best_s": t.best_s, "cpu_s": t.cpu_s})
    k = growth_exponent([r["gpus"] for r in rows], [r["cpu_s"] for r in rows])
    return {"rows": rows, "exponent": k, "words": growth_words(k)}


def growth_catalog(repeat: int) -> dict:
    """Recommend time with the allowed GPU types limited to the 1, 5, 10, 20 GPU types spread over the catalog."""
    catalog, recommend = _recommender()
    base = PROFILE.read_text(encoding="utf-8")
    ids = sorted(catalog.gpus)
    rows = []
    for size in [s for s in CATALOG_SIZES if s < len(ids)] + [len(ids)]:
        picked = [ids[(2 * i + 1) * len(ids) // (2 * size)] for i in range(size)]  # spread over the catalog
        allow = ", ".join(f'"{g}"' for g in picked)
        text = base.replace('pricing = "capex"', f'pricing = "capex"\nallow_gpus = [{allow}]')
        t = best_of(lambda text=text: recommend(text), repeat)
        rows.append({"gpu_types": size, "best_s": t.best_s, "cpu_s": t.cpu_s})
    k = growth_exponent([r["gpu_types"] for r in rows], [r["cpu_s"] for r in rows])
    per_type = rows[-1]["cpu_s"] / rows[-1]["gpu_types"]
    return {"rows": rows, "exponent": k, "words": growth_words(k), "cpu_s_per_gpu_type": per_type}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-gpus", type=int, default=131072)
    args = parser.parse_args()
    r = full_recommend(args.repeat)
    print(f"recommend 405B, both phases, whole catalog: best {r['best_s']:.3f} s, median {r['median_s']:.3f} s "
          f"(target <= {TARGET_S} s: {'OK' if r['ok'] else 'OVER'})")
    g = growth_gpus(args.repeat, sizes_up_to(args.max_gpus))
    print("by training GPUs: " + ", ".join(f"{x['gpus']}: {x['best_s']:.3f} s" for x in g["rows"])
          + f"; exponent {g['exponent']:.2f} ({g['words']})")
    c = growth_catalog(args.repeat)
    print("by GPU types: " + ", ".join(f"{x['gpu_types']}: {x['best_s']:.3f} s" for x in c["rows"])
          + f"; exponent {c['exponent']:.2f} ({c['words']})")


if __name__ == "__main__":
    main()
