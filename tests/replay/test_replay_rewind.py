"""A rewound conversation (checkpoint, edited prompt) and reads of a cache no request in the data
wrote: each on a small transcript built here; the numbers follow from the rule."""
import json

import pytest
from cc_fixtures import Transcript
from click.testing import CliRunner

from prefixsim import sources
from prefixsim.cli import cli
from prefixsim.replay import replay
from prefixsim.replay.outside import Outside

# Runs the command in a child interpreter, which a mutation run's switch does not reach.
pytestmark = pytest.mark.no_mutation


def _rows(path):
    return {r.request_id: r for r in replay(sources.open_many([path])).rows}


def test_a_rewind_returns_to_the_history_the_earlier_request_sent(tmp_path):
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000)                      # B 20,000
    t.user(10, "more")
    t.call(10, "r1", 20000, 500)                   # B 20,500, written at r1's breakpoint
    answer = t.last
    t.user(20, "and more")
    t.call(20, "r2", 20500, 400)                   # B 20,900
    t.user(30, "instead, this", parent=answer)     # the user rewound to r1's reply
    t.call(30, "r3", 20500, 300)                   # B 20,800: smaller than r2's, yet no new history
    rows = _rows(t.write(tmp_path / "s.jsonl"))
    r3 = rows["r3"].predicted
    # r1's prompt is cached (written at 10 s, 5-minute TTL): read it, write what r3 adds after it
    assert (r3.cache_read, r3.cache_creation) == (20500, 300)
    assert rows["r3"].cause.kind == "prefix_changed"   # it parted from r2's history


def test_a_message_edited_after_an_interrupted_one_returns_to_the_reply_before_them(tmp_path):
    # Shaped on johnmatthewtennant/mcp-voice-hooks (2.1.7): a message interrupted before any response
    # (then `[Request interrupted by user]`), a new message after the marker, and that one edited: the
    # edit's parent is the marker, a user line, so the history returns to the reply before them
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000)
    t.user(10, "more")
    t.call(10, "r1", 20000, 500)                   # B 20,500
    t.user(20, "a question, interrupted")
    marker = t.user(21, "[Request interrupted by user]")
    t.user(30, "the question again")
    t.call(30, "r2", 20540, 60)                    # read past r1's prompt: the interrupted request cached its reply
    t.user(40, "go on")
    t.call(40, "r3", 20600, 200)                   # B 20,800
    t.user(50, "the question, edited", parent=marker)
    t.call(50, "r4", 20540, 50)                    # B 20,590: smaller than r3's, yet no new history
    rows = _rows(t.write(tmp_path / "s.jsonl"))
    # the old code took the smaller prompt for a new history: only the static prefix read
    assert (rows["r4"].predicted.cache_read, rows["r4"].predicted.cache_creation) == (20540, 50)


def test_a_read_past_the_previous_prompt_proves_the_reply_cached_for_a_later_rewind(tmp_path):
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000)
    t.user(10, "more")
    t.call(10, "r1", 20000, 500)                   # B 20,500
    answer = t.last
    t.user(40, "next turn")
    t.call(40, "r2", 20540, 60)                    # read 40 past r1's prompt: an unlogged request cached r1's reply
    t.user(50, "go on")
    t.call(50, "r3", 20600, 200)                   # B 20,800
    t.user(60, "back to r1's answer", parent=answer)
    t.call(60, "r4", 20540, 100)                   # B 20,640
    rows = _rows(t.write(tmp_path / "s.jsonl"))
    # r2 cannot know of the unlogged request: it reads what the data wrote (r1's 20,500)
    assert (rows["r2"].predicted.cache_read, rows["r2"].predicted.cache_creation) == (20500, 100)
    # r3 continues r2's own history
    assert rows["r3"].predicted.cache_read == 20600
    # r4 returns to r1's reply: the entry r2's read proved alive at 40 s (5-minute TTL) is read
    assert (rows["r4"].predicted.cache_read, rows["r4"].predicted.cache_creation) == (20540, 100)


def test_reads_of_a_cache_no_request_in_the_data_wrote_are_named_apart(tmp_path):
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 15000, 5000)                   # reads what an earlier session (not in the data) left
    t.user(10, "more")
    t.call(10, "r1", 20000, 400)
    t.user(1000, "after the TTL")
    t.call(1000, "r2", 12000, 8800)                # expired in the data; 12,000 read from elsewhere
    path = t.write(tmp_path / "s.jsonl")
    res = replay(sources.open_many([path]))
    rows = {r.request_id: r for r in res.rows}
    assert [rows[k].predicted.cache_read for k in ("r0", "r1", "r2")] == [0, 20000, 0]
    # two requests read 27,000 tokens nobody in the data wrote; r1, the only other one, is exact
    assert res.summary.outside == Outside(2, 27000, 0.0)
    assert res.summary.prefixsim.wape == 27000 / 47000
    out = CliRunner().invoke(cli, ["replay", str(path), "--requests"])
    assert out.exit_code == 0, out.output
    assert "2 requests read 27,000 tokens that no earlier request in the data wrote" in " ".join(out.output.split())
    short = " ".join(CliRunner().invoke(cli, ["replay", str(path)]).output.split())   # the default, in short
    assert "WAPE 57.45% (0.00% without the 2 requests that read 27,000 tokens no earlier request in the data wrote)" \
        in short
    doc = json.loads(CliRunner().invoke(cli, ["replay", str(path), "--format", "json"]).output)["summary"]
    assert (doc["outside_requests"], doc["outside_read_tokens"], doc["wape_predicted_in_data"]) == (2, 27000, 0.0)


def test_reads_shorter_than_the_cache_the_replay_found_alive_are_named_apart(tmp_path):
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000)
    t.user(10, "more")
    t.call(10, "r1", 20000, 500)                   # B 20,500, alive for 5 minutes
    t.user(60, "a new turn")
    t.call(60, "r2", 15000, 6000)                  # read only 15,000 of the 20,500 alive
    path = t.write(tmp_path / "s.jsonl")
    res = replay(sources.open_many([path]))
    rows = {r.request_id: r for r in res.rows}
    assert [rows[k].predicted.cache_read for k in ("r0", "r1", "r2")] == [0, 20000, 20500]
    assert res.summary.outside == Outside(0, 0, 5500 / 35000, 1, 5500)
    out = " ".join(CliRunner().invoke(cli, ["replay", str(path), "--requests"]).output.split())
    assert "1 request read 5,500 tokens fewer than the replay found alive on its prefix" in out
    assert "no earlier request in the data wrote" not in out
    short = " ".join(CliRunner().invoke(cli, ["replay", str(path)]).output.split())   # the default, in short
    assert "1 request read 5,500 tokens fewer than the replay found alive" in short
    assert "no earlier request in the data wrote" not in short
    doc = json.loads(CliRunner().invoke(cli, ["replay", str(path), "--format", "json"]).output)["summary"]
    assert (doc["shorter_requests"], doc["shorter_read_tokens"]) == (1, 5500)
