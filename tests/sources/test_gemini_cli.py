"""Gemini CLI chat sessions, built to the structure of google-gemini/gemini-cli's
`ConversationRecord` / `MessageRecord` / `TokensSummary` (chatRecordingService), and the real public
sessions of tests/data/gemini-cli."""
import json
from pathlib import Path

from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.problems import collecting


def gemini(i, t, prompt, cached, output=300, thoughts=200, model="gemini-2.5-pro", tool=True):
    m = {"id": f"g{i}", "timestamp": f"2026-03-01T10:00:{t:02d}.000Z", "type": "gemini", "content": "ok",
         "model": model, "tokens": {"input": prompt, "output": output, "cached": cached, "thoughts": thoughts,
                                    "tool": 0, "total": prompt + output + thoughts}}
    if tool:
        m["toolCalls"] = [{"id": f"c{i}", "name": "read_file", "args": {}, "status": "success",
                           "timestamp": f"2026-03-01T10:00:{t + 1:02d}.000Z"}]
    return m


def user(i, t, text="fix the bug"):
    return {"id": f"u{i}", "timestamp": f"2026-03-01T10:00:{t:02d}.000Z", "type": "user", "content": [{"text": text}]}


META = {"sessionId": "abc", "projectHash": "p1", "startTime": "2026-03-01T10:00:00.000Z",
        "lastUpdated": "2026-03-01T10:01:00.000Z"}


def test_a_session_file_replays_under_geminis_implicit_caching(tmp_path):
    doc = META | {"messages": [user(0, 1), gemini(1, 3, 12000, 0), gemini(2, 8, 12900, 12288),
                               gemini(3, 12, 13500, 12800)]}
    p = tmp_path / "session-2026-03-01T10-00-abc.json"
    p.write_text(json.dumps(doc, indent=2))
    assert detect(p) == "gemini-cli"
    records = load(p)
    assert [r.provider for r in records] == ["gemini"] * 3
    assert records[0].observed.output_tokens == 500   # thoughts are billed as output
    rows = replay(records).rows
    # each request is the previous prompt and its reply (the candidates; thoughts are not sent back)
    prompts = [sum(b.tokens for b in r.call.request.blocks) for r in records]
    assert prompts == [12000, 12900, 13500]
    assert [len(r.call.request.output) and r.call.request.output[0].tokens for r in records] == [300, 300, 300]
    # implicit caching is best effort, a range from nothing read to the prompt and reply (the optimistic
    # end); the printed figure is what traffic shows: a follow-up seconds later reads the previous prompt,
    # not its reply (2.5 Pro: at block boundaries, no unit measured)
    assert [r.predicted.cache_read for r in rows] == [0, 12000, 12900]
    assert [r.predicted_optimistic.cache_read for r in rows] == [0, 12300, 13200]


def test_a_message_whose_counts_are_all_zero_is_no_request(tmp_path):
    # BrianV1981/aim's sessions record a tool call on its own message after the response that asked for
    # it, with every count 0: no API call, so no request (read as a prompt of 0 it made a compression)
    zero = gemini(2, 5, 0, 0, output=0, thoughts=0)
    doc = META | {"messages": [user(0, 1), gemini(1, 3, 12000, 0, tool=False), zero, gemini(3, 8, 12900, 11000)]}
    p = tmp_path / "session-2026-03-01T10-00-abc.json"
    p.write_text(json.dumps(doc))
    records = load(p)
    assert [r.observed.prompt_tokens for r in records] == [12000, 12900]
    assert records[1].call.t - records[0].call.t == 5.0   # from the user turn (1 s) to the tool call's end (6 s)
    assert replay(records).rows[1].predicted.cache_read == 12000


def test_the_jsonl_form_with_a_rewind(tmp_path):
    lines = [META, user(0, 1, "first"), gemini(1, 3, 12000, 0, tool=False), user(2, 10, "second"),
             gemini(3, 12, 14000, 12288, tool=False), {"$rewindTo": "u2"}, user(4, 20, "second, again"),
             gemini(5, 22, 12800, 12288, tool=False)]
    p = tmp_path / "session-x.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert detect(p) == "gemini-cli"
    records = load(p)
    assert [r.call.request.blocks[-1].tokens for r in records][2] == 12800 - 12300   # after the first reply
    assert len(records) == 3


def test_a_malformed_line_is_skipped_and_named_and_the_rest_replays(tmp_path):
    bad = gemini(3, 12, 13500, 12800)
    bad["tokens"]["cached"] = 99999
    lines = [META, user(0, 1), gemini(1, 3, 12000, 0), "{oops", bad, gemini(4, 20, 14000, 12800)]
    p = tmp_path / "session-x.jsonl"
    p.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    with collecting() as found:
        records = load(p, "gemini-cli")
    assert len(records) == 2
    named = [str(s) for s in found.skipped]
    assert any(":4: skipped: not valid JSON" in s for s in named)
    assert any(":5: skipped:" in s and "tokens.cached" in s for s in named)
    res = CliRunner().invoke(cli, ["replay", str(p), "--source", "gemini-cli"])
    assert res.exit_code == 0, res.output


def test_a_real_gemini_cli_session_replays_within_the_documented_range():
    # issue 32: a reader test on a real public sample (yoavf/ai-sessions, tests/data/SOURCES.md)
    path = Path(__file__).resolve().parents[1] / "data" / "gemini-cli" / "gemini-cli-pomodoro-timer.json"
    assert detect(path) == "gemini-cli"
    rows = replay(load(path)).rows
    # 13 requests: its first gemini message records three tool calls with every count 0 (no request)
    assert len(rows) == 13 and {(r.provider, r.model) for r in rows} == {("gemini", "gemini-2.5-pro")}
    reads = [r.observed.cache_read for r in rows]
    assert sum(reads) == 86_702 and reads[:4] == [5_811, 5_784, 7_238, 7_210]
    # best effort (G-CC): a range from nothing read to the kept prefix; each read after the first (which
    # read a cache outside the file) lies within it, and so does the printed figure, what traffic shows:
    # every follow-up here comes within 10 minutes, so it reads the previous prompt
    for prev, r in zip(rows[1:], rows[2:]):
        assert 0 <= r.observed.cache_read <= r.predicted_optimistic.cache_read
        assert r.predicted.cache_read == prev.observed.prompt_tokens <= r.predicted_optimistic.cache_read
