"""The seeds' demo model (seed 003, prefix_cache.py): every block boundary is written and read, no
minimum, no lookback limit, no write premium, no expiry unless a TTL is given."""
from __future__ import annotations

from ..model import Request
from ..store import State, Store
from .base import Decision


class PrefixPolicy:
    name = "prefix"

    def __init__(self, ttl: float = float("inf")) -> None:
        self.ttl = ttl

    def describe(self, model: str) -> dict[str, str]:
        return {"provider": "prefix", "caching": "every block boundary written and read (seed 003 demo)",
                "minimum cacheable tokens": "none", "ttl": "none" if self.ttl == float("inf") else f"{self.ttl:.0f} s"}

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float) -> Decision:
        total = cum[-1] if cum else 0
        hit, blocked = -1, None
        for j, d in enumerate(digests):
            state = store.state(d, now)
            if state is not State.LIVE:
                if state is not State.MISSING:
                    blocked = (state, j)
                break
            hit = j
        if hit >= 0:
            store.touch(digests[hit], now)
        for j in range(hit + 1, len(digests)):
            store.write(digests[j], cum[j], now, available_at, self.ttl)
        read = cum[hit] if hit >= 0 else 0
        return Decision(read=read, write_5m=0, write_1h=0, uncached=total - read, hit=hit,
                        blocked=blocked, below_minimum=False, breakpoints=())
