"""Issue 32: Amazon Bedrock Converse / ConverseStream recordings replay (sources/bedrock_log.py,
wire/bedrock.py, providers/bedrock.py), on the real cassettes of tests/data/bedrock-api and on small
fixtures built here."""
import json
import struct
import zlib
from pathlib import Path

from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.model import Layer, Usage
from prefixsim.providers.bedrock import bedrock_min_tokens, nova_family
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.bedrock_log import converse_model, observed_usage, response_of
from prefixsim.sources.eventstream import assemble, events
from prefixsim.sources.problems import collecting
from prefixsim.wire.bedrock import render_converse

DATA = Path(__file__).resolve().parents[1] / "data" / "bedrock-api"
CLAUDE = DATA / "test_bedrock_cache_write_and_read.yaml"
NOVA = DATA / "test_bedrock_single_tool_choice_preserves_cache[nova].yaml"
STREAM = DATA / "test_bedrock_model_iter_stream.yaml"
URL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"


def test_a_claude_converse_cassette_writes_then_reads_its_checkpoints():
    assert detect(CLAUDE) == "bedrock"
    recs = load(CLAUDE)
    assert [r.provider for r in recs] == ["bedrock", "bedrock"]
    assert recs[0].call.request.model == "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert recs[0].observed == Usage(input_tokens=2, cache_write_5m=1322, output_tokens=5)
    assert recs[1].observed == Usage(input_tokens=2, cache_read=1322, output_tokens=5)
    # each cachePoint marks the block before it: the last tool, the system text, two user blocks
    marked = [b.path for b in recs[0].call.request.blocks if b.breakpoint]
    assert marked == ["toolConfig.tools[1]", "system[0]", "messages[0].content[2]", "messages[0].content[4]"]
    a, b = replay(recs).rows
    assert a.predicted.cache_read == 0 and a.cause.kind == "cold"
    assert abs(b.predicted.cache_read - 1322) <= 30 and b.cause.kind == ""
    assert "aws/" in replay(recs).summary.price_source   # priced at Bedrock's prices


def test_nova_the_tool_choice_is_ahead_of_the_system_checkpoint():
    recs = load(NOVA)
    assert [r.call.request.model for r in recs] == ["us.amazon.nova-lite-v1:0"] * 4
    rows = replay(recs).rows
    # the second request changed only toolConfig.toolChoice and wrote the system checkpoint again
    assert rows[1].observed.cache_read == 0 and rows[1].predicted.cache_read == 0
    assert rows[1].cause.kind == "prefix_changed" and "tools layer" in rows[1].cause.detail
    # the third, with the first one's tool choice, reads what the first wrote
    assert rows[2].observed.cache_read == 2492 and abs(rows[2].predicted.cache_read - 2492) <= 25
    assert bedrock_min_tokens("us.amazon.nova-lite-v1:0")[0].value == 1000


def test_a_converse_stream_cassette_is_read_as_the_responses_it_streamed():
    recs = load(STREAM)
    assert [r.observed for r in recs] == [Usage(input_tokens=471, output_tokens=91),
                                          Usage(input_tokens=577, output_tokens=18)]
    first = recs[0].call.request
    assert first.model == "us.amazon.nova-micro-v1:0" and not any(b.breakpoint for b in first.blocks)
    assert [r.predicted.cache_read for r in replay(recs).rows] == [0, 0]


def _frame(event: str, payload: dict) -> bytes:
    head = b""
    for k, v in ((":event-type", event), (":content-type", "application/json"), (":message-type", "event")):
        head += bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(head) + len(body) + 4, len(head))
    msg = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + body
    return msg + struct.pack(">I", zlib.crc32(msg))


USAGE = {"inputTokens": 3, "cacheReadInputTokens": 0, "cacheWriteInputTokens": 2100, "outputTokens": 9,
         "cacheDetails": [{"inputTokens": 2100, "ttl": "1h"}]}


def _stream(usage=USAGE) -> bytes:
    return b"".join([
        _frame("messageStart", {"role": "assistant"}),
        _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Par"}}),
        _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "is."}}),
        _frame("contentBlockStop", {"contentBlockIndex": 0}),
        _frame("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "look"}}}),
        _frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"q": "Pa'}}}),
        _frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": 'ris"}'}}}),
        _frame("messageStop", {"stopReason": "tool_use"}),
        _frame("metadata", {"usage": usage, "metrics": {"latencyMs": 100}})])


def test_a_converse_stream_with_cache_usage_and_a_cut_off_one():
    out = assemble(events(_stream()))
    assert out["output"]["message"]["content"] == [{"text": "Paris."},
                                                   {"toolUse": {"toolUseId": "t1", "name": "look", "input": {"q": "Paris"}}}]
    assert out["stopReason"] == "tool_use"
    # the 1h writes of cacheDetails are split from the 5m ones
    assert observed_usage(out["usage"]) == Usage(input_tokens=3, cache_write_1h=2100, output_tokens=9)
    # cut inside the metadata frame: the frames before it, and no usage
    cut = response_of({"string": _stream()[:-10]})
    assert cut["output"]["message"]["content"][0] == {"text": "Paris."} and "usage" not in cut
    # a corrupt frame stops the stream there
    raw = bytearray(_stream())
    raw[20] ^= 0xFF
    assert response_of({"string": bytes(raw)}) is None or "usage" not in response_of({"string": bytes(raw)})


def test_a_converse_stream_log_line_with_parsed_events(tmp_path):
    body = {"system": [{"text": "Be brief. " * 400}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    parsed = [{"messageStart": {"role": "assistant"}}, {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "yo"}}},
              {"metadata": {"usage": USAGE}}]
    p = tmp_path / "stream.jsonl"
    p.write_text(json.dumps({"url": URL.replace("/converse", "/converse-stream"), "request": body, "response": parsed,
                             "timestamp": "2026-11-30T10:00:00Z"}) + "\n")
    assert detect(p) == "bedrock"
    (rec,) = load(p)
    assert rec.observed.cache_write_1h == 2100
    assert rec.call.request.blocks[0].breakpoint == "1h"   # Sonnet 4.5 on Bedrock offers 1h
    (row,) = replay([rec]).rows
    # written at 1h, as observed (the sizes are cl100k counts scaled to the observed total: within 1 %)
    assert row.predicted.cache_write_5m == 0 and abs(row.predicted.cache_write_1h - 2100) <= 21


def test_layers_of_converse_parameters():
    base = {"toolConfig": {"tools": [{"toolSpec": {"name": "t", "inputSchema": {"json": {}}}}],
                           "toolChoice": {"auto": {}}},
            "system": [{"text": "s"}], "messages": [{"role": "user", "content": [{"text": "q"}]}]}
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    a = render_converse(base, model)
    forced = render_converse({**base, "toolConfig": {**base["toolConfig"], "toolChoice": {"any": {}}}}, model)
    thinking = render_converse({**base, "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}}}, model)
    tuned = render_converse({**base, "inferenceConfig": {"temperature": 0.2, "maxTokens": 10}}, model)
    assert [b.layer for b in a.blocks] == [Layer.TOOLS, Layer.SYSTEM, Layer.MESSAGES]
    # Claude: the tool choice and the thinking configuration enter at the messages; sampling changes nothing
    assert forced.layer_params[:2] == a.layer_params[:2] and forced.layer_params[2] != a.layer_params[2]
    assert thinking.layer_params[:2] == a.layer_params[:2] and thinking.layer_params[2] != a.layer_params[2]
    assert tuned.layer_params == a.layer_params and tuned.blocks == a.blocks
    # Nova: the tool choice enters ahead of the tools, and a cachePoint in the tools is no checkpoint
    nova = "us.amazon.nova-pro-v1:0"
    tools = {**base, "toolConfig": {"tools": [*base["toolConfig"]["tools"], {"cachePoint": {"type": "default"}}],
                                    "toolChoice": {"auto": {}}}}
    n = render_converse(tools, nova)
    assert not any(b.breakpoint for b in n.blocks)
    assert render_converse(tools, model).blocks[0].breakpoint == "5m"   # Claude takes it
    assert render_converse({**tools, "toolConfig": {**tools["toolConfig"], "toolChoice": {"any": {}}}}, nova).layer_params[0] \
        != n.layer_params[0]


def test_older_claude_drops_earlier_reasoning_after_a_new_user_turn():
    msgs = [{"role": "user", "content": [{"text": "q1"}]},
            {"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}},
                                              {"text": "a1"}]},
            {"role": "user", "content": [{"text": "q2"}]}]
    old = render_converse({"messages": msgs}, "us.anthropic.claude-3-7-sonnet-20250219-v1:0")
    new = render_converse({"messages": msgs}, "us.anthropic.claude-opus-4-6-v1")
    assert "messages[1].content[0]" not in [b.path for b in old.blocks]
    assert "messages[1].content[0]" in [b.path for b in new.blocks]


def test_model_ids_and_undocumented_models(tmp_path):
    assert converse_model(URL) == "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert converse_model(URL + "-stream?x=1") == "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert converse_model(URL.replace("/converse", "/invoke")) is None
    assert nova_family("us.amazon.nova-micro-v1:0") == "nova-micro" and nova_family("claude-sonnet-4-5") is None
    # a model whose caching Bedrock does not document replays with the stated default, and says so
    p = tmp_path / "llama.jsonl"
    line = {"modelId": "us.meta.llama4-maverick-17b-instruct-v1:0",
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "response": {"usage": {"inputTokens": 9, "outputTokens": 3}}}
    p.write_text(json.dumps(line) + "\n")
    with collecting() as found:
        (rec,) = load(p)
    assert rec.provider == "bedrock" and rec.observed.input_tokens == 9
    assert any("rules undocumented" in n.message for n in found.notes)
    res = CliRunner().invoke(cli, ["replay", str(p)])
    assert res.exit_code == 0 and "rules undocumented" in res.output


def test_a_bad_interaction_is_skipped_and_named_the_rest_replays(tmp_path):
    from ruamel.yaml import YAML

    good = {"request": {"method": "POST", "uri": URL, "body": json.dumps(
        {"system": [{"text": "S " * 1500}, {"cachePoint": {"type": "default"}}],
         "messages": [{"role": "user", "content": [{"text": "q"}]}]})},
        "response": {"body": {"string": json.dumps({"usage": {"inputTokens": 2, "cacheWriteInputTokens": 1500,
                                                              "outputTokens": 1}})}}}
    bad = {"request": {"method": "POST", "uri": URL, "body": json.dumps(
        {"messages": [{"role": "user", "content": [{"text": "q"}, {"cachePoint": {"ttl": "2h"}}]}]})}}
    path = tmp_path / "c.yaml"
    with path.open("w") as fh:
        YAML(typ="safe", pure=True).dump({"interactions": [good, bad, good]}, fh)
    res = CliRunner().invoke(cli, ["replay", str(path), "--requests"])
    assert res.exit_code == 0
    assert "interaction 1: messages[0].content[1].cachePoint.ttl must be one of" in res.output
    assert "2 with observed usage" in res.output
