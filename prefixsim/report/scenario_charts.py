"""A scenario's charts on the design-review page: a bar per design (dollars by token class for
provider APIs, prefill for engines), titled with the answer to the scenario's question, and the line
of a swept metric. Each bar stacks to the total the comparison table prints (tests/report/
test_charts_agree.py)."""
from __future__ import annotations

from typing import Callable

from prefixsim.core.dollars import usd
from prefixsim.io.fsutil import slug
from prefixsim.report.answer import asks_dearest
from prefixsim.report.charts import LineChart, Series, line_figure, render_both, stacked_bars
from prefixsim.report.html import Figure
from prefixsim.scenario.results import ScenarioResult


def cost_parts(res: ScenarioResult) -> tuple[list[str], dict[str, list[float]]]:
    """Cost of each variant split by token class (USD), for the stacked bar chart."""
    names, parts = [], {"cache reads": [], "cache writes": [], "uncached input": [], "output": []}
    if any(v.summary().get("storage_usd") for v in res.variants):   # Gemini explicit caches: part of the total
        parts["explicit-cache storage"] = []
    for v in res.variants:
        names.append(v.variant)
        acc = dict.fromkeys(parts, 0.0)
        if "explicit-cache storage" in parts:
            acc["explicit-cache storage"] = float(v.summary().get("storage_usd") or 0.0)
        for o in v.outcomes:
            r = v.rates[o.call.request.model]
            u = o.usage
            p = u.prompt_tokens
            acc["cache reads"] += float(u.cache_read * r.cache_read.at(p)) / 1e6
            acc["cache writes"] += float(u.cache_write_5m * r.cache_write_5m.at(p) + u.cache_write_1h * r.cache_write_1h.at(p)) / 1e6
            acc["uncached input"] += float(u.input_tokens * r.input.at(p)) / 1e6
            acc["output"] += float(u.output_tokens * r.output.at(p)) / 1e6
        for k in parts:
            parts[k].append(acc[k])
    return names, parts


def gpu_parts(res: ScenarioResult) -> tuple[list[str], dict[str, list[float]], str]:
    """Self-hosted variants' prefill, split into what the cache saved and what was computed: in
    GPU-seconds at the scenario's prefill rate, or in tokens where no rate is given."""
    engines = [v for v in res.variants if v.self_hosted]
    rated = all(v.prefill_rate for v in engines)
    # The bar is the prefill each design computes (what its table's GPU-s spent prints, the lower the
    # better); what the cache saved is not work done, so it is not stacked onto the bar.
    names, parts = [], {"prefill computed": []}
    for v in engines:
        s = v.summary()
        names.append(v.variant)
        if rated:
            parts["prefill computed"].append(s["gpu_seconds_spent"])
        else:
            parts["prefill computed"].append(float(s["input_tokens"] + s["cache_creation_input_tokens"]))
    return names, parts, "GPU-seconds of prefill" if rated else "prefill tokens"


def least_title(names: list[str], parts: dict[str, list[float]], verb: str, fmt: str | Callable[[float], str],
                totals: list[float] | None = None, most: str | None = None) -> str:
    """A bar chart's title states its answer: the design with the shortest bar, its figure (`totals`,
    the table's, else the sum of the parts) and the margin over the next ("fork is cheapest: $0.3374,
    15% below sub-agents"); `most` (the verb of a question asking what costs the most): the tallest bar
    and its margin over the next ("model switched costs the most: $0.4746, 2.89x tool added at the front")."""
    totals = totals or [sum(vals[i] for vals in parts.values()) for i in range(len(names))]
    order = sorted(range(len(names)), key=lambda i: (-totals[i] if most else totals[i], i))
    best = order[0]
    shown = fmt(totals[best]) if callable(fmt) else fmt.format(totals[best])
    if most:
        title = f"{names[best]} {most}: {shown}"
        if len(order) > 1 and totals[order[1]] > 0:
            title += f", {totals[best] / totals[order[1]]:.2f}x {names[order[1]]}"
        return title
    title = f"{names[best]} {verb}: {shown}"
    if len(order) > 1 and totals[order[1]] > 0:
        title += f", {1 - totals[best] / totals[order[1]]:.0%} below {names[order[1]]}"
    return title


def scenario_figures(res: ScenarioResult) -> list[Figure]:
    """A bar per design: dollars by token class for provider APIs; prefill GPU-seconds for engines
    (whose dollar cost is nothing, so a dollar chart would be empty bars). The title answers the
    scenario's question: the dearest when it asks which costs the most (answer.asks_dearest)."""
    figs, dearest = [], asks_dearest(res.question)
    if any(not v.self_hosted for v in res.variants):
        names, parts = cost_parts(res)
        keep = [i for i, v in enumerate(res.variants) if not v.self_hosted]
        names = [names[i] for i in keep]
        parts = {k: [vals[i] for i in keep] for k, vals in parts.items()}
        costs = {r["variant"]: r["cost_usd"] for r in res.comparison_rows()}
        totals = [float(costs[n]) for n in names]
        figs.append(Figure(f"{res.name}: cost by token class", render_both(stacked_bars(
            least_title(names, parts, "is cheapest", usd, totals, "costs the most" if dearest else None), names,
            parts, "total cost (USD)",
            totals=totals))[0], f"{slug(res.name)}-cost"))
    if any(v.self_hosted for v in res.variants):
        names, parts, unit = gpu_parts(res)
        total = "{:,.2f} GPU-s" if unit.startswith("GPU") else "{:,.0f} tokens"
        figs.append(Figure(f"{res.name}: prefill per design", render_both(stacked_bars(
            least_title(names, parts, "computes the least prefill", total, most="computes the most prefill"
                        if dearest else None), names, parts, unit, total=total))[0],
            f"{slug(res.name)}-gpu"))
    chart = sweep_chart(res)
    if chart is not None:
        figs.append(Figure(chart.title, render_both(line_figure(chart))[0], f"{slug(res.name)}-sweep"))
    return figs


#: What a swept metric is called on an axis and in a title.
METRIC_AXIS = {"cost_usd": "total cost (USD)", "hit_rate": "token hit rate (cache read ÷ prompt)",
               "cache_read_input_tokens": "cache read (tokens)", "cache_creation_input_tokens": "cache writes (tokens)"}
METRIC_TITLE = {"cost_usd": "Cost", "hit_rate": "Token hit rate", "cache_read_input_tokens": "Cache reads",
                "cache_creation_input_tokens": "Cache writes"}


#: The best point of a swept metric: said of a line ("X at p=1 is cheapest") and of the only line
#: ("Cheapest at p=1"), whether the least or the most is best, its format.
METRIC_BEST: dict[str, tuple[str, str, Callable, Callable[[float], str]]] = {
    "cost_usd": ("is cheapest", "Cheapest", min, usd),
    "hit_rate": ("has the highest hit rate", "Highest hit rate", max, lambda v: f"{v:.1%}"),
    "cache_read_input_tokens": ("reads the most from cache", "Most read from cache", max, lambda v: f"{v:,.0f} tokens"),
    "cache_creation_input_tokens": ("writes the least to cache", "Least written to cache", min,
                                    lambda v: f"{v:,.0f} tokens")}


def sweep_chart(res: ScenarioResult) -> LineChart | None:
    """A scenario with `sweep:` and `chart:` draws its metric against the swept value, one line per
    variant, titled with its best point ("fresh sub-agents at stagger=3 is cheapest: $0.3173", no
    reference ever); what is plotted (the `chart:`'s own title, else "Cost by stagger (seconds)") is
    said under it."""
    if res.chart is None or not res.variants or res.variants[0].sweep_param is None:
        return None
    y = res.chart.y
    lines: dict[str, tuple[list, list]] = {}
    points = []
    for v, s in zip(res.variants, res.comparison_rows()):
        xs, ys = lines.setdefault(v.base_variant, ([], []))
        xs.append(float(v.sweep_value))
        ys.append(float(s[y]))
        if not s.get("_reference"):
            points.append((float(s[y]), v.base_variant, v.sweep_value))
    xlabel = res.chart.xlabel or res.chart.x.replace("_", " ")
    # what is plotted in words: "Cost by stagger (seconds)", never "cost_usd vs stagger"
    plotted = res.chart.title or f"{METRIC_TITLE[y]} by {xlabel}"
    verb, alone, pick, shown = METRIC_BEST[y]
    value, name, at = pick(points or [(ys[0], k, xs[0]) for k, (xs, ys) in lines.items()], key=lambda t: t[0])
    where = f"{res.variants[0].sweep_param}={at:g}" if isinstance(at, float) else f"{res.variants[0].sweep_param}={at}"
    title = (f"{name} at {where} {verb}" if len(lines) > 1 else f"{alone} at {where}") + f": {shown(value)}"
    return LineChart(title, xlabel, METRIC_AXIS[y], [Series(k, xs, ys) for k, (xs, ys) in lines.items()],
                     subtitle=plotted)
