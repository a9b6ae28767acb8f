"""The naive mechanism every replay is scored against: a request reads what the request before it in
its stream read and wrote, if it came within the TTL. prefixsim's prediction has to beat it to be
worth printing (bench/replay_accuracy.py puts the two side by side)."""
from __future__ import annotations

from typing import Sequence

from prefixsim.model import TTL_SECONDS
from prefixsim.sources.record import Record


class Naive:
    """The floor to beat: per stream and model, read(t) = read(t-1) + creation(t-1) when the gap since
    the previous request is under the stream's TTL (1h if it ever wrote 1h, else 5m), else 0.
    Fed in time order; keeps each (stream, model)'s last time and prompt up to its breakpoint."""

    def __init__(self, hour_streams: set[str]) -> None:
        self.hour_streams = hour_streams
        self.last: dict[tuple[str, str], tuple[float, int]] = {}

    def read(self, r: Record) -> int | None:
        if r.observed is None:
            return None
        key = (r.call.stream, r.call.request.model)
        prev = self.last.get(key)
        limit = TTL_SECONDS["1h" if r.call.stream in self.hour_streams else "5m"]
        self.last[key] = (r.call.t, r.observed.cache_read + r.observed.cache_creation)
        if prev is None or r.call.t - prev[0] >= limit:
            return 0
        return prev[1]


def naive_reads(records: Sequence[Record]) -> list[int | None]:
    """The naive baseline's cache_read for each of `records` (time-ordered)."""
    naive = Naive({r.call.stream for r in records if r.observed is not None and r.observed.cache_write_1h})
    return [naive.read(r) for r in records]
