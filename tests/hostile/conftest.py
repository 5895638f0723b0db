"""Shared machinery of the hostile-input suite: hypothesis profiles, an in-process CLI runner that
needs no function-scoped fixture, outcome checks, hostile value strategies and a small TOML writer.

Every property test comes in two flavours built by :func:`twin`: a fast one in the default run
(a few hundred examples at most) and a ``slow`` one with about ten times as many (``-m slow``).
Both are derandomized, so CI runs the same cases every time, and have no deadline (CI machines
are slow and noisy).
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import math
import os
import re
import sys
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as _event
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st

from tests.conftest import Run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# -- hypothesis profiles ------------------------------------------------------------------------

_COMMON = dict(
    derandomize=True,          # same cases on every CI run
    deadline=None,             # CI machines are slow and noisy; boundedness is tested separately
    database=None,             # no .hypothesis/ directory in CI workspaces
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("gpuplan-hostile", max_examples=100, **_COMMON)
settings.register_profile("gpuplan-hostile-slow", max_examples=1000, **_COMMON)
#: Ratio of examples between the ``slow`` twin and the default one.
SLOW_FACTOR = 10
#: (test name, fast examples, slow examples) of every property test, for the report in docs/security.md.
BUDGET: list[tuple[str, int, int]] = []


_SLOW_MODE = [False]


def slow_mode() -> bool:
    """True inside the ``slow`` twin of a property test (full-size plans, all GPUs)."""
    return _SLOW_MODE[0]


def twin(check: Callable[[Any], None], strategy: st.SearchStrategy[Any], *, fast: int,
         slow: int | None = None, slow_strategy: st.SearchStrategy[Any] | None = None
         ) -> tuple[Callable[..., None], Callable[..., None]]:
    """Two hypothesis tests of ``check`` over ``strategy``: ``fast`` examples, and a slow-marked twin
    with ``slow`` examples (default ``SLOW_FACTOR`` times as many) over ``slow_strategy``.

    In the fast twin a valid workload is planned on at most two of its allowed GPUs (chosen per
    input, deterministically) so that thousands of cases fit in the default run; the slow twin
    plans on every allowed GPU. Use as ``test_x, test_x_slow = twin(check, strategy, fast=200)``.
    """
    slow = slow if slow is not None else fast * SLOW_FACTOR
    BUDGET.append((check.__name__, fast, slow))

    def build(n: int, profile: str, marked: bool, strat: st.SearchStrategy[Any]) -> Callable[..., None]:
        @settings(settings.get_profile(profile), max_examples=n)
        @given(strat)
        def test(case: Any) -> None:
            _SLOW_MODE[0] = marked
            try:
                check(case)
            finally:
                _SLOW_MODE[0] = False

        test.__name__ = test.__qualname__ = f"test_{check.__name__.lstrip('_')}" + ("_slow" if marked else "")
        test.__doc__ = check.__doc__
        return pytest.mark.slow(test) if marked else test

    return (build(fast, "gpuplan-hostile", False, strategy),
            build(slow, "gpuplan-hostile-slow", True, strategy if slow_strategy is None else slow_strategy))


# -- the catalog and the planners ---------------------------------------------------------------

@lru_cache(maxsize=1)
def builtin_catalog() -> Any:
    from gpuplan.hardware import load_catalog

    return load_catalog()


# -- running the CLI in-process -----------------------------------------------------------------

_ENV_KEYS = ("GPUPLAN_CATALOG", "GPUPLAN_DEBUG", "NO_COLOR")


@contextmanager
def environment(env: dict[str, str] | None = None, cwd: str | os.PathLike[str] | None = None) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in (*_ENV_KEYS, *(env or {}))}
    old_cwd = os.getcwd()
    for k in _ENV_KEYS:
        os.environ.pop(k, None)
    os.environ.update(env or {})
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(old_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
            stdin: str = "") -> Run:
    """``gpuplan ARGS`` in this process (no fixture, so hypothesis can call it per example)."""
    from gpuplan.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with environment(env, cwd), redirect_stdout(out), redirect_stderr(err):
            try:
                main(list(args))
                code: Any = 0
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.stdin = old_stdin
    if code is None:
        code = 0
    return Run(code if isinstance(code, int) else -1, out.getvalue(), err.getvalue())


#: An error line longer than this is not "one clear line" (it echoes input back).
MAX_ERROR_LINE = 1000


def assert_outcome(run: Run, *, allowed: tuple[int, ...] = (0, 1, 2), json_out: bool = False) -> None:
    """The CI contract: a result (0), a failed gate (1) or one clear error line (2); never 3."""
    assert "Traceback" not in run.err, run
    assert "internal error" not in run.err, run
    assert run.code in allowed, run
    if run.code == 2:
        # exactly one error line; anything else on stderr is a "gpuplan: " note printed before it
        lines = run.err.strip("\n").split("\n")
        assert len(run.err.splitlines()) == len(lines), run  # no hidden separator (\x85, U+2028, ...)
        errors = [line for line in lines if line.startswith("gpuplan: error: ")]
        assert len(errors) == 1 and lines[-1] == errors[0], run
        assert all(line.startswith("gpuplan: ") for line in lines), run
        assert len(errors[0]) <= MAX_ERROR_LINE, run
    elif json_out and run.code in (0, 1) and run.out:
        json.loads(run.out, parse_constant=_no_constant)


def _no_constant(token: str) -> Any:
    raise AssertionError(f"non-finite number {token} in JSON output")


def assert_input_error(exc: BaseException) -> None:
    """A library-level refusal: an InputError with one short line (what the CLI prints)."""
    from gpuplan.core.errors import InputError

    assert isinstance(exc, InputError), f"{type(exc).__name__}: {exc}"
    text = str(exc)
    assert text and "\n" not in text and "\r" not in text, repr(text)
    assert len(text) <= MAX_ERROR_LINE - 20, text[:300]


def finite_everywhere(value: Any, path: str = "plan") -> None:
    if isinstance(value, float):
        assert math.isfinite(value), f"{path} = {value}"
    elif isinstance(value, dict):
        for k, v in value.items():
            finite_everywhere(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            finite_everywhere(v, f"{path}[{i}]")


def check_plan(plan: Any) -> None:
    """A plan from hostile input: finite numbers, JSON-renderable, and plain about infeasibility."""
    from gpuplan.render import render

    data = plan.model_dump(mode="python")
    finite_everywhere(data)
    json.loads(render(plan, "json"), parse_constant=_no_constant)
    for phase in ("training", "serving"):
        result = getattr(plan, phase)
        if result is not None and not result.feasible:
            errors = [f for f in plan.findings if f.phase == phase and f.severity == "error"]
            assert errors and all(f.message.strip() for f in errors), f"{phase} infeasible without a reason"


def event(label: str) -> None:
    """Count an outcome in ``--hypothesis-show-statistics`` (a no-op outside hypothesis)."""
    if currently_in_test_context():
        _event(label)


#: GPUs a valid workload is planned on in the fast twins (all of them in the slow ones).
FAST_MAX_GPUS = 2


def _fewer_gpus(workload: Any, text: str) -> Any:
    """The workload restricted to FAST_MAX_GPUS of its allowed GPUs, picked by a hash of the input."""
    import dataclasses
    import hashlib
    import random

    allowed = list(workload.constraints.allow_gpus)
    if slow_mode() or len(allowed) <= FAST_MAX_GPUS:
        return workload
    seed = hashlib.sha256((text + repr(workload.arch)).encode()).digest()
    keep = tuple(sorted(random.Random(seed).sample(allowed, FAST_MAX_GPUS)))
    return dataclasses.replace(workload, constraints=dataclasses.replace(workload.constraints, allow_gpus=keep))


def plan_text(text: str, name: str, catalog: Any = None, *, phases: tuple[str, ...] = ("training", "serving")) -> str:
    """Profile text -> 'error' (a clean InputError) or 'plan' (checked).

    Parsing and validation always run on the text as given; in a fast twin the plan is made on at
    most FAST_MAX_GPUS of the allowed GPUs (see :func:`twin`)."""
    from gpuplan.core.errors import InputError
    from gpuplan.model.profile import load_profile_text

    cat = catalog or builtin_catalog()
    try:
        workload = load_profile_text(text, name, cat)
    except InputError as exc:
        assert_input_error(exc)
        event("profile refused")
        return "error"
    from gpuplan.planning.compose import plan_workload

    try:
        plan = plan_workload(_fewer_gpus(workload, text), cat, phases=phases)
    except InputError as exc:
        assert_input_error(exc)
        event("refused by a planner")
        return "error"
    check_plan(plan)
    event("planned: " + ", ".join(f"{p} {'feasible' if getattr(plan, p).feasible else 'infeasible'}"
                                  for p in ("training", "serving") if getattr(plan, p) is not None))
    return "plan"


# -- hostile values and a TOML writer -------------------------------------------------------------

HOSTILE_SCALARS: list[Any] = [
    0, -1, 1, 2, 3, 7, 2**31, 2**63, -(2**63), 10**20, 10**80, 0.0, -0.0, 1e-300, 5e-324, 0.5, 1.5, -2.5,
    1e30, -1e30, 1e308, float("nan"), float("inf"), float("-inf"), True, False, "", " ", "x", "1e12", "nan",
    "h100", "llama-2-7b", "nvidia", "bf16", "p99", "../../etc/passwd", "\u00e9\u4e2d\U0001f600", "a" * 300,
    _dt.date(2024, 1, 1), [], [1, "a"], {}, {"a": 1},
]


def hostile_values() -> st.SearchStrategy[Any]:
    scalar = st.one_of(
        st.sampled_from(HOSTILE_SCALARS),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=12),
        st.booleans(),
    )
    return st.one_of(scalar, scalar, st.lists(scalar, max_size=3), st.dictionaries(st.text(max_size=6), scalar, max_size=2))


def log_floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(math.log(lo), math.log(hi)).map(lambda x: min(max(math.exp(x), lo), hi))


def maybe_hostile(valid: st.SearchStrategy[Any], one_in: int = 12) -> st.SearchStrategy[Any]:
    """Mostly ``valid``; one draw in ``one_in`` a hostile value."""
    return st.integers(0, one_in - 1).flatmap(lambda i: hostile_values() if i == 0 else valid)


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_key(k: str) -> str:
    return k if _BARE.match(k) else toml_string(k)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def to_toml(data: dict[str, Any]) -> str:
    """TOML for a dict: top-level scalars first, then one ``[table]`` per dict value."""
    head = [f"{toml_key(k)} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    body = []
    for k, v in data.items():
        if isinstance(v, dict):
            body.append(f"\n[{toml_key(k)}]")
            body += [f"{toml_key(str(kk))} = {toml_value(vv)}" for kk, vv in v.items()]
    return "\n".join(head + body) + "\n"


def example_texts() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.toml"))]


@pytest.fixture(autouse=True)
def _no_stray_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUPLAN_CATALOG", raising=False)
    monkeypatch.delenv("GPUPLAN_DEBUG", raising=False)


def python() -> str:
    return sys.executable
