"""A replay's prices when a model has none: predicting cache reads needs no price, so a request whose
model genai-prices (or the price sheet) cannot price is still replayed; its costs count as $0 in the
sums and are shown as missing, and the run names the model. A price sheet's own mistake (a bad row
for the model) is still the user's error and stops the run."""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal

from prefixsim.core.pricing import PriceBook, Rates, Tiered
from prefixsim.errors import UserError
from prefixsim.providers.registry import model_provider

#: How the price source of an unpriced request begins (rows and summaries test for it).
NO_PRICE = "no price: "
#: How the reason begins of a priced model's requests whose usage its rates cannot price (Record.unpriced:
#: a realtime response's audio tokens, which genai-prices prices apart from text): their costs are missing.
UNCLASSED = "tokens outside the text price classes: "
_ZERO = Tiered(Decimal(0))


def missing(source: str) -> bool:
    """Whether a price source is that of a request nothing could price."""
    return source.startswith(NO_PRICE)


def unclassed_why(kinds: str) -> str:
    """The summary's reason for requests whose `kinds` of tokens (Record.unpriced) have no price class."""
    return UNCLASSED + kinds


def unclassed(why: str) -> bool:
    """Whether a summary's reason is `unclassed_why`'s (the model has a price; its tokens do not fit it)."""
    return why.startswith(UNCLASSED)


class Lenient:
    """A PriceBook that answers every model: the book's rates, or zero rates whose source says which
    model had no price and why. `missing` keeps (model, provider) -> the lookup's message."""

    def __init__(self, book: PriceBook) -> None:
        self.book = book
        self.missing: dict[tuple[str, str | None], str] = {}
        #: (model, provider) the book cannot price -> the provider its model id names, which can (or None)
        self._billed_by: dict[tuple[str, str | None], str | None] = {}

    def __getattr__(self, name: str):
        # everything else (start, when, sheet, windows) is the book's own
        return getattr(self.book, name)

    def rates(self, model: str, provider: str | None = None, at: dt.datetime | None = None,
              endpoint: str | None = None) -> Rates:
        key = (model, provider)
        named = self._billed_by.get(key)
        if named is not None:   # found before: ask the book that prices it, not the one that failed
            return self._billed(model, provider, named, at)
        try:
            return self.book.rates(model, provider, at, endpoint)
        except UserError as e:
            if model in self.book.sheet:   # the sheet's row is wrong: the user's mistake, named
                raise
            named = model_provider(model, strict=True)
            if named not in ("other", provider):
                # Another provider's model through this one's API format (Claude Code behind a proxy
                # that serves `gpt-4.1`): the model's own provider bills it, at its rates
                try:
                    r = self._billed(model, provider, named, at)
                except UserError:
                    pass
                else:
                    self._billed_by[key] = named
                    return r
            self.missing.setdefault((model, provider), e.message)
            return Rates(model, _ZERO, _ZERO, _ZERO, _ZERO, _ZERO, f"{NO_PRICE}{model}" +
                         (f" on {provider}" if provider else "") + " (its costs are missing)")

    def _billed(self, model: str, provider: str | None, named: str, at: dt.datetime | None) -> Rates:
        r = self.book.rates(model, named, at)
        return replace(r, source=f"{r.source} ({model} is {named}'s model, sent in {provider}'s API format: "
                                 f"priced at {named}'s rates)")

    def rates_at(self, model: str, provider: str | None, t: float) -> Rates:
        return self.rates(model, provider, self.book.start + dt.timedelta(seconds=t))


def lenient(prices: PriceBook | Lenient) -> Lenient:
    return prices if isinstance(prices, Lenient) else Lenient(prices)
