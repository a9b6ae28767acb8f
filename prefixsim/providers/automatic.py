"""Automatic prefix caching (OpenAI, DeepSeek): no cache_control; the provider caches prompts at its
own breakpoints and a request reads the longest cached prefix it fully matches.

Breakpoints at token intervals (OpenAI before GPT-5.6) end inside blocks, so a request whose block
differs from a cached one part-way reads the common start of that block: the policy remembers, per
parent digest, the block the latest chain continued with, and tokenizes only that one pair of blocks.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable

import xxhash

from ..model import Block, Request
from ..store import State, Store
from ..tokenize import TokenCounter, common_prefix_tokens
from .base import Decision
from .tables import DEEPSEEK_RULE, AutoRule, openai_rule

#: Parents whose next block is remembered (least recently written forgotten first): bounds memory
#: on long traffic; a forgotten parent only loses the part-block read, never a whole-block one.
REMEMBERED_PARENTS = 8192
#: Common-prefix units kept per parent (DeepSeek), newest first.
UNITS_PER_PARENT = 8
_UNIT_MARK = b"\x02unit"

BOUNDS = ("pessimistic", "optimistic")


class AutomaticPolicy:
    takes_context = True   # decide() takes the namespace digest and the token counter

    def __init__(self, name: str, rule_for: Callable[[str, str], AutoRule], bound: str = "pessimistic") -> None:
        assert bound in BOUNDS, bound
        self.name = name
        self.bound = bound
        self._rule_for = rule_for
        # parent digest -> (digest, block, layer params) of the block the latest chain continued with
        self._next: OrderedDict[bytes, tuple[bytes, Block, tuple[bytes, ...]]] = OrderedDict()
        # parent digest -> [(prefix bytes of the next block, layer params, tokens, unit digest)]
        self._units: dict[bytes, list[tuple[bytes, tuple[bytes, ...], int, bytes]]] = {}

    def rule(self, request: Request) -> AutoRule:
        return self._rule_for(request.model, request.retention)

    def has_range(self, model: str) -> bool:
        """Whether the documented retention is a range (then runs report both bounds)."""
        r = self._rule_for(model, "")
        return r.ttl != r.ttl_optimistic

    def describe(self, model: str) -> dict[str, str]:
        r = self._rule_for(model, "")
        where = "inside blocks (token level)" if r.partial else "at block boundaries"
        writes = "every position past the minimum" if r.writes == "every" else "the request's end"
        if r.common_units:
            writes += ", and the common prefix of two requests (read from the next)"
        cap = "none" if r.max_lifetime == float("inf") else f"{r.max_lifetime:.0f} s from the write"
        return {"provider": self.name, "caching": f"automatic; cached at {writes}; longest cached prefix read, {where}",
                "minimum cacheable tokens": str(r.min_tokens),
                "hit increment": "exact boundary" if r.increment == 1 else f"multiples of {r.increment} tokens",
                "retention": (f"{r.ttl:.0f} s idle, refreshed by a read; cap {cap}" if r.ttl == r.ttl_optimistic else
                              f"{r.ttl:.0f} s idle (pessimistic: the figures shown) to {r.ttl_optimistic:.0f} s "
                              f"idle (optimistic: the *_optimistic figures), refreshed by a read; cap {cap}"),
                "source": r.source}

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float, d0: bytes = b"", counter: TokenCounter | None = None) -> Decision:
        rule = self.rule(request)
        n = len(digests)
        total = cum[-1] if cum else 0
        live = State.LIVE
        hit, extra, blocked = -1, 0, None
        for j in range(n - 1, -1, -1):
            state = store.state(digests[j], now)
            if state is live:
                hit = j
                break
            if state is not State.MISSING and blocked is None:
                blocked = (state, j)
            inside = self._inside(rule, request, j, digests[j - 1] if j else d0, digests[j], store, now, counter)
            if inside:
                hit, extra = j - 1, min(inside, cum[j] - (cum[j - 1] if j else 0))
                break
        matched = (cum[hit] if hit >= 0 else 0) + extra
        read = _rounded(matched, rule)
        if hit >= 0:   # reading a prefix keeps its shorter prefixes alive too (Store.touch_prefix)
            store.touch_prefix(digests, hit, now)
        ttl = rule.idle(self.bound)
        if rule.writes == "every":
            written_to = [j for j in range(hit + 1, n) if cum[j] >= rule.min_tokens]
        else:
            written_to = [n - 1] if n - 1 > hit and total >= rule.min_tokens else []
        for j in written_to:
            store.write(digests[j], cum[j], now, available_at, ttl, j, rule.max_lifetime)
        if rule.common_units:
            self._common_unit(rule, request, digests, cum, d0, hit, store, now, available_at, counter)
        self._remember(request, digests, d0, hit)
        written = cum[written_to[-1]] - read if written_to and rule.write_multiplier_applies else 0
        return Decision(read=read, write_5m=written, write_1h=0, uncached=total - read - written,
                        hit=hit, blocked=blocked, below_minimum=hit < 0 and total < rule.min_tokens,
                        breakpoints=())

    def _inside(self, rule: AutoRule, request: Request, j: int, parent: bytes, d: bytes, store: Store,
                now: float, counter: TokenCounter | None) -> int:
        """Tokens of block j read from a cached prefix that ends inside it (0: none)."""
        live = State.LIVE
        block = request.blocks[j]
        if rule.partial and counter is not None:
            rec = self._next.get(parent)
            # the sibling's entry is keyed by its whole chain: live, it holds the parent prefix too
            if (rec is not None and rec[0] != d and store.state(rec[0], now) is live
                    and _comparable(rec[1], rec[2], block, request)):
                return common_prefix_tokens(counter.tokenizer, rec[1].data, block.data)[0]
        if rule.common_units:
            best = 0
            for prefix, params, tokens, ud in self._units.get(parent, ()):
                if (tokens > best and block.data.startswith(prefix) and params == _params_to(request, block)
                        and store.state(ud, now) is live):
                    best = tokens
            return best
        return 0

    def _common_unit(self, rule: AutoRule, request: Request, digests: list[bytes], cum: list[int], d0: bytes,
                     hit: int, store: Store, now: float, available_at: float, counter: TokenCounter | None) -> None:
        """DS kv_cache: the common prefix of this request and the latest one it shares a start with is
        persisted as a unit of its own, readable by later requests (not by this one)."""
        n = len(digests)
        q = hit + 1
        while q < n:
            rec = self._next.get(digests[q - 1] if q else d0)
            if rec is None or rec[0] != digests[q]:
                break
            q += 1
        if q >= n:
            return
        base = cum[q - 1] if q else 0
        parent = digests[q - 1] if q else d0
        rec = self._next.get(parent)
        block = request.blocks[q]
        tokens = nbytes = 0
        if rec is not None and counter is not None and _comparable(rec[1], rec[2], block, request):
            tokens, nbytes = common_prefix_tokens(counter.tokenizer, rec[1].data, block.data)
        ttl = rule.idle(self.bound)
        if tokens > 0 and base + tokens >= rule.min_tokens:
            prefix = block.data[:nbytes]
            ud = xxhash.xxh3_128_digest(parent + _UNIT_MARK + prefix)
            store.write(ud, base + tokens, now, available_at, ttl, -1, rule.max_lifetime)
            units = [u for u in self._units.get(parent, ()) if u[3] != ud]
            self._units[parent] = [(prefix, _params_to(request, block), tokens, ud), *units][:UNITS_PER_PARENT]
        elif tokens == 0 and q - 1 > hit and base >= rule.min_tokens:
            store.write(digests[q - 1], base, now, available_at, ttl, q - 1, rule.max_lifetime)

    def _remember(self, request: Request, digests: list[bytes], d0: bytes, hit: int) -> None:
        nxt = self._next
        blocks = request.blocks
        for j in range(hit + 1, len(digests)):
            parent = digests[j - 1] if j else d0
            nxt[parent] = (digests[j], blocks[j], request.layer_params)
            nxt.move_to_end(parent)
        while len(nxt) > REMEMBERED_PARENTS:
            nxt.popitem(last=False)


def _params_to(request: Request, block: Block) -> tuple[bytes, ...]:
    """The layer parameters the chain has mixed in by the time it reaches `block`."""
    return tuple(request.layer_params[:block.layer + 1])


def _comparable(old: Block, old_params: tuple[bytes, ...], new: Block, request: Request) -> bool:
    """Two blocks at the same chain position whose bytes can be compared token by token: same layer,
    same parameters mixed in, and both sized by the tokenizer from their bytes (a block with a fixed
    size may carry a label or a digest instead of its text)."""
    return (old.layer == new.layer and old.tokens is None and new.tokens is None
            and tuple(old_params[:new.layer + 1]) == _params_to(request, new))


def _rounded(tokens: int, rule: AutoRule) -> int:
    """Cached tokens end at the last breakpoint: a multiple of the increment (O-PC: 128, GPT-5.5's
    2,048-token breakpoints), none below the minimum."""
    if tokens < rule.min_tokens:
        return 0
    return tokens - tokens % rule.increment


def openai(bound: str = "pessimistic") -> AutomaticPolicy:
    return AutomaticPolicy("openai", openai_rule, bound)


def deepseek(bound: str = "pessimistic") -> AutomaticPolicy:
    return AutomaticPolicy("deepseek", lambda model, retention: DEEPSEEK_RULE, bound)
