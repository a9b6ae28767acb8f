"""An answer answers its scenario's question (issue 34, item 3 leftover): the invalidation matrix asks
"Which mid-session change costs the most cache?" and was answered "cheapest: tool_choice changed,
$0.1352", its chart titled "tool_choice changed is cheapest". A question asking what costs the most is
answered, and its chart titled, with the dearest design; every other question as before."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.report.answer import answers, asks_dearest
from prefixsim.report.build import least_title, scenario_summary
from prefixsim.report.tables import winners
from prefixsim.api import run_scenario
from prefixsim.report import build, scenario_charts

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]


@pytest.mark.parametrize("question,most", [
    ("Which mid-session change costs the most cache?", True),
    ("Which design is the most expensive?", True),
    ("What is the costliest launch order?", True),
    ("Fork children or independent sub-agents: which is cheaper?", False),
    ("What does a long Claude Code session cost, and how much of its prompt comes from cache?", False),
    ("Which TTL, launch stagger and kind of child make this agent cheapest, and which are fastest?", False),
    (None, False),
])
def test_a_question_asking_what_costs_the_most_is_told(question, most):
    assert asks_dearest(question) is most


def _row(name, cost, reference=False):
    return {"variant": name, "cost_usd": cost, "hit_rate": 0.5, "cost_no_cache_usd": 1.0, "savings_vs_no_cache": 0.5,
            "_reference": reference, "_base": name, "_sweep_value": None, "vs_cheapest": cost / 0.1}


def test_the_dearest_leads_and_a_reference_is_never_it():
    rows = [_row("baseline", 0.05, True), _row("a", 0.10), _row("b", 0.20), _row("c", 0.40), _row("d", 0.10)]
    assert answers(rows, [False] * 5, dearest=True) == [
        "dearest: c, $0.4000, 4.00x the cheapest; next: b, $0.2000; cheapest: a, $0.1000 (tied: d)"]
    assert answers(rows, [False] * 5)[0].startswith("cheapest: a, $0.1000")   # the default is unchanged
    assert winners(rows, dearest=True) == {3} and winners(rows) == {1, 4}


def test_the_chart_title_names_the_tallest_bar_when_asked_what_costs_the_most():
    names, parts = ["a", "b", "c"], {"input": [0.1, 0.2, 0.4]}
    assert least_title(names, parts, "is cheapest", "${:,.4f}", most="costs the most") == \
        "c costs the most: $0.4000, 2.00x b"
    assert least_title(names, parts, "is cheapest", "${:,.4f}") == "a is cheapest: $0.1000, 50% below b"


def test_the_invalidation_matrix_answers_its_question(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, ["run", "scenarios/invalidation-matrix.yaml", "--no-write", *DATE])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert "question: Which mid-session change costs the most cache? dearest: model switched, $0.4746" in said
    res = run_scenario(str(ROOT / "scenarios/invalidation-matrix.yaml"), dt.date(2026, 11, 30))
    assert scenario_summary(res)["answer"].startswith("dearest: model switched, $0.4746")
    titles = []   # the report's chart of the scenario, its title as drawn
    monkeypatch.setattr(scenario_charts, "stacked_bars", lambda title, *a, **k: titles.append(title))
    monkeypatch.setattr(scenario_charts, "render_both", lambda fig: (b"", b""))
    build.scenario_figures(res)
    assert titles == ["model switched costs the most: $0.4746, 2.89x tool added at the front"]
