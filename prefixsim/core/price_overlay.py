"""prefixsim's dated price overlay: corrections and additions to genai-prices' bundled data, as data.

Each row names a model (genai-prices' id, as the provider bills it), the provider and endpoint it
applies to, when it is valid (UTC, `valid_from` inclusive, `valid_to` exclusive), the hours of the
day it covers (empty: all day), each price it sets (USD per MTok; a class it does not set comes from
genai-prices), the page it was read from and when. Every row also keeps what genai-prices said at
its worked example (`upstream`) and the example itself: tests/core/test_price_overlay.py checks each
row against its example, and fails when genai-prices' data no longer says `upstream` there (a new
release caught up: the row is redundant, or says something else: the two disagree), so the overlay
shrinks as upstream catches up. docs/rules.md#pricing-the-price-overlay-and-model-lifecycles."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

#: The date the overlay was last read against its sources (shown in every price line it touches).
OVERLAY_DATE = "2026-12-01"

_UTC = dt.UTC


def _t(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s).replace(tzinfo=_UTC) if "+" not in s else dt.datetime.fromisoformat(s)


@dataclass(frozen=True, slots=True)
class Example:
    """A worked example: this usage at `at` costs `cost` USD under the row (hand-computed)."""

    at: dt.datetime
    uncached: int
    read: int
    output: int
    cost: Decimal


@dataclass(frozen=True, slots=True)
class OverlayRow:
    name: str
    model: str
    provider: str
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    prices: tuple[tuple[str, Decimal], ...]
    source: str
    read: str
    note: str
    example: Example
    #: genai-prices 0.2.3 at the example's instant: (input, cache read, output) USD/MTok
    upstream: tuple[Decimal, Decimal, Decimal]
    hours: tuple[tuple[int, int], ...] = ()   # (start, end) seconds after 00:00 UTC; () = all day
    endpoint: str | None = None                # None: every endpoint
    days: tuple[int, ...] = ()                 # weekdays it covers (0 = Monday, UTC); () = every day

    def covers(self, at: dt.datetime) -> bool:
        if at < self.valid_from or (self.valid_to is not None and at >= self.valid_to):
            return False
        if self.days and at.weekday() not in self.days:
            return False
        if not self.hours:
            return True
        sec = at.hour * 3600 + at.minute * 60 + at.second
        return any(a <= sec < b for a, b in self.hours)

    def price(self, key: str) -> Decimal | None:
        return dict(self.prices).get(key)


def _p(inp: str, read: str, out: str) -> tuple[tuple[str, Decimal], ...]:
    return (("input", Decimal(inp)), ("cache_read", Decimal(read)), ("output", Decimal(out)))


#: DeepSeek's "Models & Pricing" page, api-docs.deepseek.com/quick_start/pricing, copies read
#: 2026-12-01 through the search tool: V4 from its launch (2026-04-24) at $0.14 / $0.0028 / $0.28
#: (Flash) and $0.435 / $0.003625 / $0.87 (Pro) a flat rate; "The new prices take effect at 16:00 UTC
#: on August 16, 2026": peak / off-peak billing, off-peak half of peak, peak 01:00-04:00 and
#: 06:00-10:00 UTC (Flash off-peak $0.22 / $0.007 / $0.66, peak $0.44 / $0.014 / $1.32; Pro off-peak
#: $0.66 / $0.022 / $1.98). genai-prices 0.2.3 has the peak windows with no start date (so it bills
#: peak before 2026-08-16), the August prices from 2026-08-17, and Flash's peak at $0.30 / $0.006 /
#: $1.20 (the price from 2026-09-10) throughout.
_DS = "https://api-docs.deepseek.com/quick_start/pricing"
_PEAK = ((3600, 4 * 3600), (6 * 3600, 10 * 3600))
_V4_LAUNCH = _t("2026-04-24T00:00:00")
_V4_PEAK = _t("2026-08-16T16:00:00")
_V4_SEPT = _t("2026-09-10T00:00:00")   # genai-prices' date for the September prices (not corrected)
#: "Weekends are off-peak all day from 2026-08-23" (genai-prices 0.2.3's own price notes, pydantic/genai-
#: prices issue 582; the page: peak Monday to Friday, Beijing time, weekends and Chinese public holidays
#: off-peak all day). The peak windows fall on the same date in UTC and Beijing, so a UTC weekday is
#: Beijing's. Chinese public holidays are not modelled (their peak prices are an upper bound).
_WEEKENDS = _t("2026-08-23T00:00:00")
_WEEKDAYS = (0, 1, 2, 3, 4)
_WEEKEND_DAYS = (5, 6)

OVERLAY: tuple[OverlayRow, ...] = (
    OverlayRow(
        "deepseek-v4-flash launch price", "deepseek-v4-flash", "deepseek", _V4_LAUNCH, _V4_PEAK,
        _p("0.14", "0.0028", "0.28"), _DS, "2026-12-01",
        "a flat rate until peak / off-peak billing began at 16:00 UTC on 2026-08-16 (genai-prices bills its "
        "peak hours from any date)",
        Example(_t("2026-06-10T09:04:00"), 10_879, 10_048, 420, Decimal("0.00166879440")),
        (Decimal("0.3"), Decimal("0.006"), Decimal("1.2"))),
    OverlayRow(
        "deepseek-v4-flash off-peak from 2026-08-16", "deepseek-v4-flash", "deepseek", _V4_PEAK, _V4_SEPT,
        _p("0.22", "0.007", "0.66"), _DS, "2026-12-01",
        "off-peak from 16:00 UTC on 2026-08-16 (genai-prices: from 2026-08-17)",
        Example(_t("2026-08-16T20:00:00"), 10_879, 10_048, 420, Decimal("0.002740916")),
        (Decimal("0.14"), Decimal("0.0028"), Decimal("0.28"))),
    OverlayRow(
        "deepseek-v4-flash peak from 2026-08-16", "deepseek-v4-flash", "deepseek", _V4_PEAK, _WEEKENDS,
        _p("0.44", "0.014", "1.32"), _DS, "2026-12-01",
        "peak 01:00-04:00 and 06:00-10:00 UTC, twice off-peak (genai-prices: the later $0.30 / $0.006 / $1.20)",
        Example(_t("2026-08-18T07:00:00"), 10_879, 10_048, 420, Decimal("0.005481832")),
        (Decimal("0.3"), Decimal("0.006"), Decimal("1.2")), hours=_PEAK),
    OverlayRow(
        "deepseek-v4-flash weekday peak from 2026-08-23", "deepseek-v4-flash", "deepseek", _WEEKENDS, _V4_SEPT,
        _p("0.44", "0.014", "1.32"), _DS, "2026-12-01",
        "peak hours Monday to Friday only from 2026-08-23, until the 2026-09-10 prices (genai-prices: the later "
        "$0.30 / $0.006 / $1.20)",
        Example(_t("2026-08-24T07:00:00"), 10_879, 10_048, 420, Decimal("0.005481832")),
        (Decimal("0.3"), Decimal("0.006"), Decimal("1.2")), hours=_PEAK, days=_WEEKDAYS),
    OverlayRow(
        "deepseek-v4-flash weekend off-peak from 2026-09-10", "deepseek-v4-flash", "deepseek", _V4_SEPT, None,
        _p("0.15", "0.003", "0.6"), _DS, "2026-12-01",
        "weekends off-peak all day (genai-prices: peak prices at weekends, an upper bound it says it cannot express)",
        Example(_t("2026-11-28T07:00:00"), 10_879, 10_048, 420, Decimal("0.001913994")),
        (Decimal("0.3"), Decimal("0.006"), Decimal("1.2")), hours=_PEAK, days=_WEEKEND_DAYS),
    OverlayRow(
        "deepseek-flash weekend off-peak", "deepseek-flash", "deepseek", _V4_SEPT, None,
        _p("0.15", "0.003", "0.6"), _DS, "2026-12-01",
        "weekends off-peak all day (genai-prices: peak prices at weekends, an upper bound it says it cannot express)",
        Example(_t("2026-11-28T07:00:00"), 10_879, 10_048, 420, Decimal("0.001913994")),
        (Decimal("0.3"), Decimal("0.006"), Decimal("1.2")), hours=_PEAK, days=_WEEKEND_DAYS),
    OverlayRow(
        "deepseek-v4-pro weekend off-peak from 2026-08-23", "deepseek-v4-pro", "deepseek", _WEEKENDS, None,
        _p("0.66", "0.022", "1.98"), _DS, "2026-12-01",
        "weekends off-peak all day (genai-prices: peak prices at weekends, an upper bound it says it cannot express)",
        Example(_t("2026-11-28T07:00:00"), 1_000_000, 1_000_000, 1_000_000, Decimal("2.662")),
        (Decimal("1.32"), Decimal("0.044"), Decimal("3.96")), hours=_PEAK, days=_WEEKEND_DAYS),
    OverlayRow(
        "deepseek-v4-pro launch price", "deepseek-v4-pro", "deepseek", _V4_LAUNCH, _V4_PEAK,
        _p("0.435", "0.003625", "0.87"), _DS, "2026-12-01",
        "a flat rate until peak / off-peak billing began at 16:00 UTC on 2026-08-16 (genai-prices bills its "
        "peak hours from any date)",
        Example(_t("2026-06-10T07:00:00"), 1_000_000, 1_000_000, 1_000_000, Decimal("1.308625")),
        (Decimal("1.32"), Decimal("0.044"), Decimal("3.96"))),
    OverlayRow(
        "deepseek-v4-pro off-peak from 2026-08-16", "deepseek-v4-pro", "deepseek", _V4_PEAK,
        _t("2026-08-17T00:00:00"), _p("0.66", "0.022", "1.98"), _DS, "2026-12-01",
        "off-peak from 16:00 UTC on 2026-08-16 (genai-prices: from 2026-08-17)",
        Example(_t("2026-08-16T20:00:00"), 1_000_000, 1_000_000, 1_000_000, Decimal("2.662")),
        (Decimal("0.435"), Decimal("0.003625"), Decimal("0.87"))),
)


def overlay_rows(model: str, provider: str | None, endpoint: str | None = None) -> tuple[OverlayRow, ...]:
    """The rows for a genai-prices model id on a provider (and endpoint), in order."""
    return tuple(r for r in OVERLAY if r.model == model and r.provider == provider
                 and (r.endpoint is None or r.endpoint == endpoint))


def overlay_cuts(model: str, provider: str | None) -> tuple[int, ...]:
    """The times of day where an overlay row of the model starts or ends."""
    return tuple(sorted({c for r in OVERLAY if r.model == model and r.provider == provider
                         for span in r.hours for c in span} - {0, 86400}))

