"""Renderers: thin functions from a :class:`~gpuplan.core.contract.Plan` to text. None recomputes anything.

Each format is registered in :data:`FORMATS` by name with the module that renders it; modules are
imported only when their format is asked for, so rich and friends stay off the start-up path.

A format module exposes ``render(plan, options) -> str`` for a plan and, where the format makes
sense for them, ``render_check(result, options)`` for a :class:`~gpuplan.ci.check.CheckResult` and
``render_diff(result, options)`` for a :class:`~gpuplan.ci.diff.DiffResult`. :func:`render` picks the
function by the type of the object, so the CLI has one output path for every command.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator, Mapping
from gpuplan.core.records import dataclass

from gpuplan.core.errors import InputError, did_you_mean, safe_text


@dataclass(frozen=True)
class RenderOptions:
    color: bool = False
    verbose: int = 0
    width: int = 100
    #: Table report sections shown beside the summary (``--section``; render/sections.py).
    sections: frozenset[str] = frozenset()
    #: ``table.key`` -> line of the profile, for SARIF/JUnit/GitHub anchors. None: the renderers
    #: read ``plan.profile`` themselves when it still has the plan's ``input_sha256``.
    field_lines: Mapping[str, int] | None = None


#: format name -> module under gpuplan.render exposing ``render(plan, options) -> str``
FORMATS: dict[str, str] = {
    "table": "table",
    "json": "json_",
    "markdown": "markdown",
    "tfvars": "tfvars",
    "tf-external": "tf_external",
    "sarif": "sarif",
    "junit": "junit",
    "github": "github",
    "html": "html",
}

#: result class name -> (function each format module exposes for it, what the user calls it)
_KINDS: dict[str, tuple[str, str]] = {
    "Plan": ("render", "plans"),
    "CheckResult": ("render_check", "check results"),
    "DiffResult": ("render_diff", "diffs"),
}

#: Formats that can render each kind of result (documented in --help and docs/ci.md).
CHECK_FORMATS = ("table", "json", "markdown", "sarif", "junit", "github")
DIFF_FORMATS = ("table", "json", "markdown")


def formats_for(obj: object) -> tuple[str, ...]:
    name = type(obj).__name__
    return {"CheckResult": CHECK_FORMATS, "DiffResult": DIFF_FORMATS}.get(name, tuple(FORMATS))


def render(plan: object, fmt: str, options: RenderOptions | None = None) -> str:
    """Render a plan (or a check or diff result) in one format; every string from the input is made
    safe for that format first (:mod:`gpuplan.render.safe`)."""
    allowed = formats_for(plan)
    if fmt not in allowed:
        what = _KINDS.get(type(plan).__name__, ("render", "this result"))[1]
        extra = f" for {what}" if fmt in FORMATS else did_you_mean(fmt, allowed)
        raise InputError(f"unknown format {fmt!r}{extra}; expected one of {', '.join(allowed)}", field="--format")
    from gpuplan.render.safe import finish, prepare

    module = importlib.import_module(f"gpuplan.render.{FORMATS[fmt]}")
    function = _KINDS.get(type(plan).__name__, ("render", ""))[0]
    return finish(getattr(module, function)(prepare(plan, fmt), options or RenderOptions()), fmt)


@contextlib.contextmanager
def progress(message: str, *, quiet: bool = False, color: bool = True) -> Iterator[None]:
    """A spinner on stderr while a long search runs; only on a terminal, never in pipes or CI logs.
    ``color=False`` (``--no-color``; NO_COLOR is honoured by rich itself) keeps it plain."""
    if quiet or not sys.stderr.isatty():
        yield
        return
    from rich.console import Console
    from rich.markup import escape

    message = escape(safe_text(message, drop_terminal=True))  # a workload name is the pull request's text
    console = Console(file=sys.stderr, stderr=True, no_color=None if color else True)
    with console.status(message, spinner="dots"):
        yield
