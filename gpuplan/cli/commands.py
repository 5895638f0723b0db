"""The typer commands: parse flags, call the library, write the result. No planning logic lives here.

Exit codes: 0 done (every gate passed), 1 a gate failed (infeasible, over budget, validation
miss), 2 bad input or usage, 3 internal error. Data goes to stdout, everything else to stderr.
Heavy modules (planners, networkx, rich) are imported inside the commands that need them. The
CI commands (render, check, diff, tf-external) are in :mod:`gpuplan.cli.ci_commands`. The entry
point, :func:`gpuplan.cli.app.main`, imports this module only when a command is not dispatched
without typer (:mod:`gpuplan.cli.fast`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

if TYPE_CHECKING:
    from gpuplan.hardware.loader import Catalog

from gpuplan.cli.common import (
    EXIT_GATE,
    CatalogOpt,
    AllowOutsideOpt,
    ExitZeroOpt,
    NoColorOpt,
    OldOutOpt,
    OutOpt,
    OutputsOpt,
    QuietOpt,
    SectionOpt,
    VerboseOpt,
    app,
    catalog_app,
    catalog_inputs,
    load_catalog_cli,
    note,
    out_path,
    terminal_width,
)
from gpuplan.cli.run import run_recommend

__all__ = ["app"]


@app.command(short_help="Recommend hardware, layout, network and BOM for a workload.")
def recommend(
    profile: Optional[Path] = typer.Argument(None, help="Workload profile (TOML). Omit for the built-in default."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, markdown, tfvars, tf-external, sarif, junit, github, html."),
    out: Optional[Path] = OutOpt,
    outputs: list[str] = OutputsOpt,
    phase: str = typer.Option("both", "--phase", help="training, serving or both."),
    catalog: Optional[list[Path]] = CatalogOpt,
    quiet: bool = QuietOpt,
    verbose: int = VerboseOpt,
    section: list[str] = SectionOpt,
    no_color: bool = NoColorOpt,
    exit_zero: bool = ExitZeroOpt,
    confidence: Optional[float] = typer.Option(
        None, "--confidence",
        help="Size the plan so its deadline or latency and QPS targets hold at this probability under the "
             "validation residuals of its regime (0.5 to 0.99, e.g. 0.8; docs/calibration.md)."),
    allow_outside_paths: bool = AllowOutsideOpt,
) -> None:
    """\b
    Example:  gpuplan recommend examples/llama-70b-train-serve.toml --format json -o plan.json

    Recommend hardware, layout, network and BOM for a workload, separately for training and serving.
    """
    code = run_recommend(profile, fmt, out, outputs, phase, catalog, quiet, verbose, section, no_color, exit_zero,
                         confidence, allow_outside_paths)
    if code:
        raise typer.Exit(code)


@app.command(short_help="Predict published measurements and report the relative error of each figure.")
def validate(
    files: Optional[list[Path]] = typer.Argument(None, help="Case files (TOML) as in docs/validation.md. "
                                                 "Omit for the published cases packaged with gpuplan."),
    kind: Optional[str] = typer.Option(None, "--kind", help="Only cases of this kind: training, serving or fabric."),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
    catalog: Optional[list[Path]] = CatalogOpt,
    residuals: bool = typer.Option(False, "--residuals", help="Write the residual table of the cases (the "
                                   "statistics behind every interval, catalog/calibration/residuals.toml) "
                                   "and print its leave-one-out coverage (docs/calibration.md)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write the report (with --residuals: the "
                                       "residual TOML) to PATH instead of stdout."),
    old_out: Optional[Path] = OldOutOpt,
    quiet: bool = QuietOpt,
    no_color: bool = NoColorOpt,
) -> None:
    """\b
    Example:  gpuplan validate --kind fabric --format json -o fabric.json

    Predict published measurements and report the relative error of each figure, with its interval
    (low, high) and the coverage of the intervals per kind.
    """
    from gpuplan.ci.validate import KINDS, packaged_files, validate_files
    from gpuplan.core.errors import InputError, expected_one_of
    from gpuplan.core.io import check_output, write_output, write_stdout

    out = out_path(out, old_out, quiet=quiet)
    if fmt not in ("table", "json"):
        raise InputError(f"expected table or json, got {fmt!r}", field="--format")
    if kind is not None and kind not in KINDS:
        raise InputError(f"unknown kind {kind!r}{expected_one_of(KINDS)}", field="--kind")
    kinds = (kind,) if kind else KINDS
    if files:
        paths = names = [str(f) for f in files]
    else:
        packaged = packaged_files(kinds)
        paths, names = list(packaged.values()), list(packaged)
    if residuals:
        _write_residuals(paths, load_catalog_cli(catalog), out, quiet=quiet)
        return
    inputs = [*paths, *catalog_inputs(catalog)]
    if out is not None:
        check_output(out, inputs)
    report = validate_files(paths, load_catalog_cli(catalog), names, kinds)
    if fmt == "json":
        from gpuplan.render.json_ import to_json

        text = to_json(report)
    else:
        from gpuplan.render.validation import render_report

        text = render_report(report)
    if out is None:
        write_stdout(text)
    else:
        write_output(out, text, protect=inputs)
    if not report.ok:
        raise typer.Exit(EXIT_GATE)


def _write_residuals(files: list[str], cat: "Catalog", out: Optional[Path], *, quiet: bool) -> None:
    from gpuplan.ci.residuals import build_table, collect, leave_one_out, source_line, to_toml, today
    from gpuplan.core.io import write_atomic, write_stdout

    points = collect(files, cat)
    text = to_toml(build_table(points, source=source_line(files), day=today()))
    if out is None:
        write_stdout(text)
    else:
        write_atomic(out, text, protect=files)
    for c in leave_one_out(points):
        note(f"leave-one-out {c.kind}: {c.covered}/{c.figures} inside the 80% interval ({c.share * 100:.0f}%), "
             f"median half-width {c.median_half_width * 100:.1f}% of measured", quiet=quiet)


CATALOG_KINDS = {"gpus": "gpus", "fabrics": "fabrics", "switches": "switches", "nics": "nics", "optics": "optics",
                 "models": "models", "parts": "parts"}


def _catalog_command(kind: str) -> None:
    def command(
        ident: Optional[str] = typer.Argument(None, help="Show one record by id (or GPU alias)."),
        fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
        catalog: Optional[list[Path]] = CatalogOpt,
    ) -> None:
        from gpuplan.core.io import write_stdout
        from gpuplan.render.catalog import render_catalog

        write_stdout(render_catalog(load_catalog_cli(catalog), kind, ident, fmt, width=terminal_width()))

    what = ("every priced part (servers, switches, NICs, optics, racks, power, cooling, storage, management) "
            "with its price, date, source and estimate flag" if kind == "parts" else f"the catalog's {kind}")
    command.__doc__ = ("\b\n" f"Example:  gpuplan catalog {kind}" + ("  |  gpuplan catalog gpus h100" if kind == "gpus" else "")
                       + f"\n\nList {what}, or show one with its sources.")
    catalog_app.command(name=kind, short_help=f"List {what}, or show one with its sources.")(command)


for _kind in CATALOG_KINDS:
    _catalog_command(_kind)


@app.command(short_help="Print the JSON Schema of the plan (or of the workload profile).")
def schema(
    kind: str = typer.Option("plan", "--kind", help="plan (the JSON output) or profile (the TOML input)."),
) -> None:
    """\b
    Example:  gpuplan schema > plan.schema.json

    Print the JSON Schema of the plan (or of the workload profile).
    """
    import json

    from gpuplan.core.errors import InputError

    if kind == "plan":
        from gpuplan.core.contract import Plan

        data = Plan.model_json_schema(mode="serialization")
    elif kind == "profile":
        from gpuplan.model.profile import Profile

        data = Profile.model_json_schema()
    else:
        raise InputError(f"expected plan or profile, got {kind!r}", field="--kind")
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")


# Registers render, check, diff and tf-external after the commands above, in help order.
from gpuplan.cli import calibrate_command, ci_commands, sweep  # noqa: E402,F401
