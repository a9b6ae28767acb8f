"""Several paths' requests as one time-ordered stream that can be walked more than once.

A replay walks the traffic once per design (as recorded, then a what-if). Each path is read once
into what a walk needs: a transcript keeps its raw calls (a few hundred bytes each) and builds each
request's blocks only when the walk reaches it; a request log keeps its records (their block
contents shared, see anthropic_log.Sizer). No walk holds every request's history at once, so memory
follows the number of requests and the per-stream state, not requests x history.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from prefixsim.sources import problems
from prefixsim.sources.record import Record


@dataclass(frozen=True, slots=True)
class Head:
    """What a replay must know of a request before walking the traffic (prices, the naive baseline)."""

    t: float
    timestamp: str
    stream: str
    wrote_1h: bool       # observed usage wrote at the 1h TTL
    output_final: bool
    #: The cache namespace the request was sent in, as far as reading it told (None: not known until
    #: walked): equal for two heads only if their requests share a namespace. A replay split into
    #: shards (replay/shard.py) is not planned when every head names the same one.
    ns: object = None

    @classmethod
    def of(cls, r: Record) -> Head:
        req = r.call.request
        return cls(r.call.t, r.timestamp, r.call.stream, r.observed is not None and r.observed.cache_write_1h > 0,
                   r.output_final, (r.provider, req.model, req.workspace, req.cache_salt))


@dataclass(frozen=True, slots=True)
class Part:
    """One path's requests: `heads` and `walk()` (fresh each call) in the same, time, order."""

    heads: list[Head]
    walk: Callable[[], Iterator[Record]]

    @classmethod
    def of(cls, records: list[Record]) -> Part:
        """Records already in memory, stably sorted by time."""
        ordered = sorted(records, key=lambda r: r.call.t)
        return cls([Head.of(r) for r in ordered], lambda: iter(ordered))

    def qualified(self, prefix: str) -> Part:
        """The same requests with `prefix` in front of their stream names (and of the stream a call
        forks), so that streams of different sources that carry the same name ("main") stay apart."""
        if not prefix:
            return self

        def named(c):
            return replace(c, stream=prefix + c.stream, parent=None if c.parent is None else prefix + c.parent)

        def rename(r: Record) -> Record:   # the calls stepped with a request are on its streams too
            return each_call(r, named)

        walk = self.walk
        return Part([replace(h, stream=prefix + h.stream) for h in self.heads], lambda: map(rename, walk()))


class Seen(set):
    """What the paths read so far gave. The set: request ids of transcripts and rollouts, where a
    provider's id names one call wherever it is logged (a resumed session repeats the calls before
    it, which count once). `files`: the request logs read; a log's ids are its own (two logs that
    number their lines 0, 1, ... hold two requests each "0"), so a log is deduplicated as a file."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[Path, str] = {}

    def first_read(self, p: Path) -> bool:
        """Whether the file `p` is read here for the first time; a second time it is named and not read."""
        key = p.resolve()
        if key in self.files:
            problems.note(str(p), None, f"the same file as {self.files[key]}: read once")
            return False
        self.files[key] = str(p)
        return True

    def repeats(self, raws: list) -> set[str]:
        """The ids of transcript calls (`Raw`s) an earlier path gave, each transcript's named in one
        note (counted once); the set gains the others."""
        dropped = {r.request_id for r in raws if r.request_id in self}
        by_file: dict[str, list[int]] = {}
        for r in raws:
            if r.request_id in dropped:
                by_file.setdefault(r.path, []).append(r.line)
        for path, lines in by_file.items():
            n = len(lines)
            problems.note(path, min(lines), f"{n} request{'s' if n > 1 else ''} already read from an earlier path "
                                            "(the same requestId): counted once")
        self.update(r.request_id for r in raws)
        return dropped


class Traffic:
    """The parts merged by time (ties keep path order, as a stable sort of their concatenation
    would); with `rebase`, times count from the first request, so explanations read "t=12.3s"."""

    #: The lines its reading skipped (`problems.Problem`), for the report to name beside the requests.
    skipped: tuple = ()

    def __init__(self, parts: Sequence[Part], rebase: bool = True) -> None:
        self.parts = list(parts)
        firsts = [p.heads[0].t for p in self.parts if p.heads]
        self.t0 = min(firsts) if rebase and firsts else None

    @classmethod
    def of(cls, records: Iterable[Record]) -> Traffic:
        """Records a caller built (a library replay), replayed at their own times."""
        return cls([Part.of(list(records))], rebase=False)

    def __len__(self) -> int:
        return sum(len(p.heads) for p in self.parts)

    def heads(self) -> Iterator[Head]:
        return heapq.merge(*(p.heads for p in self.parts), key=lambda h: h.t)

    def __iter__(self) -> Iterator[Record]:
        merged = heapq.merge(*(p.walk() for p in self.parts), key=lambda r: r.call.t)
        t0 = self.t0
        if t0 is None:
            return merged
        return (_rebased(r, t0) for r in merged)


def _rebased(r: Record, t0: float) -> Record:
    """`r` with its times counted from `t0`: the request and every call stepped with it."""
    def at(c):
        return replace(c, t=round(c.t - t0, 3))
    return each_call(r, at)


def each_call(r: Record, f) -> Record:
    """`r` with `f` applied to its request and to every call stepped with it (one list, so a new kind
    of stepped call cannot be left out of a rename or a rebase)."""
    return replace(r, call=f(r.call), iterations=tuple(map(f, r.iterations)), unlogged=tuple(map(f, r.unlogged)),
                   earlier=tuple(map(f, r.earlier)), kept=tuple(map(f, r.kept)), absent=tuple(map(f, r.absent)),
                   ended=tuple(map(f, r.ended)))
