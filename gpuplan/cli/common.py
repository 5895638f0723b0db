"""What every command shares: the typer app, exit codes, common options, catalog loading, and
:func:`emit`, which renders every requested output before writing any of them atomically.

The commands live in :mod:`gpuplan.cli.app` and :mod:`gpuplan.cli.ci_commands`; both import this module and
nothing imports them back, so there is no import cycle.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from gpuplan.core.version import __version__

if TYPE_CHECKING:
    from gpuplan.hardware.loader import Catalog

EXIT_OK, EXIT_GATE, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

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


def note(message: str, *, quiet: bool = False) -> None:
    """A human message on stderr (never stdout)."""
    from gpuplan.core.errors import one_line

    if not quiet:
        sys.stderr.write(f"gpuplan: {one_line(message)}\n")


def terminal_width() -> int | None:
    """The width tables fit: ``COLUMNS`` when set, else the terminal's when stdout is one; None (no
    limit) on a pipe or in a file."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) >= 20:
        return int(env)
    if sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size((100, 24)).columns
    return None


def load_catalog_cli(catalog_dirs: list[Path] | None) -> "Catalog":
    from gpuplan.hardware.loader import load_catalog

    return load_catalog(catalog_inputs(catalog_dirs))


def catalog_inputs(catalog_dirs: list[Path] | None) -> list[str]:
    """The overlay directories of the run (flags and GPUPLAN_CATALOG): no output may land inside one."""
    env = os.environ.get("GPUPLAN_CATALOG")
    return [p for p in (env or "").split(os.pathsep) if p] + [str(p) for p in catalog_dirs or []]


CatalogOpt = typer.Option(None, "--catalog", help="Overlay catalog directory (repeatable; also GPUPLAN_CATALOG).")
QuietOpt = typer.Option(False, "--quiet", "-q", help="Only the result; no notes on stderr.")
VerboseOpt = typer.Option(0, "--verbose", "-v", count=True, help="More detail in the table report.")
SectionOpt = typer.Option([], "--section", help="Add a part of the table report to the summary (repeatable): "
                          "facts, reasons, network, roofline, layouts, alternatives, bom, fleet, findings, "
                          "assumptions; -v adds all.")
NoColorOpt = typer.Option(False, "--no-color", help="No colour (also NO_COLOR).")
OutOpt = typer.Option(None, "--out", "-o", help="Write the --format output to PATH instead of stdout.")
OutputsOpt = typer.Option([], "--output", help="Also write FORMAT:PATH (repeatable).")
ExitZeroOpt = typer.Option(False, "--exit-zero", help="Exit 0 even when a gate fails.")
AllowOutsideOpt = typer.Option(False, "--allow-outside-paths",
                               help="Let model.hf_config and a saved plan's profile name files outside the directory "
                                    "(or git checkout) of the file naming them.")
PHASES = {"both": ("training", "serving"), "training": ("training",), "serving": ("serving",)}


def parse_outputs(outputs: list[str]) -> list[tuple[str, str]]:
    from gpuplan.core.errors import InputError

    pairs = []
    for spec in outputs:
        fmt, sep, path = spec.partition(":")
        if not sep or not fmt or not path:
            raise InputError(f"expected FORMAT:PATH, got {spec!r}", field="--output")
        pairs.append((fmt, path))
    return pairs


def phases_of(phase: str) -> tuple[str, ...]:
    """The phases a ``--phase`` value names."""
    from gpuplan.core.errors import InputError

    if phase not in PHASES:
        raise InputError(f"expected training, serving or both, got {phase!r}", field="--phase")
    return PHASES[phase]


def check_formats(fmt: str, outputs: list[str], allowed: tuple[str, ...]) -> None:
    """Validate every requested format before planning, so bad flags fail fast and write nothing."""
    from gpuplan.core.errors import InputError, did_you_mean

    for flag, f in [("--format", fmt)] + [("--output", f) for f, _ in parse_outputs(outputs)]:
        if f not in allowed:
            raise InputError(f"unknown format {f!r}{did_you_mean(f, allowed)}; expected one of {', '.join(allowed)}",
                             field=flag)


def emit(plan: Any, fmt: str, out: Optional[Path], outputs: list[str], *, inputs: list[str], color: bool,
         verbose: int, field_lines: Optional[dict[str, int]] = None, sections: Optional[list[str]] = None) -> None:
    """Render once per requested format, then write every output file, all or none
    (:func:`gpuplan.core.outputs.write_files`); stdout last."""
    from gpuplan.core.errors import InputError, did_you_mean
    from gpuplan.core.io import check_output, write_stdout
    from gpuplan.render import RenderOptions, render
    from gpuplan.core.outputs import write_files

    from gpuplan.core.contract import Plan
    from gpuplan.planning.saved import as_published

    if isinstance(plan, Plan):
        plan = as_published(plan)
    targets = [(fmt, str(out) if out else "-")] + parse_outputs(outputs)
    seen: dict[str, str] = {}
    for _, path in targets:  # every target is checked before any file is written
        if path != "-":
            check_output(path, inputs)
        where = "-" if path == "-" else os.path.realpath(path)
        if where in seen:
            raise InputError(f"two outputs write to {'stdout' if path == '-' else repr(path)}; give each its own "
                             "destination", field="--output")
        seen[where] = path
    from gpuplan.render.sections import SECTIONS

    for name in sections or []:
        if name not in SECTIONS:
            raise InputError(f"unknown section {name!r}{did_you_mean(name, tuple(SECTIONS))}; expected one of "
                             f"{', '.join(SECTIONS)}", field="--section")
    use_color = color and not os.environ.get("NO_COLOR") and sys.stdout.isatty()
    rendered = []
    for f, path in targets:  # render everything before writing anything
        options = RenderOptions(color=use_color and path == "-", verbose=verbose, field_lines=field_lines,
                                sections=frozenset(sections or ()),
                                width=(terminal_width() or 100) if path == "-" else 100)
        rendered.append((path, render(plan, f, options)))
    # every file is written to a temporary file first and renamed only when all are: all or none
    write_files([(path, text) for path, text in rendered if path != "-"], protect=inputs)
    for path, text in rendered:
        if path == "-":
            write_stdout(text)
