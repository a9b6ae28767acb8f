"""Token classes -> money, in exact decimals. Prices come from genai-prices' bundled data (offline)
or from a price sheet that overrides or defines a model; every figure says which source priced it.
Self-hosted engines without a price sheet cost nothing per token (their cost is GPU time)."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Mapping

from prefixsim._perf import price_memo
from prefixsim.errors import UserError
from prefixsim.io.suggest import nearest
from prefixsim.model import Usage
from prefixsim.providers.tables import canonical_model

#: How a genai-prices source names the date (or time) its rates are from; a replay over many days
#: groups its sources by what comes before it (replay.joined_sources).
AS_OF = ", prices as of "

MTOK = Decimal(1_000_000)
PRICE_KEYS = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
#: USD per MTok a price sheet may give: a dollar a token, thousands of times any listed model's price.
#: More is a typo, and a price near the float maximum cannot be quantized to micro-dollars.
MAX_PRICE = 1_000_000


@dataclass(frozen=True, slots=True)
class Tiered:
    """A per-MTok price with genai-prices' cliff tiers: past a tier's start, all tokens pay its rate."""

    base: Decimal
    tiers: tuple[tuple[int, Decimal], ...] = ()

    def at(self, prompt_tokens: int) -> Decimal:
        rate = self.base
        for start, price in self.tiers:
            if prompt_tokens > start:
                rate = price
        return rate


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


def _tiered(value) -> Tiered | None:
    if value is None:
        return None
    if isinstance(value, (int, float, str, Decimal)):
        return Tiered(Decimal(str(value)))
    base = getattr(value, "base", None)
    tiers = tuple((int(t.start), Decimal(str(t.price))) for t in getattr(value, "tiers", ()))
    return Tiered(Decimal(str(base)), tiers)


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
                 when: dt.date | None = None, start: dt.datetime | None = None, designs: bool = False) -> None:
        # designs: the book prices designs (scenarios, studies) at a chosen date, where a dated model
        # id before its own date is a mistake; real traffic is priced at each request's logged time,
        # whatever that clock said, and is never refused for it.
        self.designs = designs
        self.sheet = dict(sheet or {})
        self.sheet_source = sheet_source
        self.start = clock_start(when, start)
        self.when = self.start.date()
        self._cache: dict[tuple, Rates] = {}
        # model, provider -> the times of day (seconds after 00:00 UTC) where its price may change
        self._cuts: dict[tuple[str, str | None], tuple[int, ...]] = {}

    def rates(self, model: str, provider: str | None = None, at: dt.datetime | None = None) -> Rates:
        """The rates of a request sent at `at` (default: the clock's start)."""
        at = self.start if at is None else (at if at.tzinfo else at.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
        cuts = self._cuts.get((model, provider))
        if cuts is None:
            r = self._resolve(model, provider, at)
            cuts = self._cuts[(model, provider)] = r.cuts
            self._cache[_key(model, provider, at, cuts)] = r
            return r
        key = _key(model, provider, at, cuts)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._resolve(model, provider, at)
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
        note = ""
        if self.start.weekday() >= 5:
            note = (f"; the clock starts on a {self.start:%A}: genai-prices has no day-of-week prices, so a weekend "
                    "off-peak rate (DeepSeek V4 from 2026-08-23) is not applied and these are an upper bound")
        return "; ".join(parts) + " (USD/MTok; each request priced at its own time)" + note

    def _resolve(self, model: str, provider: str | None, at: dt.datetime) -> Rates:
        if model in self.sheet:
            return _from_sheet(model, self.sheet[model], self.sheet_source)
        if provider in SELF_HOSTED:
            free = Tiered(Decimal(0))
            return Rates(model, free, free, free, free, free, SELF_HOSTED_SOURCE)
        released = snapshot_date(model)
        if self.designs and released is not None and at.date() < released:
            raise UserError(f"{model} is the snapshot of {released.isoformat()}: on {at.date().isoformat()} (the price "
                            "date) it did not exist yet, so it had no price; give a date on or after its release")
        gp = _GENAI_PROVIDER.get(provider or "")
        name = bedrock_price_id(model) if gp == "aws" else model
        try:
            return _remembered(name, gp, at, model)
        except UserError:
            # As the providers write names: `openai/gpt-5.6-sol` (a router's prefix), a dated snapshot
            # `gpt-5.6-2026-05-14` that genai-prices lists by its family only.
            plain = _DATED.sub("", name.rsplit("/", 1)[-1])
            if plain == name:
                raise
            return _remembered(plain, gp, at, model)


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
    return Rates(model, Tiered(inp), Tiered(vals["output"]),
                 Tiered(vals.get("cache_read", inp * Decimal("0.1"))),
                 Tiered(vals.get("cache_write_5m", inp * Decimal("1.25"))),
                 Tiered(vals.get("cache_write_1h", inp * 2)), source)


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


def bedrock_price_id(model: str) -> str:
    """genai-prices' `aws` id of a Claude model named any way (`claude-sonnet-4-5`, the Claude API's
    dated id, a Bedrock model id or inference profile): `global.…` for a global profile, else the
    `regional.…` price (in-region ids and geographic profiles such as `us.` pay the regional rate).
    A model genai-prices' aws table does not hold passes through (the lookup then names it)."""
    from genai_prices import data  # lazy: start-up: genai-prices loads only for a price the memo lacks


    want = canonical_model(model)
    scope = "global." if model.strip().lower().startswith("global.") else "regional."
    for p in data.providers:
        if p.id == "aws":
            ids = [m.id for m in p.models if m.id.startswith(scope) and canonical_model(m.id) == want]
            # genai-prices matches a regional price by the ids Bedrock uses, not by its own `regional.`
            return min(ids).removeprefix("regional.") if ids else model
    return model


def _from_genai_prices(model: str, provider_id: str | None, at: dt.datetime, shown: str | None = None) -> Rates:
    import genai_prices  # lazy: start-up: genai-prices loads only for a price the memo lacks
    from genai_prices import Usage as GUsage  # lazy: start-up: genai-prices loads only for a price the memo lacks

    try:
        calc = genai_prices.calc_price(GUsage(input_tokens=1, output_tokens=1), model_ref=model,
                                       provider_id=provider_id, genai_request_timestamp=at)
    except LookupError:
        near = _nearest_priced(model, provider_id)
        hint = f" (did you mean {near!r}?)" if near else ""
        raise UserError(f"no price for model {model!r}{hint} in genai-prices {genai_prices.__version__}; "
                        "give one in the scenario's price sheet") from None
    except ValueError as e:
        raise UserError(f"no price for model {model!r}: {e}") from None
    mp = calc.model_price
    inp = _tiered(getattr(mp, "input_mtok", None))
    out = _tiered(getattr(mp, "output_mtok", None))
    if inp is None or out is None:
        raise UserError(f"genai-prices has no token prices for {model!r}; give one in a price sheet")
    read = _tiered(getattr(mp, "cache_read_mtok", None)) or inp
    w5 = _tiered(getattr(mp, "cache_write_mtok", None)) or inp   # no write price: writes cost plain input
    w1 = _tiered(getattr(mp, "cache_write_1h_mtok", None)) or w5
    cuts = _genai_cuts(calc.model)
    when = at.date().isoformat() + (f" {at:%H:%M} UTC" if cuts else "")
    source = (f"genai-prices {genai_prices.__version__} bundled data: {calc.provider.id}/{calc.model.id}"
              f"{AS_OF}{when}")
    return Rates(shown or model, inp, out, read, w5, w1, source, cuts)


def _remembered(model: str, provider_id: str | None, at: dt.datetime, shown: str) -> Rates:
    """_from_genai_prices, or the rates it gave an earlier run for the same model, provider and date
    (prefixsim/_perf/price_memo.py: a short replay then never imports genai-prices)."""
    row = price_memo.lookup(model, provider_id, at, shown)
    if row is not None:
        try:
            inp, out, read, w5, w1 = (Tiered(Decimal(b), tuple((int(s), Decimal(p)) for s, p in t)) for b, t in row[1:6])
            return Rates(str(row[0]), inp, out, read, w5, w1, source=str(row[6]))
        except (TypeError, ValueError, ArithmeticError):
            pass   # a damaged entry: look it up again
    r = _from_genai_prices(model, provider_id, at, shown)
    if not r.cuts:
        price_memo.keep(model, provider_id, at, shown, [r.model, *([str(t.base), [[s, str(p)] for s, p in t.tiers]]
                        for t in (r.input, r.output, r.cache_read, r.cache_write_5m, r.cache_write_1h)), r.source])
    return r


def _nearest_priced(model: str, provider_id: str | None) -> str | None:
    """The genai-prices model id nearest a name it does not know (the provider's own first)."""
    from genai_prices import data_snapshot  # lazy: start-up: genai-prices loads only for a price the memo lacks


    providers = data_snapshot.get_snapshot().providers
    mine = [p for p in providers if p.id == provider_id]
    return nearest(model, sorted({m.id for p in mine for m in p.models})) or \
        nearest(model, sorted({m.id for p in providers for m in p.models}))


def _genai_cuts(info) -> tuple[int, ...]:
    """The starts and ends of the model's time-of-day price windows, as seconds after 00:00 UTC."""
    # lazy: start-up: genai-prices loads only for a price the memo lacks
    from genai_prices.types import TimeOfDateConstraint

    prices = getattr(info, "prices", None)
    cuts: set[int] = set()
    for p in prices if isinstance(prices, list) else ():
        c = getattr(p, "constraint", None)
        if isinstance(c, TimeOfDateConstraint):
            for t in (c.start_time, c.end_time):
                u = dt.datetime.combine(dt.date(2000, 1, 3), t if t.tzinfo else t.replace(tzinfo=dt.UTC))
                u = u.astimezone(dt.UTC)
                cuts.add(u.hour * 3600 + u.minute * 60 + u.second)
    return tuple(sorted(cuts - {0}))
