"""OpenCode sessions, built to the structure anomalyco/opencode writes (`storage/storage.ts` JSON files,
`opencode.db` tables from `storage/json-migration.ts`, `opencode export`; message and part shapes from
`session/message-v2.ts` and `session/processor.ts`): no public storage dump with token usage was found,
so the samples are made here (docs/rules.md#opencode-sessions)."""
import json
import sqlite3

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli, main
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.problems import collecting

T0 = 1_760_000_000_000   # ms, as OpenCode stores times


def user(mid, sid, t, text="fix the failing test"):
    return ({"id": mid, "sessionID": sid, "role": "user", "time": {"created": T0 + t}, "agent": "build",
             "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}},
            [{"id": f"prt_{mid}_0", "messageID": mid, "sessionID": sid, "type": "text", "text": text}])


def tokens(inp, read, write, out=200):
    return {"input": inp, "output": out, "reasoning": 0, "cache": {"read": read, "write": write}}


def assistant(mid, sid, parent, t, steps, provider="anthropic", model="claude-sonnet-4-5", **extra):
    """An assistant message with one step-start .. step-finish run per `(tokens, tool seconds)` in steps."""
    parts, at = [], T0 + t
    for k, (tok, tool) in enumerate(steps):
        parts.append({"id": f"prt_{mid}_{k}a", "type": "step-start", "snapshot": "abc"})
        parts.append({"id": f"prt_{mid}_{k}b", "type": "text", "text": "ok", "time": {"start": at + 1500, "end": at + 2000}})
        if tool:
            parts.append({"id": f"prt_{mid}_{k}c", "type": "tool", "tool": "bash", "callID": f"c{k}",
                          "state": {"status": "completed", "input": {}, "output": "x",
                                    "time": {"start": at + 2000, "end": at + 2000 + tool * 1000}}})
            at += 2000 + tool * 1000
        parts.append({"id": f"prt_{mid}_{k}d", "type": "step-finish", "reason": "tool-calls" if tool else "stop",
                      "tokens": tok, "cost": 0})
    for p in parts:
        p.update(messageID=mid, sessionID=sid)
    info = {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": T0 + t, "completed": at + 3000},
            "parentID": parent, "modelID": model, "providerID": provider, "mode": "build", "agent": "build",
            "path": {"cwd": "/w", "root": "/w"}, "cost": 0, "tokens": steps[-1][0], "finish": "stop"} | extra
    return info, parts


def session(sid, t, parent=None):
    s = {"id": sid, "projectID": "p1", "directory": "/w", "title": "t", "version": "0.15.0",
         "time": {"created": T0 + t, "updated": T0 + t + 60_000}}
    if parent:
        s["parentID"] = parent
    return s


def write_storage(root, sessions):
    """sessions: [(session info, [(message info, parts)])] as storage/session|message|part JSON files."""
    for info, messages in sessions:
        (root / "session" / "p1").mkdir(parents=True, exist_ok=True)
        (root / "session" / "p1" / f"{info['id']}.json").write_text(json.dumps(info, indent=2))
        for m, parts in messages:
            (root / "message" / info["id"]).mkdir(parents=True, exist_ok=True)
            (root / "message" / info["id"] / f"{m['id']}.json").write_text(json.dumps(m, indent=2))
            (root / "part" / m["id"]).mkdir(parents=True, exist_ok=True)
            for p in parts:
                (root / "part" / m["id"] / f"{p['id']}.json").write_text(json.dumps(p, indent=2))


MAIN = (session("ses_a", 0), [
    user("msg_01", "ses_a", 1000),
    # two steps in one message (the tool's result is the second step's new input), then a new turn
    # Anthropic reads what the step before wrote; its 3 uncached tokens lay past its last breakpoint
    assistant("msg_02", "ses_a", "msg_01", 1100, [(tokens(3, 0, 14000), 2), (tokens(3, 14000, 603), 0)]),
    user("msg_03", "ses_a", 20_000, "now the docs"),
    assistant("msg_04", "ses_a", "msg_03", 20_100, [(tokens(3, 14603, 503), 0)]),
])
CHILD = (session("ses_b", 3500, parent="ses_a"), [
    user("msg_11", "ses_b", 3500, "explore the repo"),
    assistant("msg_12", "ses_b", "msg_11", 3600, [(tokens(5, 0, 9000), 0)], agent="explore", mode="explore"),
])


def test_json_storage_replays_each_step_under_anthropic_breakpoints(tmp_path):
    root = tmp_path / "storage"
    write_storage(root, [MAIN, CHILD])
    assert detect(root) == "opencode" and detect(tmp_path) == "opencode"   # the storage folder, the data dir
    records = load(tmp_path)
    assert [r.call.stream for r in records] == ["ses_a", "ses_a/agent-ses_b", "ses_a", "ses_a"]
    assert {r.provider for r in records} == {"anthropic"}
    # tokens.input is the uncached part; the prompt is input + cache read + cache write
    assert [r.observed.prompt_tokens for r in records] == [14003, 9005, 14606, 15109]
    assert [r.observed.cache_read for r in records] == [0, 0, 14000, 14603]
    # the second step starts when its tool finished (2 s after its text began)
    assert records[2].call.t - records[0].call.t > 3.9
    # one session file given alone: that session and its sub-agent's
    alone = root / "session" / "p1" / "ses_a.json"
    assert detect(alone) == "opencode"
    assert [r.request_id for r in load(alone)] == [r.request_id for r in records]
    marks = [sum(1 for b in r.call.request.blocks if b.breakpoint) for r in records]
    assert all(1 <= m <= 4 for m in marks)
    rows = replay(records).rows
    # the second step reads the whole first prompt at the last breakpoint; the new turn reads the rest
    assert [r.predicted.cache_read for r in rows] == [r.observed.cache_read for r in records]


def test_an_openai_session_and_a_routed_claude_take_their_vendors_rules(tmp_path):
    doc = {"info": session("ses_x", 0), "messages": [
        {"info": m, "parts": p} for m, p in [
            user("msg_1", "ses_x", 100),
            assistant("msg_2", "ses_x", "msg_1", 200, [(tokens(9000, 0, 0), 1), (tokens(300, 9088, 0), 0)],
                      provider="openai", model="gpt-5"),
            user("msg_3", "ses_x", 9000),
            assistant("msg_4", "ses_x", "msg_3", 9100, [(tokens(50, 0, 9600), 0)],
                      provider="openrouter", model="anthropic/claude-sonnet-4.5"),
            user("msg_5", "ses_x", 20_000),
            assistant("msg_6", "ses_x", "msg_5", 20_100, [(tokens(50, 0, 9600), 0)],
                      provider="amazon-bedrock", model="us.anthropic.claude-sonnet-4-5-20250929-v1:0")]]}
    p = tmp_path / "ses_x.json"
    # captured with 2>&1, the export opens with the line it writes to stderr
    p.write_text("Exporting session: ses_x\n" + json.dumps(doc, indent=2))
    assert detect(p) == "opencode"
    records = load(p)
    assert [r.provider for r in records] == ["openai", "openai", "anthropic", "bedrock"]
    assert [r.call.request.model for r in records[2:]] == ["claude-sonnet-4-5"] * 2
    assert all(b.breakpoint for r in records[2:] for b in r.call.request.blocks[1:2])
    assert not any(b.breakpoint for r in records[:2] for b in r.call.request.blocks)
    assert [r.call.stream for r in records] == ["main"] * 4
    assert records[1].observed.prompt_tokens == 9388


def test_the_sqlite_database_is_read_read_only(tmp_path):
    db = tmp_path / "opencode.db"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, "
                      "time_created INTEGER, time_updated INTEGER);"
                      "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, "
                      "time_updated INTEGER, data TEXT);"
                      "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, "
                      "time_created INTEGER, time_updated INTEGER, data TEXT);")
    info, messages = MAIN
    con.execute("INSERT INTO session VALUES (?,?,?,?,?)", ("ses_a", "p1", None, T0, T0))
    for m, parts in messages:
        data = {k: v for k, v in m.items() if k not in ("id", "sessionID")}
        con.execute("INSERT INTO message VALUES (?,?,?,?,?)", (m["id"], "ses_a", T0, T0, json.dumps(data)))
        for prt in parts:
            rest = {k: v for k, v in prt.items() if k not in ("id", "messageID", "sessionID")}
            con.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", (prt["id"], m["id"], "ses_a", T0, T0, json.dumps(rest)))
    con.execute("INSERT INTO message VALUES (?,?,?,?,?)", ("msg_99", "ses_a", T0, T0, "{not json"))
    con.commit()
    con.close()
    before = db.read_bytes()
    assert detect(db) == "opencode" and detect(tmp_path) == "opencode"
    with collecting() as found:
        records = load(db)
    assert [r.observed.prompt_tokens for r in records] == [14003, 14606, 15109]
    assert any("message msg_99: its data is not valid JSON" in str(s) for s in found.skipped)
    assert db.read_bytes() == before


def test_each_layout_reads_the_sessions_opencode_version(tmp_path):
    """The version decides whether `tokens.input` holds the cached tokens (docs/rules.md#opencode-sessions):
    an OpenAI session of 0.15.8 stored input 6,000 with 4,000 of it read."""
    from prefixsim.sources.opencode import storage

    info = session("ses_v", 0) | {"version": "0.15.8"}
    messages = [user("msg_1", "ses_v", 100),
                assistant("msg_2", "ses_v", "msg_1", 200, [(tokens(6000, 4000, 0), 0)], provider="openai", model="gpt-5")]
    write_storage(tmp_path / "storage", [(info, messages)])
    export = tmp_path / "ses_v.json"
    export.write_text(json.dumps({"info": info, "messages": [{"info": m, "parts": p} for m, p in messages]}))
    db = tmp_path / "db" / "opencode.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, version TEXT, time_created INTEGER);"
                      "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, data TEXT);"
                      "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);")
    con.execute("INSERT INTO session VALUES (?,?,?,?)", ("ses_v", None, "0.15.8", T0))
    for m, parts in messages:
        con.execute("INSERT INTO message VALUES (?,?,?)", (m["id"], "ses_v", json.dumps(m)))
        for prt in parts:
            con.execute("INSERT INTO part VALUES (?,?,?,?)", (prt["id"], m["id"], "ses_v", json.dumps(prt)))
    con.commit()
    con.close()
    for path in (tmp_path / "storage", export, db):
        assert [s.version for s in storage.load(path)] == ["0.15.8"]
        with collecting() as found:
            [r] = load(path)
        assert (r.observed.input_tokens, r.observed.cache_read, r.observed.prompt_tokens) == (2000, 4000, 6000)
        assert any("read as including the cached tokens: its recorded version 0.15.8" in str(n) for n in found.notes)


def test_a_malformed_file_is_skipped_and_named_and_the_rest_replays(tmp_path):
    root = tmp_path / "storage"
    write_storage(root, [MAIN])
    (root / "message" / "ses_a" / "msg_03.json").write_text("{oops")
    bad = root / "part" / "msg_04" / "prt_msg_04_0d.json"
    step = json.loads(bad.read_text())
    step["tokens"]["cache"]["read"] = -5
    bad.write_text(json.dumps(step))
    with collecting() as found:
        records = load(root, "opencode")
    assert len(records) == 2
    named = [str(s) for s in found.skipped]
    assert any("msg_03.json" in s and "skipped: not valid JSON" in s for s in named)
    assert any("msg_04.json" in s and "tokens.cache.read" in s for s in named)
    res = CliRunner().invoke(cli, ["replay", str(root), "--source", "opencode"])
    assert res.exit_code == 0, res.output
    assert "msg_03.json" in res.output


def test_a_model_without_rules_is_skipped_and_named(tmp_path):
    doc = {"info": session("ses_y", 0), "messages": [{"info": m, "parts": p} for m, p in [
        user("msg_1", "ses_y", 100),
        assistant("msg_2", "ses_y", "msg_1", 200, [(tokens(900, 0, 0), 0)], provider="acme", model="acme-1")]]}
    p = tmp_path / "ses_y.json"
    p.write_text(json.dumps(doc))
    with collecting() as found:
        assert load(p) == []
    assert any("no cache rules for provider 'acme'" in str(s) for s in found.skipped)


def test_a_compaction_starts_a_new_epoch(tmp_path):
    sid = "ses_c"
    compaction = user("msg_05", sid, 30_000, "")
    compaction[1].append({"id": "prt_msg_05_1", "messageID": "msg_05", "sessionID": sid, "type": "compaction",
                          "auto": True})
    messages = [*MAIN[1], compaction,
                assistant("msg_06", sid, "msg_05", 30_100, [(tokens(3, 15106, 0, out=900), 0)], summary=True,
                          mode="compaction", agent="compaction"),
                user("msg_07", sid, 40_000, "continue"),
                assistant("msg_08", sid, "msg_07", 40_100, [(tokens(3, 13999, 1500), 0)])]
    doc = {"info": session(sid, 0), "messages": [{"info": m | {"sessionID": sid}, "parts": p} for m, p in messages]}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    records = load(p)
    assert [r.call.event for r in records] == [None, None, None, None, "compaction"]
    # the summarizing call continues the conversation; the call after it keeps only the static prefix
    assert records[3].call.request.blocks[1].tokens == records[4].call.request.blocks[1].tokens
    assert sum(b.tokens for b in records[4].call.request.blocks) == 15502
    rows = replay(records).rows
    assert rows[3].predicted.cache_read == 15106   # all but the turn's 3 uncached tokens, past its breakpoint
    assert rows[4].predicted.cache_read == 13999   # the static prefix, at the second system message's breakpoint


def test_a_file_of_another_format_is_refused_naming_what_it_looks_like(tmp_path, capsys):
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps({"type": "session_meta", "timestamp": "2026-01-01T00:00:00Z", "payload": {}}) + "\n")
    with pytest.raises(SystemExit) as e:
        main(["replay", str(p), "--source", "opencode"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "s.jsonl" in err and "--source opencode, but the file looks like codex" in err
    assert len(err.strip().splitlines()) == 1


def test_a_forked_sessions_copies_of_its_parents_messages_are_read_once(tmp_path):
    # Session.fork copies the messages up to the fork point under new ids, times and tokens kept
    copies = [(m | {"id": m["id"].replace("msg_", "msg_f"), "sessionID": "ses_f"}, parts) for m, parts in MAIN[1][:2]]
    fork = (session("ses_f", 50_000), [*copies, user("msg_f9", "ses_f", 60_000, "another way"),
                                       assistant("msg_fa", "ses_f", "msg_f9", 60_100, [(tokens(3, 14606, 400), 0)])])
    write_storage(tmp_path, [MAIN, fork])
    records = load(tmp_path)
    assert [r.call.stream for r in records] == ["ses_a", "ses_a", "ses_a", "ses_f"]
    assert records[-1].observed.prompt_tokens == 15009


def test_a_message_whose_later_step_does_not_read_is_skipped_whole(tmp_path):
    root = tmp_path / "storage"
    write_storage(root, [MAIN])
    bad = root / "part" / "msg_02" / "prt_msg_02_1d.json"
    step = json.loads(bad.read_text())
    step["tokens"]["output"] = "many"
    bad.write_text(json.dumps(step))
    with collecting() as found:
        records = load(root)
    assert [r.observed.prompt_tokens for r in records] == [15109]
    assert any("msg_02.json" in str(s) and "tokens.output" in str(s) for s in found.skipped)
