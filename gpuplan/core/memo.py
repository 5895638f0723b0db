"""Process-wide memos, each registered where it is made, so that one call empties them all.

Planning keeps, across plans in one process, what does not depend on the field a caller varies
(issue 21), in module-level memos of the layers above. Each is exact (a plan is the same with or
without it) and bounded where an entry is added (``if len(memo) >= bound: memo.clear()``, with the
bound beside it). :func:`memo` makes one and registers it; :func:`clear_all` empties every memo of
the modules imported so far (those not imported hold nothing), for a benchmark that times a plan
from scratch or a long-lived process that wants the memory back.

A memo is a plain ``dict``, not a subclass or a wrapper: CPython 3.11 specialises ``d.get(key)``,
``d[key]`` and ``d[key] = v`` for exact dicts only. A ``dict`` subclass took 0.8 % more instructions
for the default recommend (callgrind; its ``get`` calls fell back to the generic path) and a method
that stored with the bound check cost about 370 instructions a miss; the memos' reads and stores
are the planners' hot paths (benchmarks/README.md).
"""

from __future__ import annotations

import typing

__all__ = ["clear_all", "memo", "on_clear_all"]

#: What :func:`clear_all` calls: each memo's ``clear`` and any other cache's.
_CLEARS: list[typing.Callable[[], object]] = []


def memo() -> dict[typing.Any, typing.Any]:
    """A new, empty process-wide memo that :func:`clear_all` empties."""
    table: dict[typing.Any, typing.Any] = {}
    _CLEARS.append(table.clear)
    return table


def on_clear_all(clear: typing.Callable[[], object]) -> None:
    """Have :func:`clear_all` call ``clear`` too (a cache that is not a :func:`memo`, such as an
    ``lru_cache``'s ``cache_clear``)."""
    _CLEARS.append(clear)


def clear_all() -> None:
    """Empty every registered memo of this process."""
    for clear in _CLEARS:
        clear()
