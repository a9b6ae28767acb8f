"""Gemini explicit context caching (`CachedContent`) against implicit caching and no caching: a
prefix of P tokens read k times an hour by reference, the explicit cache kept for its TTL T (hours).

    no caching:          n·i·P                          n = k·T reads in the cache's life
    implicit (a range):  pessimistic = no caching;  optimistic = i·P + (n − 1)·c·P
    explicit:            i·P (creating it) + s·P·T (storage) + n·c·P (reads at the cached rate)
    explicit beats no caching once k > k* = s / (i − c) + i / ((i − c)·T)

i, c: input and cached rates at P (genai-prices `google`, long-context tier above 200 K included);
s: storage per token-hour (providers/tables.py GEMINI_STORAGE_MTOK_HOUR, or the price sheet's
`storage_mtok_hour`). Against implicit caching at its optimistic end explicit always costs s·P·T + c·P
more: what it buys is the certainty implicit caching does not give (docs/rules.md#google-gemini).
"""
from __future__ import annotations

from dataclasses import asdict
from decimal import Decimal

from prefixsim.analysis.common import Builder, Prices, request
from prefixsim.analysis.study import Study
from prefixsim.analysis.study import k_tokens as _k
from prefixsim.core.pricing import MTOK, PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.model import Call, Layer
from prefixsim.providers.registry import get_policy
from prefixsim.providers.gemini_explicit import storage
from prefixsim.report.charts import LineChart, Series
from prefixsim.scenario.studyparams import ExplicitParams

PROVIDER = "gemini"
READ_RATES = (0.5, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 45, 60)
TTLS_H = (0.25, 1.0, 6.0, 24.0)




def _rates(model: str, book: PriceBook, prefix: int) -> tuple[Decimal, Decimal]:
    r = book.rates(model, PROVIDER)
    return r.input.at(prefix) / MTOK, r.cache_read.at(prefix) / MTOK


def costs(model: str, book: PriceBook, prefix: int, reads_per_hour: float, ttl_h: float) -> dict[str, Decimal]:
    """Total cost over one explicit cache's life (n = k·T reads), per design."""
    i, c = _rates(model, book, prefix)
    s, _ = storage(model, book)
    n = Decimal(str(reads_per_hour)) * Decimal(str(ttl_h))
    p = Decimal(prefix)
    return {"none": n * i * p, "implicit_optimistic": (i * p + (n - 1) * c * p) if n >= 1 else n * i * p,
            "explicit": i * p + s * p * Decimal(str(ttl_h)) + n * c * p}


def break_even_reads(model: str, book: PriceBook, prefix: int, ttl_h: float) -> Decimal | None:
    """k*: reads per hour above which an explicit cache kept ttl_h hours beats no caching."""
    i, c = _rates(model, book, prefix)
    s, _ = storage(model, book)
    if i <= c:
        return None
    return s / (i - c) + i / ((i - c) * Decimal(str(ttl_h)))


def study(p: Prices, f: ExplicitParams | None = None, book: PriceBook | None = None):

    f = f or ExplicitParams()
    book = book or PriceBook()
    model = p.model
    s, s_source = storage(model, book)
    ttls = sorted({*TTLS_H, f.ttl_s / 3600})
    curve = []
    for t in ttls:
        for k in READ_RATES:
            c = costs(model, book, f.prefix, k, t)
            n = Decimal(str(k)) * Decimal(str(t))
            curve.append({"ttl_h": t, "reads_per_hour": k,
                          **{f"{d}_usd_per_read": float(v / n) for d, v in c.items()}})
    table = []
    for t in ttls:
        ks = break_even_reads(model, book, f.prefix, t)
        table.append({"ttl_h": t, "explicit_beats_no_caching_above_reads_per_hour":
                      round(float(ks), 2) if ks is not None else "never",
                      "explicit_vs_implicit_optimistic": "never cheaper",
                      "storage_usd": float(s * f.prefix * Decimal(str(t)))})
    mine = f.ttl_s / 3600
    at = costs(model, book, f.prefix, f.reads, mine)
    costed = {"ttl_h": mine, "reads_per_hour": f.reads, **{f"{d}_usd": float(v) for d, v in at.items()}}
    # two questions, two tables: a row of costs under the crossing points' headers read as a crossing
    tables = [("crossing points", table), (f"the prefix's cost at {f.reads:g} reads an hour, kept {mine:g} h", [costed])]
    table = [*table, costed]
    series = [Series("no caching (= implicit, pessimistic)", list(READ_RATES),
                     [r["none_usd_per_read"] for r in curve if r["ttl_h"] == mine], ":"),
              Series("implicit, optimistic", list(READ_RATES),
                     [r["implicit_optimistic_usd_per_read"] for r in curve if r["ttl_h"] == mine], "--")]
    series += [Series(f"explicit, kept {t:g} h", list(READ_RATES),
                      [r["explicit_usd_per_read"] for r in curve if r["ttl_h"] == t]) for t in ttls]
    ks = break_even_reads(model, book, f.prefix, mine)
    chart = LineChart(f"Kept {mine:g} h, an explicit cache beats none past {float(ks):.1f} reads an hour; implicit "
                      "caching, when it hits, costs less" if ks is not None else
                      f"On {model} an explicit cache never pays",
                      "reads of the prefix per hour", "prefix cost per read (USD)", series, logx=True,
                      note=f"prices: {p.source}; storage: {s_source}",
                      subtitle=f"Explicit vs implicit caching, {_k(f.prefix)}-token prefix ({model})")
    reading = (f"Kept {mine:g} h, an explicit cache of {_k(f.prefix)} tokens on {model} beats sending the prefix "
               f"uncached once it is read more than {float(ks):.1f} times an hour (storage "
               f"${float(s * MTOK):.2f}/MTok·h); implicit caching costs less whenever it hits, so the "
               "explicit cache buys certainty, not a lower best case." if ks is not None else
               f"On {model} the cached rate is not below the input rate: an explicit cache never pays.")
    return Study("gemini-explicit", "Gemini explicit context caching vs implicit and none", table, curve, chart,
                 reading, {**asdict(f), "storage_source": s_source}, tables)


def check_pairs(p: Prices, book: PriceBook, f: ExplicitParams) -> list[tuple[Decimal, Decimal]]:
    """The no-caching and optimistic implicit lines, closed form vs the gemini policy's replay (the
    explicit line has no cache policy to replay: its terms are the three prices above)."""
    pairs = []
    blk = Builder().blk("prefix", f.prefix, Layer.SYSTEM)
    for k in (1, f.reads or 1, 12):
        n = max(1, int(k * f.ttl_s / 3600))
        calls = [Call(j * 3600.0 / k, request(p.model, [blk], [])) for j in range(n)]
        c = costs(p.model, book, f.prefix, k, n / k)
        for bound, key in (("pessimistic", "none"), ("optimistic", "implicit_optimistic")):
            sim = Simulator(PROVIDER, tokenizer="approx", prices=book, policy=get_policy(PROVIDER, bound))
            pairs.append((c[key], sum((o.cost_usd for o in sim.run(calls)), Decimal(0))))
    return pairs
