"""Garbage-collection settings for a command that replays much traffic.

A replay allocates many small objects (views, digests, rows) that live until it ends, and builds no
reference cycles on its hot path, yet CPython's collector keeps re-traversing the live ones: with
millions of them it took 16 % of a 100 K-request replay. `for_replay` moves what is live (the loaded
traffic, the imported modules) out of the collector's sight and makes young collections rarer. It
is for a command's process (the CLI, a worker), which ends after the replay; library calls leave
the caller's settings alone.
"""
from __future__ import annotations

import gc

#: Allocations between young collections (CPython's default: 700).
YOUNG_THRESHOLD = 50_000


def for_replay() -> None:
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], YOUNG_THRESHOLD), *threshold[1:])
