"""What the commands print and write is the library's (`prefixsim.api`): a notebook gets the same
bytes from the api functions as `run`, `replay`, `advise` and `search` give."""
import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import data_file

from prefixsim import api
from prefixsim.cli import cli
from prefixsim.replay import WhatIf
from prefixsim.sources import open_many

ROOT = Path(__file__).resolve().parents[2]
DATE = "2026-11-30"
WHEN = dt.date.fromisoformat(DATE)
TRANSCRIPT = data_file("claude-code", "spotter", "short.jsonl")


def _stdout(*args):
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["ttl-expiry.yaml", "seed-fork-economics.yaml"])
def test_write_run_report_writes_the_folder_run_writes(tmp_path, name):
    path = str(ROOT / "scenarios" / name)
    _stdout("run", path, "--out", str(tmp_path / "cli"), "--price-date", DATE)
    folder = api.write_run_report(api.run_file(path, WHEN), tmp_path / "api")
    (cli_folder,) = (tmp_path / "cli").iterdir()
    assert folder.name == cli_folder.name
    assert _files(folder) == _files(cli_folder) and "summary.md" in _files(folder)


def test_runs_output_is_what_run_prints_as_json_and_csv():
    path = str(ROOT / "scenarios" / "ttl-expiry.yaml")
    results = api.run_paths([path], WHEN)
    for fmt in ("json", "csv"):
        assert api.runs_output(results, fmt) == _stdout("run", path, "--format", fmt, "--no-write", "--price-date", DATE)


@pytest.mark.parametrize("args,variant", [([], None), (["--ttl", "1h"], WhatIf(ttl="1h"))])
def test_the_replay_tables_are_what_replay_prints(args, variant):
    traffic = open_many([TRANSCRIPT])
    base, what_if = api.replay_traffic(traffic, variant)
    assert (what_if is None) == (variant is None)
    lost = api.replay_losses(traffic, base)   # the money lost to the cache, one figure per request
    assert api.replay_table(base, what_if, lost=lost) == _stdout("replay", str(TRANSCRIPT), *args)
    assert api.replay_table(base, what_if, markdown=True, lost=lost) == _stdout("replay", str(TRANSCRIPT), "--format",
                                                                                "markdown", *args)
    assert api.replay_table(base, what_if, requests=True, lost=lost, width=120) == _stdout(
        "replay", str(TRANSCRIPT), "--requests", "--width", "120", *args)
    assert "".join(api.replay_json_chunks(base, what_if)) == _stdout("replay", str(TRANSCRIPT), "--format", "json",
                                                                     *args)
    assert api.short_streams([r.stream for r in base.rows])   # the names the table shows


def test_the_replay_csv_is_what_replay_prints():
    traffic = open_many([TRANSCRIPT])
    base, _ = api.replay_traffic(traffic)
    lost = api.replay_losses(traffic, base)
    assert api.replay_csv(base, lost=lost) == _stdout("replay", str(TRANSCRIPT), "--format", "csv")
    assert api.replay_csv(base, requests=True) == _stdout("replay", str(TRANSCRIPT), "--format", "csv", "--requests")


def test_advice_and_design_search_are_what_advise_and_search_print(tmp_path):
    from prefixsim.advise import advise

    log = ROOT / "tests" / "fixtures" / "advise" / "system-timestamp.jsonl"
    a = advise(open_many([log]))
    for fmt in ("table", "json"):
        assert api.advice_text(a, fmt) == _stdout("advise", str(log), "--format", fmt)
    example = str(ROOT / "scenarios" / "agent-design-space.yaml")
    grids = api.search_designs([example], WHEN)
    assert api.designs_text(grids) == _stdout("search", example, "--no-write", "--price-date", DATE)
    _stdout("search", example, "--out", str(tmp_path / "cli"), "--price-date", DATE)
    (written,) = api.write_design_reports(grids, tmp_path / "api")
    assert _files(written) == _files(tmp_path / "cli" / written.name)
