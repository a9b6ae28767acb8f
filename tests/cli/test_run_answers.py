"""Issue 34 item 3: the one-line answers compare designs, never reference variants (`reference: true`,
yardsticks such as the seed's chars/4 accounting model), and a folder of scenarios reads on one
screen per few scenarios; item 11: the question is printed above its answer."""
from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.report.answer import answers
from prefixsim.scenario.loader import load_runs, scenario_files
from prefixsim.scenario.schema import Scenario

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]
ANSWER = re.compile(r"^(?:\S+=\S+: |overall: |provider APIs |self-hosted )?(?:cheapest|dearest|least [\w ]+?): (.+?), ", re.M)


def _references() -> set[str]:
    return {r.variant.split(" [")[0] for f in scenario_files([str(ROOT / "scenarios")]) for r in load_runs(f)
            if r.reference}


def test_run_scenarios_fits_150_lines_at_120_columns_and_crowns_no_reference(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "120")
    result = CliRunner().invoke(cli, ["run", "scenarios/", "--no-write", *DATE])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert len(out.splitlines()) <= 150, len(out.splitlines())
    assert max(len(line) for line in out.splitlines()) <= 120
    refs = _references()
    # the four yardsticks of scenarios/: the seed's two accounting models, the no-change baseline, unlimited KV
    assert {"seed demo (prefix, chars/4)", "baseline (no change)", "vllm, sub-agents, unlimited KV"} <= refs
    crowned = [m.group(1) for m in ANSWER.finditer(" ".join(out.split("\n    ")))]
    assert len(crowned) >= 8 and not [c for c in crowned if any(c.startswith(r) for r in refs)], crowned
    # shown, and labelled, in the table
    assert "baseline (no change) (reference)" in out and "(reference)" in out.split("seed-fork-chapter.yaml")[1]
    # the old answers: "cheapest: seed arithmetic (...)" and "cheapest: baseline (no change)"
    assert "cheapest: fork, siblings held until the first response begins (2 s), $0.3060" in " ".join(out.split())
    # the invalidation matrix asks which change costs the most: it is answered with the dearest
    assert "dearest: model switched, $0.4746, 3.51x the cheapest" in out


def test_run_scenarios_says_on_stderr_only_where_its_reports_went(monkeypatch, tmp_path):
    """With its reports written, stderr adds one line to the 150 of stdout at 120 columns: where the
    reports went (a line saying the design search answered a scenario repeated what its answer says,
    and a blank line stood before the report folder's)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "120")
    result = CliRunner().invoke(cli, ["run", "scenarios/", "--out", str(tmp_path / "r"), *DATE])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"reports written to {tmp_path / 'r'}/"]
    assert len(result.stdout.splitlines()) <= 150


def test_question_is_printed_above_its_answer(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(cli, ["run", "scenarios/compaction.yaml", "--no-write", *DATE]).stdout
    lines = out.splitlines()
    q = lines.index("question: When should a long session compact: at ~100 K, at ~160 K, or never?")
    assert lines[q + 1].startswith("cheapest: compact at ~100 K, $3.2001")


def _row(name, cost, reference=False):
    return {"variant": name, "cost_usd": cost, "hit_rate": 0.5, "cost_no_cache_usd": 1.0, "savings_vs_no_cache": 0.5,
            "_reference": reference, "_base": name, "_sweep_value": None}


def test_a_cheaper_reference_is_never_the_answer():
    rows = [_row("strawman", 0.10, True), _row("fork", 0.30), _row("sub-agents", 0.40)]
    assert answers(rows, [False] * 3) == ["cheapest: fork, $0.3000; next: sub-agents 1.33x (+$0.1000)"]


def test_a_lone_design_is_set_against_its_reference():
    rows = [_row("strawman", 0.10, True), _row("real rules", 0.15)]
    assert answers(rows, [False, False]) == [
        "real rules: $0.1500, 50.0% of prompt tokens read from cache, 50.0% saved vs no cache; "
        "reference strawman: $0.1000, the design 1.50x"]


def test_reference_is_a_described_boolean_of_a_variant():
    variant = Scenario.model_json_schema()["$defs"]["Variant"]["properties"]["reference"]
    assert variant["type"] == "boolean" and variant["default"] is False and "yardstick" in variant["description"]


def test_an_optimize_scenario_is_answered_by_its_design_search(monkeypatch):
    # "default: $0.9239" answered "which TTL, stagger and kind of child?" with the one design as written
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, ["run", "scenarios/agent-design-space.yaml", "--no-write", *DATE])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "default: $" not in out
    assert ("best of 8 designs: ttl=1h stagger=hold spawn=subagent, $0.6285 (TTFT p50/p95 0.96/1.64 s), 32.0% below "
            "the design as written ($0.9239), because ttl 5m → 1h saves $0.0414; stagger 0s → hold saves $0.0505; "
            "spawn fork → subagent saves $0.2442; also the fastest by p95 TTFT") in out
    assert "fastest:" not in out   # no other design has a lower p95 TTFT (sub-agents' prompts are smaller)
