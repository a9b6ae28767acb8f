"""Token classes -> money, in exact decimals. Prices come from genai-prices' bundled data (offline)
or from a price sheet that overrides or defines a model; every figure says which source priced it.
Self-hosted engines without a price sheet cost nothing per token (their cost is GPU time)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Mapping

from .errors import UserError
from .model import Usage

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


_GENAI_PROVIDER = {"anthropic": "anthropic", "openai": "openai", "deepseek": "deepseek"}

#: Serving engines (prefixsim.engines.ENGINES) run on the user's own GPUs: a hosted API's token
#: prices for the same model would be someone else's bill, so only a price sheet prices them.
SELF_HOSTED = ("vllm", "sglang")
SELF_HOSTED_SOURCE = "self-hosted: no token prices; see GPU-seconds"


class PriceBook:
    """Resolves a model's rates once: the price sheet first, then genai-prices."""

    def __init__(self, sheet: Mapping[str, Mapping[str, object]] | None = None, sheet_source: str = "price sheet",
                 when: dt.date | None = None) -> None:
        self.sheet = dict(sheet or {})
        self.sheet_source = sheet_source
        self.when = when or dt.datetime.now(dt.UTC).date()
        self._cache: dict[tuple[str, str | None], Rates] = {}

    def rates(self, model: str, provider: str | None = None) -> Rates:
        key = (model, provider)
        r = self._cache.get(key)
        if r is None:
            r = self._cache[key] = self._resolve(model, provider)
        return r

    def _resolve(self, model: str, provider: str | None) -> Rates:
        if model in self.sheet:
            return _from_sheet(model, self.sheet[model], self.sheet_source)
        if provider in SELF_HOSTED:
            free = Tiered(Decimal(0))
            return Rates(model, free, free, free, free, free, SELF_HOSTED_SOURCE)
        return _from_genai_prices(model, _GENAI_PROVIDER.get(provider or ""), self.when)


def _from_sheet(model: str, row: Mapping[str, object], source: str) -> Rates:
    unknown = set(row) - set(PRICE_KEYS)
    if unknown:
        raise UserError(f"price sheet for {model}: unknown keys {sorted(unknown)} (valid: {', '.join(PRICE_KEYS)})")
    if "input" not in row or "output" not in row:
        raise UserError(f"price sheet for {model}: 'input' and 'output' (USD per MTok) are required")
    vals = {k: sheet_price(model, k, row[k]) for k in row}
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


def _from_genai_prices(model: str, provider_id: str | None, when: dt.date) -> Rates:
    import genai_prices
    from genai_prices import Usage as GUsage

    stamp = dt.datetime(when.year, when.month, when.day, tzinfo=dt.UTC)
    try:
        calc = genai_prices.calc_price(GUsage(input_tokens=1, output_tokens=1), model_ref=model,
                                       provider_id=provider_id, genai_request_timestamp=stamp)
    except LookupError:
        raise UserError(f"no price for model {model!r} in genai-prices {genai_prices.__version__}; "
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
    source = (f"genai-prices {genai_prices.__version__} bundled data: {calc.provider.id}/{calc.model.id}, "
              f"prices as of {when.isoformat()}")
    return Rates(model, inp, out, read, w5, w1, source)
