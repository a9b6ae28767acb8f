"""Issue 34 item 11: money at one precision in every table and sentence (`$0.005175` stood beside
`$0.0673` in one break-even table): core/dollars.py is the one helper."""
from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

from click.testing import CliRunner

from prefixsim.analysis.studies import shown
from prefixsim.cli import cli
from prefixsim.core.dollars import usd, usd_cell

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
