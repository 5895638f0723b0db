"""(h) Sweeps (issue 21), each a fresh ``gpuplan sweep`` process, timed round-robin with
``python -c pass`` so that the ratios divide figures of the same rounds (best of ``repeat``):

* a 50-point QPS sweep of examples/chat-8b-serving.toml: target <= 80x a python start by CPU time;
* a 20-point deadline sweep of the 70B training phase (examples/llama-70b-train-serve.toml,
  ``--phase training``): target >= 20 plans/s by CPU time (the process start included).

    python benchmarks/bench_sweep.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys

from common import EXAMPLES, gpuplan_cmd, interleaved

QPS_POINTS, QPS_RATIO = 50, 80.0
DEADLINE_POINTS, PLANS_PER_S = 20, 20.0


def sweeps(repeat: int) -> dict:
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "qps": gpuplan_cmd() + ["sweep", str(EXAMPLES / "chat-8b-serving.toml"),
                                "--set", f"serving.qps=5:200:{QPS_POINTS}", "--format", "json"],
        "deadline": gpuplan_cmd() + ["sweep", str(EXAMPLES / "llama-70b-train-serve.toml"), "--phase", "training",
                                     "--set", f"training.deadline_days=30:180:{DEADLINE_POINTS}", "--format", "json"],
    }
    runs = interleaved(cmds, repeat)
    bare = min(r.cpu_s for r in runs["python -c pass"])
    bare_wall = min(r.wall_s for r in runs["python -c pass"])
    out: dict = {"python_cpu_s": bare, "python_wall_s": bare_wall}
    for name in ("qps", "deadline"):
        cpu = min(r.cpu_s for r in runs[name])
        out[name] = {"cpu_s": cpu, "best_s": min(r.wall_s for r in runs[name]), "rc": sorted({r.rc for r in runs[name]}),
                     "ratio_to_python": cpu / max(bare, 1e-9)}
    out["qps"]["ok"] = out["qps"]["ratio_to_python"] <= QPS_RATIO and out["qps"]["rc"] == [0]
    out["deadline"]["plans_per_s"] = DEADLINE_POINTS / out["deadline"]["cpu_s"]
    out["deadline"]["ok"] = out["deadline"]["plans_per_s"] >= PLANS_PER_S and out["deadline"]["rc"] == [0]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    r = sweeps(parser.parse_args().repeat)
    print(f"python -c pass: {r['python_cpu_s'] * 1e3:.0f} ms CPU")
    print(f"{QPS_POINTS}-point QPS sweep: {r['qps']['cpu_s']:.2f} s CPU = {r['qps']['ratio_to_python']:.0f}x python "
          f"(target <= {QPS_RATIO:g}x), wall {r['qps']['best_s']:.2f} s")
    print(f"{DEADLINE_POINTS}-point 70B deadline sweep: {r['deadline']['plans_per_s']:.1f} plans/s by CPU "
          f"(target >= {PLANS_PER_S:g}), wall {r['deadline']['best_s']:.2f} s")
    return 0 if r["qps"]["ok"] and r["deadline"]["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
