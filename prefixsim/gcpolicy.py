"""Garbage-collection settings while a command replays much traffic.

A replay allocates many small objects (views, digests, rows) that live until it ends, and builds no
reference cycles on its hot path, yet CPython's collector keeps re-traversing the live ones: with
millions of them it took 16 % of a 100 K-request replay. Inside `few_collections` what was live on
entry (the loaded traffic, the imported modules) is moved out of the collector's sight and young
collections run less often; both are restored on exit, so a caller (a test process running many
commands, a notebook) keeps its own settings.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

#: Allocations between young collections (CPython's default: 700).
YOUNG_THRESHOLD = 50_000


@contextmanager
def few_collections() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(saved[0], YOUNG_THRESHOLD), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)
        gc.unfreeze()
