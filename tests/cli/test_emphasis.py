"""Issue 34 item 11: the winning row of `run`'s comparison in bold on a terminal, never in a pipe or
a file and never with NO_COLOR set (https://no-color.org); the codes take no column."""
from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

from click.testing import CliRunner

import prefixsim.commands.run as run_command
from prefixsim.api import run_scenario
from prefixsim.cli import cli
from prefixsim.commands.common import emphasis
from prefixsim.report.layout import BOLD, RESET
from prefixsim.report.tables import scenario_text

ROOT = Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 11, 30)
DATE = ["--price-date", str(DAY)]


class _Tty:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_emphasis_is_a_terminal_without_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys, "stdout", _Tty(True))
    assert emphasis()
    monkeypatch.setenv("NO_COLOR", "")   # empty: as if unset, per no-color.org
    assert emphasis()
    monkeypatch.setenv("NO_COLOR", "1")
    assert not emphasis()
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(sys, "stdout", _Tty(False))   # a pipe or a file
    assert not emphasis()


def test_the_winning_rows_every_line_is_bold_and_no_other(monkeypatch):
    monkeypatch.chdir(ROOT)
    res = run_scenario("scenarios/seed-fork-chapter.yaml", DAY)
    plain = scenario_text(res, requests=False, width=100)
    text = scenario_text(res, requests=False, width=100, bold=True)
    bold = [line for line in text.splitlines() if line.startswith(BOLD)]
    # the design (anthropic rules, 1.00x) over its wrapped lines; the reference (0.77x) stays plain
    assert bold and all(line.endswith(RESET) for line in bold) and "anthropic rules" in bold[0]
    assert not any("seed demo" in line for line in bold)
    assert text.replace(BOLD, "").replace(RESET, "") == plain   # the same layout, column for column


def test_run_is_bold_on_a_terminal_only(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)
    args = ["run", "scenarios/ttl-expiry.yaml", "--no-write", *DATE]
    # color=True: click would pass the codes on, so none is there to pass (click strips them itself
    # from what is not a terminal; prefixsim does not count on it)
    assert "\x1b" not in CliRunner().invoke(cli, args, color=True).output   # not a terminal: no codes
    monkeypatch.setattr(run_command, "emphasis", lambda: True)
    out = CliRunner().invoke(cli, args, color=True).output
    assert [line for line in out.splitlines() if BOLD in line] == \
        [next(line for line in out.splitlines() if line.startswith(f"{BOLD}ttl 1h"))]
    assert "\x1b" not in CliRunner().invoke(cli, [*args, "--format", "markdown"], color=True).output


def test_search_sets_its_cheapest_design_in_bold_on_a_terminal_only(monkeypatch):
    """`run` set its winning row in bold; `search` (and `advise` given a scenario), whose first row is
    the answer, did not."""
    import prefixsim.commands.search as search_command

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)
    runs = [[*args, "--no-write", *DATE] for args in (["search", "scenarios/agent-design-space.yaml"],
                                                        ["advise", "scenarios/agent-design-space.yaml"])]
    plain = [CliRunner().invoke(cli, args, color=True).output for args in runs]
    assert plain[0] and not any("\x1b" in p for p in plain)   # not a terminal: no codes
    monkeypatch.setattr(search_command, "emphasis", lambda: True)
    for args, before in zip(runs, plain):
        out = CliRunner().invoke(cli, args, color=True).output
        bold = [line for line in out.splitlines() if BOLD in line]
        assert len(bold) == 1 and bold[0].startswith(f"{BOLD}   1  ") and bold[0].endswith(RESET), bold
        assert out.replace(BOLD, "").replace(RESET, "") == before   # the same layout, column for column
        assert "\x1b" not in CliRunner().invoke(cli, [*args, "--format", "markdown"], color=True).output
