"""genai-prices' bundled data, read as it is: one model's listed prices at an instant, each class
present or missing (`None`), never filled in here (prefixsim/core/pricing.py fills a missing class
from the provider's documented multiplier, or says it is missing)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from prefixsim._perf import price_memo
from prefixsim.errors import UserError
from prefixsim.io.suggest import nearest
from prefixsim.providers.tables import canonical_model

#: How a genai-prices source names the date (or time) its rates are from; a replay over many days
#: groups its sources by what comes before it (replay.joined_sources).
AS_OF = ", prices as of "


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

    def times(self, k: Decimal) -> Tiered:
        return Tiered(self.base * k, tuple((s, p * k) for s, p in self.tiers))


@dataclass(frozen=True, slots=True)
class Raw:
    """What genai-prices lists for a model at an instant (None: the class is not listed)."""

    model: str
    input: Tiered
    output: Tiered
    cache_read: Tiered | None
    cache_write_5m: Tiered | None
    cache_write_1h: Tiered | None
    source: str
    cuts: tuple[int, ...] = ()
    version: str = ""


def _tiered(value) -> Tiered | None:
    if value is None:
        return None
    if isinstance(value, (int, float, str, Decimal)):
        return Tiered(Decimal(str(value)))
    base = getattr(value, "base", None)
    tiers = tuple((int(t.start), Decimal(str(t.price))) for t in getattr(value, "tiers", ()))
    return Tiered(Decimal(str(base)), tiers)


def bedrock_price_id(model: str, endpoint: str | None = None) -> str:
    """genai-prices' `aws` id of a Claude model named any way (`claude-sonnet-4-5`, the Claude API's
    dated id, a Bedrock model id or inference profile): `global.…` for a global profile (or
    `endpoint` "global"), else the `regional.…` price (in-region ids and geographic profiles such as
    `us.` pay the regional rate). A model genai-prices' aws table does not hold passes through."""
    from genai_prices import data  # lazy: start-up: genai-prices loads only for a price the memo lacks

    want = canonical_model(model)
    glob = model.strip().lower().startswith("global.") if endpoint is None else endpoint == "global"
    scope = "global." if glob else "regional."
    for p in data.providers:
        if p.id == "aws":
            ids = [m.id for m in p.models if m.id.startswith(scope) and canonical_model(m.id) == want]
            # genai-prices matches a regional price by the ids Bedrock uses, not by its own `regional.`
            return min(ids).removeprefix("regional.") if ids else model
    return model


def version() -> str:
    import genai_prices  # lazy: start-up: genai-prices loads only for a price the memo lacks

    return str(genai_prices.__version__)


def _from_genai_prices(model: str, provider_id: str | None, at: dt.datetime, shown: str | None = None) -> Raw:
    import genai_prices  # lazy: start-up: genai-prices loads only for a price the memo lacks
    from genai_prices import Usage as GUsage  # lazy: start-up: genai-prices loads only for a price the memo lacks

    try:
        calc = genai_prices.calc_price(GUsage(input_tokens=1, output_tokens=1), model_ref=model,
                                       provider_id=provider_id, genai_request_timestamp=at)
    except LookupError:
        raise UserError(_no_price(model, provider_id, str(genai_prices.__version__))) from None
    except ValueError as e:
        raise UserError(f"no price for model {model!r}: {e}") from None
    mp = calc.model_price
    inp = _tiered(getattr(mp, "input_mtok", None))
    out = _tiered(getattr(mp, "output_mtok", None))
    if inp is None or out is None:
        raise UserError(f"genai-prices has no token prices for {model!r}; give one in a price sheet")
    cuts = _genai_cuts(calc.model)
    when = at.date().isoformat() + (f" {at:%H:%M} UTC" if cuts else "")
    source = (f"genai-prices {genai_prices.__version__} bundled data: {calc.provider.id}/{calc.model.id}"
              f"{AS_OF}{when}")
    return Raw(shown or model, inp, out, _tiered(getattr(mp, "cache_read_mtok", None)),
               _tiered(getattr(mp, "cache_write_mtok", None)), _tiered(getattr(mp, "cache_write_1h_mtok", None)),
               source, cuts, str(genai_prices.__version__))


def _encode(t: Tiered | None) -> list | None:
    return None if t is None else [str(t.base), [[s, str(p)] for s, p in t.tiers]]


def _decode(x) -> Tiered | None:
    if x is None:
        return None
    b, t = x
    return Tiered(Decimal(b), tuple((int(s), Decimal(p)) for s, p in t))


def _remembered(model: str, provider_id: str | None, at: dt.datetime, shown: str) -> Raw:
    """_from_genai_prices, or what it gave an earlier run for the same model, provider and date
    (prefixsim/_perf/price_memo.py: a short replay then never imports genai-prices)."""
    row = price_memo.lookup(model, provider_id, at, shown)
    if row is not None:
        try:
            inp, out, read, w5, w1 = (_decode(x) for x in row[1:6])
            src = str(row[6])
            if inp is not None and out is not None:
                ver = src.removeprefix("genai-prices ").split(" ", 1)[0]
                return Raw(str(row[0]), inp, out, read, w5, w1, src, (), ver)
        except (TypeError, ValueError, ArithmeticError):
            pass   # a damaged entry: look it up again
    r = _from_genai_prices(model, provider_id, at, shown)
    if not r.cuts:
        price_memo.keep(model, provider_id, at, shown, [r.model, *(_encode(t) for t in (
            r.input, r.output, r.cache_read, r.cache_write_5m, r.cache_write_1h)), r.source])
    return r


def _no_price(model: str, provider_id: str | None, version: str) -> str:
    """Why genai-prices has no price: the model is priced for other providers only (a suggestion of
    the same name would say nothing), or the nearest name it does price."""
    from genai_prices import data_snapshot  # lazy: start-up: genai-prices loads only for a price the memo lacks

    providers = data_snapshot.get_snapshot().providers
    mine = [p for p in providers if p.id == provider_id]
    others = sorted(p.id for p in providers if p.id != provider_id and p.find_model(model) is not None)
    if provider_id and others and not any(p.find_model(model) is not None for p in mine):
        return (f"no price for model {model!r} from provider {provider_id} in genai-prices {version}: it prices "
                f"{model!r} only from {', '.join(others)}; give a price in the scenario's price sheet")
    # genai-prices matches names case-insensitively: a name that differs only in case is the same one
    ids = {m.id for p in providers for m in p.models if m.id.lower() != model.lower()}
    near = nearest(model, sorted({m.id for p in mine for m in p.models} & ids)) or nearest(model, sorted(ids))
    hint = f" (did you mean {near!r}?)" if near else ""
    return f"no price for model {model!r}{hint} in genai-prices {version}; give one in the scenario's price sheet"


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
