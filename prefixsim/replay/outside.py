"""Reads that the replayed data cannot explain, named apart instead of hidden in the error
(docs/rules.md#reads-outside-the-data):

- a request that read cached tokens although no earlier request in the data left anything alive on
  its prefix (cold, expired, evicted, another model's cache): what it read was written by traffic
  outside the data (an earlier session on the same machine, a run before the recording);
- a request that read less than the replay found alive on its prefix: the provider found a shorter
  prefix for a reason the data does not show (on Claude Code transcripts mostly a new user turn that
  read only the static prefix)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from prefixsim.model import CauseKind

#: Outcomes in which the simulated cache held nothing alive on the request's prefix.
NOTHING_ALIVE = frozenset({CauseKind.COLD, CauseKind.TTL_EXPIRED, CauseKind.EVICTED, CauseKind.MODEL_SWITCH})


@dataclass(frozen=True, slots=True)
class Outside:
    """Requests whose observed read no earlier request of the data wrote, the tokens they read, and the
    cache_read WAPE over the other requests (None when nothing else was read)."""

    requests: int = 0
    tokens: int = 0
    wape_in_data: float | None = None
    #: Requests that read less than the replay found alive, and the tokens predicted read they did not read.
    shorter_requests: int = 0
    shorter_tokens: int = 0


def outside_reads(rows: Iterable) -> Outside:
    """`rows`: replay rows with an observation (`observed`, `predicted`, `cause`)."""
    n = tokens = err = read = short = short_tokens = 0
    for r in rows:
        if r.predicted.cache_read == 0 < r.observed.cache_read and r.cause.kind in NOTHING_ALIVE:
            n += 1
            tokens += r.observed.cache_read
            continue
        if r.observed.cache_read < r.predicted.cache_read:
            short += 1
            short_tokens += r.predicted.cache_read - r.observed.cache_read
        err += abs(r.predicted.cache_read - r.observed.cache_read)
        read += r.observed.cache_read
    return Outside(n, tokens, err / read if read else None, short, short_tokens)
