"""Issue 34 item 6: a chart says what its table says. Every bar of a scenario's chart, read back from
the drawn figure, stacks to the total the comparison table prints; no bar or study curve plots a
quantity with a sign its name does not allow; a bar chart's title states its answer."""
import datetime as dt
import re
from collections import defaultdict
from pathlib import Path

import pytest

from prefixsim.api import run_scenario
from prefixsim.report.breakeven import run_breakeven
from prefixsim.report.build import cost_parts, gpu_parts, least_title
from prefixsim.report.charts import LineChart, Series, line_figure, stacked_bars
from prefixsim.scenario.studynames import BREAKEVEN_STUDIES

ROOT = Path(__file__).resolve().parents[2]
WHEN = dt.date(2026, 11, 30)
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def drawn_totals(fig) -> list[float]:
    """Each bar's length as drawn (the sum of its segments), top bar first."""
    by_y: dict[float, float] = defaultdict(float)
    for patch in fig.axes[0].patches:
        assert patch.get_width() >= 0, "a bar segment drawn with a negative length"
        by_y[round(patch.get_y(), 6)] += patch.get_width()
    return [by_y[y] for y in sorted(by_y, reverse=True)]


@pytest.mark.slow
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_bar_stacks_to_the_total_its_table_prints(path):
    res = run_scenario(str(path), WHEN)
    rows = {r["variant"]: r for r in res.comparison_rows()}
    api = [v.variant for v in res.variants if not v.self_hosted]
    if api:
        names, parts = cost_parts(res)
        keep = [i for i, n in enumerate(names) if n in api]
        names, parts = [names[i] for i in keep], {k: [v[i] for i in keep] for k, v in parts.items()}
        totals = [rows[n]["cost_usd"] for n in names]
        title = least_title(names, parts, "is cheapest", "${:,.4f}", totals)
        fig = stacked_bars(title, names, parts, "total cost (USD)", totals=totals)
        drawn = drawn_totals(fig)
        said = [t.get_text().strip() for t in fig.axes[0].texts]
        for name, total, text in zip(names, drawn, said):   # the bar's length and its label: the table's total
            assert total == pytest.approx(rows[name]["cost_usd"], abs=1e-6), (name, total, rows[name]["cost_usd"])
            assert text == f"${rows[name]['cost_usd']:,.4f}", (name, text)
        cheapest = min(api, key=lambda n: rows[n]["cost_usd"])
        assert title.startswith(f"{cheapest} is cheapest: ${rows[cheapest]['cost_usd']:,.4f}")
    engines = [v for v in res.variants if v.self_hosted]
    if engines:
        names, parts, unit = gpu_parts(res)
        drawn = drawn_totals(stacked_bars("t", names, parts, unit))
        for v, total in zip(engines, drawn):   # the bar is the prefill computed, the table's GPU-s spent
            s = v.summary()
            want = s["gpu_seconds_spent"] if unit.startswith("GPU") else s["input_tokens"] + s["cache_creation_input_tokens"]
            assert total == pytest.approx(want), v.variant
        best = min(range(len(names)), key=lambda i: drawn[i])
        assert least_title(names, parts, "computes the least prefill", "{:,.2f}").startswith(names[best])


def test_the_gemini_explicit_bar_includes_its_storage():
    """The explicit design's bar read $0.1960 where its table said $0.3234: storage was not stacked."""
    res = run_scenario(str(ROOT / "scenarios" / "gemini-explicit.yaml"), WHEN)
    names, parts = cost_parts(res)
    assert "explicit-cache storage" in parts
    i = names.index("explicit")
    assert parts["explicit-cache storage"][i] == pytest.approx(res.variants[i].summary()["storage_usd"])


@pytest.mark.slow
@pytest.mark.parametrize("study", ["fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum", "gemini-explicit"])
def test_no_study_curve_plots_a_cost_below_zero(study):
    """The invalidation chart plotted a negative "extra cost" (a tool_choice change at turn 1, when
    nothing is cached yet, 'saved' the static prefix's read): a cost is never below zero."""
    from prefixsim.analysis.common import prices_for
    from prefixsim.analysis.studies import run_study
    from prefixsim.scenario.studycheck import parse_pairs

    model = "gemini-2.5-pro" if study == "gemini-explicit" else "claude-sonnet-4-5"
    f, lists = parse_pairs(study, (), model)
    p, _ = prices_for(model, when=WHEN, provider="gemini" if study == "gemini-explicit" else "anthropic")
    s, _ = run_study(study, p, f, lists, when=WHEN)
    for series in s.chart.series:
        assert min(series.y) >= 0, (study, series.label, min(series.y))


@pytest.mark.slow
@pytest.mark.parametrize("study", ["fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum", "gemini-explicit",
                                   "api-vs-selfhosted"])
def test_a_studys_chart_title_states_its_answer_with_the_readings_figures(study):
    """Item 6: "Sub-agents are cheaper past 2.7 K tokens of history", not "Fork vs fresh sub-agent": the
    title says what the curve shows, with figures the reading gives; what is plotted is said under it."""
    assert study in BREAKEVEN_STUDIES
    s = run_breakeven(study, None, price_date=WHEN).result
    title = s.chart.title
    assert re.search(r"\b(cheaper|costs?|pays|beats|never)\b", title), title
    figures = re.findall(r"\$?\d+(?:,\d{3})*(?:\.\d+)?%?", title)
    assert figures and all(f in s.reading for f in figures), (title, s.reading)
    assert s.chart.subtitle   # what is plotted


def test_two_dollar_amounts_in_a_title_are_text_not_a_formula():
    """An answer with two figures ("$0.0673 extra at turn 2, $0.5744 at turn 100") was drawn as TeX between
    the dollar signs (italic, its spaces gone): charts draw text as text."""
    chart = LineChart("A change costs $0.0673 extra at turn 2, $0.5744 at turn 100", "turn", "USD",
                      [Series("a", [1, 2], [0.0, 1.0])])
    title = line_figure(chart).axes[0].title
    assert title.get_text() == chart.title and title.get_parse_math() is False
