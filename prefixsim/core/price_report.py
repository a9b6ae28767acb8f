"""Every rate prefixsim would use for a model, with the source of each (`prefixsim prices`): the
bundled genai-prices row, an overlay row, a documented multiplier, a price sheet; the lifecycle step
that chose the priced model, the endpoint's premium and the hours of a time-of-day price."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from prefixsim.core.fill import ENDPOINTS, LABELS, endpoint_of
from prefixsim.core.pricing import PRICE_KEYS, PriceBook
from prefixsim.errors import UserError


@dataclass(frozen=True, slots=True)
class PriceRow:
    label: str        # "input", "cache read", ...
    usd_per_mtok: str  # the base rate, then each long-context tier ("3; past 200,000 tokens: 6")
    source: str


@dataclass(frozen=True, slots=True)
class PriceSheet:
    model: str
    provider: str
    endpoint: str | None
    at: dt.datetime
    rows: tuple[PriceRow, ...]
    source: str                   # the whole line, as a run's assumptions print it
    hours: str | None             # time-of-day prices in words (None: the same all day)


def price_sheet(model: str, provider: str, endpoint: str | None = None,
                when: dt.date | None = None, start: dt.datetime | None = None) -> PriceSheet:
    """The rates of `model` on `provider` (and endpoint) at the clock's start of `when`; the provider a
    bare id names is providers/registry.py's priced_provider (as every path infers it)."""
    if not model.strip():
        raise UserError("no model given")
    if endpoint is not None:
        if endpoint not in ENDPOINTS:
            raise UserError(f"unknown endpoint {endpoint!r} (valid: {', '.join(ENDPOINTS)})")
        if provider not in ("vertex", "bedrock"):
            raise UserError(f"--endpoint applies to provider vertex or bedrock (Claude on a cloud), not {provider}")
    book = PriceBook(when=when, start=start, designs=True, endpoint=endpoint)
    r = book.rates(model, provider)
    rows = []
    for key, origin in zip(PRICE_KEYS, r.origins):
        t = getattr(r, key)
        tiers = "".join(f"; past {s:,} tokens: {p.normalize():f}" for s, p in t.tiers)
        rows.append(PriceRow(LABELS[key], f"{t.base.normalize():f}{tiers}", origin))
    return PriceSheet(model, provider, endpoint_of(provider, model, endpoint), book.start, tuple(rows), r.source,
                      book.windows(model, provider))


def sheet_json(s: PriceSheet) -> dict:
    """`prefixsim prices --format json`: the sheet as plain data."""
    return {"model": s.model, "provider": s.provider, "endpoint": s.endpoint, "at": f"{s.at:%Y-%m-%dT%H:%M:%SZ}",
            "rates": [{"class": r.label, "usd_per_mtok": r.usd_per_mtok, "source": r.source} for r in s.rows],
            "source": s.source, "time_of_day": s.hours}
