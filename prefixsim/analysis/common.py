"""What every break-even analysis shares: the rates it prices with (and their source), and requests
built from fixed token sizes so the simulation and the closed form see exactly the same prompt."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Mapping

from prefixsim.core.pricing import MTOK, PriceBook, Rates
from prefixsim.core.simulator import Simulator
from prefixsim.model import Block, Call, Layer, Request
from prefixsim.providers.tables import anthropic_min_tokens


@dataclass(frozen=True, slots=True)
class Prices:
    """Per-token prices of one model (USD), from its per-MTok rates below any long-context tier."""

    model: str
    input: Decimal
    output: Decimal
    read: Decimal
    write_5m: Decimal
    write_1h: Decimal
    source: str
    rates: Rates | None = field(default=None, compare=False)   # with the long-context tiers
    #: The Claude platform whose rules and prices apply (anthropic, bedrock, vertex): the one the
    #: model's id names (registry.model_provider), as replay and a scenario infer it.
    provider: str = "anthropic"

    def min_tokens(self) -> int:
        """The model's minimum cacheable prompt on its platform (Bedrock's can differ: Opus 4.7)."""
        return int(anthropic_min_tokens(self.model, self.provider).value)

    def write(self, ttl: str) -> Decimal:
        return self.write_1h if ttl == "1h" else self.write_5m

    def input_cost(self, prompt: int, read: int, write: int, uncached: int, ttl: str) -> Decimal:
        """One request's input cost (USD) at the rates its prompt length pays (a long prompt can
        cross a tier where every token pays more, as `run` prices it)."""
        r = self.rates
        if r is None:
            return read * self.read + write * self.write(ttl) + uncached * self.input
        w = r.cache_write_1h if ttl == "1h" else r.cache_write_5m
        return (read * r.cache_read.at(prompt) + write * w.at(prompt) + uncached * r.input.at(prompt)) / MTOK


def prices_for(model: str, sheet: Mapping[str, Mapping[str, object]] | None = None,
               when: dt.date | None = None, provider: str = "anthropic",
               sheet_source: str = "price sheet") -> tuple[Prices, PriceBook]:
    book = PriceBook(sheet, sheet_source=sheet_source, when=when, designs=True)
    r: Rates = book.rates(model, provider)
    per = r.per_mtok()
    return Prices(model, per["input"] / MTOK, per["output"] / MTOK, per["cache_read"] / MTOK,
                  per["cache_write_5m"] / MTOK, per["cache_write_1h"] / MTOK, r.source, r, provider), book


class Builder:
    """Fixed-size blocks with unique bytes: `blk("sys", 4000)` is always the same block."""

    def __init__(self) -> None:
        self._cache: dict[tuple, Block] = {}

    def blk(self, name: str, tokens: int, layer: Layer = Layer.MESSAGES) -> Block:
        key = (name, tokens, layer)
        b = self._cache.get(key)
        if b is None:
            b = self._cache[key] = Block(layer, f"{name}:{tokens}".encode(), name, tokens=tokens)
        return b


def request(model: str, blocks: list[Block], marks: list[int], ttl: str = "5m") -> Request:
    """A request with breakpoints on the given block indices (negative counts from the end)."""
    bl = list(blocks)
    for i in marks:
        bl[i] = bl[i].with_breakpoint(ttl)
    return Request(model=model, blocks=tuple(bl))


def simulate_cost(calls: list[Call], book: PriceBook, ttft: float = 1.0, streams=None,
                  provider: str = "anthropic") -> Decimal:
    """Input cost (USD) of the calls under Anthropic's rules on `provider` (a Claude platform), priced as
    `prefixsim run` prices them; `streams` (a predicate on the stream name) picks which calls count."""
    sim = Simulator(provider, tokenizer="approx", ttft=ttft, prices=book)
    total = Decimal(0)
    for o in sim.run(calls):
        if streams is None or streams(o.call.stream):
            total += o.cost_usd - o.usage.output_tokens * book.rates(o.call.request.model, provider).output.base / MTOK
    return total


def request_cost(p: Prices, ttl: str, minimum: int, length: int, read: int) -> Decimal:
    """One request of `length` prompt tokens that reads `read` of them from the cache (A-PC): the rest
    is written at its last breakpoint if the prompt reaches the model's minimum, else sent uncached.
    (Every study's requests have their last breakpoint on the last block.)"""
    write = length - read if length >= minimum else 0
    return p.input_cost(length, read, write, length - read - write, ttl)
