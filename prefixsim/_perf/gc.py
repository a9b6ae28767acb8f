"""The garbage collector held back while a command replays much traffic or a trace.

A replay allocates many small objects (views, digests, rows, block keys) that live until it ends and
builds no reference cycles on its hot path, yet CPython's collector keeps re-traversing the live ones:
with millions of them it took 16 % of a 100 K-request replay (bench/engines.py measures the trace
case). Inside `few_collections` what was live on entry (the loaded traffic, the imported modules) is
moved out of the collector's sight and young collections run less often; both are restored on exit,
so a caller (a test process running many commands, a notebook) keeps its own settings, and what a
caller (or an outer replay) froze stays frozen.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

#: Allocations between young collections while traffic replays (CPython's default: 700).
YOUNG_THRESHOLD = 50_000
#: The same while an engine trace replays: its block keys and rows are more numerous still.
TRACE_YOUNG_THRESHOLD = 100_000


@contextmanager
def few_collections(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Freeze what is loaded and collect young objects at most every `young` allocations."""
    saved = gc.get_threshold()
    mine = gc.get_freeze_count() == 0   # leave alone what a caller froze
    if mine:
        gc.freeze()
    gc.set_threshold(max(saved[0], young), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)
        if mine:
            gc.unfreeze()


def gc_paused():
    """The collector as an engine trace replay wants it (`engines.trace.replay`, `curve_totals`)."""
    return few_collections(TRACE_YOUNG_THRESHOLD)
