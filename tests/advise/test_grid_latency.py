"""The design search's time to first token (advise/grid.py, report/pareto.py): each design's TTFT
p50/p95 and wait per turn on hand-computed figures, the front of cost and p95 TTFT, `--max-ttft`
(what it keeps, what it counts as excluded, the one line when none meets it, a bad value), the
chart's title stating its answer, and the table fitted to --width."""
import json
from decimal import Decimal

import pytest
from click.testing import CliRunner

from prefixsim.advise.grid import Design, GridResult, mark_pareto
from prefixsim.cli import cli, main
from prefixsim.report import pareto

DATE = "2026-11-30"
# docs/scenarios.md's two children, by hand: the parent's first request computes 10,081 tokens,
# 0.5 + 0.1 x 10.081 = 1.508 s; a child computes 630 and reads 10,081, 0.5 + 0.063 + 0.101 = 0.664 s;
# held, the second child computes 218 and reads 10,493: 0.5 + 0.0218 + 0.10493 = 0.627 s.
TWO = """name: two-children
model: claude-sonnet-4-5
latency: {overhead_s: 0.5, uncached_s_per_1k: 0.1, cached_s_per_1k: 0.01}
base: {system: 10K}
timeline:
  - request: {}
  - fork: {children: 2}
optimize:
  stagger: [0, hold]
"""


@pytest.fixture
def two(tmp_path):
    p = tmp_path / "two.yaml"
    p.write_text(TWO)
    return p


def _search(*args):
    return CliRunner().invoke(cli, ["search", *map(str, args), "--no-write", "--price-date", DATE])


def test_each_design_carries_the_hand_computed_ttft_and_wait(two):
    doc = json.loads(_search(two, "--format", "json").stdout)["scenarios"][0]
    got = {d["design"]: (d["ttft_p50_s"], d["ttft_p95_s"], d["wait_p50_s"], d["wait_p95_s"]) for d in doc["designs"]}
    # together: times (1.508, 0.664, 0.664), p50 0.664, p95 0.664 + 0.9 x 0.844 = 1.4236; the turns wait
    # 1.508 and 0.664 (both children at once), p50 1.086, p95 0.664 + 0.95 x 0.844 = 1.4658
    # held: times (1.508, 0.664, 0.627), the same p50 and p95; the spawn waits 0.664 + 0.627 = 1.291,
    # so the waits (1.508, 1.291): p50 1.3995, p95 1.291 + 0.95 x 0.217 = 1.49715
    assert got == {"stagger=0s": (0.664, 1.424, 1.086, 1.466), "stagger=hold": (0.664, 1.424, 1.399, 1.497)}
    # hold is cheaper (one write) at the same p95 TTFT: the front is it alone
    assert doc["pareto_front"] == ["stagger=hold"] and doc["pareto_axes"] == ["cost_usd", "ttft_p95_s"]


def test_max_ttft_keeps_the_designs_that_meet_it_in_any_spelling(two):
    outs = {v: _search(two, "--max-ttft", v) for v in ("1.424", "1424ms", "1.424s")}
    assert all(r.exit_code == 0 for r in outs.values())
    assert len({r.stdout for r in outs.values()}) == 1
    lines = outs["1.424"].stdout.splitlines()
    assert lines[1] == "p95 TTFT ≤ 1.42 s: 2 of 2 designs meet it, 0 excluded"
    none = _search(two, "--max-ttft", "1.4")
    assert none.exit_code == 0
    assert none.stdout == "two-children: none of 2 designs has p95 TTFT ≤ 1.4 s (the lowest: stagger=hold, 1.42 s)\n"
    doc = json.loads(_search(two, "--max-ttft", "1.4", "--format", "json").stdout)["scenarios"][0]
    assert (doc["designs"], doc["cheapest"], doc["max_ttft_s"], doc["excluded"]) == \
        ([], None, 1.4, ["stagger=0s", "stagger=hold"])


@pytest.mark.parametrize("value", ["abc", "0", "-1s", "3h", "nan", "inf", "1_0"])
def test_a_bad_max_ttft_is_one_line_exit_2(two, capsys, value):
    with pytest.raises(SystemExit) as e:
        main(["advise", str(two), "--no-write", f"--max-ttft={value}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "--max-ttft" in err[0], err


def test_max_ttft_on_traffic_is_refused_in_one_line(capsys):
    from pathlib import Path

    log = next(Path(__file__).resolve().parents[1].glob("data/claude-code/*/*.jsonl"))
    with pytest.raises(SystemExit) as e:
        main(["advise", str(log), "--max-ttft", "3s"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "design search" in err[0]


def _d(name, cost, p95, p50=None):
    return Design(name, (), Decimal(cost), 0, 1, 0.0, 1, 0.0, ttft_p50_s=p50 or p95, ttft_p95_s=p95,
                  wait_p50_s=p50 or p95, wait_p95_s=p95)


def _grid(*ds, bound=None):
    return GridResult("s", "s.yaml", tuple(mark_pareto(list(ds)))).within(bound)


def test_within_counts_the_excluded_and_keeps_the_front():
    g = _grid(_d("cheap slow", "1.00", 4.0), _d("mid", "2.00", 2.0), _d("dear fast", "3.00", 1.0),
              _d("dominated", "3.50", 2.5), Design("untimed", (), Decimal("0.50"), 0, 1, 0.0, 1, 0.0), bound=3)
    assert [d.name for d in g.designs] == ["mid", "dear fast", "dominated"]
    assert [d.name for d in g.excluded] == ["cheap slow", "untimed"]   # no latency model: never within
    assert g.cheapest.name == "mid" and [d.name for d in g.front] == ["mid", "dear fast"]
    assert pareto.title(g) == "mid is cheapest ($2.0000, p95 TTFT 2 s); dear fast is fastest (1 s, $1.0000 more)"
    assert pareto.text(g).splitlines()[1] == "p95 TTFT ≤ 3 s: 3 of 5 designs meet it, 2 excluded"


def test_the_title_says_when_the_cheapest_is_also_fastest():
    g = _grid(_d("a", "1.00", 1.638), _d("b", "1.10", 1.638), _d("c", "2.00", 3.7))
    assert pareto.title(g) == "a is cheapest and fastest: $1.0000, p95 TTFT 1.64 s"
    assert pareto.fastest(g) is None   # b ties a on p95 TTFT at a higher cost


def test_the_table_fits_the_width_and_names_what_it_leaves_out(two):
    wide = _search(two, "--width", "120").stdout
    narrow = _search(two, "--width", "60").stdout
    table = [x for x in narrow.splitlines() if x.startswith(("rank", "   1", "   2"))]
    # a path longer than the width stands whole on a line of its own (layout.wrap_block splits no word)
    assert all(len(x) <= 60 or len(x.split()) == 1 for x in narrow.splitlines()), narrow
    assert "TTFT" in narrow and "not shown at 60 columns" in narrow and table
    # the columns go in their stated order (pareto.NARROW_DROPS), cost and TTFT stay
    assert "(not shown at 60 columns: crit. reqs, last start s, hit,\nwait p50/p95, crit. uncached; --width 97" in narrow
    assert table[0].split() == ["rank", "design", "cost", "$", "x", "cheapest", "TTFT", "p50/p95", "Pareto"]
    assert "not shown" not in wide and "crit. reqs" in wide


def test_seconds_round_before_they_choose_their_precision():
    from prefixsim.report.tables import seconds

    # 9.997 s printed "10.00" (two decimals chosen before rounding), wider than any other cell from 10 s
    assert (seconds(9.994), seconds(9.997), seconds(10.04), seconds(0.964)) == ("9.99", "10.0", "10.0", "0.96")


def _legend(g):
    fig = pareto.figure(g)
    ax = fig.axes[0]
    return ax.get_title(), [t.get_text() for t in ax.get_legend().get_texts()]


def test_the_chart_draws_the_bound_and_names_only_what_it_draws():
    ds = (_d("cheap slow", "1.00", 4.0), _d("mid", "2.00", 2.0), _d("dear", "3.00", 2.5))
    title, legend = _legend(_grid(*ds, bound=3))
    assert title == "mid is cheapest and fastest: $2.0000, p95 TTFT 2 s"
    assert legend == ["dominated design", "over the bound (1 excluded)", "--max-ttft 3 s", "Pareto front", "cheapest"]
    title, legend = _legend(_grid(*ds, bound=1))
    assert title == "s: no design meets p95 TTFT ≤ 1 s"
    assert legend == ["over the bound (3 excluded)", "--max-ttft 1 s"]   # no front, nothing dominated, no cheapest
