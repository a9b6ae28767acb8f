"""Issue 34 item 11: money at one precision in every table and sentence (`$0.005175` stood beside
`$0.0673` in one break-even table): core/dollars.py is the one helper."""
from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.analysis.studies import shown
from prefixsim.cli import cli
from prefixsim.core.dollars import usd, usd_cell
from prefixsim.scenario.studynames import BREAKEVEN_STUDIES

ROOT = Path(__file__).resolve().parents[2]
MONEY = re.compile(r"\$-?[\d,]*\.(\d+)")


def test_usd_is_four_decimals_with_the_sign_first():
    assert [usd(0.005175), usd(Decimal("0.0673")), usd(-0.01), usd(-0.0), usd(1234.5)] == \
        ["$0.0052", "$0.0673", "-$0.0100", "$0.0000", "$1,234.5000"]
    assert [usd_cell(0.005175), usd_cell(0), usd_cell(-0.0)] == ["0.0052", "0.0000", "0.0000"]


def test_a_figure_that_is_not_zero_never_prints_as_zero():
    # $0.00004 printed $0.0000, which reads as free; the smallest figure shown says it is a bound
    assert [usd(0.00004), usd(Decimal("0.0000125")), usd(-0.00001), usd(0.00005)] == \
        ["under $0.0001", "under $0.0001", "-(under $0.0001)", "$0.0001"]
    assert [usd(0.00004, cell=True), usd(-0.00001, cell=True), usd_cell(0.00004), usd_cell(-0.00001)] == \
        ["<$0.0001", "-<$0.0001", "<0.0001", "-<0.0001"]


def test_a_replay_says_a_tiny_storage_cost_is_under_a_ten_thousandth(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(cli, ["replay", "tests/data/gemini-api/test_google_model_cached_content.yaml"]).stdout
    flat = " ".join(out.split())
    assert "storage (creation to delete or expiry, as logged): under $0.0001, included" in flat   # was $0.0000
    day = next(line for line in out.splitlines() if line.startswith("2026-05-28"))
    assert day.split()[4] == "<$0.0001"   # its no-cache cost


def test_a_study_table_prints_small_and_large_money_alike():
    # the old helper printed 6 decimals below a cent: $0.005175 beside $0.0673
    assert shown([{"a_usd": 0.005175, "b_usd": 0.0673}]) == [{"a_usd": "$0.0052", "b_usd": "$0.0673"}]


def test_every_dollar_figure_printed_has_four_decimals(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    outs = [CliRunner().invoke(cli, args).stdout for args in (
        ["run", "scenarios/seed-fork-economics.yaml", "--no-write", "--price-date", "2026-11-30"],
        ["breakeven", "fork-vs-subagent", "--out", str(tmp_path)])]
    lines = [line for out in outs for line in out.splitlines()]
    # the check of a study against the scenario runner is a rounding tolerance, not a price: nine places
    # (one precision in its sentence), every other figure four
    check = [line for line in lines if line.startswith("closed form vs scenario builder")]
    assert check and {len(m.group(1)) for line in check for m in MONEY.finditer(line)} == {9}
    places = {len(m.group(1)) for line in lines if line not in check for m in MONEY.finditer(line)}
    assert places == {4}, places


RATE = re.compile(r"\$-?[\d,]*\.(\d+)(?!\d|/)")   # a figure, not a rate such as $4.50/MTok·h or $2.69/h


@pytest.mark.parametrize("study", BREAKEVEN_STUDIES)
def test_every_studys_dollar_figures_have_four_decimals(study, monkeypatch, tmp_path):
    """api-vs-selfhosted printed `$17,550.00` in one table and `$1,600.8900` in the next for the same
    cost per 1M requests, and "$2.69 a GPU-hour for $0.0016" in one sentence: one precision everywhere."""
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(cli, ["breakeven", study, "--out", str(tmp_path), "--width", "400",
                                   "--price-date", "2026-11-30"])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.stdout.splitlines() if not line.startswith("closed form vs")]
    places = {len(m.group(1)) for line in lines for m in RATE.finditer(line)}
    assert places <= {4}, (study, places)
