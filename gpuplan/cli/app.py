"""Command line entry point: run a command and turn every failure into one stderr line and an exit code.

Exit codes: 0 done (every gate passed), 1 a gate failed (infeasible, over budget, validation
miss), 2 bad input or usage, 3 internal error. Data goes to stdout, everything else to stderr.

A plain ``gpuplan --version`` or ``gpuplan recommend ...`` runs without typer
(:mod:`gpuplan.cli.fast`); every other command line goes to the typer app of
:mod:`gpuplan.cli.commands` (``app`` here, imported on first use).
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start's 5 ms)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["app", "main"]

EXIT_OK, EXIT_INPUT, EXIT_INTERNAL = 0, 2, 3


def __getattr__(name: str) -> Any:
    if name == "app":
        from gpuplan.cli.commands import app

        return app
    raise AttributeError(f"module 'gpuplan.cli.app' has no attribute {name!r}")


def _is_click(exc: BaseException, name: str) -> bool:
    """Typer may vendor click (typer._click) or use click itself: match by class name."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def _failed(exc: BaseException) -> int:
    """Report a failed command on stderr (one line) and give its exit code. The error classes are
    imported here, when something failed, so that ``--version`` imports none of them."""
    from gpuplan.core.errors import GpuplanError, one_line

    if isinstance(exc, GpuplanError):
        sys.stderr.write(f"gpuplan: error: {one_line(exc)}\n")
        return exc.exit_code
    if isinstance(exc, BrokenPipeError):
        return EXIT_OK
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if _is_click(exc, "Exit"):
        return getattr(exc, "exit_code", EXIT_OK)
    if _is_click(exc, "Abort"):
        sys.stderr.write("gpuplan: aborted\n")
        return 130
    if _is_click(exc, "ClickException"):
        # pydantic's 'Input should be ...' after typer's 'Invalid value for X:' (every gpuplan error says 'input')
        message = exc.format_message().replace(": Input should", ": input should")  # type: ignore[attr-defined]
        sys.stderr.write(f"gpuplan: error: {one_line(message)}\n")
        return EXIT_INPUT
    if os.environ.get("GPUPLAN_DEBUG"):
        import traceback

        traceback.print_exc()  # the traceback, and still exit 3: a bug must not read as a failed gate
        return EXIT_INTERNAL
    sys.stderr.write(f"gpuplan: internal error: {type(exc).__name__}: {one_line(exc, limit=300)} "
                     "(set GPUPLAN_DEBUG=1 for a traceback)\n")
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every failure into one stderr line and an exit code."""
    from gpuplan.cli.fast import plain_command, run_plain
    from gpuplan.core.collector import collector_paused

    args = sys.argv[1:] if argv is None else argv
    plain = plain_command(list(args))
    if plain is None:
        import typer.main

        from gpuplan.cli.commands import app

        command = typer.main.get_command(app)
    try:
        # One command of one process: its imports (model classes) and plans make next to no cyclic
        # garbage, yet the collector's passes over them cost a tenth of a cold recommend
        # (core/collector.py); paused for the command, restored for a caller that goes on.
        with collector_paused():
            if plain is not None:
                code = run_plain(plain)
            else:
                code = command.main(args=args, prog_name="gpuplan", standalone_mode=False)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - the one place that turns bugs into exit 3
        code = _failed(exc)
    code = code if isinstance(code, int) else EXIT_OK
    if argv is None:
        _leave(code)
    sys.stdout.flush()
    raise SystemExit(code)


def _leave(code: int) -> None:
    """End the process of a command line now, without tearing the interpreter down.

    Once the command is done, nothing is left to run: its output files are closed, its process
    pools joined. Python's exit would still free every object the command made, module by module,
    and run a last collection over them: on a cold ``recommend`` that took 0.18 s of 0.65 s CPU,
    more than the serving plan. So the console script flushes stdout and stderr and exits the
    process directly (``os._exit``), as when a worker of a process pool finishes. Only for the
    process's own command line: a caller that passes ``argv`` (tests, the API) gets SystemExit."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can reach it
            pass
    os._exit(code)
