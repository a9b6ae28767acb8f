"""Causality before timestamps (issue 30, item 1): a request that continues the conversation holds
the previous response in its prompt, so that response's cache write was readable by then, whatever
the transcript's stamps say. Claude Code 1.0.5x-1.0.11x rewrote runs of lines with one stamp, equal
to or later than the requests that follow: read by the stamps, every later request in the run is
"not yet available" and reads nothing."""
import json

import pytest

from cc_fixtures import Transcript, stamp

from prefixsim.replay import replay
from prefixsim.sources import load
from prefixsim.sources.claude_code.raw import Raw
from prefixsim.sources.claude_code.order import MIN_TTFT, causal


def _rewritten(tmp_path):
    """Four tool-loop requests 5 s apart; the first response's lines are stamped at t=8838 s (a
    rewritten run), later than the three requests that follow and hold that response."""
    t = Transcript()
    t.user(0, "build it")
    t.call(0, "r0", 0, 20000)
    for k, (read, write) in enumerate(((20000, 400), (20400, 300), (20700, 200)), start=1):
        t.user(5 * k, [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "done"}])
        t.call(5 * k, f"r{k}", read, write)
    for line in t.lines:
        if line.get("requestId") == "r0":
            line["timestamp"] = stamp(8838.56)
    return t.write(tmp_path / "s1.jsonl")


def test_a_response_stamped_after_the_requests_that_hold_it_is_read_by_them(tmp_path):
    rows = replay(load(_rewritten(tmp_path))).rows
    assert [r.observed.cache_read for r in rows] == [0, 20000, 20400, 20700]
    assert [r.predicted.cache_read for r in rows] == [0, 20000, 20400, 20700]
    assert all(r.cause.kind != "not_yet_available" for r in rows)


def test_stamps_that_run_backwards_keep_the_order_of_the_lines(tmp_path):
    t = Transcript()
    t.user(100, "first")
    t.call(100, "r0", 0, 20000)
    t.user(40, [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}])   # stamped earlier
    t.call(40, "r1", 20000, 500)
    p = t.write(tmp_path / "s1.jsonl")
    rows = replay(load(p)).rows
    assert [r.request_id for r in rows] == ["r0", "r1"]
    assert [r.predicted.cache_read for r in rows] == [0, 20000]


def _raw(rid, start, response, fork=None, stream="main"):
    from prefixsim.model import Usage
    return Raw(rid, stream, "main", "s/main", "claude-opus-4-6", start, response, Usage(), "", "f", 1, None, None,
               "", 0, fork=fork)


def test_causal_leaves_forward_stamps_alone_and_caps_only_continuations():
    forward = [_raw("a", 0, 2), _raw("b", 5, 7)]
    assert causal(list(forward)) == forward
    # the next request started before the response's stamp: the response is readable by then
    got = causal([_raw("a", 0, 9), _raw("b", 5, 7)])
    assert (got[0].response, got[1].start) == (5, 5)
    # a rewind continues from an earlier reply: the response it skips is not capped
    got = causal([_raw("a", 0, 9), _raw("b", 5, 7, fork="x")])
    assert got[0].response == 9
    # equal stamps: the later line starts the least time-to-first-token after (the write is readable)
    got = causal([_raw("a", 3, 3), _raw("b", 3, 3)])
    assert (got[0].response, got[1].start) == (3, 3 + MIN_TTFT)
    # other streams are not ordered against each other
    other = [_raw("a", 0, 9), _raw("b", 5, 7, stream="agent")]
    assert causal(list(other)) == other


def test_the_rewritten_run_is_our_own_input(tmp_path):
    lines = [json.loads(x) for x in _rewritten(tmp_path).read_text().splitlines()]
    assert sum(x.get("timestamp") == stamp(8838.56) for x in lines) == 2


@pytest.mark.parametrize("gap,edge", [(305, True), (314, True), (330, False)])
def test_a_miss_just_past_the_ttl_says_it_is_in_the_slack(tmp_path, gap, edge):
    """The TTL is a minimum (A-PC): a miss up to ANTHROPIC_TTL_SLACK past it says the entry is often
    still read there; further past, it does not (docs/rules.md#anthropic-ttl-and-refresh)."""
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, ttft=1.0)
    t.user(gap, "more")
    t.call(gap, "r1", 0, 20500)
    row = replay(load(t.write(tmp_path / "s1.jsonl"))).rows[1]
    assert row.cause.kind == "ttl_expired"
    assert ("within the TTL's slack" in row.cause.detail) is edge
