"""Replaying real traffic: predicted vs observed usage per request, the cause of every miss, the
naive mechanism as a baseline, and what-if variants of the same traffic.

Library API (notebooks): `replay(records, ...)` -> ReplayResult with `.rows`, `.summary` and
`.to_dataframe()`; `compare(base, variant)` -> cost and rebuild differences per stream;
`to_json(result)` -> the document `prefixsim replay --format json` prints.

Where things are: run.py (one replay: its rows and summary), compare.py (a what-if against it), naive.py (the baseline),
whatif.py (the same traffic under another TTL or breakpoint policy), outside.py (reads of a cache no
request in the data wrote), price_sources.py (what priced a replay), shard.py (a replay split by conversation across workers), diff.py (where
two requests part), output.py (the JSON document).
"""
from __future__ import annotations

from prefixsim.replay.naive import Naive, naive_reads
from prefixsim.replay.price_sources import joined_sources
from prefixsim.replay.compare import Comparison, StreamDelta, compare
from prefixsim.replay.run import (
    REBUILD_CAUSES,
    Figures,
    ReplayResult,
    ReplayRow,
    Summary,
    replay,
)
from prefixsim.replay.whatif import BREAKPOINT_POLICIES, TTL_CHOICES, WhatIf, apply_variant

__all__ = ["BREAKPOINT_POLICIES", "REBUILD_CAUSES", "TTL_CHOICES", "Comparison", "Figures", "Naive", "ReplayResult",
           "ReplayRow", "StreamDelta", "Summary", "WhatIf", "apply_variant", "compare", "joined_sources",
           "naive_reads", "replay", "row_json", "summary_json", "to_json"]


def __getattr__(name: str):
    """The JSON document's functions (`to_json`, `row_json`, `summary_json`) live in output.py and are
    imported on first use (start-up: a replay printed as text never loads them)."""
    if name in ("to_json", "row_json", "summary_json"):
        from prefixsim.replay import output  # lazy: a replay printed as text never loads the JSON document

        return getattr(output, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
