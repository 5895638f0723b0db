"""``gpuplan sweep``: plan one profile over a grid of field values (:mod:`gpuplan.planning.sweep`).

Registered on the app by the import at the end of :mod:`gpuplan.cli.commands`; the body is
:func:`gpuplan.cli.sweep_run.run_sweep_command`, which a plain ``gpuplan sweep`` runs without typer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gpuplan.cli.common import CatalogOpt, NoColorOpt, OutOpt, QuietOpt, app
from gpuplan.cli.sweep_run import MAX_JOBS, run_sweep_command  # noqa: F401  (MAX_JOBS re-exported)


@app.command(short_help="Plan a profile at every point of a grid of field values (what-if).")
def sweep(
    profile: Optional[Path] = typer.Argument(None, help="Workload profile (TOML). Omit for the built-in default."),
    sets: list[str] = typer.Option([], "--set", help="FIELD=START:STOP:N or FIELD=a,b,c (repeatable: a grid)."),
    log: bool = typer.Option(False, "--log", help="Space START:STOP:N values geometrically."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, csv or html."),
    out: Optional[Path] = OutOpt,
    phase: str = typer.Option("both", "--phase", help="training, serving or both."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Worker processes (the output does not depend on it)."),
    catalog: Optional[list[Path]] = CatalogOpt,
    quiet: bool = QuietOpt,
    no_color: bool = NoColorOpt,
) -> None:
    """\b
    Example:  gpuplan sweep examples/chat-8b-serving.toml --set serving.qps=5:80:6 --format csv

    Plan a profile at every point of a grid of field values; the grid is the product of every --set.
    """
    run_sweep_command(profile, sets, log, fmt, out, phase, jobs, catalog, quiet, no_color)
