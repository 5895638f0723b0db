"""Bounded work: the most expensive valid profile found (benchmarks/profiles/worst-case.toml)
finishes within a fixed time and memory budget, in a fresh process, as CI would run it.

It is valid (inside every documented limit) and runs both phases on every GPU of the catalog.
The training search bounds at most ``MAX_GROUPS`` layout groups per GPU type (thinning larger
spaces), which holds it to about 11 s on the 2-core machine (docs/security.md, "Time and memory").
With an overlay that fills the catalog to ``MAX_GPUS`` types, every type's share of
``MAX_TOTAL_GROUPS`` shrinks, and the run stays within 30 s of CPU time and 1 GiB (issue 14; it
took 45 s before the shared budget).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.hostile.conftest import ROOT, builtin_catalog

WORST_CASE = ROOT / "benchmarks" / "profiles" / "worst-case.toml"
#: A CI job budget for one ``gpuplan recommend`` of any valid profile on a 2-core runner.
TIME_LIMIT_S = 60.0
MEMORY_LIMIT_MIB = 1024.0
#: CPU seconds the worst case with a full overlay may take (issue 14): CPU time, because wall time
#: on a shared CI machine measures the neighbours too; the wall clock only guards against a hang.
CPU_LIMIT_S = 30.0
WALL_GUARD_S = 240.0


def test_the_worst_case_profile_is_valid():
    """The benchmark profile stays inside the documented limits (else it proves nothing)."""
    from gpuplan.model.profile import load_workload

    workload = load_workload(WORST_CASE, builtin_catalog())
    assert workload.training is not None and workload.serving is not None
    assert workload.arch.is_moe
    assert len(workload.constraints.allow_gpus) == len(builtin_catalog().gpus)  # every GPU is searched


def test_the_worst_case_profile_finishes_in_time_and_memory(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPLAN_")}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "gpuplan", "recommend", str(WORST_CASE), "--format", "json",
                             "-o", str(tmp_path / "plan.json"), "-q"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + TIME_LIMIT_S
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        pytest.fail(f"gpuplan recommend {WORST_CASE.name} ran past {TIME_LIMIT_S:.0f} s")
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.returncode in (0, 1), err
    plan = (tmp_path / "plan.json").read_text()
    assert plan and "thinned" in plan  # the space was capped, and the plan says so
    rss_mib = _child_peak_rss_mib()
    assert rss_mib < MEMORY_LIMIT_MIB, f"peak RSS {rss_mib:.0f} MiB"


def _child_peak_rss_mib() -> float:
    """Peak RSS of the largest child this process has waited for (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def _full_overlay(root) -> None:
    """Copies of the shipped GPU records under new ids, up to MAX_GPUS types in the merged catalog."""
    import re

    from gpuplan.hardware.loader import MAX_GPUS, builtin_dir

    blocks = []
    for path in sorted((builtin_dir() / "gpus").glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        blocks += [b for b in re.split(r"(?m)^(?=\[\[)", text) if b.startswith("[[gpu]]")]
    need = MAX_GPUS - len(builtin_catalog().gpus)
    out = []
    for i in range(need):
        block = re.sub(r"(?m)^aliases = .*\n", "", blocks[i % len(blocks)])
        out.append(re.sub(r'(?m)^id = "([^"]+)"', lambda m: f'id = "{m.group(1)}-copy{i}"', block, count=1))
    (root / "gpus").mkdir(parents=True)
    (root / "gpus" / "copies.toml").write_text("".join(out), encoding="utf-8")


def test_the_worst_case_with_a_full_overlay_stays_in_budget(tmp_path):
    """The most expensive valid profile found, planned on 100 GPU types (issue 14)."""
    import resource

    from gpuplan.hardware.loader import MAX_GPUS, load_catalog

    overlay = tmp_path / "overlay"
    _full_overlay(overlay)
    assert len(load_catalog([overlay]).gpus) == MAX_GPUS
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPLAN_")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen([sys.executable, "-m", "gpuplan", "recommend", str(WORST_CASE), "--format", "json",
                             "-o", str(tmp_path / "plan.json"), "-q", "--catalog", str(overlay)], cwd=tmp_path,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=WALL_GUARD_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"ran past {WALL_GUARD_S:.0f} s of wall time")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode in (0, 1), err.decode()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < CPU_LIMIT_S, f"{cpu:.1f} s of CPU time"
    assert _child_peak_rss_mib() < MEMORY_LIMIT_MIB
    assert "thinned" in (tmp_path / "plan.json").read_text()


def test_an_absurd_checkpoint_cost_makes_the_plan_infeasible_not_a_crash(tmp_path):
    """checkpoint_save_hours = 5e-21 (a generated overlay found it) asks for a checkpoint every few
    nanoseconds: the storage write bandwidth needs 8 million storage ports, more than three tiers
    of any catalog switch. The plan says so; no SizingError reaches the user."""
    from gpuplan.hardware.loader import load_catalog
    from gpuplan.model.profile import default_profile_text, load_profile_text
    from gpuplan.planning.compose import plan_workload

    (tmp_path / "calibration").mkdir()
    (tmp_path / "calibration" / "training.toml").write_text("checkpoint_save_hours = 5e-21\n")
    catalog = load_catalog([tmp_path])
    text, name = default_profile_text()
    plan = plan_workload(load_profile_text(text, name, catalog), catalog, phases=("training",)).training
    assert plan is not None
    assert plan.feasible or any("storage or front-end network" in why for why in plan.infeasible)
