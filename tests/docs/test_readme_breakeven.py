"""The break-even examples of README.md and docs/*.md run as written and print the lines they show;
the reconciliation figures of docs/breakeven.md (study ratio vs `run` totals) are the ones the
scenario runner gives."""
import copy
import datetime as dt

import pytest
from click.testing import CliRunner
from doc_pages import ROOT, cli_examples, comparable

from prefixsim.cli import cli

BREAKEVEN = ROOT / "docs" / "breakeven.md"   # the page that explains the studies and their reconciliation


def examples():
    """(command words, lines shown) of every `$ prefixsim breakeven` example on the pages."""
    return [(args, shown) for _, args, shown in cli_examples("$ prefixsim breakeven")]


def test_the_pages_answer_a_non_default_question():
    assert any("-p" in args and any("," in a for a in args) for args, _ in examples())


@pytest.mark.slow
@pytest.mark.parametrize("args,shown", examples(), ids=lambda x: " ".join(x)[-60:])
def test_breakeven_example_prints_what_the_page_shows(args, shown, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    printed = [comparable(line) for line in result.output.splitlines()]
    for line in shown:
        assert comparable(line) in printed, f"the page shows {line!r}; `prefixsim {' '.join(args)}` does not print it"
    if args[1] != "fork-vs-subagent":   # the other studies have no list to answer line by line
        return
    # every listed value is answered in the reading
    start = next(i for i, x in enumerate(printed) if x.startswith("Asked: "))
    end = next((i for i in range(start, len(printed)) if not printed[i]), len(printed))
    reading = " ".join(printed[start:end])   # the reading is wrapped to the terminal's width
    for n in next(a for a in args if a.startswith("children=")).split("=")[1].split(","):
        assert f"With {n} children" in reading


def test_readme_reconciliation_figures():
    """4 children x 2 turns, 30 K parent static, 4.5 K sub-agent static, 500 task, 30 K history: the
    closed form's input ratio 3.03; the builder's scenarios with their 450 output tokens a request give
    2.08 on the children's totals, 1.51 with the siblings launched together."""
    from prefixsim.analysis import check_designs as designs
    from prefixsim.analysis import fork_vs_subagent as fvs
    from prefixsim.analysis.common import prices_for

    when = dt.date(2026, 11, 30)
    p, _ = prices_for("claude-sonnet-4-5", when=when)
    f = fvs.ForkParams(children=4, turns=2, parent_static=30_000, sub_static=4_500, task=500)
    fork, sub = fvs.closed_form(p, f, 30_000)
    assert round(float(fork / sub), 2) == 3.03

    def ratio(doc):
        played = designs.play(doc, when)
        total = {k: sum(o.cost_usd for s in v.streams() for o in s) for k, v in played.items()}
        assert all(o.usage.output_tokens == 450 for v in played.values() for s in v.streams() for o in s)
        return round(float(total["fork"] / total["sub-agent"]), 2)

    doc = designs.fork_vs_subagent(p.model, f, 30_000)
    assert ratio(doc) == 2.08
    together = copy.deepcopy(doc)
    for v in together["variants"]:
        next(iter(v["timeline"][1].values()))["stagger"] = 0
    assert ratio(together) == 1.51
    text = BREAKEVEN.read_text()
    assert "3.03" in text and "2.08" in text and "1.51" in text


@pytest.mark.slow
def test_scenario_at_writes_the_designs_for_run(tmp_path, monkeypatch):
    """--scenario-at: the study's own designs as a scenario; `run` of it prints the children's costs the
    study prices (input of the fork.* / sub.* streams), next to the parent's turn and output it leaves out."""
    from prefixsim.analysis import fork_vs_subagent as fvs
    from prefixsim.analysis.check_designs import Played, fork_shapes
    from prefixsim.analysis.common import prices_for
    from prefixsim.api import run_scenario

    monkeypatch.chdir(ROOT)
    args = ["breakeven", "fork-vs-subagent", "-p", "children=4", "-p", "turns=2", "-p", "parent_static=30000",
            "-p", "sub_static=4500", "-p", "task=500", "--scenario-at", "30000", "--price-date", "2026-11-30",
            "--out", str(tmp_path)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    when = dt.date(2026, 11, 30)
    res = run_scenario(str(tmp_path / "fork-vs-subagent.scenario.yaml"), when)
    assert [v.variant for v in res.variants] == ["fork, 4 children", "sub-agent, 4 children"]
    totals = {v.variant: round(float(sum(o.cost_usd for o in v.outcomes)), 4) for v in res.variants}
    assert totals == {"fork, 4 children": 0.4661, "sub-agent, 4 children": 0.3448}   # docs/breakeven.md
    played = {v.variant.split(",")[0]: Played(list(v.outcomes), next(iter(v.rates.values()))) for v in res.variants}
    p, _ = prices_for("claude-sonnet-4-5", when=when)
    f = fvs.ForkParams(children=4, turns=2, parent_static=30_000, sub_static=4_500, task=500)
    fs, ss = fork_shapes(played)
    kids = lambda v: [o for s in played[v].streams() for o in s]  # noqa: E731
    assert played["fork"].input_cost(kids("fork")) == fvs.fork_cost(p, f, fs)
    assert played["sub-agent"].input_cost(kids("sub-agent")) == fvs.sub_cost(p, f, ss)
    text = BREAKEVEN.read_text()
    assert "$0.4661" in text and "$0.3448" in text
