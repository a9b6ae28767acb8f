"""Automatic prefix caching (OpenAI, DeepSeek): every prompt is cached, the longest previously seen
prefix is read, counted from a minimum in fixed increments. No breakpoints, no lookback limit."""
from __future__ import annotations

from typing import Callable

from ..model import Request
from ..store import State, Store
from .base import Decision
from .tables import DEEPSEEK_RULE, AutoRule, openai_rule


class AutomaticPolicy:
    def __init__(self, name: str, rule_for: Callable[[str], AutoRule]) -> None:
        self.name = name
        self._rule_for = rule_for

    def describe(self, model: str) -> dict[str, str]:
        r = self._rule_for(model)
        return {"provider": self.name, "caching": "automatic, every prompt; longest seen prefix read",
                "minimum cacheable tokens": str(r.min_tokens), "hit increment": f"{r.increment} tokens",
                "retention": f"{r.ttl:.0f} s idle, at most {r.max_lifetime:.0f} s", "source": r.source}

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float) -> Decision:
        rule = self._rule_for(request.model)
        total = cum[-1] if cum else 0
        hit, blocked = -1, None
        for j in range(len(digests) - 1, -1, -1):
            state = store.state(digests[j], now)
            if state is State.LIVE:
                hit = j
                break
            if state is not State.MISSING and blocked is None:
                blocked = (state, j)
        matched = cum[hit] if hit >= 0 else 0
        read = _rounded(matched, rule)
        if hit >= 0:
            store.touch(digests[hit], now)
        # The whole prompt becomes cacheable at every block boundary past the minimum.
        for j in range(hit + 1, len(digests)):
            if cum[j] >= rule.min_tokens:
                store.write(digests[j], cum[j], now, available_at, rule.ttl, j)
        written = total - read if total >= rule.min_tokens and rule.write_multiplier_applies else 0
        return Decision(read=read, write_5m=written, write_1h=0, uncached=total - read - written,
                        hit=hit, blocked=blocked, below_minimum=hit < 0 and total < rule.min_tokens,
                        breakpoints=())


def _rounded(tokens: int, rule: AutoRule) -> int:
    """Cached tokens are reported from the minimum in whole increments (O-PC: multiples of 128)."""
    if tokens < rule.min_tokens:
        return 0
    return tokens - (tokens - rule.min_tokens) % rule.increment


def openai() -> AutomaticPolicy:
    return AutomaticPolicy("openai", openai_rule)


def deepseek() -> AutomaticPolicy:
    return AutomaticPolicy("deepseek", lambda model: DEEPSEEK_RULE)
