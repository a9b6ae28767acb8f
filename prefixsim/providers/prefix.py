"""The seeds' demo model (seed 003, prefix_cache.py): every block boundary is written and read, no
minimum, no lookback limit, no write premium, no expiry unless a TTL is given."""
from __future__ import annotations

from prefixsim.core.store import EntryState, Store
from prefixsim.model import Request
from prefixsim.providers.base import Decision


class PrefixPolicy:
    name = "prefix"

    def __init__(self, ttl: float = float("inf")) -> None:
        self.ttl = ttl

    def has_range(self, model: str | None = None) -> bool:
        return False   # one documented retention, no range

    def describe(self, model: str) -> dict[str, str]:
        return {"provider": "prefix", "caching": "every block boundary written and read (seed 003 demo)",
                "minimum cacheable tokens": "none", "ttl": "none" if self.ttl == float("inf") else f"{self.ttl:.0f} s"}

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float, *, marks: object = None, d0: bytes = b"",
               counter: object = None, call: object = None) -> Decision:
        total = cum[-1] if cum else 0
        hit = self._hit(digests, store, now)
        blocked = None
        if hit + 1 < len(digests):
            state = store.state(digests[hit + 1], now)
            if state is not EntryState.MISSING:
                blocked = (state, hit + 1)
        if hit >= 0:
            store.touch(digests[hit], now)
        for j in range(hit + 1, len(digests)):
            store.write(digests[j], cum[j], now, available_at, self.ttl, j)
        read = cum[hit] if hit >= 0 else 0
        return Decision(read=read, write_5m=0, write_1h=0, uncached=total - read, hit=hit,
                        blocked=blocked, below_minimum=False, breakpoints=())

    def _hit(self, digests: list[bytes], store: Store, now: float) -> int:
        """The last position of the longest all-LIVE prefix.

        Without expiry or eviction the LIVE positions of a chain are a prefix of it: a request writes
        every position past its hit at once, with ancestors already readable, and a parallel rewrite
        only makes a position readable sooner. So the deepest LIVE position, found walking back
        from the end over the request's new blocks, is the answer; otherwise walk from the start.
        """
        live = EntryState.LIVE
        if self.ttl == float("inf") and store.capacity is None:
            for j in range(len(digests) - 1, -1, -1):
                if store.state(digests[j], now) is live:
                    return j
            return -1
        hit = -1
        for j, d in enumerate(digests):
            if store.state(d, now) is not live:
                break
            hit = j
        return hit
