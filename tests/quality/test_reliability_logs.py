"""Reading real traffic: what a log, a folder or a file type can do to a replay, and what it gets.

Stream and request keys never collide (two sessions whose names share a beginning, two files' "main"
streams, two folders' `calls.jsonl`); an OpenAI log replays with OpenAI's (or DeepSeek's) rules and
prices; a projects folder names or replays every file in it; only regular files are read; a VCR
cassette's YAML aliases are capped; an engine trace's bad values are located errors, not crashes.
"""
import datetime as dt
import json
import os
import signal
import socket
import time
from decimal import Decimal
from pathlib import Path

import pytest
from cc_fixtures import Transcript

from prefixsim.cli import main
from prefixsim.core.pricing import PriceBook
from prefixsim.engines.trace import load_trace
from prefixsim.errors import UserError
from prefixsim.replay import WhatIf, replay, to_json
from prefixsim.sources import load, load_many, open_many
from prefixsim.sources.problems import collecting

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MTOK = Decimal(1_000_000)


def _run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


# --- keys -------------------------------------------------------------------------------------

def _two_sessions(root: Path) -> Path:
    """session-a and session-b (same first 8 characters): ten calls each, every call reading the
    whole previous prompt and writing its growth (3,000 + 100k tokens; b 7 more per call)."""
    for name, t0, extra in (("session-a", 0, 0), ("session-b", 20, 7)):
        t = Transcript(session=name)
        size = 0
        for k in range(10):
            t.user(t0 + 30 * k, f"{name} turn {k}")
            grow = 3000 + 100 * k + extra
            t.call(t0 + 30 * k, f"{name}-r{k}", size, grow, model="claude-sonnet-4-5")
            size += grow
        t.write(root / "proj" / f"{name}.jsonl")
    return root / "proj"


def _session_cost(extra: int) -> Decimal:
    """The prompt-side cost of one session from the rule: claude-sonnet-4-5 at $3/MTok input, 5m writes
    1.25x, reads 0.1x (A-PR); each call reads the previous prompt, writes its growth, 1 token uncached."""
    grows = [3000 + 100 * k + extra for k in range(10)]
    reads = [sum(grows[:k]) for k in range(10)]
    return (sum(grows) * Decimal("3.75") + sum(reads) * Decimal("0.30") + 10 * 1 * Decimal(3)) / MTOK


@pytest.mark.parametrize("given", ["folder", "two paths"])
def test_two_sessions_whose_names_share_a_prefix_stay_apart(tmp_path, given):
    proj = _two_sessions(tmp_path)
    recs = load(proj) if given == "folder" else load_many([proj / "session-a.jsonl", proj / "session-b.jsonl"])
    s = replay(recs).summary
    assert (s.prefixsim.exact, s.prefixsim.compared) == (20, 20)   # was 1/20: one stream for both
    assert _session_cost(0) == Decimal("0.173505") and _session_cost(7) == Decimal("0.173862")
    assert s.cost_predicted_usd == s.cost_observed_usd == _session_cost(0) + _session_cost(7)
    assert len(s.streams) == 2


def test_stream_names_are_whole_session_paths_and_shown_short(tmp_path):
    from prefixsim.report.replay import short_streams

    recs = load(_two_sessions(tmp_path))
    assert {r.call.stream for r in recs} == {"session-a/main", "session-b/main"}
    # Shown cut to 8 characters per path part unless that makes two alike.
    assert short_streams(["session-a/main", "session-b/main"]) == {"session-a/main": "session-a/main",
                                                                   "session-b/main": "session-b/main"}
    assert short_streams(["4d5611e5-241a/main", "fe5e1c67-53e7/agent-1"]) == {
        "4d5611e5-241a/main": "4d5611e5/main", "fe5e1c67-53e7/agent-1": "fe5e1c67/agent-1"}


def _api_line(rid, text, model="claude-sonnet-4-5", t=None):
    body = {"model": model, "max_tokens": 10, "messages": [{"role": "user", "content": text}],
            "system": [{"type": "text", "text": "You are terse. " * 200, "cache_control": {"type": "ephemeral"}}]}
    line = {"request": body, "response": {"usage": {"input_tokens": 5, "cache_creation_input_tokens": 0,
                                                    "cache_read_input_tokens": 0, "output_tokens": 1}}}
    if rid:
        line["id"] = rid
    if t is not None:
        line["timestamp"] = t
    return json.dumps(line) + "\n"


def test_logs_without_ids_in_two_folders_are_two_logs(tmp_path):
    # Generated ids name the path, not only the file: `calls.jsonl#0` of two folders are two requests.
    for d in ("mon", "tue"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "calls.jsonl").write_text(_api_line(None, f"{d} 1") + _api_line(None, f"{d} 2"))
    recs = load_many([tmp_path / "mon" / "calls.jsonl", tmp_path / "tue" / "calls.jsonl"])
    assert len(recs) == 4 and len({r.request_id for r in recs}) == 4
    # ... and each file's default stream is its own.
    assert len({r.call.stream for r in recs}) == 2


# --- providers --------------------------------------------------------------------------------

def _rounded_openai(tokens: int) -> int:
    """O-PC: cached tokens from 1,024 in 128-token increments."""
    return 0 if tokens < 1024 else tokens - (tokens - 1024) % 128


def test_openai_chat_log_replays_with_openai_rules_and_prices():
    path = FIXTURES / "openai" / "chat-completions.jsonl"
    recs = load(path)
    assert [r.provider for r in recs] == ["openai"] * 3
    res = replay(recs)   # was: "unknown Anthropic model 'gpt-4o-2024-08-06'", exit 2
    rows = res.rows
    assert [r.provider for r in rows] == ["openai"] * 3
    assert "openai/gpt-4o" in res.summary.price_source
    # Predicted: request k reads the longest prefix cached before it: request k-1's prompt and the
    # reply it generated, which request k sends back as its next message (the cache holds the KV of
    # the generated tokens too), rounded per O-PC. Anchored to the usage: prompt k-1 + completion k-1.
    assert rows[0].predicted.cache_read == 0 and rows[0].cause.kind == "cold"
    for k in (1, 2):
        through_reply = len(recs[k - 1].call.request.blocks) + 1
        shared = sum(b.tokens for b in recs[k].call.request.blocks[:through_reply])
        prev = recs[k - 1].observed
        assert shared == prev.prompt_tokens + prev.output_tokens
        assert rows[k].predicted.cache_read == _rounded_openai(shared) == rows[k].observed.cache_read > 0
        assert rows[k].predicted.cache_write_5m == 0    # gpt-4o writes are free (O-PC)
    # Observed: gpt-4o at $2.50 input, $1.25 cached, $10 output per MTok (genai-prices openai/gpt-4o).
    expected = [(2006 - 0) * Decimal("2.5") + 40 * 10, (2150 - 1920) * Decimal("2.5") + 1920 * Decimal("1.25") + 45 * 10,
                (2300 - 2176) * Decimal("2.5") + 2176 * Decimal("1.25") + 50 * 10]
    assert [r.cost_observed for r in rows] == [x / MTOK for x in expected]
    assert res.summary.cost_observed_usd == Decimal("0.01237")
    doc = to_json(res)
    assert doc["summary"]["variant"]["provider"] == "observed" and doc["requests"][0]["provider"] == "openai"


def test_deepseek_in_an_openai_format_log_is_deepseek(tmp_path):
    p = tmp_path / "ds.jsonl"
    sys_prompt = {"role": "system", "content": "You review code. " * 100}
    lines = []
    for k, (hit, prompt) in enumerate(((0, 700), (640, 760), (640, 760))):
        lines.append({"id": f"ds{k}", "timestamp": f"2026-11-02T09:00:{10 * k:02d}Z",
                      "request": {"model": "deepseek-chat", "messages": [sys_prompt, {"role": "user", "content": f"q{k}"}]},
                      "response": {"usage": {"prompt_tokens": prompt, "completion_tokens": 10,
                                             "prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": prompt - hit}}})
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    recs = load(p)
    assert [r.provider for r in recs] == ["deepseek"] * 3
    assert recs[1].observed.cache_read == 640 and recs[1].observed.input_tokens == 120   # DS: hit + miss
    res = replay(recs)
    # DeepSeek's rules (docs/rules.md#deepseek): A + C cannot read the unit A + B; the common prefix A
    # of the two is persisted and read by the third request, in 64-token units
    assert res.rows[1].predicted.cache_read == 0
    assert res.rows[2].predicted.cache_read % 64 == 0 and res.rows[2].predicted.cache_read > 0
    # logged in November 2026, after deepseek-chat's retirement (2026-07-24): priced as its successor, said so
    assert "deepseek/deepseek-v4-flash" in res.summary.price_source and "deepseek-chat retired" in res.summary.price_source


def test_a_what_if_provider_still_prices_the_observation_at_the_recorded_provider():
    recs = load(FIXTURES / "openai" / "chat-completions.jsonl")
    base, other = replay(recs), replay(recs, WhatIf(provider="deepseek", model="deepseek-chat"))
    assert [r.cost_observed for r in other.rows] == [r.cost_observed for r in base.rows]
    assert {r.provider for r in other.rows} == {"deepseek"}


# --- folders and file types ------------------------------------------------------------------

def test_an_api_log_in_a_projects_folder_is_replayed_not_dropped(tmp_path, capsys):
    proj = tmp_path / "proj"
    Transcript(session="s1").write(proj / "s1.jsonl")   # an empty session keeps the folder a projects folder
    t = Transcript(session="s2")
    t.user(0, "hi")
    t.call(0, "x0", 0, 5000, model="claude-sonnet-4-5")
    t.write(proj / "s2.jsonl")
    (proj / "api.jsonl").write_text(_api_line("a1", "one", t="2026-01-05T10:00:00Z")
                                    + _api_line("a2", "two", t="2026-01-05T10:00:20Z"))
    recs = load(proj)
    assert sorted(r.request_id for r in recs) == ["a1", "a2", "x0"]   # was: x0 only, exit 0
    assert {r.call.stream for r in recs} == {"api.jsonl/main", "s2/main"}
    code, out, err = _run(["replay", str(proj), "--format", "json"], capsys)
    assert code == 0 and len(json.loads(out)["requests"]) == 3


def test_a_gemini_log_in_a_projects_folder_is_replayed_not_dropped(tmp_path, capsys):
    proj = tmp_path / "proj"
    t = Transcript(session="s1")
    t.user(0, "hi")
    t.call(0, "x0", 0, 5000, model="claude-sonnet-4-5")
    t.write(proj / "s1.jsonl")
    (proj / "gemini.jsonl").write_bytes((FIXTURES / "gemini" / "implicit.jsonl").read_bytes())
    recs = load(proj)
    assert sorted(r.request_id for r in recs) == ["r3", "req-1", "req-2", "x0"]
    assert {r.provider for r in recs} == {"anthropic", "gemini"}
    code, out, err = _run(["replay", str(proj), "--format", "json"], capsys)
    assert code == 0 and len(json.loads(out)["requests"]) == 4


@pytest.mark.parametrize("text", ['{"contents": [1]}\n{"model": "gemini-2.5-flash", "contents": 5}\n',
                                  '{"contents": [[1]], "model": "gemini-2.5-flash"}\n'])
def test_a_wholly_bad_gemini_log_is_named_and_exit_2(tmp_path, capsys, text):
    p = tmp_path / "g.jsonl"
    p.write_text(text)
    for args in (["replay", str(p)], ["replay", str(p), "--source", "gemini"]):
        code, out, err = _run(args, capsys)
        assert code == 2 and "Traceback" not in err
        assert err.splitlines()[-1] == f"{p}: no requests found"
        assert all(line.startswith(f"{p}:") or line.startswith("prefixsim: skipped") for line in err.splitlines())


def test_a_trace_in_a_projects_folder_is_named(tmp_path, capsys):
    proj = tmp_path / "proj"
    t = Transcript(session="s1")
    t.user(0, "hi")
    t.call(0, "x0", 0, 5000, model="claude-sonnet-4-5")
    t.write(proj / "s1.jsonl")
    (proj / "trace.jsonl").write_text(json.dumps({"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}) + "\n")
    code, out, err = _run(["replay", str(proj), "--format", "csv"], capsys)
    assert code == 0 and f"{proj / 'trace.jsonl'}: skipped: a mooncake engine trace" in err


def test_entries_named_jsonl_that_are_not_files_are_named(tmp_path, capsys):
    proj = tmp_path / "proj"
    t = Transcript(session="s1")
    t.user(0, "hi")
    t.call(0, "x0", 0, 5000, model="claude-sonnet-4-5")
    t.write(proj / "s1.jsonl")
    (proj / "old.jsonl").mkdir()
    (proj / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    code, out, err = _run(["replay", str(proj), "--format", "csv", "--requests"], capsys)
    assert code == 0 and len(out.splitlines()) == 2   # the header and x0
    assert f"{proj / 'gone.jsonl'}: skipped: a symbolic link to nothing; not read" in err
    assert f"{proj / 'old.jsonl'}: skipped: a folder, not a regular file; not read" in err
    code, out, err = _run(["replay", str(proj), "--format", "csv", "--strict"], capsys)
    assert code == 2


class _Timeout:
    """Fail (instead of hanging the suite) if a read blocks."""

    def __enter__(self):
        signal.signal(signal.SIGALRM, lambda *a: pytest.fail("blocked reading a special file"))
        signal.alarm(10)

    def __exit__(self, *exc):
        signal.alarm(0)


def test_a_fifo_or_a_socket_is_named_not_read(tmp_path, capsys):
    fifo = tmp_path / "calls.jsonl"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.jsonl"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        with _Timeout():
            code, _, err = _run(["replay", str(fifo)], capsys)
            assert code == 2 and err.strip().endswith(f"{fifo}: a FIFO (named pipe), not a regular file")
            code, _, err = _run(["replay", str(sock_path), "--source", "anthropic"], capsys)
            assert code == 2 and f"{sock_path}: a socket, not a regular file" in err
            with pytest.raises(UserError, match="FIFO"):
                load_trace(fifo)
    finally:
        sock.close()


# --- cassettes ------------------------------------------------------------------------------

def _bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    lines += ["interactions:", "- request:", "    uri: https://api.anthropic.com/v1/messages", "    parsed_body:",
              "      model: claude-sonnet-4-5", "      max_tokens: 10",
              "      tools: [{name: Bash, description: d, input_schema: {type: object, enum: " + f"*a{levels}" + "}}]",
              "      messages: [{role: user, content: hi}]", "  response:", "    parsed_body:",
              "      usage: {input_tokens: 5, output_tokens: 1}"]
    return "\n".join(lines) + "\n"


def test_a_cassette_alias_bomb_is_refused_before_it_is_walked(tmp_path, capsys):
    p = tmp_path / "bomb.yaml"
    p.write_text(_bomb(9))   # 10^10 strings once expanded, from about 1 KB
    assert p.stat().st_size < 1500
    start = time.perf_counter()
    code, _, err = _run(["replay", str(p)], capsys)
    assert code == 2 and "YAML aliases expand this document by" in err and "alias bomb" in err
    assert time.perf_counter() - start < 5


@pytest.mark.slow
def test_alias_cap_counts_expansion_not_size():
    from prefixsim.io.yamlsafe import MAX_ALIAS_NODES, check_aliases

    shared = list(range(1000))
    assert check_aliases({"x": [shared] * 900}, "f") is None              # 900K added: under the cap
    with pytest.raises(UserError, match="alias bomb"):
        check_aliases({"x": [shared] * 1100}, "f")                         # 1.1M added
    assert check_aliases({"x": [list(range(1000)) for _ in range(2000)]}, "f") is None   # 2M written, none added
    loop: list = []
    loop.append(loop)
    with pytest.raises(UserError, match="contains it"):
        check_aliases({"x": loop}, "f")
    assert MAX_ALIAS_NODES == 1_000_000


def test_a_cassette_interaction_with_bad_values_is_skipped_and_named(tmp_path):
    good = ("- request:\n    uri: https://api.anthropic.com/v1/messages\n    parsed_body:\n"
            "      model: claude-sonnet-4-5\n      max_tokens: 10\n      messages: [{role: user, content: hi}]\n"
            "  response:\n    parsed_body:\n      usage: {input_tokens: 5, output_tokens: 1}\n")
    bad = good.replace("input_tokens: 5", "input_tokens: 12.7")
    worse = good.replace("model: claude-sonnet-4-5", "model: [1, 2]")
    p = tmp_path / "c.yaml"
    p.write_text("interactions:\n" + good + bad + worse + good.replace("hi}", "again}") + "- 7\n")
    with collecting() as found:
        recs = load(p)
    assert [r.request_id for r in recs] == [f"{p}#0", f"{p}#3"]
    assert [str(x) for x in found.skipped] == [
        f"{p}: skipped: interaction 1: usage field input_tokens is not a whole number of tokens: 12.7",
        f"{p}: skipped: interaction 2: request has no 'model'",
        f"{p}: skipped: interaction 4: is not a mapping"]


# --- engine traces --------------------------------------------------------------------------

@pytest.mark.parametrize("line,msg", [
    ('{"timestamp": 0, "input_length": Infinity, "hash_ids": [1]}', "input_length is not a whole number"),
    ('{"timestamp": 0, "input_length": 12.7, "hash_ids": [1]}', "input_length is not a whole number"),
    ('{"timestamp": 0, "input_length": 5, "hash_ids": [1e400]}', "wrong type or out of range"),
    ('{"timestamp": 0, "input_length": 5, "hash_ids": ' + "[" * 50000 + "]" * 50000 + "}", "nested too deeply"),
])
def test_trace_values_of_any_type_are_located_errors(tmp_path, line, msg, capsys):
    p = tmp_path / "t.jsonl"
    p.write_text('{"timestamp": 0, "input_length": 5, "hash_ids": [1]}\n' + line + "\n")
    with pytest.raises(UserError, match=msg) as e:
        load_trace(p)
    assert (e.value.path, e.value.line) == (str(p), 2)
    code, _, err = _run(["replay", str(p), "--source", "mooncake"], capsys)
    assert code == 2 and err.startswith(f"{p}:2: ")


def test_prices_of_the_fixture_date_are_the_documented_ones():
    # The cost assertions above rely on these rates (genai-prices bundled data at the logs' dates).
    r = PriceBook(when=dt.date(2026, 11, 2)).rates("gpt-4o-2024-08-06", "openai").per_mtok()
    assert (r["input"], r["cache_read"], r["output"]) == (Decimal("2.5"), Decimal("1.25"), Decimal("10"))
    s = PriceBook(when=dt.date(2026, 1, 5)).rates("claude-sonnet-4-5", "anthropic").per_mtok()
    assert (s["input"], s["cache_write_5m"], s["cache_read"]) == (Decimal("3"), Decimal("3.75"), Decimal("0.3"))


def test_open_many_names_streams_per_path_only_when_several(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text(_api_line("r1", "x"))
    assert {h.stream for h in open_many([a]).heads()} == {"main"}
    b = tmp_path / "b.jsonl"
    b.write_text(_api_line("r2", "y"))
    assert {h.stream for h in open_many([a, b]).heads()} == {f"{a.as_posix()}/main", f"{b.as_posix()}/main"}


def test_two_traces_with_one_file_name_keep_their_request_ids_apart(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "trace.jsonl").write_text(
            json.dumps({"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}) + "\n")
    tr = load_trace([tmp_path / "a" / "trace.jsonl", tmp_path / "b" / "trace.jsonl"])
    assert len({r.request_id for r in tr.requests}) == 2 and len({r.stream for r in tr.requests}) == 2
    one = load_trace(tmp_path / "a" / "trace.jsonl")
    assert [r.request_id for r in one.requests] == ["trace.jsonl:1"]   # a lone file keeps its short name


def test_diff_names_bodies_it_cannot_use(tmp_path, capsys):
    good = tmp_path / "a.json"
    good.write_text(json.dumps({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}))
    deep = tmp_path / "deep.json"
    deep.write_text('{"model": "claude-sonnet-4-5", "messages": ' + "[" * 50000 + "]" * 50000 + "}")
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": 5}],
                               "system": {"x": 1}, "tools": 7}))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with _Timeout():
        for other, msg in ((deep, "nested too deeply"), (odd, ""), (fifo, "a FIFO (named pipe), not a regular file")):
            code, _, err = _run(["diff", str(good), str(other)], capsys)
            assert code == 2 and err.startswith(f"{other}: ") and msg in err, err
