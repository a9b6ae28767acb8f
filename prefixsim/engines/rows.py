"""Per-request results of an engine-trace replay: `Replayed`, one request's split, and `Rows`, the
rows of a fast replay kept as columns (`trace.replay`)."""
from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Iterator, NamedTuple

if TYPE_CHECKING:
    from prefixsim.engines.trace import TraceRequest

_KEYS = attrgetter("keys")


class Replayed(NamedTuple):
    """One request's split: blocks and tokens read, and why the read stopped. Engines bill no write
    premium, so everything not read is uncached input (cache_creation stays 0).

    A named tuple rather than a frozen dataclass: a replay makes one per request, and a tuple is
    made in C (a frozen dataclass sets each field through object.__setattr__, 40 % of a fast replay).
    """

    request: TraceRequest
    blocks: int
    hit_blocks: int
    hit_tokens: int
    cause: str

    def row(self) -> dict:
        return _row(self.request, self.hit_tokens, self.cause)


def _row(r: TraceRequest, hit_tokens: int, cause: str) -> dict:
    """A request's output row, in the shape transcript replays use."""
    return {"request_id": r.request_id, "timestamp": r.timestamp, "stream": r.stream, "model": None,
            "observed": None,
            "predicted": {"input_tokens": r.input_length - hit_tokens, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": hit_tokens},
            "cause": cause}


class Rows(Sequence):
    """The rows of one fast replay as columns: the requests, their hit blocks, hit tokens and miss
    causes. A replay makes no object per request (a tuple each was ~8 % of a one-capacity Mooncake
    replay); a `Replayed` is made when a row is read, and `dicts` gives the output rows straight
    from the columns. Equal to the list of the same rows (what `replay_pool` returns)."""

    __slots__ = ("requests", "runs", "tokens", "causes")

    def __init__(self, requests: Sequence[TraceRequest], runs: list[int], tokens: list[int],
                 causes: list[str]) -> None:
        self.requests, self.runs, self.tokens, self.causes = requests, runs, tokens, causes

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return list(self)[i]
        r = self.requests[i]
        return Replayed(r, len(r.keys), self.runs[i], self.tokens[i], self.causes[i])

    def __iter__(self) -> Iterator[Replayed]:
        reqs = self.requests
        return map(tuple.__new__, repeat(Replayed), zip(   # type: ignore[arg-type]
            reqs, map(len, map(_KEYS, reqs)), self.runs, self.tokens, self.causes))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Rows, list)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None   # type: ignore[assignment]  # mutable columns, as a list's

    def __repr__(self) -> str:
        return f"Rows({list(self)!r})"

    def dicts(self) -> list[dict]:
        """Every request's output row (`Replayed.row`), with no `Replayed` made."""
        return list(map(_row, self.requests, self.tokens, self.causes))
