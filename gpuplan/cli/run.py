"""The commands' plain helpers and the body of ``recommend``, without typer.

A cold ``gpuplan recommend`` (and ``--version``) is dispatched by :mod:`gpuplan.cli.app` straight
to :func:`run_recommend` when its arguments are plain (:mod:`gpuplan.cli.fast`), so this module
imports neither typer nor anything heavy at import; the typer command in
:mod:`gpuplan.cli.commands` calls the same function, so both paths run the same code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from gpuplan.hardware.loader import Catalog

EXIT_OK, EXIT_GATE, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


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


def phases_of(phase: str, *, file: str | None = None, field: str = "--phase") -> tuple[str, ...]:
    """The phases a ``--phase`` value (or the ``field`` of ``file`` that holds one) names."""
    from gpuplan.core.errors import InputError

    if phase not in PHASES:
        raise InputError(f"expected training, serving or both, got {phase!r}", file=file, field=field)
    return PHASES[phase]


def check_formats(fmt: str, outputs: list[str], allowed: tuple[str, ...]) -> None:
    """Validate every requested format before planning, so bad flags fail fast and write nothing."""
    from gpuplan.core.errors import InputError, did_you_mean

    for flag, f in [("--format", fmt)] + [("--output", f) for f, _ in parse_outputs(outputs)]:
        if f not in allowed:
            raise InputError(f"unknown format {f!r}{did_you_mean(f, allowed)}; expected one of {', '.join(allowed)}",
                             field=flag)


def note_table_only(fmt: str, outputs: list[str], verbose: int, sections: list[str], *, quiet: bool) -> None:
    """Say that ``-v`` and ``--section`` shape the table report only, when no output written was a table."""
    given = [flag for flag, on in (("-v", verbose), ("--section", sections)) if on]
    if given and "table" not in [fmt, *(f for f, _ in parse_outputs(outputs))]:
        note(f"{' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} to the table format only; "
             f"ignored with --format {fmt}", quiet=quiet)


def emit(plan: Any, fmt: str, out: Optional[Path], outputs: list[str], *, inputs: list[str], color: bool,
         verbose: int, field_lines: Optional[dict[str, int]] = None, sections: Optional[list[str]] = None) -> None:
    """Render once per requested format, then write every output file, all or none
    (:func:`gpuplan.core.outputs.write_files`); stdout last."""
    from gpuplan.core.errors import InputError, did_you_mean
    from gpuplan.core.io import check_output, write_stdout
    from gpuplan.render import RenderOptions, render
    from gpuplan.core.outputs import write_files

    from gpuplan.core.contract import Plan

    targets = [(fmt, str(out) if out else "-")] + parse_outputs(outputs)
    if isinstance(plan, Plan) and any(f != "json" for f, _ in targets):
        # The renderers get the published figures; JSON alone needs no copy: its encoder rounds each
        # number by the same rule under the same key (stable_json.rounded), and a rounded number
        # rounds to itself, so it writes the same bytes from the plan as planned (a third of emit).
        from gpuplan.planning.saved import as_published

        plan = as_published(plan)
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


def read_profile(path: Path, command: str) -> str:
    """A profile's text; a JSON document is refused naming its kind (a saved plan, a check or diff
    result, a cluster: gpuplan/core/documents.py) and what to run instead: read as TOML it failed
    with 'line 1, column 1: TOML syntax error'."""
    import json

    from gpuplan.core.documents import PLAN, PROFILE, document_kind
    from gpuplan.core.errors import InputError
    from gpuplan.core.io import read_text

    text = read_text(path)
    if text.lstrip().startswith("{"):  # no TOML document starts with '{'
        try:
            kind = document_kind(json.loads(text), toml=False)
        except (ValueError, RecursionError):
            kind = None
        # a plan, or JSON of no known kind, may be a plan to re-render; a check, diff or cluster is not
        hint = " (a saved plan is re-rendered by 'gpuplan render PLAN.json')" if kind in (None, PLAN) else ""
        raise InputError(f"{kind or 'a JSON document'}, not {PROFILE}; '{command}' plans a profile{hint}",
                         file=str(path))
    return text


def run_recommend(profile: Optional[Path], fmt: str, out: Optional[Path], outputs: list[str], phase: str,
                  catalog: Optional[list[Path]], quiet: bool, verbose: int, section: list[str], no_color: bool,
                  exit_zero: bool, confidence: Optional[float], allow_outside_paths: bool) -> int:
    """``gpuplan recommend``: plan the profile and write every requested output; the exit code
    (:data:`EXIT_GATE` when a gate failed, unless ``exit_zero``). Bad input raises
    :class:`~gpuplan.core.errors.InputError`."""
    from gpuplan.core.errors import InputError
    from gpuplan.planning.compose import plan_workload
    from gpuplan.model.profile import load_profile_text
    from gpuplan.render import FORMATS, progress

    phases = phases_of(phase)
    check_formats(fmt, outputs, tuple(FORMATS))
    if confidence is not None and not 0.5 <= confidence <= 0.99:  # nan too: every comparison fails
        raise InputError(f"expected a probability from 0.5 to 0.99, got {confidence:g}", field="--confidence")
    cat = load_catalog_cli(catalog)
    if profile is None:
        from gpuplan.model.profile import default_profile_text

        text, name = default_profile_text()
        note(f"no profile given; planning the built-in default ({name[1:-1].split(': ')[1]}, see examples/default.toml)",
             quiet=quiet)
    else:
        text, name = read_profile(profile, "recommend"), str(profile)
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
    note_table_only(fmt, outputs, verbose, section, quiet=quiet)
    errors = [f for f in result.findings if f.severity == "error"]
    for f in errors:
        note(f"{f.phase}: {f.message}", quiet=quiet)
    return EXIT_GATE if errors and not exit_zero else EXIT_OK
