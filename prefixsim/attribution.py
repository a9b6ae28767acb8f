"""Reads that the replayed data cannot explain: a request that read cached tokens although no earlier
request in the data left anything alive on its prefix (cold, expired, evicted, another model's cache).
What it read was written by traffic outside the data (an earlier session on the same machine, a run
before the recording): no replay of this data can know that state, so the summary names these reads
apart instead of hiding them in the error (docs/rules.md#reads-outside-the-data)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .model import CauseKind

#: Outcomes in which the simulated cache held nothing alive on the request's prefix.
NOTHING_ALIVE = frozenset({CauseKind.COLD, CauseKind.TTL_EXPIRED, CauseKind.EVICTED, CauseKind.MODEL_SWITCH})


@dataclass(frozen=True, slots=True)
class Outside:
    """Requests whose observed read no earlier request of the data wrote, the tokens they read, and the
    cache_read WAPE over the other requests (None when nothing else was read)."""

    requests: int = 0
    tokens: int = 0
    wape_in_data: float | None = None


def outside_reads(rows: Iterable) -> Outside:
    """`rows`: replay rows with an observation (`observed`, `predicted`, `cause`)."""
    n = tokens = err = read = 0
    for r in rows:
        if r.predicted.cache_read == 0 < r.observed.cache_read and r.cause.kind in NOTHING_ALIVE:
            n += 1
            tokens += r.observed.cache_read
        else:
            err += abs(r.predicted.cache_read - r.observed.cache_read)
            read += r.observed.cache_read
    return Outside(n, tokens, err / read if read else None)
