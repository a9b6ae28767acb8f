"""Issue 34 item 11: `--format` means the same on every command (commands/common.py FORMATS): `table`
what a terminal shows, `markdown` the same tables, `csv` the rows of the table the answer rests on
(with -v / --requests the requests), `json` the whole result. `run --format csv` printed every
request where `table` and `markdown` print the comparison; `breakeven` had no csv or markdown."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import click
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.commands.common import FORMATS

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]


def _commands(group: click.Group, prefix: str = ""):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, f"{prefix}{name} ")
        else:
            yield prefix + name, cmd


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def invoke(args, code=0):
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.stdout


def test_every_command_with_a_format_offers_the_same_four():
    offered = {name: tuple(p.type.choices) for name, cmd in _commands(cli) for p in cmd.params if p.name == "fmt"}
    assert {"run", "replay", "diff", "advise", "search", "breakeven", "prices"} <= set(offered)
    assert {name: sorted(c) for name, c in offered.items() if tuple(c) != FORMATS} == {}


def test_run_csv_is_the_comparison_and_with_v_the_requests(monkeypatch):
    monkeypatch.chdir(ROOT)
    rows = _rows(invoke(["run", "scenarios/ttl-expiry.yaml", "--no-write", "--format", "csv", *DATE]))
    assert [(r["scenario"], r["variant"], r["cost_usd"]) for r in rows] == \
        [("ttl-expiry", "ttl 5m", "0.647195"), ("ttl-expiry", "ttl 1h", "0.595755")]   # the table's 0.6472, 0.5958
    requests = _rows(invoke(["run", "scenarios/ttl-expiry.yaml", "--no-write", "-v", "--format", "csv", *DATE]))
    assert len(requests) == 26 and requests[0]["label"] == "main #1"   # 13 requests of each design


def test_breakeven_csv_and_markdown_are_the_study_table(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    args = ["breakeven", "ttl", "--out", str(tmp_path), *DATE]
    rows = _rows(invoke([*args, "--format", "csv"]))
    assert list(rows[0])[:3] == ["table", "ttl", "write_multiplier"]
    assert [(r["ttl"], r["reads_to_pay_off"]) for r in rows[:2]] == [("5m", "1"), ("1h", "2")]
    md = invoke([*args, "--format", "markdown"])
    assert md.startswith("## TTL choice") and "| ttl | write_multiplier |" in md


def test_replay_csv_is_the_money_table_and_with_requests_every_request(monkeypatch):
    monkeypatch.chdir(ROOT)
    table = invoke(["replay", "tests/data/claude-code", "--by", "model"])
    rows = _rows(invoke(["replay", "tests/data/claude-code", "--by", "model", "--format", "csv"]))
    assert list(rows[0])[:4] == ["model", "requests", "hit_rate", "cost_usd"]
    every = _rows(invoke(["replay", "tests/data/claude-code", "--format", "csv", "--requests"]))
    assert all(r["model"] in table for r in rows) and sum(int(r["requests"]) for r in rows) == len(every)
    assert "observed_cache_read_input_tokens" in every[0] and len(rows) < 10 < len(every)


def test_diff_and_prices_in_every_format(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text('{"model": "claude-sonnet-4-5", "system": "You are terse.", "messages": '
                 '[{"role": "user", "content": "hi"}]}')
    b.write_text(a.read_text().replace("terse", "brief"))
    (row,) = _rows(invoke(["diff", str(a), str(b), "--format", "csv"], code=1))
    assert row["layer"] == "system" and row["same"] == "False"
    assert invoke(["diff", str(a), str(b), "--format", "markdown"], code=1).startswith("```\nprefixes part")
    rates = _rows(invoke(["prices", "claude-sonnet-4-5", "--format", "csv", "--date", "2026-11-30"]))
    assert [r["rate"] for r in rates][:3] == ["input", "output", "cache read"]
    assert "| cache read |" in invoke(["prices", "claude-sonnet-4-5", "--format", "markdown", "--date", "2026-11-30"])
