"""The design-review report reads top-down: a summary per scenario (question, answer, margin), compact
assumptions, charts in the unit a design is judged by, titles in words, legends clear of labels."""
import datetime as dt
import textwrap
from pathlib import Path

import pytest

from prefixsim.api import run_scenario
from prefixsim.report.build import build_report, scenario_assumptions, scenario_figures, scenario_summary, sweep_chart
from prefixsim.report.charts import stacked_bars
from prefixsim.report.html import CSS

ROOT = Path(__file__).resolve().parents[2]
WHEN = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep")
    seen = []
    html, md = build_report([str(ROOT / "scenarios" / "ttl-expiry.yaml"),
                             str(ROOT / "scenarios" / "self-hosted-vllm.yaml")], out / "r.html", when=WHEN,
                            progress=lambda done, total, label: seen.append((done, total, label)))
    return html.read_text(), md.read_text(), seen


@pytest.mark.slow
def test_the_page_opens_with_a_summary_per_scenario(report):
    html, md, _ = report
    assert html.index('id="summary"') < html.index('id="assumptions"')
    summary = md.split("## Summary")[1].split("## Assumptions")[0]
    # ttl-expiry: 1h $0.5958 against 5m $0.6472 (tests/scenario/test_scenarios.py checks the costs)
    assert ("| ttl-expiry | 5-minute or 1-hour cache writes for these idle gaps? | cheapest: ttl 1h, $0.5958; "
            "next: ttl 5m 1.09x (+$0.0514) |") in summary
    assert "| self-hosted-vllm | On a small self-hosted KV cache, forks or sub-agents? | least GPU prefill: " in summary


def test_report_progress_counts_scenarios_then_studies(report):
    _, _, seen = report
    # each step is named as it starts (issue 34 item 11: the report ran 15 s with nothing on the terminal):
    # first the reading, then 2 runs, 2 charts, 5 studies and the page; counts never go back
    labels = [s[2] for s in seen]
    assert labels[0] == "reading the scenarios" and labels[1] == "running ttl-expiry.yaml"
    assert labels[-1] == "writing the page" and seen[-1][:2] == (2 + 2 + 5, 2 + 2 + 5 + 1)
    assert [s[0] for s in seen[1:]] == sorted(s[0] for s in seen[1:])
    assert "charts: ttl-expiry" in labels and sum(x.startswith("break-even: ") for x in labels) == 5


def test_headers_never_break_inside_a_word():
    th = next(rule for rule in CSS.split("}") if rule.lstrip().startswith("th{"))
    assert "word-break:keep-all" in th and "overflow-wrap:normal" in th


@pytest.mark.slow
def test_assumptions_are_one_row_per_distinct_value():
    res = run_scenario(str(ROOT / "scenarios" / "parallel-children-stagger.yaml"), WHEN)
    rows = scenario_assumptions(res)
    assert len({(r["what"], r["value"]) for r in rows}) == len(rows)
    assert all("[stagger=" not in r["for"] for r in rows)   # sweep values folded into the design's name
    assert {r["for"] for r in rows if r["what"] == "tokenizer"} == {"all"}


@pytest.mark.slow
def test_engine_scenarios_chart_gpu_seconds_not_dollars():
    res = run_scenario(str(ROOT / "scenarios" / "self-hosted-vllm.yaml"), WHEN)
    figs = scenario_figures(res)
    assert [f.name for f in figs] == ["self-hosted-vllm-gpu"]
    from prefixsim.report.build import gpu_parts

    names, parts, unit = gpu_parts(res)
    assert unit == "GPU-seconds of prefill"
    # vllm, fork: 12,833 tokens computed and 91,392 read at 10,000 tokens/s
    assert parts["prefill computed"][0] == pytest.approx(1.2833)
    # the bar is the work done (the table's GPU-s spent): what the cache saved (9.1392 s) is not stacked
    # onto it, or the design that saves most would draw the longest bar (issue 34 item 6)
    assert list(parts) == ["prefill computed"]


def test_sweep_chart_title_is_words(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(textwrap.dedent("""\
        name: turns
        provider: prefix
        tokenizer: approx
        base: {system: 2K}
        timeline: [request: "${turns}"]
        sweep: {param: turns, values: [1, 2]}
        chart: {x: turns, xlabel: number of turns}
    """))
    chart = sweep_chart(run_scenario(str(p), WHEN))
    # the title states the answer (issue 34 item 6), what is plotted is said under it, in words
    assert chart.title.startswith("Cheapest at turns=1: $") and chart.subtitle == "Cost by number of turns"
    assert chart.ylabel == "total cost (USD)"


@pytest.mark.parametrize("bars", [2, 3, 8])
def test_bar_chart_legend_never_covers_the_axis_label(bars):
    fig = stacked_bars("t", [f"design {i}" for i in range(bars)],
                       {"cache reads": [1.0] * bars, "cache writes": [2.0] * bars, "uncached input": [0.5] * bars,
                        "output": [0.1] * bars}, "total cost (USD)", note="a note")
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(r)
    axis = fig.axes[0].xaxis.get_tightbbox(r)   # tick labels and the axis label
    assert not legend.overlaps(axis) and legend.y1 < axis.y0
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_scenario_summary_takes_the_description_when_no_question(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("name: s\ndescription: Two designs. More words.\nprovider: prefix\ntokenizer: approx\n"
                 "base: {system: 2K}\ntimeline: [request: 1]\n")
    row = scenario_summary(run_scenario(str(p), WHEN))
    assert row["question"] == "Two designs" and row["answer"].startswith("default: $")
