"""Chained digests and the cache store: entries, TTL, availability, capacity and eviction.

The store knows nothing of providers or prices: policies decide which digests to read and write,
the store only remembers what was written, when it becomes readable and when it expires.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum

import xxhash

from .model import Request

_h = xxhash.xxh3_128_digest
_LAYER_MARK = b"\x01layer"


def namespace_digest(provider: str, model: str, workspace: str = "", salt: str = "") -> bytes:
    """d0 = H(namespace): what separates caches (provider, model, workspace, cache salt)."""
    return _h("\0".join(("prefixsim/1", provider, model, workspace, salt)).encode())


def chain(d0: bytes, request: Request) -> list[bytes]:
    """d_i = H(d_{i-1} || key(block_i)), one digest per block boundary.

    A layer's invalidating parameters are mixed in where the chain enters that layer, before its
    first block (and before any later layer's first block when that layer is empty).
    """
    params = request.layer_params
    d = d0
    entered = -1
    out: list[bytes] = []
    append = out.append
    for b in request.blocks:
        layer = b.layer
        while entered < layer:
            entered += 1
            if params[entered]:
                d = _h(d + _LAYER_MARK + params[entered])
        d = _h(d + b.key)
        append(d)
    return out


class State(Enum):
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


class Store:
    """Digest -> Entry. Expired entries stay visible (as EXPIRED) so a miss can say why.

    With `capacity` (tokens), writing past it evicts least-recently-used entries first.
    """

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity
        self._entries: dict[bytes, Entry] = {} if capacity is None else OrderedDict()
        self._evicted: dict[bytes, float] = {}
        self._used = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, d: bytes) -> Entry | None:
        return self._entries.get(d)

    def state(self, d: bytes, now: float) -> State:
        e = self._entries.get(d)
        if e is None:
            return State.EVICTED if d in self._evicted else State.MISSING
        if e.expires_at <= now:
            return State.EXPIRED
        if e.available_at > now:
            return State.PENDING
        return State.LIVE

    def touch(self, d: bytes, now: float) -> None:
        """A read refreshes the entry's lifetime from this request's start (A-PC)."""
        e = self._entries[d]
        e.expires_at = max(e.expires_at, now + e.ttl)
        e.last_used = now
        if self.capacity is not None:
            self._entries.move_to_end(d)  # type: ignore[attr-defined]

    def touch_prefix(self, digests: list[bytes], now: float) -> None:
        """A read of a prefix also refreshes every live entry at an earlier boundary of it.

        Observed in real traffic (spotter/4d5611e5, request 61): a system-prompt entry written
        11.5 min earlier, whose only uses since were reads of longer prefixes, was still read
        under a 5-minute TTL; so reading a prefix keeps its ancestors alive too.
        """
        for d in digests:
            e = self._entries.get(d)
            if e is not None and e.available_at <= now < e.expires_at:
                self.touch(d, now)

    def write(self, d: bytes, tokens: int, now: float, available_at: float, ttl: float) -> None:
        e = self._entries.get(d)
        if e is not None and e.expires_at > now:
            # A parallel request wrote the same prefix: the earliest response makes it readable.
            e.available_at = min(e.available_at, available_at)
            e.ttl = max(e.ttl, ttl)
            e.expires_at = max(e.expires_at, now + ttl)
            e.last_used = now
        else:
            if e is not None:
                self._used -= e.tokens
            self._entries[d] = Entry(tokens, now, available_at, now + ttl, ttl, now)
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
