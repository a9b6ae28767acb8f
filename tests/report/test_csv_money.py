"""Money in CSV at one fixed precision (issue 34 item 11, CSV leftover): every dollar column of every
command's CSV holds six decimals (core/dollars.py: CSV_PLACES). Before, a replay wrote `1.14901275`
and `0.078660` in one column, a run `0.647195`, a study's curve `0.006`, a request table whatever
pandas printed."""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from conftest import cli_run

from prefixsim.core.dollars import CSV_PLACES, csv_cell, money_column

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]
FIXED = re.compile(rf"^-?\d+\.\d{{{CSV_PLACES}}}$")


def test_a_money_cell_has_fixed_places_and_no_negative_zero():
    assert csv_cell("cost_usd", 1.14901275) == "1.149013"
    assert csv_cell("cost_usd", 0.006) == "0.006000" and csv_cell("saved_usd", 12) == "12.000000"
    assert csv_cell("lost_usd", -0.0000001) == "0.000000" and csv_cell("lost_usd", -0.25) == "-0.250000"
    assert csv_cell("cost_usd", None) is None and csv_cell("cost_usd", "never cheaper") == "never cheaper"
    assert csv_cell("hit_rate", 0.81385345) == 0.81385345   # not money: as computed
    assert all(money_column(c) for c in ("cost_usd_optimistic", "usd_per_mtok", "explicit_usd_per_read"))
    assert not money_column("requests") and not money_column("hit_rate")


def _money_cells(text: str) -> list[tuple[str, str]]:
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows, text[:200]
    cells = [(k, v) for r in rows for k, v in r.items() if k and money_column(k) and v not in ("", None)]
    return [(k, v) for k, v in cells if re.match(r"^-?[\d.]+$", v)]   # a money column may hold words


COMMANDS = {
    "run": ["run", "scenarios/ttl-expiry.yaml", "--format", "csv", "--no-write", *DATE],
    "run requests": ["run", "scenarios/ttl-expiry.yaml", "--format", "csv", "-v", "--no-write", *DATE],
    "replay": ["replay", "tests/data/claude-code", "--format", "csv"],
    "replay requests": ["replay", "tests/data/claude-code", "--format", "csv", "--requests"],
    "advise": ["advise", "tests/data/claude-code", "--format", "csv"],
    "search": ["search", "scenarios/agent-design-space.yaml", "--format", "csv", "--no-write", *DATE],
    "breakeven ttl": ["breakeven", "ttl", "--format", "csv", *DATE],
    "breakeven invalidation": ["breakeven", "invalidation", "--format", "csv", *DATE],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_commands_csv_writes_money_at_six_places(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    args = COMMANDS[name] + (["--out", str(tmp_path)] if name.startswith("breakeven") else [])
    code, out, err = cli_run(args, capsys)
    assert code == 0, err
    cells = _money_cells(out)
    assert cells, out[:300]
    assert [c for c in cells if not FIXED.match(c[1])] == []
    if name.startswith("breakeven"):   # the curve the study writes beside its chart
        curve = (tmp_path / f"{name.split()[1]}.csv").read_text()
        assert [c for c in _money_cells(curve) if not FIXED.match(c[1])] == []


def test_the_files_run_writes_hold_money_at_six_places(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, _, err = cli_run(["run", "scenarios/ttl-expiry.yaml", "--out", str(tmp_path), *DATE], capsys)
    assert code == 0, err
    for name in ("requests.csv", "summary.csv"):
        cells = _money_cells((tmp_path / "ttl-expiry" / name).read_text())
        assert cells and [c for c in cells if not FIXED.match(c[1])] == [], name
