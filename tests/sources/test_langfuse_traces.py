"""Langfuse traces as its public API returns them (`GET /api/public/traces/{id}`: the trace with its
observations, whose `input`, `output` and `metadata` are JSON text): two real ones that Langfuse keeps
in its own repository (tests/data/langfuse, SOURCES.md), and built ones for what they do not show."""
import json
from pathlib import Path

from click.testing import CliRunner
from gateway_fixtures import generation, lines

from prefixsim.cli import cli
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.problems import collecting

DATA = Path(__file__).resolve().parents[1] / "data" / "langfuse"
LANGGRAPH = DATA / "langgraph-js-2025-10-30.trace.json"
AGENTS = DATA / "openai-agents-2025-09-30.trace.json"


def test_a_real_langgraph_trace_replays_its_generations():
    """LangGraph.js through Langfuse's OTel endpoint: two gpt-5-mini calls of one trace, their chat
    messages as JSON text, `output_reasoning` (64) kept apart from `output` (35) and summed to `total`."""
    assert detect(LANGGRAPH) == "langfuse"
    with collecting() as found:
        records = load(LANGGRAPH)
    assert found.skipped == []   # the trace's CHAIN, TOOL and AGENT observations are passed over, not refused
    assert [(r.audit, r.provider, r.call.stream) for r in records] == \
        [(False, "openai", "2c1581dd9cecdafb6ca091b83d7ea99a")] * 2
    assert [(r.observed.input_tokens, r.observed.cache_read, r.observed.output_tokens) for r in records] == \
        [(142, 0, 24), (179, 0, 35 + 64)]
    rows = replay(records).rows
    # both prompts are below OpenAI's 1,024-token minimum: nothing read, as observed
    assert [(r.predicted.cache_read, r.observed.cache_read, r.cause.kind) for r in rows] == \
        [(0, 0, "below_minimum")] * 2
    out = CliRunner().invoke(cli, ["replay", str(LANGGRAPH), "--requests"])
    assert out.exit_code == 0, out.output
    assert "cache_read exactly right  2/2" in out.output
    short = CliRunner().invoke(cli, ["replay", str(LANGGRAPH)]).output   # the default says it in short
    assert "cache_read exactly right 2/2 (100.00%)" in " ".join(short.split())


def test_a_real_openai_agents_trace_replays_its_responses_items():
    """The OpenAI Agents SDK: the second call's input holds the Responses API's `function_call` and
    `function_call_output` items (no role), which are replayed as a Responses request."""
    records = load(AGENTS)
    assert [(r.audit, r.observed.prompt_tokens, r.observed.output_tokens) for r in records] == \
        [(False, 55, 15), (False, 85, 29)]
    assert len(records[1].call.request.blocks) > len(records[0].call.request.blocks)
    assert [r.predicted.cache_read for r in replay(records).rows] == [0, 0]


def _trace(observations, session="sess-1"):
    return {"trace": {"id": "tr1", "projectId": "p1", "name": "agent", "timestamp": "2025-12-02T10:00:00.000Z",
                      "sessionId": session, "input": "\"hi\"", "metadata": "{}"},
            "observations": observations}


def _as_api(o):
    """An observation as the trace endpoint writes it: input and metadata as JSON text."""
    return {**o, "input": json.dumps(o["input"]), "metadata": json.dumps(o.get("metadata") or {})}


def test_a_trace_is_read_with_its_session_and_every_observation_type(tmp_path):
    system = {"role": "system", "content": "Be brief. " * 400}
    u1, u2 = {"role": "user", "content": "hello " * 50}, {"role": "user", "content": "more " * 50}
    first = _as_api({**generation(1, 0, 1500, 0, messages=[system, u1]),
                     "metadata": {"attributes": {"gen_ai.system": "openai"}}})
    second = _as_api(generation(2, 20, 300, 1408, messages=[system, u1, {"role": "assistant", "content": "ok"}, u2]))
    tool = {"id": "t1", "traceId": "tr1", "type": "TOOL", "name": "search", "startTime": "2025-12-02T10:00:10.000Z",
            "input": "{\"q\": 1}", "metadata": "{}"}
    agent = {**tool, "id": "a1", "type": "AGENT"}
    p = tmp_path / "trace.json"
    p.write_text(json.dumps(_trace([second, tool, agent, first]), indent=2))
    assert detect(p) == "langfuse"
    with collecting() as found:
        records = load(p)
    assert found.skipped == []
    assert [(r.request_id, r.audit, r.call.stream) for r in records] == [("obs-1", False, "sess-1"),
                                                                         ("obs-2", False, "sess-1")]
    assert replay(records).summary.prefixsim.exact == 2
    # the same trace on one line of a JSON Lines file
    q = tmp_path / "traces.jsonl"
    q.write_text(lines(_trace([first, second], session=None)))
    assert detect(q) == "langfuse"
    assert [r.call.stream for r in load(q)] == ["tr1", "tr1"]


def test_a_malformed_observation_of_a_trace_is_skipped_and_named_and_the_rest_replays(tmp_path):
    bad = _as_api(generation(2, 10, 100, 1000))
    bad["startTime"] = "yesterday"
    p = tmp_path / "trace.json"
    p.write_text(json.dumps(_trace([_as_api(generation(1, 0, 100, 1000)), bad,
                                    _as_api(generation(3, 20, 100, 1000))]), indent=2))
    with collecting() as found:
        assert [r.request_id for r in load(p)] == ["obs-1", "obs-3"]
    named = [str(s) for s in found.skipped]
    assert len(named) == 1 and "item 0 observation 1" in named[0] and "startTime" in named[0], named
    res = CliRunner().invoke(cli, ["replay", str(p)])
    assert res.exit_code == 0, res.output


def _one(tmp_path, details):
    o = generation(1, 0, 0, 0)
    o["usageDetails"] = details
    p = tmp_path / "obs.jsonl"
    p.write_text(lines(o))
    (rec,) = load(p, "langfuse")
    return rec.observed


def test_reasoning_kept_apart_is_output(tmp_path):
    u = _one(tmp_path, {"input": 2140, "input_cached_tokens": 1024, "output": 96, "output_reasoning_tokens": 310,
                        "total": 3570})
    assert (u.input_tokens, u.cache_read, u.output_tokens) == (2140, 1024, 406)


def test_an_sdks_own_counts_hold_the_cached_and_reasoning_tokens(tmp_path):
    """An export made before Langfuse renamed OpenInference's keys: `total` = prompt + completion,
    so `input` holds the cached tokens and `output` the reasoning."""
    u = _one(tmp_path, {"input": 1190, "prompt_details.cache_read": 1024, "output": 164,
                        "completion_details.reasoning": 64, "total": 1354})
    assert (u.input_tokens, u.cache_read, u.output_tokens) == (166, 1024, 164)


def test_an_input_written_as_json_text_is_the_recorded_prompt(tmp_path):
    o = generation(1, 0, 1500, 0, messages=[{"role": "user", "content": "hello " * 50}])
    p = tmp_path / "obs.jsonl"
    p.write_text(lines(_as_api(o)))
    (rec,) = load(p, "langfuse")
    assert not rec.audit
