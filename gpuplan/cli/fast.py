"""The hot commands without typer: ``gpuplan --version`` and a plain ``gpuplan recommend``.

Importing typer (with its copy of click) and building the command tree cost about 80 ms of every
start, a third of a cold ``recommend``'s start-up before planning (benchmarks/README.md, issue 21).
:func:`plain_command` reads the arguments of the two commands a script runs most, but only in their
plain forms, and hands anything else back (None) to typer, which then parses, reports and exits as
it always did: ``--help``, a misspelt or unknown option, a missing or empty value, a value that
starts with ``-``, an option given twice, a second profile, ``--confidence`` (a number in a range)
and every other command. What it accepts it reads as typer does (the values below are what
typer passes to :func:`gpuplan.cli.run.run_recommend`; tests/cli/test_fast.py compares them), so
every accepted command line gives the same output, messages and exit code by either path. A
plain recommend also skips pydantic's search for plugins (:func:`_without_pydantic_plugins`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start's 5 ms)

if TYPE_CHECKING:
    from typing import Any

#: ``recommend``'s options that take one value: flag -> (parameter, repeatable, a path)
_VALUES: dict[str, tuple[str, bool, bool]] = {
    "--format": ("fmt", False, False), "-f": ("fmt", False, False),
    "--out": ("out", False, True), "-o": ("out", False, True),
    "--phase": ("phase", False, False),
    "--output": ("outputs", True, False),
    "--catalog": ("catalog", True, True),
    "--section": ("section", True, False),
}
#: ``recommend``'s flags: flag -> parameter (``--verbose`` counts)
_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--no-color": "no_color", "--exit-zero": "exit_zero",
          "--allow-outside-paths": "allow_outside_paths"}
_COUNTS = {"--verbose": "verbose", "-v": "verbose"}


def _defaults() -> dict[str, Any]:
    """The parameters typer passes when no option is given (the defaults in cli/commands.py)."""
    return {"profile": None, "fmt": "table", "out": None, "outputs": [], "phase": "both", "catalog": None,
            "quiet": False, "verbose": 0, "section": [], "no_color": False, "exit_zero": False, "confidence": None,
            "allow_outside_paths": False}


def _plain(value: str) -> bool:
    """A value read the same by every parser: not empty, not an option, no NUL."""
    return bool(value) and not value.startswith("-") and "\0" not in value


def plain_recommend(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``recommend ARGS...`` when every argument is plain, else None."""
    from pathlib import Path

    params, seen, rest = _defaults(), set(), list(args)
    while rest:
        token = rest.pop(0)
        flag, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if flag in _VALUES:
            name, repeatable, path = _VALUES[flag]
            if eq:
                value = inline
            elif rest:
                value = rest.pop(0)
            else:
                return None
            if not _plain(value) or (name in seen and not repeatable):
                return None
            seen.add(name)
            converted = Path(value) if path else value
            params[name] = (params[name] or []) + [converted] if repeatable else converted
        elif eq:
            return None  # a flag given a value, or an unknown option
        elif token in _FLAGS:
            params[_FLAGS[token]] = True
        elif token in _COUNTS:
            params[_COUNTS[token]] += 1
        elif _plain(token) and params["profile"] is None:
            params["profile"] = Path(token)
        else:
            return None  # --help, --confidence, --, an unknown option, a second profile
    return params


def plain_command(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``("version", {})``, ``("recommend", parameters)`` or None (typer parses it)."""
    if args == ["--version"]:
        return "version", {}
    if args[:1] == ["recommend"]:
        params = plain_recommend(args[1:])
        return None if params is None else ("recommend", params)
    return None


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
    from gpuplan.cli.run import run_recommend

    _without_pydantic_plugins()
    return run_recommend(**params)
