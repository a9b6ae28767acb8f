"""The design-review page of a scenario with `optimize:` leads with the best design the search finds,
its saving over the design as written and the choices it changes, with the search's chart; the
studies no scenario names run at the design scenario's own sizes (issue 34 item 4)."""
import datetime as dt
import re
from pathlib import Path

import pytest

from prefixsim.advise.grid import search
from prefixsim.api import run_scenario
from prefixsim.report.build import build_report
from prefixsim.scenario.grid import written
from prefixsim.scenario.loader import load_runs

ROOT = Path(__file__).resolve().parents[2]
DESIGN = str(ROOT / "scenarios" / "agent-design-space.yaml")
WHEN = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("page")
    html, md = build_report([DESIGN], str(out) + "/", when=WHEN)
    return html.read_text(), md.read_text(), out


def test_the_page_leads_with_the_searchs_best_design_and_its_saving(page):
    _, md, _ = page
    grid = search([DESIGN], WHEN)[0]
    best = grid.cheapest
    as_written = run_scenario(DESIGN, WHEN).variants[0].cost_exact
    saving = as_written - best.cost_usd
    assert saving > 0
    section = md.split("## Scenario: agent-design-space", 1)[1]
    reading = next(line for line in section.splitlines() if line.startswith("> "))
    assert reading.startswith(f"> Best design found: {best.name}, ${best.cost_usd:.4f} (TTFT p50/p95 0.96/1.64 s), "
                              f"saving ${saving:.4f} "
                              f"({float(saving / as_written):.1%}) over the design as written (default, "
                              f"${as_written:.4f}): ")
    # the choices it changes, each from its written value: the file writes 5m, stagger 0 and forks
    assert "ttl 5m → 1h" in reading and "stagger 0s → hold" in reading and "spawn fork → subagent" in reading
    summary = next(line for line in md.splitlines() if line.startswith("| agent-design-space |"))
    assert f"{best.name}: ${best.cost_usd:.4f} (TTFT p50/p95 0.96/1.64 s), {float(saving / as_written):.0%} below the " \
           "design as written" in summary


def test_the_search_chart_and_table_are_on_the_page(page):
    html, md, out = page
    assert (out / "report_files" / "agent-design-space-pareto.png").read_bytes().startswith(b"\x89PNG")
    section = md.split("## Scenario: agent-design-space", 1)[1].split("\n## ", 1)[0]
    assert section.index("agent-design-space-pareto.png") < section.index("agent-design-space-cost.png")
    grid = search([DESIGN], WHEN)[0]
    table = section.split("### design search", 1)[1]
    names = re.findall(r"^\| (ttl=\S+ stagger=\S+ spawn=\S+) \|", table, re.M)
    assert names[0] == grid.cheapest.name and {d.name for d in grid.front} <= set(names)
    assert 'alt="agent-design-space: cost against p95 time to first token, 8 designs"' in html
    # the chart's caption states its answer; the table gives TTFT and wait beside the cost
    assert "*ttl=1h stagger=hold spawn=subagent is cheapest and fastest: $0.6285, p95 TTFT 1.64 s. Every" in section
    assert table.splitlines()[2].startswith("| design | cost $ | x cheapest | TTFT p50/p95 | wait p50/p95 |")
    assert "| ttl=1h stagger=hold spawn=subagent | 0.6285 | 1.00x | 0.96/1.64 | 1.59/8.05 |" in table


def test_the_comparison_of_variants_shows_ttft_beside_the_cost(page):
    _, md, _ = page
    table = md.split("### comparison of variants", 1)[1]
    head = table.strip().splitlines()[0]
    assert "| cost $ | TTFT p50/p95 | wait p50/p95 |" in head
    assert "| 0.9239 | 1.59/3.75 | 1.59/13.1 |" in table.strip().splitlines()[2]


def test_the_studies_run_at_the_scenarios_sizes(page):
    _, md, _ = page
    captions = [line for line in md.splitlines() if line.startswith("*No scenario names this study")]
    fork = next(c for c in captions if "parent_static" in c)
    # agent-design-space: 20 tools of 400 tokens and a 4,000-token system prompt, as rendered and
    # counted; its sub-agent choice {system: 3000, tools: 6 x 300} is 4,800 tokens
    static = int(re.search(r"parent_static (\d+)", fork).group(1))
    assert 12_000 <= static <= 12_500 and "sub_static 4800" in fork and "children 4; turns 6" in fork
    assert "at the sizes of scenario agent-design-space" in fork
    ttl = next(c for c in captions if "prefix" in c and "TTL" not in c and "requests" not in c)
    first = run_scenario(DESIGN, WHEN).variants[0].outcomes[0].usage.prompt_tokens
    assert f"prefix {first}." in ttl
    assert any("uses the defaults" in c and "requests 10" in c for c in captions)   # minimum keeps its own


def test_written_names_each_dimension_as_a_design_does():
    run = load_runs(DESIGN)[0]
    assert written(run.settings, ["ttl", "stagger", "spawn"]) == {"ttl": "5m", "stagger": "0s", "spawn": "fork"}


def test_a_design_already_the_cheapest_is_said_so(tmp_path):
    """Three requests within five minutes: 5m writes (as written) cost less than 1h writes."""
    f = tmp_path / "already.yaml"
    f.write_text("name: already\nmodel: claude-sonnet-4-5\nttl: 5m\nbase: {system: 4000}\n"
                 "timeline: [request: 3]\noptimize: {ttl: [5m, 1h]}\n")
    _, md = build_report([str(f)], str(tmp_path / "out") + "/", when=WHEN)
    text = md.read_text()
    cost = run_scenario(str(f), WHEN).variants[0].cost_exact
    d = search([str(f)], WHEN)[0].cheapest
    assert f"> Best design found: ttl=5m, ${cost:.4f} (TTFT p50/p95 {d.ttft_p50_s:.2f}/{d.ttft_p95_s:.2f} s): the " \
           f"design as written (default, ${cost:.4f}) is already the cheapest" in text
    assert f"as written (default): ${cost:.4f} (TTFT p50/p95 {d.ttft_p50_s:.2f}/{d.ttft_p95_s:.2f} s), the cheapest " \
           "of 2 designs" in text
