"""OpenTelemetry OTLP JSON exports: GenAI spans (OpenLLMetry, OpenInference, the semantic
conventions' `gen_ai.input.messages`) and Claude Code's `claude_code.api_request` events. Most
exports are built to the documented structure (tests/otel_fixtures.py); one is real: agentevals'
recording of Claude Code under kagent (tests/data/otel/, kept gzip-compressed, see SOURCES.md)."""
import gzip
import json

from click.testing import CliRunner
from conftest import DATA
from otel_fixtures import T0, api_request, kv, lines, logs, openllmetry, span, traces

from prefixsim.cli import cli
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.problems import collecting

SYSTEM = {"role": "system", "content": "You are terse. " * 300}
U1 = {"role": "user", "content": "hello " * 50}
A1 = {"role": "assistant", "content": "hi"}
U2 = {"role": "user", "content": "more " * 50}


def test_usage_only_spans_are_audited_by_stream(tmp_path):
    p = tmp_path / "trace.json"
    agent = span(9, {"gen_ai.operation.name": "invoke_agent"})   # no model, no tokens: not a call
    p.write_text(json.dumps(traces([openllmetry(1, 0, 5000, 0, 4990), agent,
                                    openllmetry(2, 30, 5300, 4990, 300)]), indent=2))
    assert detect(p) == "otel"
    records = load(p)
    assert [r.audit for r in records] == [True, True]
    # input_tokens counts the cached tokens (the conventions' rule): uncached = 5300 - 4990 - 300
    assert (records[1].observed.input_tokens, records[1].observed.cache_read, records[1].observed.cache_creation) \
        == (10, 4990, 300)
    assert {r.call.stream for r in records} == {"a" * 32}   # no session: the trace is the stream
    res = replay(records)
    assert res.summary.audited == 2 and res.summary.prefixsim.compared == 0
    # the causes an audit can tell from usage and timing alone (replay/audit_causes.py): the first is
    # the stream's cold start, the second read everything the first kept
    assert [r.cause.kind for r in res.rows] == ["cold", ""]
    out = CliRunner().invoke(cli, ["replay", str(p)])
    assert out.exit_code == 0, out.output
    assert "The input records usage only, no prompts" in out.output
    assert "Observed hit rate by stream (audit)" in out.output and "48.45%" in out.output
    doc = json.loads(CliRunner().invoke(cli, ["replay", str(p), "--format", "json"]).output)
    assert doc["requests"][0]["predicted"] is None and doc["requests"][0]["audit"] is True
    assert doc["summary"]["audited_requests"] == 2 and doc["summary"]["cost_predicted_usd"] is None
    assert doc["summary"]["cost_observed_usd"] > 0


def test_spans_with_recorded_prompts_replay_under_the_providers_rules(tmp_path):
    p = tmp_path / "trace.jsonl"   # the collector's file exporter: one export request per line
    p.write_text(lines(traces([openllmetry(1, 0, 5000, 0, 4990, messages=[SYSTEM, U1], session="s1")]),
                       traces([openllmetry(2, 30, 5300, 4990, 300, messages=[SYSTEM, U1, A1, U2], session="s1")])))
    assert detect(p) == "otel"
    records = load(p)
    assert [r.audit for r in records] == [False, False]
    assert [r.call.stream for r in records] == ["s1", "s1"]
    res = replay(records)
    assert [r.predicted.cache_read for r in res.rows] == [0, 4990]
    assert res.summary.prefixsim.exact == 2


def test_openinference_spans_replay_as_openai(tmp_path):
    def oi(i, seconds, prompt, read, msgs):
        a = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-2024-08-06", "llm.provider": "openai",
             "llm.token_count.prompt": prompt, "llm.token_count.completion": 20,
             "llm.token_count.prompt_details.cache_read": read, "session.id": "chat-7"}
        for n, m in enumerate(msgs):
            a[f"llm.input_messages.{n}.message.role"] = m["role"]
            a[f"llm.input_messages.{n}.message.content"] = m["content"]
        return span(i, a, seconds)

    p = tmp_path / "oi.json"
    p.write_text(json.dumps(traces([oi(1, 0, 1400, 0, [SYSTEM, U1]), oi(2, 20, 1500, 1408, [SYSTEM, U1, A1, U2])])))
    records = load(p)
    assert [(r.provider, r.audit, r.call.stream) for r in records] == [("openai", False, "chat-7")] * 2
    assert records[1].observed.cache_read == 1408 and records[1].observed.input_tokens == 92


def test_the_conventions_input_messages_json_is_a_recorded_prompt(tmp_path):
    msgs = [{"role": "user", "parts": [{"type": "text", "content": "hello " * 50}]}]
    a = {"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-20250514",
         "gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": 10,
         "gen_ai.usage.cache_read.input_tokens": 0, "gen_ai.usage.cache_creation.input_tokens": 1190,
         "gen_ai.input.messages": json.dumps(msgs), "gen_ai.system_instructions": "Be brief. " * 100}
    p = tmp_path / "semconv.json"
    p.write_text(json.dumps(traces([span(1, a)])))
    (rec,) = load(p)
    assert not rec.audit
    assert rec.observed.cache_creation == 1190 and rec.call.request.auto_cache


def test_claude_code_api_request_events_are_audited_per_session(tmp_path):
    p = tmp_path / "claude-code-logs.jsonl"
    other = {"timeUnixNano": str(T0), "body": {"stringValue": "claude_code.user_prompt"},
             "attributes": [kv("event.name", "user_prompt"), kv("session.id", "sess-1")]}
    p.write_text(lines(logs([other, api_request("sess-1", 0, 10, 0, 20000, seq=1),
                             api_request("sess-1", 20, 12, 20000, 500, seq=2)]),
                       logs([api_request("sess-2", 40, 8, 18000, 900, seq=1)])))
    assert detect(p) == "otel"
    records = load(p)
    assert [(r.call.stream, r.audit) for r in records] == [("sess-1", True), ("sess-1", True), ("sess-2", True)]
    # Claude Code's input_tokens is Anthropic's: the cached tokens are not in it
    assert (records[1].observed.input_tokens, records[1].observed.cache_read) == (12, 20000)
    out = CliRunner().invoke(cli, ["replay", str(p), "--source", "otel"])
    assert out.exit_code == 0, out.output
    assert "sess-1         2  40,522  20,000   20,500      49.36%" in out.output


def test_a_malformed_line_is_skipped_and_named_and_the_rest_replays(tmp_path):
    bad = openllmetry(2, 10, 100, 5000, 0)   # fewer input tokens than cached, by either reading
    bad["attributes"].append(kv("gen_ai.usage.output_tokens", "lots"))
    text = lines(traces([openllmetry(1, 0, 5000, 0, 4990)]), traces([bad])) + "{oops\n" + \
        lines(traces([openllmetry(3, 30, 5300, 4990, 300)]))
    p = tmp_path / "trace.jsonl"
    p.write_text(text)
    with collecting() as found:
        records = load(p, "otel")
    assert len(records) == 2
    named = [str(s) for s in found.skipped]
    assert any(":3: skipped: not valid JSON" in s for s in named), named
    assert any(":2: skipped: resourceSpans[0].scopeSpans[0].spans[0]" in s for s in named), named
    res = CliRunner().invoke(cli, ["replay", str(p)])
    assert res.exit_code == 0, res.output


def test_detection_never_names_the_wrong_format(tmp_path):
    """A transcript that talks about OTLP stays a transcript; an export in a projects folder is
    replayed as the export it is, beside the transcripts."""
    talk = {"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2025-12-02T10:00:00Z",
            "message": {"role": "user", "content": '{"resourceSpans": [], "resourceLogs": []}'}}
    t = tmp_path / "session.jsonl"
    t.write_text(json.dumps(talk) + "\n")
    assert detect(t) == "claude-code"
    folder = tmp_path / "projects"
    folder.mkdir()
    (folder / "otel-export.jsonl").write_text(lines(logs([api_request("sess-1", 0, 10, 0, 20000)])))
    records = load(folder)
    assert [(r.call.stream.rpartition("/")[2], r.audit) for r in records] == [("sess-1", True)]


def test_a_gemini_model_on_vertex_ai_keeps_geminis_rules(tmp_path):
    """`gcp.vertex_ai` serves Gemini and Claude: the platform names Claude's Vertex rules only for a
    Claude model (a real Langfuse export of a C# agent on gemini-2.5-flash named it so)."""
    def call(i, model):
        return span(i, {"gen_ai.provider.name": "gcp.vertex_ai", "gen_ai.request.model": model,
                        "gen_ai.usage.input_tokens": 3004, "gen_ai.usage.output_tokens": 167}, i * 10)
    p = tmp_path / "trace.json"
    p.write_text(json.dumps(traces([call(1, "gemini-2.5-flash"), call(2, "claude-sonnet-4-5@20250929")])))
    assert [r.provider for r in load(p)] == ["gemini", "vertex"]


def test_agent_and_tool_spans_are_never_calls_whatever_model_they_name(tmp_path):
    """A collector may copy the agent's model onto every span (kagent does for Claude Code's tool and
    interaction spans): an agent or tool operation is no call, even with messages or summed counts,
    and a span that names a model but records neither usage nor a prompt is noted, not read."""
    model = {"gen_ai.request.model": "claude-sonnet-4-20250514", "gen_ai.provider.name": "anthropic"}
    agent = span(7, {**model, "gen_ai.operation.name": "invoke_agent", "gen_ai.usage.input_tokens": 10290,
                     "gen_ai.usage.output_tokens": 200, "gen_ai.input.messages": json.dumps([U1])})
    tool = span(8, {**model, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Bash"})
    step = span(9, {**model, "span.type": "tool.blocked_on_user"})
    p = tmp_path / "trace.json"
    p.write_text(json.dumps(traces([agent, openllmetry(1, 0, 5000, 0, 4990), tool, step, dict(step, spanId="f" * 16),
                                    openllmetry(2, 30, 5300, 4990, 300)])))
    with collecting() as found:
        records = load(p)
    assert [r.observed.cache_read for r in records] == [0, 4990]
    assert [str(n) for n in found.notes] == [f"{p}:1: 2 spans name a model but record neither usage nor a prompt "
                                             "(tool or agent steps): not read as calls"]


#: agentevals' kagent v1.0.0-alpha9 recording: Claude Code 2.1.285 on claude-haiku-4-5, two user
#: turns, one OTLP JSON export on one line, gzip-compressed as kept here (the public file's bytes).
KAGENT = DATA / "otel" / "claude_recipe_2turn.json.gz"
#: Counted from the file's `claude_code.llm_request` spans (their `cache_read_tokens` /
#: `cache_creation_tokens`, which the recipe copied to the GenAI keys), in start-time order: each
#: call reads what the previous one read and wrote.
KAGENT_CALLS = [(0, 23030), (23030, 584), (23614, 350), (23964, 378), (24342, 724), (25066, 976),
                (26042, 1274), (27316, 729), (28045, 354)]
KAGENT_SESSION = "aa3151c4-ac82-4029-b7d1-a75ed64ecd62"


def test_a_real_kagent_export_of_claude_code_is_audited_call_by_call():
    """193 spans: 9 model calls; kagent copies the agent's model onto the 30 tool spans and 2
    interaction spans of Claude Code, and its 2 `invoke_agent` spans carry the user's messages:
    none of those is a call (22 of them, with no usage and no prompt, are noted)."""
    assert detect(KAGENT) == "otel"   # compressed, on one line: told from its bytes
    with collecting() as found:
        records = load(KAGENT)
    assert [(r.observed.cache_read, r.observed.cache_creation) for r in records] == KAGENT_CALLS
    assert sum(r.observed.cache_read for r in records) == 201_419
    assert sum(r.observed.cache_creation for r in records) == 28_399
    assert sum(r.observed.input_tokens for r in records) == 80   # uncached (the first: 23,040 - 0 - 23,030)
    assert {r.call.request.model for r in records} == {"claude-haiku-4-5"}
    assert {r.call.stream for r in records} == {KAGENT_SESSION}
    assert {(r.provider, r.audit) for r in records} == {("anthropic", True)}
    assert [str(n) for n in found.notes] == [f"{KAGENT}:1: 22 spans name a model but record neither usage nor a "
                                             "prompt (tool or agent steps): not read as calls"]
    assert not found.skipped
    for args in ([], ["--source", "otel"]):
        out = CliRunner().invoke(cli, ["replay", str(KAGENT), *args])
        assert out.exit_code == 0, out.output
        assert out.stdout.startswith("9 requests, 1 session, 1 project, 1 model, 2026-10-08 UTC")
        assert "aa3151c4         9  229,898  201,419   28,399      87.61%" in out.output
    doc = json.loads(CliRunner().invoke(cli, ["replay", str(KAGENT), "--format", "json"]).stdout)
    assert doc["summary"]["requests"] == doc["summary"]["audited_requests"] == 9
    assert [(r["observed"]["cache_read_input_tokens"], r["observed"]["cache_creation_input_tokens"])
            for r in doc["requests"]] == KAGENT_CALLS


def test_a_cut_and_a_broken_line_after_the_real_export_are_named_and_it_still_reads(tmp_path):
    """The collector's file exporter writes one export per line: a line that is no JSON and a last
    line cut mid-write are skipped and named; the whole export before them reads as before."""
    real = gzip.decompress(KAGENT.read_bytes())
    p = tmp_path / "kagent.jsonl"
    p.write_bytes(real + b"{oops\n" + real[: len(real) // 2])
    with collecting() as found:
        records = load(p, "otel")
    assert [(r.observed.cache_read, r.observed.cache_creation) for r in records] == KAGENT_CALLS
    named = [str(s) for s in found.skipped]
    assert len(named) == 2, named
    assert ":2: skipped: not valid JSON" in named[0] and ":3: skipped: truncated last line" in named[1], named
    out = CliRunner().invoke(cli, ["replay", str(p)])
    assert out.exit_code == 0, out.output


def test_claude_codes_own_llm_request_spans_are_read_without_a_collector_recipe(tmp_path):
    """Claude Code's tracing gives each API call a `claude_code.llm_request` span with Anthropic's
    counts (uncached `input_tokens`, `cache_read_tokens`, `cache_creation_tokens`) and no GenAI usage
    key: the real export with the recipe's keys taken off its Claude Code spans gives the same calls."""
    doc = json.loads(gzip.decompress(KAGENT.read_bytes()))
    recipe = ("gen_ai.usage.", "gen_ai.operation.name", "gen_ai.response.model", "gen_ai.tool.name")
    for res in doc["resourceSpans"]:
        for scope in res["scopeSpans"]:
            for s in scope["spans"]:
                if s["name"].startswith("claude_code."):
                    s["attributes"] = [kv for kv in s["attributes"] if not kv["key"].startswith(recipe)]
    p = tmp_path / "native.json"
    p.write_text(json.dumps(doc))
    with collecting() as found:
        records = load(p)
    assert [(r.observed.cache_read, r.observed.cache_creation) for r in records] == KAGENT_CALLS
    assert sum(r.observed.input_tokens for r in records) == 80
    assert {(r.call.stream, r.provider, r.request_id.startswith("req_011Cfpd")) for r in records} == \
        {(KAGENT_SESSION, "anthropic", True)}
    assert [str(n) for n in found.notes] == [f"{p}:1: 32 spans name a model but record neither usage nor a "
                                             "prompt (tool or agent steps): not read as calls"]
    # Claude Code alone names the model in `model` only: its span is still a call
    bare = span(1, {"model": "claude-haiku-4-5", "input_tokens": "8", "output_tokens": "119",
                    "cache_read_tokens": "23964", "cache_creation_tokens": "378", "request_id": "req_1",
                    "session.id": "s1"})
    bare["name"] = "claude_code.llm_request"
    q = tmp_path / "bare.json"
    q.write_text(json.dumps(traces([bare, span(2, {"model": "claude-haiku-4-5", "input_tokens": "8"})])))
    (rec,) = load(q)
    assert (rec.request_id, rec.call.stream, rec.provider, rec.call.request.model) == \
        ("req_1", "s1", "anthropic", "claude-haiku-4-5")
    assert (rec.observed.input_tokens, rec.observed.cache_read, rec.observed.cache_creation) == (8, 23964, 378)
