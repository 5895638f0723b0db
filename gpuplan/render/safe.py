"""Every string of a result that came from the input is made safe for the format it goes into.

:func:`gpuplan.render.render` calls :func:`prepare` before a format module sees the result and
:func:`finish` on the text it returns, so no renderer has to remember it:

* every format: control characters, line and paragraph separators and bidirectional overrides in
  any string are shown escaped (:func:`gpuplan.core.errors.safe_text`), so a value can neither split a
  line nor steer a terminal, and no line of any output begins with ``::`` (a GitHub workflow
  command) from the input: a line the layout wraps to start with ``::`` gets a backslash;
* JSON formats keep every value exactly (JSON escapes what it must) and additionally write the
  separators JSON allows raw (U+2028, U+2029, C1 controls) as ``\\uXXXX``;
* table, GitHub and Markdown drop whole terminal control sequences (colour, retitle, clear);
* Markdown (a pull-request comment, where GitHub renders HTML) escapes HTML and the Markdown
  syntax that makes links, images, mentions, tables and code: ``& < > [ ] \\ | ` @``. Strings the
  renderer puts in code spans (file names, fields, part ids) only lose their backticks.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from gpuplan.core.errors import safe_text
from gpuplan.core.contract_base import _Out
from gpuplan.core.stable_json import escape_json_raw

#: Formats whose output is JSON: their values are kept, only the raw separators are escaped.
JSON_FORMATS = frozenset({"json", "tfvars", "tf-external", "sarif"})
#: Formats that reach a terminal or a log: terminal control sequences are dropped, not shown.
DROP_TERMINAL = frozenset({"table", "github", "markdown"})
#: Keys whose strings the Markdown renderer shows in code spans, where escapes would show literally.
CODE_KEYS = frozenset({"field", "code", "part_id", "unpriced_parts", "unpowered_parts", "profile", "cluster_file",
                       "file", "base", "new"})

_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "&#91;", "]": "&#93;", "\\": "&#92;", "|": "&#124;",
             "`": "&#96;", "@": "&#64;"}
#: (Patterns compiled when first used: a JSON render uses neither.)
_MARKDOWN_CHARS = "[&<>\\[\\]\\\\|`@]"
_COMMAND_LINE = r"(?m)^(\s*)::"


def md_escape(text: str) -> str:
    """Text for Markdown outside code spans: HTML and link, image, mention, table and code syntax
    become character references, which GitHub shows as the characters themselves."""
    return re.sub(_MARKDOWN_CHARS, lambda m: _MARKDOWN[m.group()], text)


def _walk(value: Any, fix: Any, key: str | None = None) -> Any:
    if isinstance(value, str):
        return fix(value, key)
    if isinstance(value, dict):
        return {(fix(k, None) if isinstance(k, str) else k): _walk(v, fix, k if isinstance(k, str) else key)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_walk(v, fix, key) for v in value)
    return value


def prepare(obj: Any, fmt: str) -> Any:
    """``obj`` (a plan, check or diff result) with every string made safe for ``fmt``."""
    if fmt in JSON_FORMATS or not isinstance(obj, (BaseModel, _Out)):
        return obj
    drop = fmt in DROP_TERMINAL

    def fix(text: str, key: str | None) -> str:
        text = safe_text(text, drop_terminal=drop)
        if fmt == "markdown":
            text = text.replace("`", "'") if key in CODE_KEYS else md_escape(text)
        return text

    data = obj.model_dump(mode="python", by_alias=True)
    cleaned = _walk(data, fix)
    if cleaned == data:
        return obj
    # a plan is rebuilt from its own data (trusted: only strings changed); a pydantic result validated
    return obj.from_data(cleaned) if isinstance(obj, _Out) else type(obj).model_validate(cleaned)


def finish(text: str, fmt: str) -> str:
    """The rendered ``text``: JSON with its raw separators escaped, any other format with no line
    that a wrapped value made begin with ``::`` (the GitHub format writes its own commands)."""
    if fmt in JSON_FORMATS:
        return escape_json_raw(text)
    if fmt == "github":
        return text
    return re.sub(_COMMAND_LINE, lambda m: m.group(1) + "\\::", text)


def plain_text(text: str) -> str:
    """A whole text report gpuplan builds from input strings (catalog listings, validation tables):
    each line sanitised for a terminal, and no line beginning with ``::``."""
    return finish("\n".join(safe_text(line, drop_terminal=True) for line in text.split("\n")), "table")


def json_text(text: str) -> str:
    """JSON text (graph node-link, catalog) with its raw separators escaped, as :func:`finish` does."""
    return finish(text, "json")
