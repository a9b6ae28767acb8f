"""Codex CLI rollouts: read from a real public rollout (tests/data/codex, madshn/localpush) and from
rollouts built here to the structure of openai/codex's `RolloutLine` (session_meta, turn_context,
response_item, compacted, event_msg token_count)."""
import json

import pytest
from click.testing import CliRunner
from conftest import data_file

from prefixsim.cli import cli
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.codex import sessions
from prefixsim.sources.problems import collecting

SAMPLE = ("codex", "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl")


class Rollout:
    """A rollout written line by line: `request` adds a sampling request with its usage."""

    def __init__(self, session="s-1", model="gpt-5.3-codex", **meta):
        self.lines = []
        self.t = 0
        self.totals = [0, 0, 0]
        self.add("session_meta", {"id": session, "cli_version": "0.104.0", "source": "cli",
                                  "model_provider": "openai"} | meta)
        self.model = model

    def add(self, typ, payload, dt=1):
        self.t += dt
        self.lines.append({"timestamp": f"2026-02-23T10:{self.t // 60:02d}:{self.t % 60:02d}.000Z", "type": typ,
                           "payload": payload})

    def user(self, text="do it"):
        self.add("event_msg", {"type": "task_started", "turn_id": "t"})
        self.add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
        self.add("event_msg", {"type": "user_message", "message": text})

    def request(self, prompt, cached, output=100, reasoning=0, dt=1):
        self.add("turn_context", {"model": self.model, "cwd": "/w", "approval_policy": "on-request"}, dt)
        if reasoning:
            self.add("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"})
        self.add("response_item", {"type": "function_call", "name": "exec", "arguments": "{}", "call_id": "c"})
        self.totals = [self.totals[0] + prompt, self.totals[1] + cached, self.totals[2] + output]
        last = {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": output,
                "reasoning_output_tokens": reasoning, "total_tokens": prompt + output}
        total = dict(zip(("input_tokens", "cached_input_tokens", "output_tokens"), self.totals))
        info = {"total_token_usage": total, "last_token_usage": last, "model_context_window": 258400}
        self.add("event_msg", {"type": "token_count", "info": info})
        self.add("event_msg", {"type": "token_count", "info": info})   # Codex repeats it at the next start
        self.add("response_item", {"type": "function_call_output", "call_id": "c", "output": "ok"})

    def write(self, path):
        path.write_text("".join(json.dumps(x) + "\n" for x in self.lines))
        return path


def reads(path):
    return [(r.observed.cache_read, r.predicted.cache_read) for r in replay(load(path)).rows]


def test_a_real_rollout_reads_through_each_reply_in_128_token_steps():
    p = data_file(*SAMPLE)
    assert detect(p) == "codex" and detect(p.parent) == "codex"
    records = load(p)
    assert [r.call.request.model for r in records] == ["gpt-5.3-codex"] * 6
    assert {r.provider for r in records} == {"openai"}
    # the first request reads 3,456 an earlier session left (outside the data); each later one its
    # predecessor's prompt and reply (output tokens, reasoning included), rounded down to 128
    assert reads(p) == [(3456, 0), (42880, 42880), (44288, 44288), (49152, 49152), (49408, 49408), (49664, 49664)]
    assert records[1].observed.input_tokens == 44218 - 42880 and records[1].call.output_tokens == 96


def test_a_folder_of_rollouts_shares_the_cross_session_prefix(tmp_path):
    (tmp_path / "2026" / "02" / "23").mkdir(parents=True)
    for k, name in enumerate("abc"):
        r = Rollout(f"s-{name}")
        r.t += 10 * k
        r.user("hello there")
        r.request(20000, 3456)
        r.write(tmp_path / f"2026/02/23/rollout-{name}.jsonl")
    assert detect(tmp_path) == "codex"
    rows = replay(load(tmp_path)).rows
    # the first session shows the shared prefix (read from outside the data); the second, once that
    # response began, takes it as shared and writes it apart; the third reads it
    assert [(r.stream, r.predicted.cache_read) for r in rows] == [
        ("2026/02/23/rollout-a/main", 0), ("2026/02/23/rollout-b/main", 0), ("2026/02/23/rollout-c/main", 3456)]


def test_a_new_user_turn_drops_the_earlier_turns_reasoning(tmp_path):
    r = Rollout()
    r.user()
    r.request(17203, 0, output=358, reasoning=193)      # its response reasons first
    r.request(19243, 17536, output=239)
    r.request(21648, 19456, output=278)
    r.user("and now this")
    r.request(41415, 17152, output=428, reasoning=245)
    got = reads(r.write(tmp_path / "rollout-x.jsonl"))
    # the new turn keeps the prompt only up to the first request whose response reasoned
    assert got[1:] == [(17536, 17536), (19456, 19456), (17152, 17152)]


def test_without_reasoning_a_new_turn_continues_the_conversation(tmp_path):
    r = Rollout()
    r.user()
    r.request(17203, 0, output=358)
    r.user("more")
    r.request(19243, 17536, output=239)
    assert reads(r.write(tmp_path / "rollout-x.jsonl"))[1] == (17536, 17536)


def test_a_compaction_keeps_only_the_static_prefix(tmp_path):
    r = Rollout()
    r.user("x " * 50)
    r.request(30000, 0, output=500)
    r.request(31000, 30464)
    r.add("compacted", {"message": "", "replacement_history": []})
    r.add("event_msg", {"type": "context_compacted"})
    r.request(32000, 0)
    records = load(r.write(tmp_path / "rollout-x.jsonl"))
    assert records[2].call.event == "compaction"
    static = sum(b.tokens for b in records[0].call.request.blocks[:2])
    assert 29900 < static < 30000   # the first prompt less its first user message
    row = replay(records).rows[2]
    assert row.predicted.cache_read == static - static % 128
    # the cause and its detail on the replay path (issue 37): the replacement history parts at its first item
    assert str(row.cause) == (f"compaction (messages layer, block 2 (history[0] (added by {row.request_id})), "
                              "byte 13)")


def test_a_rollback_returns_to_the_history_before_the_dropped_turn(tmp_path):
    r = Rollout()
    r.user("first")
    r.request(20000, 0, output=200)
    r.user("second")
    r.request(26000, 20096, output=300)
    r.add("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
    r.user("second, again")
    r.request(21000, 0)
    rows = replay(load(r.write(tmp_path / "rollout-x.jsonl"))).rows
    # the dropped turn's growth is gone: the prompt continues from the first turn's prompt and reply
    assert rows[2].predicted.cache_read == 20096


def test_a_malformed_line_is_skipped_and_named_and_the_rest_replays(tmp_path):
    lines = data_file(*SAMPLE).read_text().splitlines(keepends=True)
    bad_usage = json.loads(lines[17])
    assert bad_usage["payload"]["type"] == "token_count"
    bad_usage["payload"]["info"]["last_token_usage"]["cached_input_tokens"] = -5
    lines[4] = "{not json\n"
    lines[17] = json.dumps(bad_usage) + "\n"
    del lines[20]   # the count's repeat, which would give the request back
    p = tmp_path / "rollout-bad.jsonl"
    p.write_text("".join(lines))
    with collecting() as found:
        records = load(p)
    assert len(records) == 5   # the first request's count was the corrupt one
    assert [r.observed.cache_read for r in records] == [42880, 44288, 49152, 49408, 49664]
    named = [str(s) for s in found.skipped]
    assert any(f"{p}:5: skipped: not valid JSON" in s for s in named)
    assert any(f"{p}:18: skipped:" in s and "cached_input_tokens" in s for s in named)
    res = CliRunner().invoke(cli, ["replay", str(p), "--source", "codex"])
    assert res.exit_code == 0, res.output
    assert "rollout-bad.jsonl:18" in res.output


def test_a_corrupt_count_is_read_from_its_repeat(tmp_path):
    lines = data_file(*SAMPLE).read_text().splitlines(keepends=True)
    bad = json.loads(lines[17])
    bad["payload"]["info"]["last_token_usage"]["input_tokens"] = "many"
    lines[17] = json.dumps(bad) + "\n"
    p = tmp_path / "rollout-bad.jsonl"
    p.write_text("".join(lines))
    with collecting() as found:
        records = load(p)
    assert [r.line for r in records][:2] == [21, 27] and len(found.skipped) == 1


def test_a_request_without_a_model_is_skipped_and_named(tmp_path):
    r = Rollout()
    r.user()
    r.request(2000, 0)
    r.lines = [x for x in r.lines if x["type"] != "turn_context"]
    p = r.write(tmp_path / "rollout-x.jsonl")
    with collecting() as found:
        assert load(p) == []
    assert any("no model" in str(s) for s in found.skipped)


def test_the_same_request_is_read_once_across_rollouts(tmp_path):
    r = Rollout()
    r.user()
    r.request(2000, 0)
    r.request(3000, 1920)
    (tmp_path / "a").mkdir()
    r.write(tmp_path / "a" / "rollout-1.jsonl")
    r.write(tmp_path / "a" / "rollout-2.jsonl")   # the same lines in another file
    assert len(sessions.raws(tmp_path / "a")) == 2


@pytest.mark.parametrize("source", ["codex", None])
def test_the_cli_replays_a_rollout(source):
    args = ["replay", str(data_file(*SAMPLE)), "--format", "json"] + (["--source", source] if source else [])
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [r["provider"] for r in doc["requests"]] == ["openai"] * 6


def test_a_resumed_session_continues_its_conversation(tmp_path):
    r = Rollout()
    r.user("first")
    r.request(20000, 0, output=200)
    # `codex resume` appends to the same rollout, no new session_meta; the history replayed from it
    # is the same bytes, so the next turn (within the retention) reads the conversation
    r.add("turn_context", {"model": r.model, "cwd": "/w"}, dt=120)
    r.user("after the resume")
    r.request(21000, 20096)
    assert reads(r.write(tmp_path / "rollout-x.jsonl"))[1] == (20096, 20096)


def test_a_fork_starts_from_its_parents_conversation(tmp_path):
    (tmp_path / "s").mkdir()
    parent = Rollout("p-1")
    parent.user("first")
    parent.request(20000, 0, output=200)
    parent.write(tmp_path / "s" / "rollout-1.jsonl")
    fork = Rollout("f-1", forked_from_id="p-1")
    fork.t = parent.t + 5
    fork.user("the fork's question")
    fork.request(21000, 20096)
    fork.write(tmp_path / "s" / "rollout-2.jsonl")
    records = load(tmp_path / "s")
    assert records[1].call.parent == "rollout-1/main"
    assert replay(records).rows[1].predicted.cache_read == 20096


def test_a_sub_agents_session_is_a_stream_of_its_own(tmp_path):
    r = Rollout("a-1", source={"subagent": {"thread_spawn": {"parent_thread_id": "p"}}})
    r.user()
    r.request(5000, 0)
    (raw,) = sessions.raws(r.write(tmp_path / "rollout-a.jsonl"))
    assert raw.kind == "agent" and raw.stream == "main"
