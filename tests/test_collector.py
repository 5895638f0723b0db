"""The collector pause (gpuplan/core/collector.py): what a paused block keeps is not scanned again
by the next young-generation passes, and a caller's frozen objects stay frozen."""

from __future__ import annotations

import gc

from gpuplan.core.collector import collector_paused


def test_what_a_paused_block_keeps_is_not_left_for_the_next_young_pass():
    gc.collect()
    with collector_paused():
        kept = [[i] for i in range(50_000)]  # 50,001 tracked objects, far above the 700 of a pass
        assert not gc.isenabled()
    assert gc.isenabled()
    # Spliced into the oldest generation on leaving the block; without it, the next allocation
    # would trigger a pass over all of them, which leaves them in the middle generation.
    assert gc.get_count()[0] < 700
    oldest = gc.get_objects(generation=2)
    assert any(o is kept[0] for o in oldest) and any(o is kept[-1] for o in oldest)
    del kept


def test_a_callers_frozen_objects_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with collector_paused():
            kept = [[i] for i in range(1_000)]
        assert gc.get_freeze_count() == frozen
        del kept
    finally:
        gc.unfreeze()


def test_a_paused_caller_stays_paused():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
