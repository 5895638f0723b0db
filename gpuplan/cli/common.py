"""What every typer command shares: the typer app, its ``--version`` and the common options.

The plain helpers (exit codes, catalog loading, :func:`emit`, which renders every requested output
before writing any of them atomically) live in :mod:`gpuplan.cli.run`, which imports no typer, and
are re-exported here. The commands live in :mod:`gpuplan.cli.commands`,
:mod:`gpuplan.cli.ci_commands`, :mod:`gpuplan.cli.sweep` and :mod:`gpuplan.cli.calibrate_command`;
they import this module and nothing imports them back, so there is no import cycle.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from gpuplan.cli.run import (  # noqa: F401  (re-exported for the commands)
    EXIT_GATE, EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, PHASES, catalog_inputs, check_formats, emit, load_catalog_cli,
    note, note_table_only, parse_outputs, phases_of, terminal_width,
)
from gpuplan.core.version import __version__

app = typer.Typer(
    name="gpuplan",
    help="\b\nExample:  gpuplan recommend examples/llama-70b-train-serve.toml --format json\n\n"
         "Plan GPU clusters for training and serving: SKU, count, layout, fabric, topology and BOM.\n\n"
         "Exit codes: 0 ok, 1 a gate failed, 2 bad input, 3 internal error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
catalog_app = typer.Typer(
    help="\b\nExample:  gpuplan catalog gpus    |    gpuplan catalog gpus h100\n\nList and show catalog records.",
    short_help="List and show catalog records.",
    no_args_is_help=True, rich_markup_mode=None,
)
app.add_typer(catalog_app, name="catalog")


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gpuplan {__version__}\n")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """gpuplan."""


CatalogOpt = typer.Option(None, "--catalog", help="Overlay catalog directory (repeatable; also GPUPLAN_CATALOG).")
QuietOpt = typer.Option(False, "--quiet", "-q", help="Only the result; no notes on stderr.")
VerboseOpt = typer.Option(0, "--verbose", "-v", count=True, help="More detail in the table report.")
SectionOpt = typer.Option([], "--section", help="Add a part of the table report to the summary (repeatable): "
                          "facts, reasons, network, roofline, layouts, alternatives, bom, fleet, findings, "
                          "assumptions; -v adds all.")
NoColorOpt = typer.Option(False, "--no-color", help="No colour (also NO_COLOR).")
OutOpt = typer.Option(None, "--out", "-o", help="Write the --format output to PATH instead of stdout.")
OutputsOpt = typer.Option([], "--output", help="Also write FORMAT:PATH (repeatable).")
#: ``--output PATH``: the old spelling of ``-o/--out`` in ``validate`` and ``calibrate`` (hidden; see
#: :func:`out_path`), kept because scripts and CI pass it; elsewhere ``--output`` is FORMAT:PATH.
OldOutOpt = typer.Option(None, "--output", hidden=True, help="Old spelling of -o/--out in this command.")
ExitZeroOpt = typer.Option(False, "--exit-zero", help="Exit 0 even when a gate fails.")


def out_path(out: Optional[Path], old: Optional[Path], *, quiet: bool) -> Optional[Path]:
    """The ``-o/--out`` path of a command that used to spell it ``--output PATH`` (``old``): either
    spelling, with a note that the old one is old; both at once is bad input."""
    from gpuplan.core.errors import InputError

    if old is None:
        return out
    if out is not None:
        raise InputError("give the output path once, with -o/--out (--output PATH is its old spelling in this "
                         "command)", field="--output")
    fmt, sep, path = str(old).partition(":")
    if sep and path and len(fmt) > 1 and fmt.isalpha():  # FORMAT:PATH as other commands take it, not a file name
        raise InputError(f"this command writes one report: expected --format {fmt} -o {path}, got --output {old}",
                         field="--output")
    note("--output PATH is the old spelling of -o/--out in this command; use -o/--out", quiet=quiet)
    return old


AllowOutsideOpt = typer.Option(False, "--allow-outside-paths",
                               help="Let model.hf_config and a saved plan's profile name files outside the directory "
                                    "(or git checkout) of the file naming them.")
