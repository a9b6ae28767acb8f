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
from prefixsim.sources.opencode import events, storage
from prefixsim.sources.problems import collecting

PLANNING = data_file("opencode", "opencode-nvim-planning.json")
PERMISSION = data_file("opencode", "opencode-nvim-permission_error.json")
CHILD = "ses_46b499f08ffe3aldWmWZoH6N2m/agent-ses_46b492ebbffel5oIJ1qUl9GKFh"


def usage(r):
    u = r.observed
    return u.input_tokens, u.cache_read, u.cache_write_5m, u.output_tokens


def test_the_planning_stream_replays_its_four_copilot_claude_steps():
    with collecting() as found:
        records = load(PLANNING)
    # the OpenCode that wrote it (before 1.0.62) kept Copilot's reads inside tokens.input; the stream
    # records no version, so its data says so: request 2 read 11,098 after request 1 read 8,435, within
    # request 1's input 11,410 (an uncached input would have left 19,845 cached). The uncached part is
    # input - cache.read, the prompt the stored input itself
    assert [usage(r) for r in records] == [(2975, 8435, 0, 254), (694, 11098, 0, 115),
                                           (462, 11785, 0, 172), (364, 12241, 0, 95)]
    assert [r.observed.prompt_tokens for r in records] == [11410, 11792, 12247, 12605]
    [note] = [str(n) for n in found.notes]
    assert "non-Anthropic tokens.input read as including the cached tokens: no recorded version" in note
    assert "request 2 read 11,098 after request 1 read 8,435" in note and "19,845" in note
    # github-copilot is no provider with rules of its own: the Claude model's vendor's, Anthropic's
    assert {(r.provider, r.call.request.model) for r in records} == {("anthropic", "claude-sonnet-4")}
    assert {r.call.stream for r in records} == {"main"}
    rows = replay(records).rows
    # each read predicted at the previous prompt's end: 312, 7 and 6 tokens over what was read (the
    # first read a request outside the recording left, which neither the replay nor naive can know)
    assert [r.predicted.cache_read for r in rows] == [0, 11410, 11792, 12247]
    assert [r.observed.cache_read for r in rows] == [8435, 11098, 11785, 12241]
    assert [r.naive_read for r in rows] == [0, 8435, 11098, 11785]
    predicted = sum(abs(r.predicted.cache_read - r.observed.cache_read) for r in rows)
    naive = sum(abs(r.naive_read - r.observed.cache_read) for r in rows)
    read = sum(r.observed.cache_read for r in rows)
    assert (round(predicted / read, 4), round(naive / read, 4)) == (0.2011, 0.281)   # was 0.9201 against 0.281


def test_the_permission_stream_replays_a_sub_agents_two_claude_steps():
    # the main session's only call and the sub-agent's third step never finished: no usage, no request
    with collecting() as found:
        records = load(PERMISSION)
    assert [usage(r) for r in records] == [(2, 0, 24673, 235), (6, 24673, 2712, 136)]
    # its sessions record OpenCode 1.0.220, which stored Anthropic's input without the cached tokens
    assert [str(n).split(": ", 1)[1] for n in found.notes] == [
        "session ses_46b492ebbffel5oIJ1qUl9GKFh: Anthropic/Bedrock tokens.input read as excluding the cached "
        "tokens: its recorded version 1.0.220 stores the input without them"]
    assert {(r.provider, r.call.request.model) for r in records} == {("anthropic", "claude-sonnet-4-5")}
    assert {r.call.stream for r in records} == {CHILD}   # named under its parent's session
    rows = replay(records).rows
    # the second reads what the first wrote: the first prompt's 2 uncached tokens lay past its last breakpoint
    assert [(r.predicted.cache_read, r.predicted.cache_write_5m) for r in rows] == [(0, 24673), (24673, 2712)]
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
    assert storage.is_export(export) and not events.is_events(export)
    assert not storage.is_export(PLANNING) and events.is_events(PLANNING)
    # every other real file in tests/data keeps its own format
    for other in [data_file("codex").iterdir().__next__(), data_file("gemini-cli", "gemini-cli-pomodoro-timer.json"),
                  data_file("langfuse", "langgraph-js-2025-10-30.trace.json"),
                  data_file("litellm", "standard_logging_payload.json"),
                  data_file("claude-code", "claude-code-stuffs", "chat.json")]:
        assert not events.is_events(other), other
        assert detect(other) != "opencode"
    # events of another bus ({type, properties} without OpenCode's ses_ ids) are not OpenCode's
    alien = tmp_path / "bus.jsonl"
    alien.write_text(json.dumps({"type": "message.updated", "properties": {"info": {"id": "m1", "sessionID": "s1"}}}) + "\n")
    assert not events.is_events(alien)
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
    assert "event stream" in line and "export" in line


def versioned(tmp_path, steps, version=None, provider="openai", model="gpt-5"):
    """A stream of one session (recording `version` where given) whose assistant message runs `steps`
    (tokens objects), one request each."""
    events = [] if version is None else [
        {"type": "session.updated", "properties": {"info": {"id": S, "version": version,
                                                            "time": {"created": 1_760_000_000_000}}}}]
    events += [message("msg_01", "user", 0), part("prt_00", "msg_01", "text", text="go"),
               message("msg_02", "assistant", 100, providerID=provider, modelID=model)]
    for k, t in enumerate(steps):
        events += [part(f"prt_{k}a", "msg_02", "step-start"), part(f"prt_{k}b", "msg_02", "step-finish", tokens=t)]
    with collecting() as found:
        records = load(stream(tmp_path, events))
    return [(r.observed.input_tokens, r.observed.cache_read, r.observed.prompt_tokens) for r in records], \
        [str(n).split(f"session {S}: ", 1)[1] for n in found.notes]


#: One cached request of 6,000 tokens stored as input 6,000 with 4,000 read: inclusive (prompt 6,000) or
#: exclusive (prompt 10,000); the data alone cannot tell which.
ONE = [tok(6000, 4000, 0)]


@pytest.mark.parametrize("version, inclusive", [("0.15.8", True), ("1.0.61", True), ("1.0.62", False),
                                                ("1.3.4", False), (None, False), ("0.0.0-dev-202510", False)])
def test_the_recorded_version_says_whether_a_non_anthropic_input_holds_its_reads(tmp_path, version, inclusive):
    rows, [note] = versioned(tmp_path, ONE, version)
    assert rows == ([(2000, 4000, 6000)] if inclusive else [(6000, 4000, 10000)])
    if _release_of(version):
        assert note.startswith(f"non-Anthropic tokens.input read as {'including' if inclusive else 'excluding'} "
                               f"the cached tokens: its recorded version {version} ")
    else:   # undecided: the current meaning, said so
        assert note == ("non-Anthropic tokens.input read as excluding the cached tokens: no recorded version and "
                        "nothing in the data decides: read as OpenCode stores it since 1.0.62 (1.3.6 for Anthropic "
                        "and Bedrock)")


def _release_of(version):
    return version is not None and not version.startswith("0.0.0")


@pytest.mark.parametrize("version, inclusive", [("1.0.61", False), ("1.3.3", False), ("1.3.4", True),
                                                ("1.3.5", True), ("1.3.6", False)])
def test_anthropic_and_bedrock_input_held_the_cache_only_in_1_3_4_and_1_3_5(tmp_path, version, inclusive):
    # AI SDK v6 (c33d9996, from 1.3.4) made their input inclusive; 72c77d0e (1.3.6) subtracts it again
    steps = [tok(9001, 0, 9000), tok(9204, 9000, 200)]   # as 1.3.4 stored them: 1 and 4 uncached
    for provider in ("anthropic", "amazon-bedrock"):
        rows, [note] = versioned(tmp_path, steps, version, provider=provider,
                                 model="claude-sonnet-4-5" if provider == "anthropic" else
                                 "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
        assert rows == ([(1, 0, 9001), (4, 9000, 9204)] if inclusive else [(9001, 0, 18001), (9204, 9000, 18404)])
        assert note.startswith(f"Anthropic/Bedrock tokens.input read as {'including' if inclusive else 'excluding'}")


def test_without_a_version_the_data_decides(tmp_path):
    # inclusive shown: each input holds its reads, and request 2 read within request 1's input where an
    # uncached input would have left input + read cached
    rows, [note] = versioned(tmp_path, [tok(10_000, 6000, 0), tok(10_500, 9990, 0)])
    assert rows == [(4000, 6000, 10_000), (510, 9990, 10_500)]
    assert note.startswith("non-Anthropic tokens.input read as including the cached tokens: no recorded version; "
                           "each input holds its reads and writes, and request 2 read 9,990 after request 1 read 6,000")
    # exclusive proven: an input below its own reads cannot hold them
    rows, [note] = versioned(tmp_path, [tok(10_000, 0, 0), tok(500, 9990, 0)])
    assert rows == [(10_000, 0, 10_000), (500, 9990, 10_490)]
    assert note.endswith("no recorded version; request 2's input 500 is below its cache read and write 9,990")
    # exclusive proven: a read past the previous request's whole input
    rows, [note] = versioned(tmp_path, [tok(8000, 6000, 0), tok(12_000, 10_000, 0)])
    assert rows == [(8000, 6000, 14_000), (12_000, 10_000, 22_000)]
    assert note.endswith("no recorded version; request 2 read 10,000, more than request 1's whole input 8,000")
    # Anthropic's data decides likewise: 1.3.4's inclusive input, without its session's version
    rows, [note] = versioned(tmp_path, [tok(9001, 0, 9000), tok(9204, 9000, 200), tok(9410, 9200, 200)],
                             provider="anthropic", model="claude-sonnet-4-5")
    assert rows == [(1, 0, 9001), (4, 9000, 9204), (10, 9200, 9410)]
    assert note.startswith("Anthropic/Bedrock tokens.input read as including the cached tokens: no recorded version")


def test_a_proof_in_the_data_outweighs_the_version(tmp_path):
    # created by 0.15.8 (inclusive), but an input below its reads: a later OpenCode continued the session
    rows, [note] = versioned(tmp_path, [tok(10_000, 0, 0), tok(300, 10_000, 0)], "0.15.8")
    assert rows == [(10_000, 0, 10_000), (300, 10_000, 10_300)]
    assert note == ("non-Anthropic tokens.input read as excluding the cached tokens: its recorded version 0.15.8 "
                    "stored this provider's input with the cached tokens inside (before 1.0.62), but request 2's "
                    "input 300 is below its cache read and write 10,000 (a later version continued the session?)")


def test_a_session_that_never_cached_needs_no_decision(tmp_path):
    rows, notes = versioned(tmp_path, [tok(900, 0, 0), tok(1200, 0, 0)], "0.15.8")
    assert rows == [(900, 0, 900), (1200, 0, 1200)] and notes == []
