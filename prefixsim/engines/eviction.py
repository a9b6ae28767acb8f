"""Eviction order as a key function, and a queue of eviction candidates ordered by it.

SGLang keeps evictable leaves in a heap ordered by a strategy's priority (`evict_policy.py`:
LRU on last_access_time, LFU on (hit_count, last_access_time), FIFO on creation_time); vLLM's
`FreeKVCacheBlockQueue` is the LRU case. Both engines use this one queue, so neither structure
branches on its policy. Times are a logical clock (one tick per cache operation), not wall time,
so replays are deterministic.
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Protocol

from prefixsim.errors import UserError


class Evictable(Protocol):
    last_access: int
    created: int
    hits: int
    qseq: int  # sequence number of the item's live queue entry; 0 when not queued


EVICTION_KEYS: dict[str, Callable[[Evictable], Any]] = {
    "lru": lambda x: x.last_access,
    "lfu": lambda x: (x.hits, x.last_access),
    "fifo": lambda x: x.created,
}

EVICTIONS = tuple(EVICTION_KEYS)


class EvictionQueue:
    """Candidates ordered by the policy's key, smallest first; ties go to the earlier offer.

    Withdrawing or re-offering an item leaves its old heap entry behind, recognised as stale by
    `qseq`; the heap is rebuilt when stale entries outnumber live ones, so it stays O(live).
    """

    def __init__(self, policy: str = "lru") -> None:
        key = EVICTION_KEYS.get(policy)
        if key is None:
            raise UserError(f"unknown eviction policy {policy!r} (valid: {', '.join(EVICTIONS)})")
        self.policy = policy
        self._key = key
        self._heap: list[tuple[Any, int, Evictable]] = []
        self._seq = 0
        self._live = 0

    def __len__(self) -> int:
        return self._live

    def offer(self, item: Evictable) -> None:
        """Make `item` a candidate (again), at the position its current key gives it."""
        if not item.qseq:
            self._live += 1
        self._seq += 1
        item.qseq = self._seq
        heapq.heappush(self._heap, (self._key(item), self._seq, item))
        if len(self._heap) > 2 * self._live + 1024:
            self._heap = [e for e in self._heap if e[2].qseq == e[1]]
            heapq.heapify(self._heap)

    def withdraw(self, item: Evictable) -> None:
        """`item` is in use (referenced, locked or has children): not a candidate until offered again."""
        if item.qseq:
            item.qseq = 0
            self._live -= 1

    def pop(self) -> Evictable | None:
        """The next victim, or None when nothing is evictable."""
        heap = self._heap
        while heap:
            _, seq, item = heapq.heappop(heap)
            if item.qseq == seq:
                item.qseq = 0
                self._live -= 1
                return item
        return None
