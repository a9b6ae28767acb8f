"""The collector paused while a trace replays (`trace.replay`, `trace.curve_totals`)."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """Freeze what is loaded and collect rarely while a replay runs: the collector would otherwise
    walk the whole trace (millions of keys) again and again while rows and, on the block pool, block
    objects are made (bench/engines.py measures it). Restored on exit."""
    was = gc.get_threshold()
    mine = gc.get_freeze_count() == 0   # leave alone what a caller (or an outer replay) froze
    if mine:
        gc.freeze()
    gc.set_threshold(max(was[0], 100_000), *was[1:])
    try:
        yield
    finally:
        gc.set_threshold(*was)
        if mine:
            gc.unfreeze()
