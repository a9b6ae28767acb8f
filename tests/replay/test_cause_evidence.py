"""The oracle bench/fidelity.py scores the replay's causes against (issue 37): it labels only what
usage, times and recorded bodies prove, and leaves every other request unscored."""
import sys
from pathlib import Path

from prefixsim.model import Block, Call, CauseKind, Layer, Request, Usage
from prefixsim.sources.record import Record

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import cause_evidence as ce  # noqa: E402  (bench/ is no package)

CLAUDE = "claude-sonnet-4-20250514"
GPT = "gpt-4o-2024-08-06"


def _rec(i, t, usage, tools=("a", "b"), msgs=("hello",), model=CLAUDE, provider="anthropic", sized=False, stream="s"):
    size = 10 if sized else None   # sized: a reconstructed block (a transcript's static prefix)
    blocks = (*(Block(Layer.TOOLS, f"tool {x}".encode(), f"tools[{k}]", tokens=size) for k, x in enumerate(tools)),
              *(Block(Layer.MESSAGES, m.encode(), f"messages[{k}]") for k, m in enumerate(msgs)))
    call = Call(t=t, request=Request(model=model, blocks=blocks), stream=stream, label=f"r{i}")
    return Record(call, f"r{i}", "2025-12-02T10:00:00Z", usage, "x.jsonl", i + 1, provider=provider)


def _kinds(records):
    return [None if e is None else (e.kind, e.place) for e in ce.evidence(records)]


W = Usage(input_tokens=3, cache_write_5m=5000)


def test_a_read_of_everything_kept_within_the_ttl_is_a_hit():
    got = _kinds([_rec(0, 0, W), _rec(1, 60, Usage(input_tokens=3, cache_read=5000, cache_write_5m=40))])
    assert got == [None, (CauseKind.HIT, "")]


def test_a_read_of_less_than_kept_inside_the_ttl_proves_nothing_without_a_tools_change():
    got = _kinds([_rec(0, 0, W), _rec(1, 60, Usage(input_tokens=3, cache_read=1000, cache_write_5m=4000))])
    assert got == [None, None]


def test_a_loss_past_the_ttl_and_its_slack_is_an_expiry_and_within_the_slack_nothing():
    lost = Usage(input_tokens=3, cache_read=0, cache_write_5m=5000)
    assert _kinds([_rec(0, 0, W), _rec(1, 316, lost)])[1] == (CauseKind.TTL_EXPIRED, "")
    assert _kinds([_rec(0, 0, W), _rec(1, 310, lost)])[1] is None   # the slack: often still read
    # a stream that wrote 1h keeps its entry for the hour
    hour = Usage(input_tokens=3, cache_write_1h=5000)
    assert _kinds([_rec(0, 0, hour), _rec(1, 400, lost)])[1] is None


def test_a_tools_change_names_the_first_tool_block_that_differs():
    lost = Usage(input_tokens=3, cache_read=0, cache_write_5m=5000)
    got = _kinds([_rec(0, 0, W, tools=("a", "b", "c")), _rec(1, 30, lost, tools=("a", "x", "c"))])
    assert got[1] == (CauseKind.PREFIX_CHANGED, "tools layer, block 1")
    added = _kinds([_rec(0, 0, W, tools=("a", "b")), _rec(1, 30, lost, tools=("a", "b", "c"))])
    assert added[1] == (CauseKind.PREFIX_CHANGED, "tools layer, block 2")


def test_reconstructed_tools_prove_no_change():
    lost = Usage(input_tokens=3, cache_read=0, cache_write_5m=5000)
    got = _kinds([_rec(0, 0, W, tools=("a",), sized=True), _rec(1, 30, lost, tools=("b",), sized=True)])
    assert got[1] is None


def test_a_repeated_prompt_below_an_automatic_caches_minimum_that_read_nothing_is_below_minimum():
    short = Usage(input_tokens=300)
    first = _rec(0, 0, short, msgs=("q",), model=GPT, provider="openai")
    again = _rec(1, 20, Usage(input_tokens=320), msgs=("q", "a", "q2"), model=GPT, provider="openai")
    other = _rec(1, 20, Usage(input_tokens=320), msgs=("z", "a"), model=GPT, provider="openai")
    assert _kinds([first, again])[1] == (CauseKind.BELOW_MINIMUM, "")
    assert _kinds([first, other])[1] is None   # another prompt: a change, not the minimum, may explain it
    # Claude caches only at breakpoints: an unread short prompt may simply have had none
    assert _kinds([_rec(0, 0, short, msgs=("q",)), _rec(1, 20, Usage(input_tokens=320), msgs=("q", "a"))])[1] is None


def test_agreement_needs_the_kind_and_the_place():
    e = ce.Evidence(CauseKind.PREFIX_CHANGED, "tools layer, block 1")
    assert e.agrees("prefix_changed", "tools layer, block 1 (tools[1]), byte 3")
    assert not e.agrees("prefix_changed", "tools layer, block 2 (tools[2]), byte 3")
    assert not e.agrees("prefix_changed", "system layer, block 1")
    assert not e.agrees("ttl_expired", "tools layer, block 1")
    assert ce.Evidence(CauseKind.HIT).agrees("", "") and not ce.Evidence(CauseKind.HIT).agrees("cold", "")
