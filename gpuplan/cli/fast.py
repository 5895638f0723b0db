"""The hot commands without typer: ``gpuplan --version`` and a plain ``gpuplan recommend`` or ``sweep``.

Importing typer (with its copy of click) and building the command tree cost about 80 ms of every
start, a third of a cold ``recommend``'s start-up before planning (benchmarks/README.md, issue 21).
:func:`plain_command` reads the arguments of the commands a script runs most, but only in their
plain forms, and hands anything else back (None) to typer, which then parses, reports and exits as
it always did: ``--help``, a misspelt or unknown option, a missing or empty value, a value that
starts with ``-``, an option given twice, a second profile, ``--confidence`` (a number in a range),
a ``--jobs`` that is not plain digits, and every other command. What it accepts it reads as typer
does (the values below are what typer passes to :func:`gpuplan.cli.run.run_recommend` and
:func:`gpuplan.cli.sweep_run.run_sweep_command`; tests/cli/test_fast.py compares them), so
every accepted command line gives the same output, messages and exit code by either path. A
plain recommend also skips pydantic's search for plugins (:func:`_without_pydantic_plugins`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start's 5 ms)

if TYPE_CHECKING:
    from typing import Any

#: Value kinds: a string, a path (``Path(value)``, as typer gives it) or a count of things (digits).
STR, PATH, INT = "str", "path", "int"


class _Spec:
    """One command's plain options: ``values`` flag -> (parameter, repeatable, kind), ``flags``
    flag -> parameter set True, ``counts`` flag -> parameter counted; ``defaults`` are the
    parameters typer passes when no option is given (the defaults of the typer command)."""

    def __init__(self, values: dict[str, tuple[str, bool, str]], flags: dict[str, str], counts: dict[str, str],
                 defaults: dict[str, Any]) -> None:
        self.values, self.flags, self.counts, self.defaults = values, flags, counts, defaults


_COMMON = {"--format": ("fmt", False, STR), "-f": ("fmt", False, STR), "--out": ("out", False, PATH),
           "-o": ("out", False, PATH), "--phase": ("phase", False, STR), "--catalog": ("catalog", True, PATH)}
#: The commands read without typer, with the options they read (cli/commands.py, cli/sweep.py).
SPECS = {
    "recommend": _Spec(
        {**_COMMON, "--output": ("outputs", True, STR), "--section": ("section", True, STR)},
        {"--quiet": "quiet", "-q": "quiet", "--no-color": "no_color", "--exit-zero": "exit_zero",
         "--allow-outside-paths": "allow_outside_paths"},
        {"--verbose": "verbose", "-v": "verbose"},
        {"profile": None, "fmt": "table", "out": None, "outputs": [], "phase": "both", "catalog": None,
         "quiet": False, "verbose": 0, "section": [], "no_color": False, "exit_zero": False, "confidence": None,
         "allow_outside_paths": False}),
    "sweep": _Spec(
        {**_COMMON, "--set": ("sets", True, STR), "--jobs": ("jobs", False, INT), "-j": ("jobs", False, INT)},
        {"--log": "log", "--quiet": "quiet", "-q": "quiet", "--no-color": "no_color"},
        {},
        {"profile": None, "sets": [], "log": False, "fmt": "table", "out": None, "phase": "both", "jobs": 1,
         "catalog": None, "quiet": False, "no_color": False}),
}


def _plain(value: str) -> bool:
    """A value read the same by every parser: not empty, not an option, no NUL."""
    return bool(value) and not value.startswith("-") and "\0" not in value


def _convert(value: str, kind: str) -> Any:
    """``value`` as typer gives it, or None when typer might read it otherwise (a count: up to nine
    ASCII digits without a leading zero)."""
    from pathlib import Path

    if kind == PATH:
        return Path(value)
    if kind == INT:
        plain = value.isascii() and value.isdigit() and len(value) <= 9 and (value == "0" or value[0] != "0")
        return int(value) if plain else None
    return value


def plain_args(spec: _Spec, args: list[str]) -> dict[str, Any] | None:
    """The parameters of a command's ARGS when every argument is plain, else None."""
    from pathlib import Path

    params, seen, rest = dict(spec.defaults), set(), list(args)
    while rest:
        token = rest.pop(0)
        flag, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if flag in spec.values:
            name, repeatable, kind = spec.values[flag]
            if eq:
                value = inline
            elif rest:
                value = rest.pop(0)
            else:
                return None
            if not _plain(value) or (name in seen and not repeatable):
                return None
            seen.add(name)
            converted = _convert(value, kind)
            if converted is None:
                return None
            params[name] = (params[name] or []) + [converted] if repeatable else converted
        elif eq:
            return None  # a flag given a value, or an unknown option
        elif token in spec.flags:
            params[spec.flags[token]] = True
        elif token in spec.counts:
            params[spec.counts[token]] += 1
        elif _plain(token) and params["profile"] is None:
            params["profile"] = Path(token)
        else:
            return None  # --help, --confidence, --, an unknown option, a second profile
    return params


def plain_recommend(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``recommend ARGS...`` when every argument is plain, else None."""
    return plain_args(SPECS["recommend"], args)


#: The variable a shell sets to ask typer (click) for completions instead of running the command.
COMPLETE_VAR = "_GPUPLAN_COMPLETE"


def plain_command(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``("version", {})``, ``(command, parameters)`` for a plain ``recommend`` or ``sweep``, or
    None (typer parses it)."""
    import os

    if os.environ.get(COMPLETE_VAR):
        return None  # a shell asks typer for completions
    if args == ["--version"]:
        return "version", {}
    spec = SPECS.get(args[0]) if args else None
    if spec is None:
        return None
    params = plain_args(spec, args[1:])
    return None if params is None else (args[0], params)


#: pydantic's plugin loader, which a plain recommend replaces (:func:`_without_pydantic_plugins`)
PLUGIN_LOADER = "pydantic.plugin._loader"


def _without_pydantic_plugins() -> None:
    """Plan without third-party pydantic plugins (as ``PYDANTIC_DISABLE_PLUGINS=__all__``).

    pydantic looks for plugins when it builds its first model class, by importing
    :mod:`importlib.metadata` (and with it email, zipfile, csv and socket) to read the installed
    packages' entry points: about 7% of a cold ``recommend``'s start before planning, for plugins
    the command line does not use (they would only observe validation). A stand-in loader that
    finds none is installed before pydantic is first imported; a process that imported pydantic
    already (a caller of :func:`gpuplan.cli.app.main`, the tests) keeps its own. tests/cli/test_fast.py checks that
    pydantic still asks the loader for nothing but ``get_plugins``."""
    import sys

    if "pydantic" in sys.modules or PLUGIN_LOADER in sys.modules:
        return
    import types

    loader = types.ModuleType(PLUGIN_LOADER, "gpuplan: no pydantic plugins in the command line")
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules[PLUGIN_LOADER] = loader


def run_plain(command: tuple[str, dict[str, Any]]) -> int:
    """Run what :func:`plain_command` read; the exit code."""
    import sys

    name, params = command
    if name == "version":
        from gpuplan.core.version import __version__

        sys.stdout.write(f"gpuplan {__version__}\n")
        return 0
    _without_pydantic_plugins()
    if name == "sweep":
        from gpuplan.cli.sweep_run import run_sweep_command

        return run_sweep_command(**params)
    from gpuplan.cli.run import run_recommend

    return run_recommend(**params)
