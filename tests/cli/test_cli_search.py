"""`prefixsim search SCENARIO...` is the design search `prefixsim advise SCENARIO.yaml` ran: the same
bytes on stdout; `advise` given scenarios (a file or a folder) still runs it, says so on stderr and
names the scenarios it skips for want of `optimize:`; traffic is refused by `search` in one line."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli, main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenarios" / "agent-design-space.yaml"
DATE = "2026-11-30"
HINT = "`prefixsim search` is the command for it"


def _invoke(*args):
    return CliRunner().invoke(cli, [*args, "--no-write", "--price-date", DATE])


def _fails(capsys, *args):
    with pytest.raises(SystemExit) as e:
        main([*args, "--no-write", "--price-date", DATE])
    return e.value.code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
def test_search_prints_what_advise_printed_on_a_scenario_with_optimize(fmt):
    searched = _invoke("search", str(EXAMPLE), "--format", fmt)
    advised = _invoke("advise", str(EXAMPLE), "--format", fmt)
    assert searched.exit_code == 0 and advised.exit_code == 0, searched.output + advised.output
    assert searched.stdout == advised.stdout
    assert HINT not in searched.stderr
    assert (HINT in advised.stderr) == (fmt == "table")   # machine formats keep stderr quiet
    if fmt == "table":   # the figures docs/design-search.md and the README show
        assert searched.stdout.splitlines()[:2] == [
            f"agent-design-space ({EXAMPLE}): 8 designs",
            "cheapest: ttl=1h stagger=hold spawn=subagent  $0.6285 (TTFT p50/p95 0.96/1.64 s), 32.0% below the "
            "costliest ($0.9239)"]
    if fmt == "json":
        assert json.loads(searched.stdout)["scenarios"][0]["cheapest"] == "ttl=1h stagger=hold spawn=subagent"


def test_advise_on_the_scenarios_folder_searches_those_with_optimize_and_names_the_rest():
    folder = _invoke("advise", str(ROOT / "scenarios"))
    assert folder.exit_code == 0, folder.output
    assert folder.stdout == _invoke("search", str(EXAMPLE)).stdout   # the one scenario with optimize:
    skipped = [p.name for p in sorted((ROOT / "scenarios").glob("*.yaml")) if p != EXAMPLE]
    assert len(skipped) >= 10
    note = next(x for x in folder.stderr.splitlines() if x.startswith("prefixsim: skipped"))
    assert note.startswith(f"prefixsim: skipped {len(skipped)} scenarios without `optimize:` (")
    assert all(name in note for name in skipped) and EXAMPLE.name not in note
    assert HINT in folder.stderr and "Traceback" not in folder.output
    assert _invoke("search", str(ROOT / "scenarios")).stdout == folder.stdout


def test_a_folder_without_optimize_and_traffic_are_one_line_errors(tmp_path, capsys):
    (tmp_path / "plain.yaml").write_bytes((ROOT / "scenarios" / "ttl-expiry.yaml").read_bytes())
    for command in ("advise", "search"):
        code, lines = _fails(capsys, command, str(tmp_path))
        assert code == 2 and lines == [(f"{tmp_path}: no scenario here declares `optimize:` dimensions to search "
                                        "(e.g. `optimize: {ttl: [5m, 1h]}`); `prefixsim run` simulates a scenario "
                                        "as written")]
    log = str(ROOT / "tests" / "fixtures" / "advise" / "system-timestamp.jsonl")
    code, lines = _fails(capsys, "search", log)
    assert code == 2 and lines == [(f"{log}: a design search takes scenario files or folders (with `optimize:`); "
                                    "`prefixsim advise` reads traffic")]


def test_search_is_listed_as_a_command():
    out = CliRunner().invoke(cli, ["--help"])
    assert out.exit_code == 0 and "search" in out.stdout
