"""Break-even studies: every closed form agrees with the simulator, and the crossings mean what they say."""
from dataclasses import replace

import pytest

from prefixsim.analysis import fork_vs_subagent as fvs
from prefixsim.analysis import invalidation as inv
from prefixsim.analysis import minimum as mini
from prefixsim.analysis import stagger as stg
from prefixsim.analysis import ttl
from prefixsim.analysis.common import prices_for
from prefixsim.analysis.studies import STUDIES
from prefixsim.analysis.verify import verify

from conftest import PRICE_DATE


@pytest.fixture(scope="module")
def sonnet():
    return prices_for("claude-sonnet-4-5", when=PRICE_DATE)


@pytest.mark.parametrize("study,params", [
    ("fork-vs-subagent", fvs.ForkParams()), ("fork-vs-subagent", fvs.ForkParams(children=8, turns=1, ttl="1h")),
    ("ttl", ttl.TTLParams()), ("stagger", stg.StaggerParams()), ("stagger", stg.StaggerParams(children=3, ttft=1.5)),
    ("stagger", stg.StaggerParams(ttft=0.0)),   # the first child writes even with no wait
    ("invalidation", inv.InvalidationParams(turns=30)), ("minimum", mini.MinimumParams()),
    ("minimum", mini.MinimumParams(prefix=1500)),
])
def test_closed_form_equals_simulation(sonnet, study, params):
    p, book = sonnet
    check = verify(study, p, book, params)
    assert check["points"] >= 2
    assert check["max_abs_diff_usd"] == 0.0


def test_fork_crossing_is_where_the_costs_meet(sonnet):
    p, book = sonnet
    f = fvs.ForkParams(children=5, turns=3)
    h = fvs.crossing_history(p, f)
    assert 5_000 < h < 50_000
    below, above = fvs.closed_form(p, f, int(h) - 500), fvs.closed_form(p, f, int(h) + 500)
    assert below[0] < below[1] and above[0] > above[1]
    # seed 003: a longer child loop carries the history more often, so the sub-agent wins sooner
    assert fvs.crossing_history(p, replace(f, turns=10)) < h < fvs.crossing_history(p, replace(f, turns=1))
    sim_below, sim_above = fvs.simulate(p, book, f, int(h) - 500), fvs.simulate(p, book, f, int(h) + 500)
    assert sim_below[0] < sim_below[1] and sim_above[0] > sim_above[1]


def test_ttl_break_even_reads(sonnet):
    p, _ = sonnet
    assert ttl.reads_to_pay_off(p, "5m")[1] == 1          # A-PC: 5m pays off after 1 read
    assert ttl.reads_to_pay_off(p, "1h")[1] == 2          # and 1h after 2
    assert ttl.requests_for_1h_to_win(p, 600) == 2
    assert ttl.requests_for_1h_to_win(p, 60) is None and ttl.requests_for_1h_to_win(p, 7200) is None
    d = ttl.distribution(p, ttl.TTLParams(), [600.0] * 5 + [30.0] * 5)
    assert d["cheaper"] == "1h"


def test_stagger_writers(sonnet):
    f = stg.StaggerParams(children=5, ttft=3.0)
    assert [stg.writers(f, d) for d in (0, 1, 1.5, 3, 10)] == [5, 3, 2, 1, 1]


def test_invalidation_grows_with_the_turn(sonnet):
    p, _ = sonnet
    f = inv.InvalidationParams()
    costs = [inv.closed_form(p, f, "tools", m) for m in (1, 10, 50)]
    assert costs[0] < costs[1] < costs[2]
    assert inv.closed_form(p, f, "messages", 10) < inv.closed_form(p, f, "tools", 10)


def test_minimum_padding(sonnet):
    p, _ = sonnet
    assert mini.requests_to_pay_off(p, 900) == 2
    assert mini.requests_to_pay_off(p, 50) is None or mini.requests_to_pay_off(p, 50) > 10
    assert mini.requests_to_pay_off(p, 2000) is None           # already cacheable


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_studies_have_a_reading_and_a_chart(sonnet, name):
    p, _ = sonnet
    s = STUDIES[name](p)
    assert s.reading and s.table and s.curve
    assert s.chart.title and s.chart.xlabel and s.chart.ylabel and "genai-prices" in s.chart.note
