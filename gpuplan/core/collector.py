"""Pausing Python's cyclic garbage collector around allocation-heavy work that makes no cycles.

The layout search and the fabric graph allocate hundreds of thousands of small tuples and dicts
and free them by reference counting; the collector's periodic passes over every live object (the
planners' memos included) then cost a tenth of a plan and grew a large graph's build faster than
the graph. The CLI pauses it for its whole command (cli/app.py ``main``): a cold recommend spent
about 0.12 s in it, on imports and plans that leave next to no cyclic garbage (the worst-case
profile's peak memory is the same without it). Pausing it changes no result; garbage with cycles
made meanwhile is collected after. Imports nothing of gpuplan.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` block; restore its state after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
