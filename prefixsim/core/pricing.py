"""Token classes -> money, in exact decimals. Prices come from genai-prices' bundled data (offline)
or from a price sheet that overrides or defines a model; every figure says which source priced it.
Self-hosted engines without a price sheet cost nothing per token (their cost is GPU time)."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Mapping

from prefixsim.core import fill
from prefixsim.core.genai import AS_OF, Raw, Tiered, _remembered, bedrock_price_id
from prefixsim.core.genai import _from_genai_prices as _from_genai_prices  # noqa: F401 (tests reach it here)
from prefixsim.core.genai import _genai_cuts as _genai_cuts  # noqa: F401 (tests reach it here)
from prefixsim.core.lifecycle import lifecycle
from prefixsim.core.price_overlay import OVERLAY_DATE, overlay_cuts, overlay_rows
from prefixsim.errors import UserError
from prefixsim.model import Usage

__all__ = ["AS_OF", "MTOK", "PRICE_KEYS", "PriceBook", "Rates", "Tiered", "bedrock_price_id", "clock_start"]

MTOK = Decimal(1_000_000)
PRICE_KEYS = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
#: USD per MTok a price sheet may give: a dollar a token, thousands of times any listed model's price.
#: More is a typo, and a price near the float maximum cannot be quantized to micro-dollars.
MAX_PRICE = 1_000_000


@dataclass(frozen=True, slots=True)
class Rates:
    model: str
    input: Tiered
    output: Tiered
    cache_read: Tiered
    cache_write_5m: Tiered
    cache_write_1h: Tiered
    source: str
    cuts: tuple[int, ...] = ()   # times of day (s after 00:00 UTC) where the model's price may change
    #: where each price of PRICE_KEYS comes from (bundled data, an overlay row, a documented multiplier)
    origins: tuple[str, ...] = ()

    def cost(self, usage: Usage) -> Decimal:
        p = usage.prompt_tokens
        return (usage.input_tokens * self.input.at(p) + usage.cache_write_5m * self.cache_write_5m.at(p)
                + usage.cache_write_1h * self.cache_write_1h.at(p) + usage.cache_read * self.cache_read.at(p)
                + usage.output_tokens * self.output.at(p)) / MTOK

    def cost_without_cache(self, usage: Usage) -> Decimal:
        """The same prompt with caching off: every prompt token at the input rate."""
        p = usage.prompt_tokens
        return (p * self.input.at(p) + usage.output_tokens * self.output.at(p)) / MTOK

    def per_mtok(self) -> dict[str, Decimal]:
        return {k: getattr(self, k).base for k in PRICE_KEYS}


#: genai-prices' provider of each of our providers: Claude on Bedrock is `aws` (it distinguishes
#: `global.` cross-region profiles from `regional.` ids, +10 % on newer models), Claude on Vertex and
#: Gemini are `google`.
_GENAI_PROVIDER = {"anthropic": "anthropic", "openai": "openai", "deepseek": "deepseek",
                   "bedrock": "aws", "vertex": "google", "gemini": "google",
                   # providers behind OpenAI-compatible endpoints (providers/others.py); "other": any provider's
                   "groq": "groq", "mistral": "mistral", "xai": "x-ai", "zai": "zai", "moonshot": "moonshotai",
                   "together": "together", "fireworks": "fireworks", "cohere": "cohere"}

#: Serving engines (prefixsim.engines.ENGINES) run on the user's own GPUs: a hosted API's token
#: prices for the same model would be someone else's bill, so only a price sheet prices them.
SELF_HOSTED = ("vllm", "sglang")
SELF_HOSTED_SOURCE = "self-hosted: no token prices; see GPU-seconds"


#: The clock's default start time of day: 07:00 UTC, a weekday business hour where time-of-day
#: prices differ. DeepSeek bills peak and off-peak by the clock (genai-prices' data: deepseek-chat and
#: deepseek-reasoner peak UTC 00:30-16:30; V4 models peak UTC 01:00-04:00 and 06:00-10:00, i.e.
#: 09:00-12:00 and 14:00-18:00 Beijing time). 07:00 UTC (15:00 Beijing, 08:00-09:00 in Europe) is
#: peak for both, 3 hours before the V4 window ends, so a session of a few hours is priced at peak.
DEFAULT_START_TIME = dt.time(7, 0, tzinfo=dt.UTC)


def clock_start(date: dt.date | None = None, start: dt.datetime | None = None) -> dt.datetime:
    """When a scenario's t = 0 falls: `start`'s time of day on `date` (either may be missing: the
    date defaults to `start`'s own, else today or, at a weekend, the Friday before; the time to
    DEFAULT_START_TIME)."""
    if start is not None and start.tzinfo is None:
        start = start.replace(tzinfo=dt.UTC)
    start = start.astimezone(dt.UTC) if start is not None else None
    day = date or (start.date() if start is not None else _last_weekday(dt.datetime.now(dt.UTC).date()))
    return dt.datetime.combine(day, start.timetz() if start is not None else DEFAULT_START_TIME)


def _last_weekday(day: dt.date) -> dt.date:
    """`day`, or the Friday before it at a weekend: the default clock is a weekday business hour."""
    return day - dt.timedelta(days=max(0, day.weekday() - 4))


class PriceBook:
    """Resolves a model's rates: the price sheet first, then genai-prices at the request's own time.

    `start` is when the clock's t = 0 falls (`rates_at(model, provider, t)`); prices with a
    time-of-day window (DeepSeek's off-peak hours) and prices that change on a date follow it."""

    def __init__(self, sheet: Mapping[str, Mapping[str, object]] | None = None, sheet_source: str = "price sheet",
                 when: dt.date | None = None, start: dt.datetime | None = None, designs: bool = False,
                 endpoint: str | None = None) -> None:
        # designs: the book prices designs (scenarios, studies) at a chosen date, where a dated model
        # id before its own date is a mistake; real traffic is priced at each request's logged time,
        # whatever that clock said, and is never refused for it.
        self.designs = designs
        self.endpoint = endpoint   # Vertex / Bedrock: global, regional or multi-region (None: as the model id says)
        self.sheet = dict(sheet or {})
        self.sheet_source = sheet_source
        self.start = clock_start(when, start)
        self.when = self.start.date()
        self._cache: dict[tuple, Rates] = {}
        # model, provider -> the times of day (seconds after 00:00 UTC) where its price may change
        self._cuts: dict[tuple[str, str | None], tuple[int, ...]] = {}

    def rates(self, model: str, provider: str | None = None, at: dt.datetime | None = None,
              endpoint: str | None = None) -> Rates:
        """The rates of a request sent at `at` (default: the clock's start) on `endpoint` (default:
        the book's, else what the model id names)."""
        at = self.start if at is None else (at if at.tzinfo else at.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
        end = endpoint or self.endpoint
        cuts = self._cuts.get((model, provider))
        if cuts is None:
            r = self._resolve(model, provider, at, end)
            cuts = self._cuts[(model, provider)] = r.cuts
            self._cache[(*_key(model, provider, at, cuts), end)] = r
            return r
        key = (*_key(model, provider, at, cuts), end)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._resolve(model, provider, at, end)
        return hit

    def rates_at(self, model: str, provider: str | None, t: float) -> Rates:
        """The rates of a request sent `t` seconds after the clock's start."""
        return self.rates(model, provider, self.start + dt.timedelta(seconds=t))

    def windows(self, model: str, provider: str | None = None) -> str | None:
        """The model's time-of-day prices in words (None when its price does not depend on the hour)."""
        cuts = self._cuts.get((model, provider))
        if cuts is None:
            self.rates(model, provider)
            cuts = self._cuts[(model, provider)]
        if not cuts:
            return None
        day = dt.datetime.combine(self.when, dt.time(0, tzinfo=dt.UTC))
        bounds = [*cuts, 86400]
        spans = [(0 if i == 0 else bounds[i - 1], bounds[i]) for i in range(len(bounds))]
        parts = []
        for a, b in spans:
            if a == b:
                continue
            r = self.rates(model, provider, day + dt.timedelta(seconds=a))
            per = r.per_mtok()
            parts.append(f"{_hhmm(a)}-{_hhmm(b)} UTC input {per['input']}, cache read {per['cache_read']}, "
                         f"output {per['output']}")
        if len({p.split(" UTC ", 1)[1] for p in parts}) == 1:
            return None   # the same price all day (a time-of-day price not yet in force on this date)
        return "; ".join(parts) + " (USD/MTok; each request priced at its own time)"

    def _resolve(self, model: str, provider: str | None, at: dt.datetime, endpoint: str | None = None) -> Rates:
        if model in self.sheet:
            return _from_sheet(model, self.sheet[model], self.sheet_source)
        if provider in SELF_HOSTED:
            free = Tiered(Decimal(0))
            return Rates(model, free, free, free, free, free, SELF_HOSTED_SOURCE, origins=(SELF_HOSTED_SOURCE,) * 5)
        released = snapshot_date(model)
        if self.designs and released is not None and at.date() < released:
            raise UserError(f"{model} is the snapshot of {released.isoformat()}: on {at.date().isoformat()} (the price "
                            "date) it did not exist yet, so it had no price; give a date on or after its release")
        name, notes = self._lifecycle(model, provider, at)
        gp = _GENAI_PROVIDER.get(provider or "")
        end = fill.endpoint_of(provider, model, endpoint)
        gid = bedrock_price_id(name, end if endpoint else None) if gp == "aws" else name
        try:
            raw = _remembered(gid, gp, at, model)
        except UserError:
            # As the providers write names: `openai/gpt-5.6-sol` (a router's prefix), a dated snapshot
            # `gpt-5.6-2026-05-14` that genai-prices lists by its family only.
            plain = _DATED.sub("", gid.rsplit("/", 1)[-1])
            if plain == gid:
                raise
            raw = _remembered(plain, gp, at, model)
        return _compose(raw, name, provider, end, at, notes)

    def priced_as(self, model: str, provider: str | None, at: dt.datetime | None = None) -> tuple[str, str]:
        """The model id a request at `at` (default: the clock's start) is billed as, and why ("" when itself)."""
        name, notes = self._lifecycle(model, provider, self.start if at is None else at)
        return name, "; ".join(notes)

    def _lifecycle(self, model: str, provider: str | None, at: dt.datetime) -> tuple[str, list[str]]:
        """The model id priced at `at` (an alias's successor, a retired model's routing) and what was done."""
        life = lifecycle(model, provider)
        if life is None:
            return model, []
        day = at.date().isoformat()
        if self.designs and life.released is not None and at < life.released:
            raise UserError(f"{model} was released on {life.released.date().isoformat()}: on {day} (the price date) "
                            f"it did not exist yet, so it had no price ({life.source})")
        if life.retired is not None and at >= life.retired and life.successor:
            gone = f"{life.retired:%Y-%m-%d %H:%M} UTC"
            if life.routed:
                return life.successor, [f"{model} retired {gone}: routed to {life.successor}, billed at its rates"]
            if self.designs:
                raise UserError(f"{model} was retired on {gone} and is refused after that ({life.source}); on {day} "
                                f"use its successor {life.successor}, or a price date before its retirement")
            return life.successor, [f"{model} retired {gone}: a logged request after that is priced as its "
                                    f"successor {life.successor}"]
        if life.alias_of and life.alias_from is not None and at >= life.alias_from:
            return life.alias_of, [f"{model} → {life.alias_of} from {life.alias_from.date().isoformat()}"]
        return model, []


def _compose(raw: Raw, name: str, provider: str | None, endpoint: str | None, at: dt.datetime,
             notes: list[str]) -> Rates:
    """genai-prices' listed prices, the overlay rows in force at `at` on top, the endpoint's premium,
    then every class still missing from the provider's documented multiplier (or refused)."""
    got: dict[str, Tiered | None] = {"input": raw.input, "output": raw.output, "cache_read": raw.cache_read,
                                     "cache_write_5m": raw.cache_write_5m, "cache_write_1h": raw.cache_write_1h}
    origin = {k: raw.source for k, v in got.items() if v is not None}
    used = []
    for row in overlay_rows(name, provider, endpoint):
        if row.covers(at):
            used.append(row)
            for k, price in row.prices:
                got[k] = Tiered(price)
                origin[k] = f"prefixsim overlay {OVERLAY_DATE}: {row.name} ({row.source}, read {row.read})"
    premium = fill.endpoint_premium(provider, name, endpoint)
    if premium is not None:
        factor, why = premium
        for k, v in got.items():
            if v is not None:
                got[k] = v.times(factor)
                origin[k] += f" x {factor} ({why})"
    for k in PRICE_KEYS:
        if got[k] is None:
            got[k], origin[k] = fill.missing(provider, name, k, got)
    notes = notes + [r.name + (f" ({r.note})" if r.note else "") for r in used]
    source = raw.source + (f" + prefixsim overlay {OVERLAY_DATE}: " + "; ".join(notes) if notes else "")
    if premium is not None:
        source += f"; {endpoint} endpoint x {premium[0]}"
    cuts = tuple(sorted(set(raw.cuts) | set(overlay_cuts(name, provider)) | set(overlay_cuts(raw.model, provider))))
    r: dict[str, Tiered] = {k: v for k, v in got.items() if v is not None}
    return Rates(raw.model, r["input"], r["output"], r["cache_read"], r["cache_write_5m"], r["cache_write_1h"],
                 source, cuts, tuple(origin[k] for k in PRICE_KEYS))


#: The release date a snapshot id carries: `claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`,
#: Vertex's `claude-sonnet-4-5@20250929`, Bedrock's `anthropic.claude-…-20250929-v1:0`.
_SNAPSHOT = re.compile(r"[-@](\d{4})-?(\d{2})-?(\d{2})(?:-v\d+(?::\d+)?)?$")


def snapshot_date(model: str) -> dt.date | None:
    """The date in a dated model id (the day that snapshot was released), or None: an alias such as
    `claude-sonnet-4-5` names no day, and genai-prices records no release dates to check it by."""
    m = _SNAPSHOT.search(model.strip())
    if m is None:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


_DATED = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def _key(model: str, provider: str | None, at: dt.datetime, cuts: tuple[int, ...]) -> tuple:
    """Requests on the same UTC date and between the same two cuts of the day pay the same rates."""
    if not cuts:
        return (model, provider, at.date())
    sec = at.hour * 3600 + at.minute * 60 + at.second
    return (model, provider, at.date(), sum(1 for c in cuts if sec >= c))


def _hhmm(sec: int) -> str:
    return f"{sec // 3600:02d}:{sec % 3600 // 60:02d}"


def _from_sheet(model: str, row: Mapping[str, object], source: str) -> Rates:
    # storage_mtok_hour: Gemini explicit caches' storage (prefixsim/analysis/gemini_explicit.py), not a token class
    unknown = set(row) - set(PRICE_KEYS) - {"storage_mtok_hour"}
    if unknown:
        raise UserError(f"price sheet for {model}: unknown keys {sorted(unknown)} (valid: {', '.join(PRICE_KEYS)})")
    if "input" not in row or "output" not in row:
        raise UserError(f"price sheet for {model}: 'input' and 'output' (USD per MTok) are required")
    vals = {k: sheet_price(model, k, row[k]) for k in row if k in PRICE_KEYS}
    inp = vals["input"]
    # Unset cache prices default to Anthropic's multipliers (A-PR: 0.1x read, 1.25x 5m, 2x 1h write).
    dflt = {"cache_read": inp * Decimal("0.1"), "cache_write_5m": inp * Decimal("1.25"), "cache_write_1h": inp * 2}
    full: dict[str, Decimal] = {**dflt, **vals}
    origins = tuple(source if k in vals else f"{source}; unset: A-PR multiplier of its input" for k in PRICE_KEYS)
    t = {k: Tiered(full[k]) for k in PRICE_KEYS}
    return Rates(model, t["input"], t["output"], t["cache_read"], t["cache_write_5m"], t["cache_write_1h"], source,
                 origins=origins)


def sheet_price(model: str, key: str, value: object) -> Decimal:
    """One price of a sheet, USD per MTok: a finite number from 0 to MAX_PRICE (UserError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise UserError(f"price sheet for {model}: {key} must be a number (USD per MTok)")
    try:
        price = Decimal(str(value).strip())
    except ArithmeticError:
        raise UserError(f"price sheet for {model}: {key} {value!r} is not a number (USD per MTok)") from None
    if not price.is_finite() or not 0 <= price <= MAX_PRICE:
        raise UserError(f"price sheet for {model}: {key} {value!r} is out of range "
                        f"(0 to {MAX_PRICE:,} USD per MTok)")
    return price


