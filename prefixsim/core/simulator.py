"""Replays a stream of timed calls against one provider policy and one store; explains every miss.

Time is injected: each call carries its start time, and the runner processes calls in (t, order)
sequence. An entry written by a call becomes readable at t + time-to-first-token.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal
from typing import Iterable

from prefixsim.core.chain import namespace_digest
from prefixsim.core.explain import explain, found
from prefixsim.core.pricing import PriceBook
from prefixsim.core.store import Store
from prefixsim.core.tokens import TokenCounter, Tokenizer, get_tokenizer
from prefixsim.core.view import View, note_births, view
from prefixsim.errors import UserError
from prefixsim.model import Call, Cause, CauseKind, Outcome, Request, Usage
from prefixsim.providers.base import Decision, Policy
from prefixsim.providers.gemini_explicit import storage, storage_cost
from prefixsim.providers.registry import get_policy
from prefixsim.providers.gemini_tables import gemini_explicit_minimum
from prefixsim.providers.tables import CLAUDE_PLATFORMS, canonical_model


class Simulator:
    """One provider, one tokenizer, one cache: feed calls with `step` or `run`."""

    def __init__(self, provider: str = "anthropic", tokenizer: str | Tokenizer = "cl100k_base",
                 ttft: float = 1.0, capacity: int | None = None, prices: PriceBook | None = None,
                 policy: Policy | None = None) -> None:
        self.provider = provider
        self.policy = policy or get_policy(provider)
        # Claude on the API, Bedrock or Vertex: misses are explained by breakpoints and lookback, and
        # Bedrock and Vertex share entries across the organisation / project, not per workspace (A-PC)
        platform = CLAUDE_PLATFORMS.get(self.policy.name)
        self._breakpoint_rules = platform is not None
        # A serving engine (engines/policy.py, by name as the Claude platforms are: loading
        # prefixsim.engines here would load the engines for every provider) keeps its own cache.
        self._own_cache = self.policy.name in ("vllm", "sglang")
        self._org_wide = platform is not None and platform.org_wide
        tok = get_tokenizer(tokenizer) if isinstance(tokenizer, str) else tokenizer
        self.counter = TokenCounter(tok)
        self.store = Store(capacity)
        self.ttft = ttft
        self.prices = prices or PriceBook()
        # Each stream's previous request, to build the next one's view from and to say where it parted.
        self._last: dict[str, View] = {}
        self._ns: dict[tuple[str, str, str], bytes] = {}
        # Per parent stream, the stream of the last request that descended from it (a fork's children).
        self._forks: dict[str, str] = {}

    def run(self, calls: Iterable[Call]) -> list[Outcome]:
        ordered = sorted(enumerate(calls), key=lambda ic: (ic[1].t, ic[0]))
        out = []
        for i, c in ordered:
            try:
                out.append(self.step(c))
            except UserError as e:   # a request the rules refuse: which call, for a caller that knows its source
                raise e.at("call", i)
        return out

    def namespace(self, req: Request) -> bytes:
        ws = "" if self._org_wide else req.workspace
        key = (canonical_model(req.model), ws, req.cache_salt)
        d0 = self._ns.get(key)
        if d0 is None:
            d0 = self._ns[key] = namespace_digest(self.provider, *key)
        return d0

    def step(self, call: Call, at: dt.datetime | None = None) -> Outcome:
        """One call; priced at `at` (real traffic: the request's own time), else at the price book's
        clock start plus the call's t."""
        req, now = call.request, call.t
        if call.cached is not None and call.cached.create:
            return self._create_cached(call, at)
        own = self._last.get(call.stream)
        ref = own or (self._last.get(call.parent) if call.parent else None)
        store = self.store
        sibling = self._last.get(self._forks.get(call.parent, "")) if own is None and call.parent else None
        v = view(req, self.namespace(req), ref, own is not None, self.counter.count, store, lane=call.stream,
                 base=sibling)
        if own is None and call.parent:
            self._forks[call.parent] = call.stream
        store.lane = call.stream   # the policy's reads are this stream's (Store.enter)
        digests, cum, n = v.digests, v.cum, v.n
        total = cum[-1] if cum else 0
        # Before the request runs: the deepest of its prefixes the store has any trace of, and that
        # entry as it stood (the request may rewrite it, and a miss must say what it found).
        known = (v.known[-1], store.state(digests[v.known[-1]], now), found(store, digests[v.known[-1]])) \
            if v.known else None
        ttft = self.ttft if call.ttft is None else call.ttft
        dec = self.policy.decide(req, digests, cum, store, now, now + ttft, marks=v.marks, d0=v.d0,
                                 counter=self.counter, call=call)
        if call.cached is not None:
            dec = _by_reference(dec, call.cached.blocks, cum)
        if dec.below_minimum and not self._breakpoint_rules:
            # An automatic cache's entry of this chain that no read reaches (shorter than the first
            # breakpoint, GPT-5.5's 2,048) is no entry the request missed: the prompt is too short.
            known = None
        if known is None and dec.blocked is not None:
            # A policy with its own cache (the serving engines) reports what the store cannot know.
            known = (dec.blocked[1], dec.blocked[0], None)
        usage = Usage(input_tokens=dec.uncached, cache_write_5m=dec.write_5m, cache_write_1h=dec.write_1h,
                      cache_read=dec.read, output_tokens=call.output_tokens)
        # Conservation: every prompt token is in exactly one class.
        assert usage.prompt_tokens == total, (usage, total)
        if dec.hit >= 0:   # the read may be logged against v.digests up to the hit (Store.touch_prefix)
            v.pinned = max(v.pinned, dec.hit + 1)
        cause = explain(call, v, ref, dec.hit, dec.below_minimum, known, dec.breakpoints, total,
                        self._breakpoint_rules)
        if cause.kind == CauseKind.COLD and dec.read:
            # A read that ends inside block 0 (an automatic cache's part-block or common-unit read)
            # has no whole block read (hit -1), yet read tokens: a hit, as a read ending inside a
            # later block is, never "nothing cached".
            cause = Cause()
        self._settle(v, now)
        if self._own_cache:
            # A serving engine keeps the prompt it ran (its blocks evicted later are reported by the
            # policy's `blocked`): the next request of the stream parts from all of it.
            v.extent = n - 1
        self._last[call.stream] = v
        when = at if at is not None else self.prices.start + dt.timedelta(seconds=now)
        rates = self.prices.rates(req.model, self.provider, when, req.endpoint) if req.endpoint else \
            self.prices.rates(req.model, self.provider, when)
        return Outcome(call=call, usage=usage, cause=cause, cost_usd=rates.cost(usage),
                       cost_no_cache_usd=rates.cost_without_cache(usage), price_source=rates.source,
                       read_blocks=dec.hit + 1, n_blocks=n)

    def _create_cached(self, call: Call, at: dt.datetime | None) -> Outcome:
        """Creating a Gemini CachedContent: its tokens billed as input (G-PR), no cache read or write
        of the implicit kind, and its storage for the time it is kept. Without caching it would not
        exist, so it costs nothing there."""
        req, ref = call.request, call.cached
        assert ref is not None
        total = sum(self.counter.count(b) for b in req.blocks)
        least = None if ref.recorded else gemini_explicit_minimum(req.model)   # a log's cache was made
        if least is not None and total < int(least.value):
            # the API's own 400 INVALID_ARGUMENT wording (G-ERR), so a user recognises it
            raise UserError(f"{call.label}: Cached content is too small. total_token_count={total}, "
                            f"min_total_token_count={least.value} ({req.model}; {least.source})")
        usage = Usage(input_tokens=total, output_tokens=call.output_tokens)
        rates = self.prices.rates(req.model, self.provider, at) if at is not None else \
            self.prices.rates_at(req.model, self.provider, call.t)
        per_token_hour, _ = storage(req.model, self.prices)
        kept = storage_cost(total, ref.kept_s, per_token_hour)
        return Outcome(call=call, usage=usage, cause=Cause(), cost_usd=rates.cost(usage),
                       cost_no_cache_usd=Decimal(0), price_source=rates.source, read_blocks=0,
                       n_blocks=len(req.blocks), storage_usd=kept)

    def _settle(self, v: View, now: float) -> None:
        """After the request ran: note the positions it wrote and its extent, the deepest position
        with an entry (expired included, evicted not)."""
        store = v.store
        if not note_births(v.known, v.digests, v.n, store, v.births, v.lane):
            v.known = [j for j in range(v.n) if store.known(v.digests[j])]
        v.births = store.births
        v.t = now
        v.extent = -1
        for j in reversed(v.known):
            if store.get(v.digests[j]) is not None:
                v.extent = j
                break


def _by_reference(dec: Decision, blocks: int, cum: list[int]) -> Decision:
    """A request naming a CachedContent reads its first `blocks` blocks at the cached rate, whatever
    the implicit cache gave (it is read by reference, not found by lookup: G-CC); the implicit
    decision stands beyond it. Tokens keep their order: read, then written, then uncached."""
    e = cum[blocks - 1] if blocks else 0
    if dec.read >= e:
        return dec
    written = max(0, dec.read + dec.write_5m + dec.write_1h - e)
    total = dec.read + dec.write_5m + dec.write_1h + dec.uncached
    return replace(dec, read=e, write_5m=written, write_1h=0, uncached=total - e - written,
                   hit=max(dec.hit, blocks - 1), below_minimum=False)
