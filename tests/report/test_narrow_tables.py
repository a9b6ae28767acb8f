"""Tables that read at 80 columns (issue 34 item 2, leftovers): a design's name wrapped one word or
three a line beside its counts (`run` at 80: "fresh / sub-agents of / one type"), the design search
ignored the width (113 columns whatever the terminal), `advise` split stream paths mid-word and
squeezed its change column to a word a line, and search, advise, prices and diff took no --width.
Now every table-printing command takes --width; a name keeps one line, else two, the columns the
answer does not rest on going first and named under the table."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import cli_run

from prefixsim.report.layout import fit, two_line_width

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]
DIFF_LOG = "tests/data/anthropic-api/test_anthropic_cache_bedrock_real_api.yaml"

#: every command that prints a table, in a documented form
TABLES = {
    "run": ["run", "scenarios/seed-fork-economics.yaml", "--no-write", *DATE],
    "replay": ["replay", "tests/data/claude-code"],
    "breakeven": ["breakeven", "fork-vs-subagent", *DATE],
    "search": ["search", "scenarios/agent-design-space.yaml", "--no-write", *DATE],
    "advise": ["advise", "tests/data/claude-code"],
    "prices": ["prices", "claude-sonnet-4-5", "--date", "2026-11-30"],
    "diff": ["diff", DIFF_LOG, "--index", "0", "1"],
}


def _cli(args, capsys, tmp_path):
    extra = ["--out", str(tmp_path)] if args[0] == "breakeven" else []
    return cli_run([*args, *extra], capsys)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_table_printing_command_fits_the_width_it_is_given(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, out, err = _cli([*TABLES[name], "--width", "80"], capsys, tmp_path)
    assert code in (0, 1), err   # diff exits 1: the two requests differ
    assert max(len(line) for line in out.splitlines()) <= 80, out
    code, _, err = _cli([*TABLES[name], "--width", "20"], capsys, tmp_path)
    assert code == 2 and err.strip() == "prefixsim: --width 20 is too narrow (at least 40 columns)", err


def test_a_design_name_takes_two_lines_at_most_at_80_columns(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, out, err = cli_run(["run", "scenarios/parallel-children-stagger.yaml", "--no-write", "--width", "80", *DATE],
                             capsys)
    assert code == 0, err
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if "fresh sub-agents" in line]
    assert starts
    for i in starts:   # the name's first line, then at most one continuation line under it
        assert "one type" in lines[i] or ("one type" in lines[i + 1] and lines[i + 1].strip() == "one type")
    assert "(not shown at 80 columns: " in out and "reqs" in out.split("(not shown at 80 columns: ")[1]


def test_the_design_search_fits_80_columns_and_names_what_it_leaves_out(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, out, err = cli_run(["search", "scenarios/agent-design-space.yaml", "--no-write", "--width", "80", *DATE],
                             capsys)
    assert code == 0, err
    assert "   1  ttl=1h stagger=hold spawn=subagent  0.6285" in out   # each design on one line
    assert ("(not shown at 80 columns: crit. reqs, last start s, hit, wait p50/p95, crit. uncached; --width 119 "
            "shows them)") in " ".join(out.split())
    code, wide, _ = cli_run(["search", "scenarios/agent-design-space.yaml", "--no-write", *DATE], capsys)
    # 120 columns, not a terminal: every column (the best design's row ends with its hit rate and front mark)
    assert "not shown" not in wide and re.search(r"ttl=1h stagger=hold spawn=subagent .* 572 +82\.2% +\*\n", wide)


def test_advise_at_80_columns_splits_no_word_and_names_what_it_leaves_out(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, out, err = cli_run(["advise", "tests/data/claude-code", "--width", "80"], capsys)
    assert code == 0, err
    streams = out.split("money lost by stream\n")[1].split("\n\n")[0].splitlines()[2:]
    assert streams and all(re.match(r"^\S+\s+\d+\s+[\d.]+\s+[\d.]+$", s) for s in streams), streams
    assert "(not shown at 80 columns: after, before, requests;" in out
    change = out.split("what to change (each saving is a replay of the same traffic)\n")[1].splitlines()
    assert change[3].startswith("write the cache at ttl=5m ")   # not "write the / cache at / ttl=5m"


def test_narrowing_is_shared_between_text_columns():
    head, body = ["change", "n", "evidence"], [["write the cache at ttl=5m", "1", "#377, #378, #379, #380, #381, #382"]]
    lines = fit(head, body, [False, True, False], 50, [True, False, True]).splitlines()
    assert lines[2].startswith("write the cache at") and max(len(x) for x in lines) <= 50
    assert two_line_width([["fresh sub-agents of one type"], ["fork"]], [True]) == 16
