"""Shared helpers of the benchmark modules: paths, child processes with their peak RSS, timers,
bytecode caching and growth exponents."""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PROFILES = Path(__file__).resolve().parent / "profiles"
VALIDATION = ROOT.parent / "shared" / "validation"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Child processes write their bytecode here (not into the repository), so that cold starts are
#: measured as after ``pip install``, which compiles every module; the first run fills it.
PYCACHE = Path(tempfile.gettempdir()) / "gpuplan-bench-pycache"

#: One install tree per checkout (two worktrees benchmarking at once must not rebuild each other's
#: tree under a running child); stable across runs, so the bytecode in :data:`PYCACHE` stays warm.
_CHECKOUT = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]


#: Child processes import gpuplan from here: the package laid out as its wheel installs it, with
#: ``gpuplan/_catalog/`` and the pre-parsed ``gpuplan/_catalog.json`` that the wheel build writes
#: (hatch_build.py), so that a cold start reads the catalog as a user's does. Rebuilt from this
#: checkout once per benchmark process.
INSTALL = Path(tempfile.gettempdir()) / f"gpuplan-bench-install-{_CHECKOUT}"
_installed: list[Path] = []


def install_tree() -> Path:
    """:data:`INSTALL`, rebuilt from this checkout on the first call of the process."""
    if not _installed:
        from gpuplan.hardware.catalog_build import write_preparsed

        shutil.rmtree(INSTALL, ignore_errors=True)
        shutil.copytree(ROOT / "gpuplan", INSTALL / "gpuplan",
                        ignore=shutil.ignore_patterns("__pycache__", "_catalog.json"))
        shutil.copytree(ROOT / "catalog", INSTALL / "gpuplan" / "_catalog")
        write_preparsed(ROOT / "catalog", INSTALL / "gpuplan" / "_catalog.json")
        _installed.append(INSTALL)
    return _installed[0]


def child_env(*, installed: bool = True) -> dict[str, str]:
    """The environment of a child process: bytecode cached, no catalog overlay, no colour; with
    ``installed``, gpuplan imported from :func:`install_tree` (``PYTHONSAFEPATH``: not from the
    working directory that ``python -c`` and ``-m`` would otherwise put first)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    if installed:
        env["PYTHONPATH"] = os.pathsep.join([str(install_tree()), *filter(None, [env.get("PYTHONPATH")])])
        env["PYTHONSAFEPATH"] = "1"
    env.pop("GPUPLAN_CATALOG", None)
    env["NO_COLOR"] = "1"
    return env


def gpuplan_cmd() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m gpuplan``."""
    script = Path(sys.executable).with_name("gpuplan")
    if script.exists():
        return [str(script)]
    found = shutil.which("gpuplan")
    return [found] if found else [sys.executable, "-m", "gpuplan"]


class Child:
    """Wall time, peak RSS and exit status of one child process."""

    __slots__ = ("cpu_s", "rc", "rss_mib", "stdout", "wall_s")

    def __init__(self, wall_s: float, cpu_s: float, rss_mib: float, rc: int, stdout: bytes):
        self.wall_s, self.cpu_s, self.rss_mib, self.rc, self.stdout = wall_s, cpu_s, rss_mib, rc, stdout


def run_child(cmd: Sequence[str], *, capture: bool = False, cwd: Path = ROOT) -> Child:
    """Run ``cmd`` once; peak RSS from wait4 (the child's own, not the runner's)."""
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.DEVNULL, cwd=cwd, env=child_env())
    data = proc.stdout.read() if capture and proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stdout:
        proc.stdout.close()
    return Child(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, proc.returncode, data)


def interleaved(cmds: dict[str, Sequence[str]], repeat: int) -> dict[str, list[Child]]:
    """Run every command ``repeat`` times, round-robin, so that load from other processes on
    the machine falls on all of them alike. One untimed warm-up run each fills the caches."""
    for cmd in cmds.values():
        run_child(cmd)
    runs: dict[str, list[Child]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            runs[name].append(run_child(cmd))
    return runs


class Timing(NamedTuple):
    best_s: float     # least wall seconds of the runs
    median_s: float   # median wall seconds
    cpu_s: float      # least CPU seconds of the runs (what the wall time would be on an idle core)
    result: object    # what the last run returned


def best_of(fn: Callable[[], object], repeat: int) -> Timing:
    """Wall and CPU seconds of ``fn`` over ``repeat`` runs after one warm-up, and its result.

    The planners' memos are emptied before every run (gpuplan.planning.memo): each run plans from
    scratch, as a fresh process does, instead of finding the previous run's searches."""
    from gpuplan.planning.memo import clear_memos

    result = fn()
    times, cpu = [], []
    for _ in range(max(1, repeat)):
        clear_memos()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return Timing(min(times), statistics.median(times), min(cpu), result)


def growth_exponent(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(y) on log(x): 1 is linear, 0 constant, 2 quadratic."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else 0.0


def growth_words(k: float) -> str:
    if k < 0.25:
        return "about constant"
    if k < 0.8:
        return "sub-linear"
    if k <= 1.2:
        return "about linear"
    if k <= 1.6:
        return "n log n-like"
    return "super-linear"
