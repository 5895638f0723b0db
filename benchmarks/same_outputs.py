"""Write the outputs a speed change must leave byte-identical into one folder, to compare two
checkouts (or one before and after a change) with ``diff -r``:

    python benchmarks/same_outputs.py /tmp/before     # on the old tree
    python benchmarks/same_outputs.py /tmp/after      # on the new tree
    diff -r /tmp/before /tmp/after && echo identical

Fresh ``gpuplan`` processes: every example's JSON, the 405B profile's, the two benchmark sweeps;
in one process: each example under variants (cloud pricing, a tight budget, a power limit, a
deadline, disaggregation forced, QPS 1, 200 and 300, tight latency targets, mean latency, three
engines) as JSON and markdown. The goldens are the test suite's
(``pytest tests/golden tests/render``).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
BOTH = ROOT / "benchmarks" / "profiles" / "frontier-405b-both.toml"
SWEEPS = {
    "sweep-qps": ["sweep", "examples/chat-8b-serving.toml", "--set", "serving.qps=5:200:50", "-f", "json"],
    "sweep-deadline": ["sweep", "examples/llama-70b-train-serve.toml", "--phase", "training", "--set",
                       "training.deadline_days=30:180:20", "-f", "json"],
}
#: Overrides applied to each example in one process (a field a profile lacks is skipped).
VARIANTS = {
    "cloud": {"constraints.pricing": "cloud"},
    "capex": {"constraints.pricing": "capex"},
    "budget": {"constraints.budget_usd": 2.0e7},
    "power": {"constraints.power_limit_kw": 800.0},
    "deadline": {"training.deadline_days": 30},
    "qps": {"serving.qps": 200},
    "disagg": {"serving.disaggregation": "always"},
    "spares0": {"serving.spare_replicas": 0},
    "qps1": {"serving.qps": 1},
    "cloud-qps300": {"constraints.pricing": "cloud", "serving.qps": 300},
    "tight": {"serving.ttft_ms": 400, "serving.tpot_ms": 15},
    "mean": {"serving.latency_percentile": "mean", "serving.max_load_fraction": 0.6},
    "sglang": {"serving.engine": "sglang", "serving.spare_replicas": 2},
    "trtllm-budget": {"serving.engine": "trtllm", "constraints.budget_usd": 5.0e5},
}


def _cli(args: list[str]) -> bytes:
    run = subprocess.run([sys.executable, "-m", "gpuplan", *args], cwd=ROOT, capture_output=True)
    return run.stdout + f"\n--- rc {run.returncode}\n".encode() + run.stderr


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    jobs = {f"cli-{p.stem}.json": ["recommend", str(p.relative_to(ROOT)), "-f", "json"] for p in EXAMPLES}
    jobs["cli-405b-both.json"] = ["recommend", str(BOTH.relative_to(ROOT)), "-f", "json"]
    jobs["cli-default.md"] = ["recommend", "examples/default.toml", "-f", "markdown"]
    jobs["cli-default-v.txt"] = ["recommend", "examples/default.toml", "-v", "--no-color"]
    jobs.update({f"cli-{k}.json": v for k, v in SWEEPS.items()})
    with ThreadPoolExecutor(2) as pool:
        for name, text in zip(jobs, pool.map(_cli, jobs.values())):
            (out / name).write_bytes(text)
    _variants(out)


def _variants(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from gpuplan.planning.api import load_catalog, load_profile, plan
    from gpuplan.core.errors import InputError
    from gpuplan.render import RenderOptions, render

    import os

    os.chdir(ROOT)  # relative profile paths: the plans name them, and two checkouts compare equal
    catalog = load_catalog()
    for path in (p.relative_to(ROOT) for p in EXAMPLES + [BOTH]):
        for name, overrides in VARIANTS.items():
            try:
                workload = load_profile(path, catalog, overrides=overrides)
            except InputError as exc:
                (out / f"var-{path.stem}-{name}.err").write_text(str(exc))
                continue
            result = plan(workload, catalog)
            (out / f"var-{path.stem}-{name}.json").write_text(render(result, "json", RenderOptions()))
            (out / f"var-{path.stem}-{name}.md").write_text(render(result, "markdown", RenderOptions()))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
