"""The break-even studies as the CLI and the report show them: a crossing-point table, the curve
behind it, a chart and one plain-language sentence, each priced from a named source."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from ..report.charts import LineChart, Mark, Series
from . import fork_vs_subagent as fvs
from . import invalidation as inv
from . import minimum as mini
from . import stagger as stg
from . import ttl as ttlmod
from .common import Prices


@dataclass
class Study:
    name: str
    title: str
    table: list[dict]
    curve: list[dict]
    chart: LineChart
    reading: str
    params: dict[str, Any] = field(default_factory=dict)


def _k(tokens: float) -> str:
    return f"{tokens / 1000:,.1f} K" if tokens >= 1000 else f"{tokens:,.0f}"


def fork_vs_subagent(p: Prices, f: fvs.ForkParams | None = None, children=(1, 2, 5, 8, 16),
                     max_history: int = 200_000) -> Study:
    f = f or fvs.ForkParams()
    hs = list(range(0, max_history + 1, max_history // 40))
    table = fvs.crossings(p, f, children)
    curve = fvs.curves(p, f, hs, children)
    focus = f.children if f.children in children else 5
    h_star = fvs.crossing_history(p, replace(f, children=focus))
    series, marks = [], []
    xs = [h for h in sorted({1000, *hs, max_history}) if h >= 1000]
    for n in children:
        fn = replace(f, children=n)
        ratios = [float(a / b) for a, b in (fvs.closed_form(p, fn, h) for h in xs)]
        series.append(Series(f"{n} {'child' if n == 1 else 'children'}", xs, ratios))
        x = fvs.crossing_history(p, fn)
        if 1000 <= x <= max_history:
            marks.append(Mark(x, 1.0, f"N={n}: {_k(x)}"))
    chart = LineChart(f"Fork vs fresh sub-agent, {f.turns} turns per child ({p.model})",
                      "parent history inherited by a fork (tokens, log scale)",
                      "fork cost ÷ sub-agent cost (above 1: sub-agent cheaper)",
                      series, marks, hlines=[(1.0, "break-even")], logx=True, note=f"prices: {p.source}")
    if h_star > 0:
        reading = (f"With {focus} children of {f.turns} turns each, a fork is cheaper while the parent's history is "
                   f"under {_k(h_star)} tokens; past that a fresh sub-agent ({_k(f.sub_static)} static + "
                   f"{_k(f.task)} task) is cheaper, because every fork turn re-reads the whole history.")
    else:
        reading = (f"With {focus} children of {f.turns} turns each, a fresh sub-agent is cheaper at every history "
                   f"size: the fork's inherited static prefix ({_k(f.parent_static)}) alone outweighs it.")
    return Study("fork-vs-subagent", "Fork vs fresh sub-agent", table, curve, chart, reading,
                 asdict(f))


def ttl(p: Prices, f: ttlmod.TTLParams | None = None, gaps: list[float] | None = None) -> Study:
    f = f or ttlmod.TTLParams()
    grid = sorted({*[10 * 1.25 ** i for i in range(37)], 299.0, 300.0, 3599.0, 3600.0})
    curve = ttlmod.curve(p, f, grid)
    k5, n5 = ttlmod.reads_to_pay_off(p, "5m")
    k1, n1 = ttlmod.reads_to_pay_off(p, "1h")
    table = [{"ttl": "5m", "write_multiplier": float(p.write_5m / p.input), "reads_to_pay_off": n5,
              "break_even_read_ratio": round(k5, 4)},
             {"ttl": "1h", "write_multiplier": float(p.write_1h / p.input), "reads_to_pay_off": n1,
              "break_even_read_ratio": round(k1, 4)}]
    for g in (60, 600, 1800, 5400):
        n = ttlmod.requests_for_1h_to_win(p, g)
        table.append({"ttl": f"gap {g:g} s", "requests_for_1h_to_win": n if n is not None else "never"})
    series = [Series("5-minute writes", grid, [r["cost_5m_usd"] for r in curve], steps=True),
              Series("1-hour writes", grid, [r["cost_1h_usd"] for r in curve], "--", steps=True),
              Series("no caching", grid, [r["cost_no_cache_usd"] for r in curve], ":")]
    chart = LineChart(f"Cost per request vs idle gap, {_k(f.prefix)}-token prefix ({p.model})",
                      "gap since the previous request (seconds, log scale)", "cost of the request's prefix (USD)",
                      series, vlines=[(300, "5m TTL"), (3600, "1h TTL")], logx=True, note=f"prices: {p.source}")
    reading = (f"A 5-minute write pays for itself after {n5} read, a 1-hour write after {n1}; for gaps between "
               f"5 and 60 minutes 1h writes win from the 2nd request on, below 5 minutes they only add the "
               f"{float(p.write_1h / p.write_5m):.1f}x first write, above an hour neither TTL helps.")
    if gaps:
        d = ttlmod.distribution(p, f, gaps)
        table.append({"ttl": "observed gaps", **d})
        reading += (f" On the {d['requests']} observed requests {d['cheaper']} is cheaper "
                    f"({d['share_gaps_5m_to_1h']:.0%} of gaps fall between 5 and 60 minutes).")
    return Study("ttl", "TTL choice: 5m vs 1h writes", table, curve, chart, reading, {"prefix": f.prefix})


def stagger(p: Prices, f: stg.StaggerParams | None = None) -> Study:
    f = f or stg.StaggerParams()
    delays = [round(0.25 * i, 2) for i in range(int(f.ttft * 8) + 1)]
    curve = stg.curve(p, f, delays)
    held = float(stg.held_until_first_response(p, f))
    together = float(stg.closed_form(p, f, 0.0))
    d_star = next((r["stagger_s"] for r in curve if r["writers"] == 1), None)
    table = [{"design": "all launched together", "cost_usd": together, "writers": stg.writers(f, 0.0),
              "last_child_delay_s": 0.0},
             {"design": "held until the first response begins (Claude Code)", "cost_usd": held, "writers": 1,
              "last_child_delay_s": f.ttft},
             {"design": f"staggered by {d_star:g} s" if d_star is not None else "staggered", "cost_usd":
              float(stg.closed_form(p, f, d_star or f.ttft)), "writers": 1,
              "last_child_delay_s": (f.children - 1) * (d_star or f.ttft)}]
    series = [Series("staggered launch", delays, [r["cost_usd"] for r in curve], steps=True),
              Series("held until first response", delays, [held] * len(delays), "--")]
    chart = LineChart(f"{f.children} parallel children sharing {_k(f.shared)} tokens, ttft {f.ttft:g} s ({p.model})",
                      "delay between consecutive launches (seconds)", "input cost of the first requests (USD)",
                      series, [Mark(0.0, together, f"launched together: {f.children} writes")],
                      note=f"prices: {p.source}")
    reading = (f"Launched together, all {f.children} children pay the write (${together:.4f}); holding the "
               f"siblings until the first response begins ({f.ttft:g} s) costs ${held:.4f}, "
               f"{(1 - held / together):.0%} less, for {f.ttft:g} s of latency.")
    return Study("stagger", "Parallel children: simultaneous vs staggered", table, curve, chart, reading,
                 asdict(f))


def invalidation(p: Prices, f: inv.InvalidationParams | None = None) -> Study:
    f = f or inv.InvalidationParams()
    turns = list(range(1, f.turns + 1, max(1, f.turns // 50)))
    curve = inv.curve(p, f, turns)
    labels = {"tools": "tool list or system prompt change, model switch", "messages": "tool_choice / thinking / image"}
    series = [Series(labels["tools"], turns, [r["tools_usd"] for r in curve]),
              Series(labels["messages"], turns, [r["messages_usd"] for r in curve], "--")]
    table = [{"change": k, "turn": m, "extra_cost_usd": float(inv.closed_form(p, f, k, m))}
             for k in ("tools", "messages") for m in (1, f.turns // 4, f.turns // 2, f.turns)]
    late = float(inv.closed_form(p, f, "tools", f.turns))
    early = float(inv.closed_form(p, f, "tools", 1))
    chart = LineChart(f"Cost of one mid-session change ({p.model})",
                      f"turn at which the change happens ({_k(f.tools + f.system)} static, +{_k(f.growth)} a turn)",
                      "extra cost of that request (USD)", series, note=f"prices: {p.source}")
    reading = (f"Changing the tool list or system prompt at turn 1 costs ${early:.4f} extra; at turn {f.turns} "
               f"it costs ${late:.4f}, {late / early:.0f}x more, because everything after the change is written "
               f"again at {float(p.write(f.ttl) / p.input):.2f}x instead of read at {float(p.read / p.input):.2f}x.")
    return Study("invalidation", "Cache-invalidation cost vs when it happens", table, curve, chart, reading,
                 asdict(f))


def minimum(p: Prices, f: mini.MinimumParams | None = None) -> Study:
    f = f or mini.MinimumParams()
    m = mini.minimum(p.model)
    sizes = list(range(max(50, m // 20), m + 1, max(1, m // 40)))
    curve = mini.curve(p, f, sizes)
    table = [{"model": p.model, "minimum_tokens": m, "prefix_tokens": s,
              "requests_to_pay_off": mini.requests_to_pay_off(p, s, f.ttl) or "never"}
             for s in sorted({m // 4, m // 2, (3 * m) // 4, m - 1})]
    breakeven = next((r["prefix_tokens"] for r in curve if r["saving_usd"] > 0), None)
    series = [Series(f"sent as is ({f.requests} requests)", sizes, [r["as_sent_usd"] for r in curve]),
              Series("padded to the minimum", sizes, [r["padded_usd"] for r in curve], "--")]
    marks = [Mark(breakeven, next(r["padded_usd"] for r in curve if r["prefix_tokens"] == breakeven),
                  f"padding pays from {_k(breakeven)} tokens")] if breakeven else []
    chart = LineChart(f"Below the {m:,}-token minimum of {p.model}", "prefix size (tokens)",
                      f"cost of {f.requests} requests' prefix (USD)", series, marks, vlines=[(m, "minimum")],
                      note=f"prices: {p.source}")
    reading = (f"{p.model} caches nothing below {m:,} tokens. Sent {f.requests} times, a prefix of "
               + (f"{_k(breakeven)} tokens or more is cheaper padded up to the minimum." if breakeven else
                  "any size below the minimum is cheaper sent as is."))
    return Study("minimum", "Minimum cacheable length", table, curve, chart, reading,
                 asdict(f))


STUDIES: dict[str, Callable[..., Study]] = {"fork-vs-subagent": fork_vs_subagent, "ttl": ttl, "stagger": stagger,
                                            "invalidation": invalidation, "minimum": minimum}
