"""`run --format json` carries the answer the text prints (issue 34, item 11 leftover): the question
and its answer lines for every scenario, and for a scenario with `optimize:` the design search's answer
(the best design, what it saves over the design as written and by which choice, the fastest design).
Before, the JSON had neither: a script reading it could not tell which design the text crowned."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from prefixsim.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["run", *args, "--no-write", *DATE])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_json_of_an_optimize_scenario_holds_its_design_search_answer(monkeypatch):
    monkeypatch.chdir(ROOT)
    path = "scenarios/agent-design-space.yaml"
    (doc,) = json.loads(_run(path, "--format", "json"))["scenarios"]
    found = doc["design_search"]
    text = " ".join(_run(path).split())
    for line in doc["answer"]:   # the lines the text prints under the question
        assert " ".join(line.split()) in text
    assert found["answer"] == doc["answer"] and found["designs"] == 8
    assert found["best"]["name"] == "ttl=1h stagger=hold spawn=subagent" and found["best"]["cost_usd"] < \
        found["as_written"]["cost_usd"]
    assert abs(found["saving_usd"] - (found["as_written"]["cost_usd"] - found["best"]["cost_usd"])) < 1e-9
    assert {c["dimension"]: (c["as_written"], c["best"]) for c in found["changes"]} == {
        "ttl": ("5m", "1h"), "stagger": ("0s", "hold"), "spawn": ("fork", "subagent")}
    assert all(c["saves_usd"] > 0 for c in found["changes"])
    # the best design is also the fastest by p95 TTFT (holding siblings adds no time to a request)
    assert found["fastest"] is None and found["best"]["ttft_p95_s"] > 0
    assert any("also the fastest by p95 TTFT" in line for line in found["answer"])
    assert doc["question"].startswith("Which TTL, launch stagger and kind of child")


def test_the_json_of_any_scenario_holds_its_question_and_answer(monkeypatch):
    monkeypatch.chdir(ROOT)
    (doc,) = json.loads(_run("scenarios/ttl-expiry.yaml", "--format", "json"))["scenarios"]
    assert doc["question"] == "5-minute or 1-hour cache writes for these idle gaps?"
    assert doc["answer"] == ["cheapest: ttl 1h, $0.5958; next: ttl 5m 1.09x (+$0.0514)"]
    assert "design_search" not in doc
