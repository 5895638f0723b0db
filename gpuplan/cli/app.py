"""Command line: parse flags, call the library, write the result. No planning logic lives here.

Exit codes: 0 done (every gate passed), 1 a gate failed (infeasible, over budget, validation
miss), 2 bad input or usage, 3 internal error. Data goes to stdout, everything else to stderr.
Heavy modules (planners, networkx, rich) are imported inside the commands that need them. The
CI commands (render, check, diff, tf-external) are in :mod:`gpuplan.cli.ci_commands`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

if TYPE_CHECKING:
    from gpuplan.hardware.loader import Catalog

from gpuplan.cli.common import (
    EXIT_GATE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    CatalogOpt,
    AllowOutsideOpt,
    ExitZeroOpt,
    NoColorOpt,
    OutOpt,
    OutputsOpt,
    QuietOpt,
    SectionOpt,
    VerboseOpt,
    app,
    catalog_app,
    catalog_inputs,
    check_formats,
    emit,
    load_catalog_cli,
    note,
    phases_of,
    terminal_width,
)

__all__ = ["app", "main"]


def _default_profile_text() -> tuple[str, str]:
    from gpuplan.model.profile import default_profile_text

    return default_profile_text()


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
        None, "--confidence", min=0.5, max=0.99,
        help="Size the plan so its deadline or latency and QPS targets hold at this probability under the "
             "validation residuals of its regime (e.g. 0.8; docs/calibration.md)."),
    allow_outside_paths: bool = AllowOutsideOpt,
) -> None:
    """\b
    Example:  gpuplan recommend examples/llama-70b-train-serve.toml --format json -o plan.json

    Recommend hardware, layout, network and BOM for a workload, separately for training and serving.
    """
    from gpuplan.core.errors import InputError
    from gpuplan.core.io import read_text
    from gpuplan.planning.compose import plan_workload
    from gpuplan.model.profile import load_profile_text
    from gpuplan.render import FORMATS, progress

    phases = phases_of(phase)
    check_formats(fmt, outputs, tuple(FORMATS))
    cat = load_catalog_cli(catalog)
    if profile is None:
        text, name = _default_profile_text()
        note(f"no profile given; planning the built-in default ({name[1:-1].split(': ')[1]}, see examples/default.toml)",
             quiet=quiet)
    else:
        text, name = read_text(profile), str(profile)
    workload = load_profile_text(text, name, cat, allow_outside_paths=allow_outside_paths)
    missing = [p for p in phases if getattr(workload, p) is None]
    if phase != "both" and missing:
        raise InputError(f"the profile has no [{missing[0]}] table to plan", file=name, field="--phase")
    with progress(f"planning {workload.name}", quiet=quiet, color=not no_color):
        if confidence is None:
            result = plan_workload(workload, cat, phases=phases)
        else:
            from gpuplan.planning.api import plan

            result = plan(workload, cat, phases=phases, confidence=confidence)
    inputs = ([str(profile)] if profile else []) + list(workload.input_files) + catalog_inputs(catalog)
    emit(result, fmt, out, outputs, inputs=inputs, color=not no_color, verbose=verbose,
         field_lines=workload.field_lines, sections=section)
    errors = [f for f in result.findings if f.severity == "error"]
    for f in errors:
        note(f"{f.phase}: {f.message}", quiet=quiet)
    if errors and not exit_zero:
        raise typer.Exit(EXIT_GATE)


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
    out: Optional[Path] = typer.Option(None, "--output", "-o", help="With --residuals: the TOML file to write "
                                       "(stdout when left out)."),
) -> None:
    """\b
    Example:  gpuplan validate --kind fabric --format json

    Predict published measurements and report the relative error of each figure, with its interval
    (low, high) and the coverage of the intervals per kind.
    """
    from gpuplan.ci.validate import KINDS, packaged_files, validate_files
    from gpuplan.core.errors import InputError, expected_one_of
    from gpuplan.core.io import write_stdout

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
        _write_residuals(paths, load_catalog_cli(catalog), out)
        return
    if out is not None:
        raise InputError("--output goes with --residuals", field="--output")
    report = validate_files(paths, load_catalog_cli(catalog), names, kinds)
    if fmt == "json":
        from gpuplan.render.json_ import to_json

        write_stdout(to_json(report))
    else:
        from gpuplan.render.validation import render_report

        write_stdout(render_report(report))
    if not report.ok:
        raise typer.Exit(EXIT_GATE)


def _write_residuals(files: list[str], cat: "Catalog", out: Optional[Path]) -> None:
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
             f"median half-width {c.median_half_width * 100:.1f}% of measured")


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


def _is_click(exc: BaseException, name: str) -> bool:
    """Typer may vendor click (typer._click) or use click itself: match by class name."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every failure into one stderr line and an exit code."""
    from gpuplan.core.errors import GpuplanError, one_line

    from gpuplan.core.collector import collector_paused

    args = sys.argv[1:] if argv is None else argv
    command = typer.main.get_command(app)
    try:
        # One command of one process: its imports (model classes) and plans make next to no cyclic
        # garbage, yet the collector's passes over them cost a tenth of a cold recommend
        # (core/collector.py); paused for the command, restored for a caller that goes on.
        with collector_paused():
            code = command.main(args=args, prog_name="gpuplan", standalone_mode=False)
    except GpuplanError as exc:
        sys.stderr.write(f"gpuplan: error: {one_line(exc)}\n")
        code = exc.exit_code
    except BrokenPipeError:
        code = EXIT_OK
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into exit 3
        if _is_click(exc, "Exit"):
            code = getattr(exc, "exit_code", EXIT_OK)
        elif _is_click(exc, "Abort"):
            sys.stderr.write("gpuplan: aborted\n")
            code = 130
        elif _is_click(exc, "ClickException"):
            message = exc.format_message()  # type: ignore[attr-defined]
            sys.stderr.write(f"gpuplan: error: {one_line(message)}\n")
            code = EXIT_INPUT
        elif os.environ.get("GPUPLAN_DEBUG"):
            import traceback

            traceback.print_exc()  # the traceback, and still exit 3: a bug must not read as a failed gate
            code = EXIT_INTERNAL
        else:
            sys.stderr.write(f"gpuplan: internal error: {type(exc).__name__}: {one_line(exc, limit=300)} "
                             "(set GPUPLAN_DEBUG=1 for a traceback)\n")
            code = EXIT_INTERNAL
    sys.stdout.flush()
    raise SystemExit(code if isinstance(code, int) else EXIT_OK)


# Registers render, check, diff and tf-external after the commands above, in help order.
from gpuplan.cli import calibrate_command, ci_commands, sweep  # noqa: E402,F401
