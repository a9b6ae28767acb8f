"""OpenCode's event stream (the server's bus, `GET /event`: `{type, properties}` events) read as a
session layout, on two real streams the opencode.nvim plugin recorded (tests/data/opencode,
provenance in tests/data/SOURCES.md) and on small streams made here for what they do not show."""
import json

import pytest
from click.testing import CliRunner
from conftest import cli_run, data_file, replay_says

from prefixsim.cli import cli
from prefixsim.replay import replay
from prefixsim.sources import _kinds, detect, load
from prefixsim.sources.opencode import storage
from prefixsim.sources.problems import collecting

PLANNING = data_file("opencode", "opencode-nvim-planning.json")
PERMISSION = data_file("opencode", "opencode-nvim-permission_error.json")
CHILD = "ses_46b499f08ffe3aldWmWZoH6N2m/agent-ses_46b492ebbffel5oIJ1qUl9GKFh"


def usage(r):
    u = r.observed
    return u.input_tokens, u.cache_read, u.cache_write_5m, u.output_tokens


def test_the_planning_stream_replays_its_four_copilot_claude_steps():
    records = load(PLANNING)
    assert [usage(r) for r in records] == [(11410, 8435, 0, 254), (11792, 11098, 0, 115),
                                           (12247, 11785, 0, 172), (12605, 12241, 0, 95)]
    # github-copilot is no provider with rules of its own: the Claude model's vendor's, Anthropic's
    assert {(r.provider, r.call.request.model) for r in records} == {("anthropic", "claude-sonnet-4")}
    assert {r.call.stream for r in records} == {"main"}
    rows = replay(records).rows
    # the reader adds input and cache.read (later OpenCode's meaning); this version's Copilot input
    # held the reads already (tests/data/README.md), so the rebuilt prompts are too long and the
    # predicted reads run to the previous prompt's end, about twice what was read
    assert [r.predicted.cache_read for r in rows] == [0, 19845, 22890, 24032]
    assert [r.observed.cache_read for r in rows] == [8435, 11098, 11785, 12241]
    assert [r.naive_read for r in rows] == [0, 8435, 11098, 11785]


def test_the_permission_stream_replays_a_sub_agents_two_claude_steps():
    records = load(PERMISSION)
    # the main session's only call and the sub-agent's third step never finished: no usage, no request
    assert [usage(r) for r in records] == [(2, 0, 24673, 235), (6, 24673, 2712, 136)]
    assert {(r.provider, r.call.request.model) for r in records} == {("anthropic", "claude-sonnet-4-5")}
    assert {r.call.stream for r in records} == {CHILD}   # named under its parent's session
    rows = replay(records).rows
    # the second reads what the first wrote, 2 over: the rebuilt first prompt caches its 2 uncached tokens
    assert [(r.predicted.cache_read, r.predicted.cache_write_5m) for r in rows] == [(0, 24675), (24675, 2716)]
    assert [r.naive_read for r in rows] == [0, 24673]


@pytest.mark.parametrize("path, requests", [(PLANNING, 4), (PERMISSION, 2)])
def test_prefixsim_replay_reads_each_real_stream(path, requests):
    assert detect(path) == "opencode"
    _, text, per_request = replay_says(path)
    assert f"{requests} requests" in text
    assert "Accuracy against the observed usage" in per_request


def as_jsonl(path, tmp_path, name="events.jsonl"):
    out = tmp_path / name
    out.write_text("".join(json.dumps(e) + "\n" for e in json.loads(path.read_text())))
    return out


def test_a_jsonl_stream_with_a_malformed_line_skips_and_names_it(tmp_path, capsys):
    p = as_jsonl(PERMISSION, tmp_path)
    lines = p.read_text().splitlines(keepends=True)
    assert [json.loads(lines[i])["type"] for i in (4, 6)] == ["message.part.updated"] * 2   # the main prompt's parts
    lines[4] = '{"type": "message.updated", "properties": {"info": {"id": \n'   # cut mid-write
    lines[6] = json.dumps({"type": "message.updated", "properties": {"info": {"role": "user"}}}) + "\n"
    p.write_text("".join(lines))
    assert detect(p) == "opencode"
    with collecting() as found:
        records = load(p)
    assert [usage(r) for r in records] == [(2, 0, 24673, 235), (6, 24673, 2712, 136)]
    named = [str(s) for s in found.skipped]
    assert any(s.startswith(f"{p}:5: skipped: not valid JSON") for s in named), named
    assert any(s.startswith(f"{p}:7: skipped:") and "has no id" in s for s in named), named
    code, out, err = cli_run(["replay", str(p)], capsys)
    assert code == 0 and "2 requests" in out
    assert f"{p.name}:5: skipped: not valid JSON" in err and "Traceback" not in err


def test_sse_text_reads_as_the_array_does(tmp_path):
    p = tmp_path / "events.txt"
    p.write_text(": opencode /event\n\n" + "".join(f"event: message\ndata: {json.dumps(e)}\n\n"
                                                   for e in json.loads(PLANNING.read_text())))
    assert detect(p) == "opencode"
    assert [usage(r) for r in load(p)] == [usage(r) for r in load(PLANNING)]


S = "ses_t"


def message(mid, role, t, **more):
    info = {"id": mid, "sessionID": S, "role": role, "time": {"created": 1_760_000_000_000 + t}}
    if role == "assistant":
        info |= {"modelID": "claude-sonnet-4-5", "providerID": "anthropic",
                 "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}
    return {"type": "message.updated", "properties": {"info": info | more}}


def part(pid, mid, kind, **more):
    return {"type": "message.part.updated",
            "properties": {"part": {"id": pid, "messageID": mid, "sessionID": S, "type": kind} | more}}


def tok(inp, read, write, out=100):
    return {"input": inp, "output": out, "reasoning": 0, "cache": {"read": read, "write": write}}


def stream(tmp_path, events):
    p = tmp_path / "events.json"
    p.write_text(json.dumps(events, indent=2))
    return p


def test_a_later_update_of_a_message_or_part_replaces_the_earlier(tmp_path):
    events = [
        {"type": "server.connected", "properties": {}},
        message("msg_01", "user", 0),
        part("prt_01", "msg_01", "text", text="fix it"),
        message("msg_02", "assistant", 100),
        part("prt_02", "msg_02", "step-start"),
        part("prt_03", "msg_02", "step-finish", tokens=tok(1, 0, 500)),          # streamed...
        part("prt_03", "msg_02", "step-finish", tokens=tok(3, 0, 9000)),         # ...and final
        message("msg_02", "assistant", 100, modelID="claude-haiku-4-5"),         # the message's last update
        message("msg_03", "assistant", 9000),
        part("prt_04", "msg_03", "step-finish", tokens=tok(3, 9003, 200)),
        part("prt_05", "msg_03", "step-finish", tokens=tok(3, 9206, 200)),
        {"type": "message.part.removed", "properties": {"sessionID": S, "messageID": "msg_03", "partID": "prt_05"}},
        message("msg_04", "assistant", 20_000),
        part("prt_06", "msg_04", "step-finish", tokens=tok(5, 0, 7)),
        {"type": "message.removed", "properties": {"sessionID": S, "messageID": "msg_04"}},
        {"type": "session.idle", "properties": {"sessionID": S}},
    ]
    records = load(stream(tmp_path, events))
    assert [(usage(r), r.call.request.model) for r in records] == [
        ((3, 0, 9000, 100), "claude-haiku-4-5"), ((3, 9003, 200, 100), "claude-sonnet-4-5")]


def test_a_session_event_gives_the_parent_and_a_bad_event_is_skipped_and_named(tmp_path):
    child = "ses_u"
    events = [
        {"type": "session.created", "properties": {"info": {"id": S, "time": {"created": 1_760_000_000_000}}}},
        {"type": "session.created", "properties": {"info": {"id": child, "parentID": S,
                                                            "time": {"created": 1_760_000_001_000}}}},
        message("msg_01", "user", 0),
        message("msg_02", "assistant", 100),
        part("prt_01", "msg_02", "step-finish", tokens=tok(3, 0, 9000)),
        42,                                                                  # not an object
        {"type": "message.part.updated", "properties": {"part": {"id": "prt_x", "type": "text"}}},   # no messageID
        {"type": "message.updated", "properties": {"info": message("msg_03", "assistant", 1500)["properties"]["info"]
                                                   | {"sessionID": child}}},
        part("prt_02", "msg_03", "step-finish", tokens=tok(4, 0, 3000)),
    ]
    p = stream(tmp_path, events)
    with collecting() as found:
        records = load(p)
    assert [r.call.stream for r in records] == [S, f"{S}/agent-{child}"]
    named = [str(s) for s in found.skipped]
    assert any(s.startswith(f"{p}:") and "not an event" in s for s in named), named
    assert any("has no messageID" in s for s in named), named


def test_detection_never_confuses_an_event_stream_with_another_format(tmp_path):
    # an export is not an event stream, nor the stream an export
    doc = {"info": {"id": S, "time": {"created": 1}}, "messages": [
        {"info": message("msg_01", "user", 0)["properties"]["info"], "parts": []}]}
    export = tmp_path / "export.json"
    export.write_text(json.dumps(doc))
    assert storage.is_export(export) and not storage.is_events(export)
    assert not storage.is_export(PLANNING) and storage.is_events(PLANNING)
    # every other real file in tests/data keeps its own format
    for other in [data_file("codex").iterdir().__next__(), data_file("gemini-cli", "gemini-cli-pomodoro-timer.json"),
                  data_file("langfuse", "langgraph-js-2025-10-30.trace.json"),
                  data_file("litellm", "standard_logging_payload.json"),
                  data_file("claude-code", "claude-code-stuffs", "chat.json")]:
        assert not storage.is_events(other), other
        assert detect(other) != "opencode"
    # events of another bus ({type, properties} without OpenCode's ses_ ids) are not OpenCode's
    alien = tmp_path / "bus.jsonl"
    alien.write_text(json.dumps({"type": "message.updated", "properties": {"info": {"id": "m1", "sessionID": "s1"}}}) + "\n")
    assert not storage.is_events(alien)
    # and no other reader claims a line of an OpenCode stream
    assert list(_kinds(as_jsonl(PLANNING, tmp_path))) == []


def test_a_file_of_another_format_is_refused_naming_the_event_stream_among_the_layouts(tmp_path, capsys):
    p = tmp_path / "notes.json"
    p.write_text(json.dumps([{"hello": "world"}]))
    code, _, err = cli_run(["replay", str(p), "--source", "opencode"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "not an OpenCode session (an export, an event stream, opencode.db or a storage folder)" in err


def test_replay_help_lists_the_event_stream_under_source():
    res = CliRunner().invoke(cli, ["replay", "--help"])
    line = next(x for x in res.output.splitlines() if x.strip().startswith("opencode:"))
    assert "event stream" in line and "opencode export" in line
