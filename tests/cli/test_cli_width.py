"""Every command through click's runner, on the shipped scenarios and data: the default output fits
120 columns (the width used when stdout is not a terminal), and `run` by default prints the
comparison and the answer, not every request."""
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.report.tables import DEFAULT_WIDTH

ROOT = Path(__file__).resolve().parents[2]
SPOTTER = "tests/data/claude-code/spotter/4d5611e5-241a-462a-8d15-5122611a9569"
DATE = ["--price-date", "2026-11-30"]


def invoke(args, tmp_path=None):
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == (1 if args[0] == "diff" and "--help" not in args else 0), result.output   # diff(1)
    return result.output


COMMANDS = {
    "run": lambda t: ["run", "scenarios/", "--out", "r", *DATE],
    "run -v": lambda t: ["run", "scenarios/", "-v", "--no-write", *DATE],
    "run --by-stream": lambda t: ["run", "scenarios/", "--by-stream", "--no-write", *DATE],
    "run --examples": lambda t: ["run", "--examples", "--no-write", *DATE],
    "validate": lambda t: ["validate", "scenarios/"],
    "replay claude-code": lambda t: ["replay", f"{SPOTTER}.jsonl", f"{SPOTTER}/"],
    "replay what-if": lambda t: ["replay", f"{SPOTTER}.jsonl", f"{SPOTTER}/", "--ttl", "1h"],
    "replay cassette": lambda t: ["replay", "tests/data/anthropic-api/test_anthropic_cache_real_api.yaml"],
    "replay mooncake": lambda t: ["replay", "tests/data/mooncake/conversation_trace.jsonl", "--capacity", "1e4,unlimited"],
    "advise claude-code": lambda t: ["advise", f"{SPOTTER}.jsonl", f"{SPOTTER}/"],
    "advise api log": lambda t: ["advise", "tests/fixtures/advise/system-timestamp.jsonl"],
    "diff": lambda t: ["diff", "tests/data/anthropic-api/test_anthropic_cache_real_api.yaml", "--index", "0", "1"],
    **{f"breakeven {s}": (lambda s: lambda t: ["breakeven", s, "--out", "b", *DATE])(s)
       for s in ("fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum", "api-vs-selfhosted")},
    "report": lambda t: ["report", "scenarios/", "-o", "rep/", *DATE],
    "init": lambda t: ["init", "init"],
    "help": lambda t: ["--help"],
    **{f"{c} --help": (lambda c: lambda t: [c, "--help"])(c)
       for c in ("run", "validate", "schema", "replay", "advise", "diff", "breakeven", "report", "init")},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_default_output_fits_120_columns(name, tmp_path, monkeypatch, no_network):
    # as in a checkout: inputs and outputs at short relative paths (outputs in tmp_path)
    for d in ("scenarios", "tests"):
        (tmp_path / d).symlink_to(ROOT / d)
    monkeypatch.chdir(tmp_path)
    out = invoke(COMMANDS[name](tmp_path))
    wide = [line for line in out.splitlines() if len(line) > DEFAULT_WIDTH]
    assert not wide, f"{len(wide)} lines wider than {DEFAULT_WIDTH}, e.g. {wide[0]!r}"


def test_schema_is_json_for_editors_not_a_table(monkeypatch):
    """`schema` is the one command whose output is for a program (an editor's YAML plugin): JSON whose
    descriptions are single strings, so its lines are not held to the terminal width."""
    import json

    assert "properties" in json.loads(invoke(["schema"]))


def test_run_prints_the_comparison_and_an_answer_by_default(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = invoke(["run", "scenarios/ttl-expiry.yaml", "--no-write", *DATE])
    assert "variant: " not in out and "main #1" not in out     # no per-request rows by default
    assert "variant  reqs" in out   # the comparison table, under the scenario's name
    assert out.index("question: 5-minute or 1-hour cache writes") < out.index("cheapest: ttl 1h")   # question first
    # ttl 1h: $0.5958 vs ttl 5m: $0.6472 (tests/scenario/test_scenarios.py checks the costs themselves)
    assert "cheapest: ttl 1h, $0.5958; next: ttl 5m 1.09x (+$0.0514)" in out
    verbose = invoke(["run", "scenarios/ttl-expiry.yaml", "--no-write", "-v", *DATE])
    assert "variant: ttl 5m  (model: claude-sonnet-4-5)" in verbose and "main #8" in verbose
    # a cause too long for its column becomes a footnote under the table
    assert re.search(r"^main #8 .* ttl_expired \[1\]$", verbose, re.M)
    assert "[1] ttl_expired (entry at messages[32].content[0] idle 375 s > ttl 300 s)" in verbose


def test_a_sweep_is_compared_at_each_value_and_overall(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = invoke(["run", "scenarios/parallel-children-stagger.yaml", "--no-write", *DATE])
    assert "comparison of variants, at each stagger value" in out
    head = next(line for line in out.splitlines() if line.startswith("stagger  variant"))
    assert "[stagger=" not in out.split("comparison of variants")[1].split("\n\n")[0]   # the value is a column
    assert head.split()[:2] == ["stagger", "variant"]
    for value in (0, 1, 3, 5):
        assert re.search(rf"^stagger={value}: cheapest: ", out, re.M)
    assert "overall: cheapest: fresh sub-agents of one type at stagger=3, $0.3173 (tied: fresh sub-agents of one type " \
           "at stagger=5)" in out


def test_engines_are_answered_in_gpu_seconds_not_dollars(monkeypatch):
    monkeypatch.chdir(ROOT)
    # wide enough that no header wraps (at 120 columns `GPU-s` stands over `spent`)
    out = invoke(["run", "scenarios/self-hosted-vllm.yaml", "--no-write", "--width", "160", *DATE])
    comparison = out.split("self-hosted-vllm.yaml)")[1]
    assert "cost $" not in comparison and "GPU-s spent" in comparison
    # sglang fork spends 12,738 computed tokens at 10,000 tokens/s = 1.27 GPU-s (rounded for display)
    assert "least GPU prefill: sglang, fork, 1.27 GPU-s" in out


def test_width_option_and_narrow_tables_wrap_text_not_numbers(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = invoke(["run", "scenarios/seed-fork-economics.yaml", "--no-write", "--width", "80", *DATE])
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "0.2489" in out   # the reference (seed arithmetic) is shown, and no answer crowns it
    assert "cheapest: fork, siblings held" in " ".join(out.split())


def test_unknown_command_names_the_nearest(monkeypatch):
    result = CliRunner().invoke(cli, ["rn", "scenarios/"])
    assert result.exit_code == 2 and "unknown command 'rn' (did you mean 'run'?" in result.output


def test_init_writes_a_starter_that_runs_and_never_overwrites(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    invoke(["init", str(tmp_path / "s")])
    names = sorted(p.name for p in (tmp_path / "s" / "examples").glob("*.yaml"))
    assert names == sorted(p.name for p in (ROOT / "scenarios").glob("*.yaml"))
    starter = (tmp_path / "s" / "my-scenario.yaml").read_text()
    assert starter.startswith("# A starter scenario") and "system: 4K" in starter
    out = invoke(["run", str(tmp_path / "s" / "my-scenario.yaml"), "--no-write", *DATE])
    assert "cheapest: " in out
    again = CliRunner().invoke(cli, ["init", str(tmp_path / "s")])
    assert again.exit_code != 0 and "not overwriting" in str(again.exception or again.output)
