"""Claude Code's TTL buckets (CC-PC, archived 2026-10-08): only the main conversation takes the 1h
TTL; sub-agents, forks and compaction write 5m. Plain API breakpoints mark every request the
application sends, so there `ttl: 1h` applies to all of them."""
from decimal import Decimal

import pytest
from conftest import PRICE_DATE

from prefixsim.api import run_file

SCENARIO = """\
name: buckets
model: claude-sonnet-4-5
tokenizer: approx
breakpoints: {breakpoints}
ttl: 1h
ttft: 2s
pace: 20s
output: 400
base:
  tools: {{count: 10, size: 300}}
  system: 3000
  history: {{turns: 4, user: 100, assistant: 200, tool_use: 80, tool_result: 400}}
timeline:
  - request: {{label: parent, assistant: 0, tool_use: 0}}
  - fork: {{children: 2, directive: 200, tool_call: 100, join: false{fork_ttl}}}
  - subagent: {{children: 1, system: 2000, tools: {{count: 4, size: 300}}, task: 200, join: false}}
  - compact: {{summary: 500}}
"""


def _rows(tmp_path, breakpoints="claude_code", fork_ttl=""):
    p = tmp_path / "s.yaml"
    p.write_text(SCENARIO.format(breakpoints=breakpoints, fork_ttl=fork_ttl))
    v = run_file(str(p), PRICE_DATE).variants[0]
    return {o.call.stream: o for o in v.outcomes}


def test_claude_code_preset_gives_1h_to_the_main_conversation_only(tmp_path):
    o = _rows(tmp_path)
    assert set(o) == {"main", "fork1.1", "fork1.2", "sub2.1", "compact"}
    main = o["main"].usage
    assert main.cache_write_1h > 0 and main.cache_write_5m == 0
    for s in ("fork1.1", "fork1.2", "sub2.1", "compact"):
        u = o[s].usage
        assert u.cache_write_1h == 0 and u.cache_write_5m > 0, s
    # The sub-agent is priced at the 5m write rate (A-PR, Sonnet 4.5: $3.75/MTok; output $15/MTok).
    sub = o["sub2.1"]
    assert sub.cost_usd == (sub.usage.cache_write_5m * Decimal("3.75") + sub.usage.input_tokens * 3
                            + sub.usage.output_tokens * 15) / Decimal(1_000_000)


def test_a_step_can_set_its_own_ttl(tmp_path):
    o = _rows(tmp_path, fork_ttl=", ttl: 1h")
    assert o["fork1.1"].usage.cache_write_1h > 0 and o["fork1.1"].usage.cache_write_5m == 0
    assert o["sub2.1"].usage.cache_write_1h == 0


@pytest.mark.parametrize("breakpoints", ["last_message", "[system, last_message]"])
def test_plain_api_breakpoints_write_every_request_at_the_scenario_ttl(tmp_path, breakpoints):
    o = _rows(tmp_path, breakpoints)
    for s, out in o.items():
        assert out.usage.cache_write_5m == 0 and out.usage.cache_write_1h > 0, s


@pytest.mark.slow
def test_seed_fork_economics_subagents_cost_the_same_under_a_1h_main(tmp_path):
    """The issue's case: seed-fork-economics with `ttl: 1h` priced each sub-agent at 1h writes."""
    from pathlib import Path

    src = (Path(__file__).resolve().parents[2] / "scenarios" / "seed-fork-economics.yaml").read_text()
    costs = {}
    for ttl in ("5m", "1h"):
        p = tmp_path / f"s{ttl}.yaml"
        p.write_text(src.replace("ttl: 5m", f"ttl: {ttl}"))
        res = run_file(str(p), PRICE_DATE)
        v = next(v for v in res.variants if v.variant.startswith("5 independent sub-agents"))
        costs[ttl] = [o.cost_usd for o in v.outcomes if o.call.stream != "main"]
        assert all(o.usage.cache_write_1h == 0 for o in v.outcomes if o.call.stream != "main")
    assert len(costs["1h"]) == 5 and costs["1h"] == costs["5m"]
    # the figure: about $0.0709 each (distinct agent types differ by a few tokens), not $0.1084
    assert all(Decimal("0.0705") < c < Decimal("0.0712") for c in costs["1h"])
