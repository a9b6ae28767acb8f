"""The cache store: entries, TTL, availability, capacity and eviction.

The store knows nothing of providers or prices: policies decide which digests to read and write,
the store only remembers what was written, when it becomes readable and when it expires.

Cost per request does not grow with the history: a read that refreshes a whole prefix is logged
once and applied to an entry only when that entry is next looked at (`touch_prefix`), and a log of
first writes lets a caller learn which of its chain's positions became known since it last looked
(`born_since`).

Nor with the traffic interleaved with it: every digest a chain passes through is entered under the
lane (stream) that passed through it (`enter`), and stays that lane's own until a second lane passes
through it. A read or a first write can only concern a digest on the reader's or writer's chain, so
an entry whose digest is one lane's own needs only that lane's reads, and a lane only its own and the
shared first writes: a thousand conversations in one log cost each other nothing, only the digests
they share (tools, system prompt, a fork's parent) are looked up in the whole log.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum

#: The owner of a digest more than one lane passed through (and the key of the log of first writes there).
SHARED = object()
#: An entry is readable from its response's start, and a request recorded at that very instant (a
#: Gemini CLI or Codex request starts at the previous response's stamp) reads it. Times are float
#: seconds, often since 1970, where one ulp is 2.4e-7 s: start + (response - start) can land an ulp
#: past the response and turn a read into `not_yet_available`, depending on how the times were
#: shifted (the same session replayed alone and beside another differed). No clock recorded is
#: finer than a microsecond, so availability is decided to the microsecond.
CLOCK_SLACK = 1e-6


class EntryState(Enum):
    MISSING = "missing"
    LIVE = "live"
    PENDING = "pending"   # written, but the writing request's response has not begun yet
    EXPIRED = "expired"
    EVICTED = "evicted"


@dataclass(slots=True)
class Entry:
    tokens: int
    written_at: float
    available_at: float
    expires_at: float
    ttl: float
    last_used: float
    depth: int = -1   # block index of the digest in its chain (-1: not on a chain; prefix reads skip it)
    seen: int = 0     # prefix reads up to this index of Store._reads are applied
    cap: float = float("inf")   # no refresh keeps the entry past this time (a maximum lifetime from its write)
    grace: float = 0.0   # seconds past its TTL the entry is still read (the TTL is a minimum: Anthropic)

    @property
    def life(self) -> float:
        """Seconds a write or read keeps the entry: its TTL and the grace past it."""
        return self.ttl + self.grace


class Store:
    """Digest -> Entry. Expired entries stay visible (as EXPIRED) so a miss can say why.

    With `capacity` (tokens), writing past it evicts least-recently-used entries first.
    """

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity
        self._entries: dict[bytes, Entry] = {} if capacity is None else OrderedDict()
        self._evicted: dict[bytes, float] = {}
        self._used = 0
        # Prefix reads not yet applied to every entry they refresh: (now, chain digests, hit).
        self._reads: list[tuple[float, list[bytes], int]] = []
        # Digests in the order they first became known (written), with their chain depth.
        self._born: list[tuple[bytes, int]] = []
        # The lane each digest was entered under (SHARED: more than one); the lane whose read or
        # write is under way (set by the caller, None: unknown); per lane, the indexes of its reads in
        # `_reads`; per owner (a lane or SHARED), the indexes in `_born` of first writes of its digests.
        self._owner: dict[bytes, object] = {}
        self.lane: object = None
        self._lane_reads: dict[object, list[int]] = {}
        self._owner_born: dict[object, list[int]] = {}
        self._unlaned = False   # a read was logged without a lane: every entry looks at the whole log
        # Work done for the logs: logged reads and first writes looked at (tests and bench check that
        # it follows the requests, not the requests times the streams interleaved with them).
        self.scanned = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _entry(self, d: bytes) -> Entry | None:
        """The entry of `d` with every prefix read logged so far applied to it."""
        e = self._entries.get(d)
        reads = self._reads
        if e is not None and e.seen < len(reads):
            depth = e.depth
            if depth >= 0:
                # Only the owning lane reads through a digest no other lane entered (see module doc).
                owner = self._owner.get(d, SHARED)
                if owner is SHARED or self._unlaned:
                    todo = reads[e.seen:]
                else:
                    mine = self._lane_reads.get(owner, [])
                    todo = [reads[i] for i in mine[bisect_left(mine, e.seen):]]
                self.scanned += len(todo)
                life = e.life
                for t, path, hit in todo:
                    # the same refresh `touch` gives, if the entry lay on the read prefix and was live
                    if hit >= depth and e.available_at <= t + CLOCK_SLACK and t < e.expires_at and path[depth] == d:
                        e.expires_at = min(max(e.expires_at, t + life), e.cap)
                        e.last_used = t
            e.seen = len(reads)
        return e

    def get(self, d: bytes) -> Entry | None:
        return self._entry(d)

    def known(self, d: bytes) -> bool:
        """Whether `d` was ever written (it may have expired or been evicted since)."""
        return d in self._entries or d in self._evicted

    def enter(self, lane: object, digests: list[bytes], start: int, stop: int) -> int:
        """`lane`'s chain passes through `digests[start:stop]`: enter them before the lane reads or
        writes there (a digest entered by two lanes is SHARED for ever). Returns the first of those
        positions that is not SHARED (`stop` if all are)."""
        owner = self._owner
        first = stop
        for i in range(start, stop):
            d = digests[i]
            o = owner.setdefault(d, lane)
            if o is SHARED:
                continue
            if o != lane:
                owner[d] = SHARED
            elif first == stop:
                first = i
        return first

    @property
    def births(self) -> int:
        return len(self._born)

    def born_since(self, mark: int, lane: object = None) -> list[tuple[bytes, int]]:
        """(digest, depth) of every digest first written after `births` was `mark`; with `lane`, only
        those that can lie on a chain `lane` entered before then (its own digests' and shared ones)."""
        if lane is None:
            out = self._born[mark:]
        else:
            born, out = self._born, []
            for key in (lane, SHARED):
                idx = self._owner_born.get(key)
                if idx:
                    out += [born[i] for i in idx[bisect_left(idx, mark):]]
        self.scanned += len(out)
        return out

    def state(self, d: bytes, now: float) -> EntryState:
        e = self._entry(d)
        if e is None:
            return EntryState.EVICTED if d in self._evicted else EntryState.MISSING
        if e.expires_at <= now:
            return EntryState.EXPIRED
        if e.available_at > now + CLOCK_SLACK:
            return EntryState.PENDING
        return EntryState.LIVE

    def touch(self, d: bytes, now: float) -> None:
        """A read refreshes the entry's lifetime from this request's start (A-PC)."""
        e = self._entry(d)
        assert e is not None, "touch of a digest never written"
        e.expires_at = min(max(e.expires_at, now + e.life), e.cap)
        e.last_used = now
        if self.capacity is not None:
            self._entries.move_to_end(d)  # type: ignore[attr-defined]

    def touch_prefix(self, digests: list[bytes], hit: int, now: float) -> None:
        """A read of `digests[:hit + 1]` also refreshes every live entry at an earlier boundary of it.

        Observed in real traffic (spotter/4d5611e5, request 61): a system-prompt entry written
        11.5 min earlier, whose only uses since were reads of longer prefixes, was still read
        under a 5-minute TTL; so reading a prefix keeps its ancestors alive too.

        The read is logged, not applied: each entry applies it when next looked at, so a read costs
        the same whatever the prefix length. `digests` is kept: append to it, never change it.
        With a capacity the LRU order needs every touch now, so the read is applied at once.
        """
        if self.capacity is None:
            if self.lane is None:
                self._unlaned = True
            else:
                self._lane_reads.setdefault(self.lane, []).append(len(self._reads))
            self._reads.append((now, digests, hit))
            return
        for d in digests[:hit + 1]:
            e = self._entries.get(d)
            if e is not None and e.available_at <= now + CLOCK_SLACK and now < e.expires_at:
                self.touch(d, now)

    def write(self, d: bytes, tokens: int, now: float, available_at: float, ttl: float, depth: int = -1,
              max_lifetime: float = float("inf"), grace: float = 0.0) -> None:
        """Write (or refresh) the entry of `d`, the digest at block index `depth` of its chain.

        `max_lifetime` caps the entry's life from this write whatever reads refresh it (O-PC in_memory:
        "up to one hour"); a live entry keeps the cap of the write that created it. `grace`: seconds
        past the TTL (from this write or any later read) the entry is still read."""
        e = self._entry(d)
        if e is not None and e.expires_at > now:
            # A parallel request wrote the same prefix: the earliest response makes it readable.
            e.available_at = min(e.available_at, available_at)
            e.ttl = max(e.ttl, ttl)
            e.grace = max(e.grace, grace)
            e.expires_at = min(max(e.expires_at, now + ttl + grace), e.cap)
            e.last_used = now
        else:
            if e is not None:
                self._used -= e.tokens
            elif d not in self._evicted:
                self._owner_born.setdefault(self._owner.get(d, SHARED), []).append(len(self._born))
                self._born.append((d, depth))
            cap = now + max_lifetime
            self._entries[d] = Entry(tokens, now, available_at, min(now + ttl + grace, cap), ttl, now, depth,
                                     len(self._reads), cap, grace)
            self._used += tokens
            self._evicted.pop(d, None)
        if self.capacity is not None:
            self._entries.move_to_end(d)  # type: ignore[attr-defined]
            self._evict(now)

    def _evict(self, now: float) -> None:
        entries: OrderedDict = self._entries  # type: ignore[assignment]
        while self._used > self.capacity and len(entries) > 1:  # type: ignore[operator]
            d, e = entries.popitem(last=False)
            self._used -= e.tokens
            self._evicted[d] = now
