"""Pausing Python's cyclic garbage collector around allocation-heavy work that makes no cycles.

The layout search and the fabric graph allocate hundreds of thousands of small tuples and dicts
and free them by reference counting; the collector's periodic passes over every live object (the
planners' memos included) then cost a tenth of a plan and grew a large graph's build faster than
the graph. The CLI pauses it for its whole command (cli/app.py ``main``): a cold recommend spent
about 0.12 s in it, on imports and plans that leave next to no cyclic garbage (the worst-case
profile's peak memory is the same without it). Pausing it changes no result. On leaving the
block, what it allocated and still holds (the searches' memos) joins the oldest generation without
a pass (freeze and unfreeze: constant time), as two passes would move it there: a plan in process
spent 0.04 s of 0.55 in those passes, and a CLI command its last 0.04 s in one over everything it
made. Garbage with cycles made in the block is collected by the next full collection. Imports
nothing of gpuplan.
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
            if not gc.get_freeze_count():
                # What the block allocated and still holds (memos, results) joins the oldest
                # generation at once, as the collector would move it after two passes over it:
                # freeze then unfreeze splices the generations' lists (constant time) instead of
                # scanning them at the next allocation. Not when the caller froze objects itself.
                gc.freeze()
                gc.unfreeze()
            gc.enable()
