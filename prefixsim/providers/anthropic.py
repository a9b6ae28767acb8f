"""Anthropic Messages API prompt caching (A-PC): breakpoints, the 20-block lookback, minimum length,
5m/1h TTLs and the A/B/C mixed-TTL billing; the same rules on Bedrock and Vertex with each platform's
differences (tables.ClaudePlatform)."""
from __future__ import annotations

import dataclasses

from prefixsim.core.store import EntryState, Store
from prefixsim.errors import RequestError, UserError
from prefixsim.model import PROMPT_END, TTL_SECONDS, Request
from prefixsim.providers.base import Decision
from prefixsim.providers.tables import (
    ANTHROPIC_LOOKBACK,
    ANTHROPIC_MAX_BREAKPOINTS,
    ANTHROPIC_TTL_GRACE,
    CLAUDE_API,
    ClaudePlatform,
    NO_AUTOMATIC,
    Sourced,
    anthropic_min_tokens,
)


def breakpoints(request: Request, marks: list[tuple[int, str]] | None = None) -> list[tuple[int, str]]:
    """(block index, ttl) of every breakpoint, automatic mode included, checked as the API does.

    `marks` are the request's cache_control markers when the caller already knows them (the runner
    keeps them per stream, so a long request is not scanned block by block)."""
    bps = [(i, b.breakpoint) for i, b in enumerate(request.blocks) if b.breakpoint] if marks is None else list(marks)
    limit = ANTHROPIC_MAX_BREAKPOINTS.value
    if request.auto_cache and request.blocks:
        last = len(request.blocks) - 1
        if last > 0 and request.blocks[last].data == PROMPT_END:   # not content: the prompt's closing tokens
            last -= 1
        explicit_last = request.blocks[last].breakpoint
        if explicit_last and explicit_last != request.auto_cache:
            raise RequestError(f"automatic cache_control (ttl {request.auto_cache}) conflicts with an explicit "
                               f"ttl {explicit_last} on the last block ({ANTHROPIC_MAX_BREAKPOINTS.source})")
        if not explicit_last:
            if len(bps) >= limit:
                raise RequestError(f"automatic caching needs a free breakpoint slot but {len(bps)} explicit "
                                   f"cache_control blocks are set (at most {limit}; A-PC)")
            bps.append((last, request.auto_cache))
    if len(bps) > limit:
        raise RequestError(f"{len(bps)} blocks have cache_control; at most {limit} are allowed (A-PC)")
    seen_5m = False
    for i, ttl in bps:
        if ttl == "5m":
            seen_5m = True
        elif seen_5m:
            raise RequestError(f"a 1h cache_control at {request.blocks[i].path or i} comes after a 5m one; "
                               "1h entries must come before 5m entries (A-PC)")
    return bps


class AnthropicPolicy:
    def __init__(self, platform: ClaudePlatform = CLAUDE_API, listed_only: bool = True) -> None:
        self.platform = platform
        self.name = platform.name
        self.listed_only = listed_only   # False: a Claude id the tables lack takes UNLISTED_CLAUDE

    def has_range(self, model: str | None = None) -> bool:
        return False   # one documented retention, no range

    def spaces(self, model: str) -> bool:
        """Whether each checkpoint needs the minimum past the previous one (the platform's rule)."""
        return self.platform.spaces(model)

    def minimum(self, model: str) -> Sourced:
        """The model's cacheable minimum on this platform (UserError: a model the table does not know,
        unless the policy takes unlisted models)."""
        try:
            return anthropic_min_tokens(model, self.platform.name)
        except UserError:
            if self.listed_only:
                raise
            from prefixsim.providers.unlisted import UNLISTED_CLAUDE   # lazy: only an unlisted id needs it

            return UNLISTED_CLAUDE

    def describe(self, model: str) -> dict[str, str]:
        p = self.platform
        row = self.minimum(model)
        out = {"provider": p.name, "minimum cacheable tokens": f"{row.value} ({row.source})"
               + ("; on this platform each checkpoint needs it past the previous checkpoint" if self.spaces(model) else ""),
               "breakpoints": f"at most {ANTHROPIC_MAX_BREAKPOINTS.value}; writes only at breakpoints",
               "lookback": f"{ANTHROPIC_LOOKBACK.value} blocks per breakpoint ({ANTHROPIC_LOOKBACK.source})",
               "ttl": "5m default or 1h, refreshed by a hit, counted from request start (A-PC); read "
                      f"{ANTHROPIC_TTL_GRACE.value} s past it, as public traffic shows (the TTL is a minimum: "
                      "docs/rules.md#anthropic-ttl-and-refresh)"}
        if not p.offers_1h(model):
            out["ttl"] = f"5m only on {p.name} for {model}: a 1h breakpoint is written and billed as 5m"
        if p is not CLAUDE_API:
            out["platform rules"] = p.source
        return out

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float, *, marks: list[tuple[int, str]] | None = None,
               d0: bytes = b"", counter: object = None, call: object = None) -> Decision:
        p = self.platform
        if request.auto_cache and p.name in NO_AUTOMATIC:   # not offered there: no breakpoint, priced uncached
            request = dataclasses.replace(request, auto_cache="")
        bps = breakpoints(request, marks)
        if not p.offers_1h(request.model):
            bps = [(i, "5m") for i, _ in bps]
        spaced = self.spaces(request.model)
        total = cum[-1] if cum else 0
        minimum = self.minimum(request.model).value
        window = ANTHROPIC_LOOKBACK.value
        hit, blocked = -1, None
        for i, _ in bps:
            for j in range(i, max(i - window, -1), -1):
                if j <= hit:
                    break
                state = store.state(digests[j], now)
                if state is EntryState.LIVE:
                    hit = j
                    break
                if state is not EntryState.MISSING and (blocked is None or j > blocked[1]):
                    blocked = (state, j)
        if hit >= 0:
            store.touch_prefix(digests, hit, now)
        read = cum[hit] if hit >= 0 else 0
        # Only breakpoints past the hit write, and only where the prefix reaches the minimum (on a
        # spaced platform: the minimum past the previous checkpoint that reached it).
        later, last = [], 0
        for i, ttl in bps:
            if cum[i] - (last if spaced else 0) >= minimum:
                last = cum[i]
                if i > hit:
                    later.append((i, ttl))
        for i, ttl in later:
            store.write(digests[i], cum[i], now, available_at, TTL_SECONDS[ttl], i, grace=ANTHROPIC_TTL_GRACE.value)
        # A-PC mixed-TTL billing: A = highest hit, B = highest 1h breakpoint after A, C = last breakpoint.
        b = max((cum[i] for i, ttl in later if ttl == "1h"), default=read)
        c = cum[later[-1][0]] if later else read
        # Below the minimum: nothing read and nothing written, which says every breakpoint fell short
        # (the first to reach the minimum is written, on a spaced platform too: `last` is 0 till then).
        below = bool(bps) and not later and hit < 0
        return Decision(read=read, write_1h=b - read, write_5m=c - b, uncached=total - c, hit=hit,
                        blocked=blocked, below_minimum=below, breakpoints=tuple(i for i, _ in bps))
