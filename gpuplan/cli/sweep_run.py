"""The body of ``gpuplan sweep``, without typer: the typer command (:mod:`gpuplan.cli.sweep`) and a
plain ``gpuplan sweep`` dispatched by :mod:`gpuplan.cli.fast` both call :func:`run_sweep_command`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from gpuplan.cli.run import catalog_inputs, load_catalog_cli, phases_of, read_profile

MAX_JOBS = 64


def run_sweep_command(profile: Optional[Path], sets: list[str], log: bool, fmt: str, out: Optional[Path], phase: str,
                      jobs: int, catalog: Optional[list[Path]], quiet: bool, no_color: bool) -> int:
    """Plan the profile at every point of the grid and write it; the exit code (0; bad input raises
    :class:`~gpuplan.core.errors.InputError`)."""
    from gpuplan.core.errors import InputError
    from gpuplan.core.io import check_output, write_output, write_stdout
    from gpuplan.model.profile import default_profile_text
    from gpuplan.planning.sweep import parse_set, run_sweep
    from gpuplan.render.sweep import SWEEP_FORMATS, render_sweep

    if fmt not in SWEEP_FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(SWEEP_FORMATS)}", field="--format")
    if not sets:
        raise InputError("give at least one --set FIELD=START:STOP:N or FIELD=a,b,c", field="--set")
    if not 1 <= jobs <= MAX_JOBS:
        raise InputError(f"expected 1 to {MAX_JOBS} jobs, got {jobs}", field="--jobs")
    phases = phases_of(phase)
    parsed = [parse_set(s, log=log) for s in sets]
    overlays = catalog_inputs(catalog)
    inputs = ([str(profile)] if profile else []) + overlays
    if out is not None:
        check_output(str(out), inputs)
    text, name = (read_profile(profile, "sweep"), str(profile)) if profile else default_profile_text()
    cat = load_catalog_cli(catalog)
    bar = _Progress(enabled=not quiet and sys.stderr.isatty(), color=not no_color)
    with bar:
        result = run_sweep(text, name, parsed, cat, overlays=overlays, phases=phases, jobs=jobs, on_point=bar.update)
    rendered = render_sweep(result, fmt)
    if out is None:
        write_stdout(rendered)
    else:
        write_output(str(out), rendered, protect=inputs)
    return 0


class _Progress:
    """A progress bar on stderr, only on a terminal (never in pipes or CI logs)."""

    def __init__(self, *, enabled: bool, color: bool) -> None:
        self.enabled, self.color, self.bar, self.task = enabled, color, None, None

    def __enter__(self) -> "_Progress":
        if self.enabled:
            from rich.console import Console
            from rich.progress import Progress

            console = Console(file=sys.stderr, stderr=True, no_color=None if self.color else True)
            self.bar = Progress(console=console, transient=True)
            self.bar.__enter__()
        return self

    def update(self, done: int, total: int) -> None:
        if self.bar is not None:
            if self.task is None:
                self.task = self.bar.add_task("planning", total=total)
            self.bar.update(self.task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
