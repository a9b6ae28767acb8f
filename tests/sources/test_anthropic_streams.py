"""Streamed (SSE) Messages responses in API logs and cassettes: the usage of `message_start`, updated
by each `message_delta` (cumulative counts), and the content built from the block deltas, read the
same as the response object would be."""
import json

from prefixsim.model import Usage
from prefixsim.sources import load
from prefixsim.sources.cassette import decode_body

SYSTEM = [{"type": "text", "text": "You answer in one word. " * 300, "cache_control": {"type": "ephemeral"}}]
BODY = {"model": "claude-sonnet-4-5", "max_tokens": 200, "system": SYSTEM,
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        "messages": [{"role": "user", "content": "What is the weather in Paris today?"}]}
RESULT = [{"type": "web_search_result", "url": "https://example.org", "title": "Paris weather",
           "encrypted_content": "sunny and mild " * 150}]
CONTENT = [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "Paris weather"}},
           {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": RESULT},
           {"type": "text", "text": "Sunny."}]


def _sse(start_usage, delta_usages):
    """The event stream of a response with CONTENT, as the Messages API sends it."""
    events = [{"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                    "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
                                                    "usage": start_usage}},
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"query": "Par'}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": 'is weather"}'}},
              {"type": "content_block_stop", "index": 0},
              {"type": "content_block_start", "index": 1, "content_block": CONTENT[1]},
              {"type": "content_block_stop", "index": 1},
              {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
              {"type": "ping"},
              {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Sun"}},
              {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "ny."}},
              {"type": "content_block_stop", "index": 2}]
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": u}
               for u in delta_usages]
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


START = {"input_tokens": 12, "cache_creation_input_tokens": 1500, "cache_read_input_tokens": 0, "output_tokens": 1}
# cumulative: the second delta holds the totals of both iterations (server tools), not an increment
DELTAS = [{"output_tokens": 20},
          {"input_tokens": 24, "cache_creation_input_tokens": 2900, "cache_read_input_tokens": 1500, "output_tokens": 40}]


def test_a_stream_is_the_message_it_streamed():
    msg = decode_body(_sse(START, DELTAS))
    assert msg["content"] == CONTENT and msg["stop_reason"] == "end_turn"
    assert msg["usage"] == {"input_tokens": 24, "cache_creation_input_tokens": 2900, "cache_read_input_tokens": 1500,
                            "output_tokens": 40}


def test_a_logged_stream_reads_as_the_response_object(tmp_path):
    whole = {"content": CONTENT, "usage": DELTAS[-1]}
    a, b = tmp_path / "object.jsonl", tmp_path / "stream.jsonl"
    a.write_text(json.dumps({"request": BODY, "response": whole}) + "\n")
    b.write_text(json.dumps({"request": BODY, "response": _sse(START, DELTAS)}) + "\n")
    obj, streamed = load(a)[0], load(b)[0]
    assert streamed.observed == obj.observed == Usage(input_tokens=24, cache_write_5m=2900, cache_read=1500,
                                                      output_tokens=40)
    # the server tool's result is seen in the streamed content too: two iterations under one usage
    assert len(streamed.iterations) == len(obj.iterations) == 1
    assert streamed.iterations[0].request.blocks == obj.iterations[0].request.blocks


def test_a_cassette_with_a_streamed_body(tmp_path):
    from ruamel.yaml import YAML

    doc = {"interactions": [{"request": {"uri": "https://api.anthropic.com/v1/messages", "method": "POST",
                                         "body": json.dumps({**BODY, "stream": True})},
                             "response": {"status": {"code": 200}, "body": {"string": _sse(START, DELTAS[:1])}}}]}
    path = tmp_path / "cassette.yaml"
    with path.open("w") as f:
        YAML().dump(doc, f)
    rec = load(path)[0]
    # one message_delta with output only: the input, cache and read counts stay those of message_start
    assert rec.observed == Usage(input_tokens=12, cache_write_5m=1500, cache_read=0, output_tokens=20)


def test_server_tools_with_four_breakpoints_in_use_add_none_and_say_so(tmp_path):
    from prefixsim.sources.problems import collecting

    cc = {"type": "ephemeral"}
    body = {**BODY, "tools": [{**BODY["tools"][0], "cache_control": cc}],
            "system": [{"type": "text", "text": "rules " * 400, "cache_control": cc},
                       {"type": "text", "text": "more rules " * 200, "cache_control": cc}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Paris weather?", "cache_control": cc}]}]}
    path = tmp_path / "four.jsonl"
    path.write_text(json.dumps({"request": body, "response": {"content": CONTENT, "usage": DELTAS[-1]}}) + "\n")
    with collecting() as found:
        rec = load(path)[0]
    second = rec.iterations[0].request
    # the iteration after the search carries the request's four breakpoints and no fifth
    assert sum(1 for b in second.blocks if b.breakpoint) == 4 and not second.blocks[-1].breakpoint
    assert any("all four breakpoints in use" in n.message for n in found.notes)


def test_usage_iterations_are_summed_and_compaction_is_named(tmp_path):
    from prefixsim.sources.problems import collecting

    # threshold compaction: the top-level counts are the message iteration's; the compaction one that
    # read the whole conversation is listed apart and billed too
    zero = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    usage = {"input_tokens": 23000, "output_tokens": 1000, **zero,
             "iterations": [{"type": "compaction", "input_tokens": 180000, "output_tokens": 3500, **zero},
                            {"type": "message", "input_tokens": 23000, "output_tokens": 1000, **zero}]}
    path = tmp_path / "compacted.jsonl"
    body = {**BODY, "tools": [], "system": "s"}
    path.write_text(json.dumps({"request": body, "response": {"content": [{"type": "text", "text": "ok"}],
                                                              "usage": usage}}) + "\n")
    with collecting() as found:
        rec = load(path)[0]
    assert rec.observed == Usage(input_tokens=203000, output_tokens=4500)
    assert any("compaction" in n.message for n in found.notes)


def test_iterations_keep_their_time_when_traffic_is_rebased(tmp_path):
    """`open_many` counts times from the first request: the iterations stepped with a request move
    with it (else the second iteration ran at the log's absolute time and read nothing)."""
    from prefixsim import sources
    from prefixsim.replay import replay

    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"request": BODY, "response": _sse(START, DELTAS),
                                "timestamp": "2026-01-05T10:00:00Z"}) + "\n")
    walked, held = replay(sources.open_many([path])).rows[0], replay(load(path)).rows[0]
    assert walked.predicted == held.predicted and walked.predicted.cache_read > 0
