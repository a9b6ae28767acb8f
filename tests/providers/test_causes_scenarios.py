"""The Claude platforms' causes at their boundaries through `prefixsim run`'s own path: a scenario file
played and simulated (`prefixsim.api.run_scenario`), its rows' cause column as printed (issue 37)."""
import pytest
from claude_causes import FIRST_BLOCK_HEAD, PLATFORMS
from conftest import PRICE_DATE

from prefixsim.api import run_scenario

SLACK = "; within the TTL's slack, where an entry is often still read (the TTL is a minimum)"


def _rows(tmp_path, provider, system, timeline, breakpoints="system_and_tools"):
    p = tmp_path / "s.yaml"
    p.write_text(f"name: causes\nmodel: claude-sonnet-4-5\nprovider: {provider}\ntokenizer: approx\n"
                 f"breakpoints: {breakpoints}\npace: 15s\nbase:\n  tools: {{count: 0, size: 0}}\n  system: {system}\n"
                 f"  history: {{turns: 0}}\ntimeline:\n" + "".join(f"  - {step}\n" for step in timeline))
    (variant,) = run_scenario(str(p), PRICE_DATE).variants
    return variant.rows()


def _prompt(row):
    return row["input_tokens"] + row["cache_creation_input_tokens"] + row["cache_read_input_tokens"]


@pytest.mark.parametrize("provider", PLATFORMS)
def test_a_scenario_s_request_at_the_ttl_and_its_grace_misses_and_one_second_before_reads(tmp_path, provider):
    # the next request starts a wait plus one pace (15 s) after the previous one; the TTL is a minimum,
    # an entry is read 5 s past it (ANTHROPIC_TTL_GRACE): one rule in a scenario as in a replay
    at = _rows(tmp_path, provider, 2000, ["request: 1", "wait: 290s", "request: 1"])
    assert [r["t"] for r in at] == [0.0, 305.0]
    assert at[1]["cause"] == f"ttl_expired (entry at system[0] idle 305 s > ttl 300 s{SLACK})"
    assert at[1]["cache_read_input_tokens"] == 0
    before = _rows(tmp_path, provider, 2000, ["request: 1", "wait: 289s", "request: 1"])
    assert before[1]["cause"] == "" and before[1]["cache_read_input_tokens"] == before[0]["cache_creation_input_tokens"]


@pytest.mark.parametrize("provider", PLATFORMS)
def test_a_scenario_s_system_prompt_at_the_minimum_is_written_one_token_less_is_not(tmp_path, provider):
    # `system: N` renders as one block of N tokens and its 7 tokens of frame (approx: 4 characters a token)
    at = _rows(tmp_path, provider, 1017, ["request: 1"])
    assert (at[0]["cause"], at[0]["cache_creation_input_tokens"]) == ("cold", 1024)
    below = _rows(tmp_path, provider, 1016, ["request: 1"])
    assert below[0]["cache_creation_input_tokens"] == 0
    assert below[0]["cause"] == f"below_minimum ({_prompt(below[0])} tokens)"


@pytest.mark.parametrize("provider", PLATFORMS)
def test_a_scenario_s_compaction_and_model_switch_name_where_and_what(tmp_path, provider):
    rows = _rows(tmp_path, provider, 2000, ["request: 2", "compact: {summary: 300}", "request: 1",
                                            "switch_model: claude-opus-4-1", "request: 1"], breakpoints="last_message")
    assert [r["cause"] for r in rows] == [
        "cold", "", "",
        # the summary is the new history's first message: it parts from the old one at its text's first byte
        f"compaction (messages layer, block 1 (messages[0].content[0]), byte {FIRST_BLOCK_HEAD})",
        "model_switch (claude-sonnet-4-5 -> claude-opus-4-1)"]
