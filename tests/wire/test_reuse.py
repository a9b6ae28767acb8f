"""Messages rendered once per reader (`wire.reuse`, issue 35): an OpenAI-format or Gemini log that sends
its history again on every line renders each distinct message once, and every request's pieces are
exactly what rendering it afresh gives, whatever the messages hold (values equal in Python but not
in bytes: 1 / 1.0 / True, 0.0 / -0.0, key order) and wherever they stand."""
from __future__ import annotations

import copy
import json

import pytest

from prefixsim.model import Layer
from prefixsim.sources import gemini_log, openai_log
from prefixsim.wire import gemini as G
from prefixsim.wire import openai as R
from prefixsim.wire.reuse import PieceMemo, exact_key

SLOTS = R.Piece.__slots__


def _as_tuples(pieces):
    return [tuple(getattr(p, s) for s in SLOTS) for p in pieces]


@pytest.mark.parametrize("a, b", [
    (1, 1.0), (1, True), (0, False), (0.0, -0.0), (None, 0), ("1", 1),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),                       # key order is bytes
    ({"x": [1, {"y": 2}]}, {"x": [1, {"y": 2.0}]}),             # deep inside
    ([1, 2], {"0": 1, "1": 2}), ([], {}), ("", []),
    ({1: "a"}, {True: "a"}),                                    # keys only YAML gives
])
def test_values_equal_in_python_but_not_in_bytes_have_different_keys(a, b):
    assert exact_key(a) != exact_key(b)


def test_a_copy_of_a_value_has_the_same_key():
    value = {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "n": 1.5, "k": [True, None, -0.0]}
    assert exact_key(copy.deepcopy(value)) == exact_key(value)
    assert hash(exact_key(copy.deepcopy(value))) == hash(exact_key(value))


def _chat(conv: int, turns: int) -> list[dict]:
    """One conversation's Chat bodies, each the whole history so far, in shapes a key must keep apart."""
    history: list = [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": [{"type": "text", "text": f"task {conv}"},
                                                  {"type": "text", "text": "mark here", "prompt_cache_breakpoint": {}}]}]
    out = []
    for k in range(turns):
        out.append({"model": "gpt-4o", "messages": copy.deepcopy(history), "prompt_cache_key": f"c{conv}",
                    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]})
        args = {"n": 1 if (conv + k) % 2 else 1.0, "z": 0.0 if k % 3 else -0.0, "flag": True if k % 2 else 1}
        history.append({"role": "assistant", "content": None, "name": "bot" if k % 2 else "",
                        "tool_calls": [{"id": f"call{k}", "type": "function", "index": k,
                                        "function": {"name": "f", "arguments": args if k % 2 else json.dumps(args)}}]})
        history.append({"role": "tool", "tool_call_id": f"call{k}", "content": f"result {k}"})
        if k == 2:   # a system message after the conversation started: raised to the messages layer
            history.append({"role": "system", "content": "You are terse."})
    return out


def _responses(conv: int, turns: int) -> list[dict]:
    items: list = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": f"go {conv}"}]
    out = []
    for k in range(turns):
        out.append({"model": "gpt-5", "instructions": "Answer.", "input": copy.deepcopy(items)})
        items += [{"type": "reasoning", "id": f"rs_{conv}_{k}", "encrypted_content": f"enc{k}", "summary": []},
                  {"type": "function_call", "id": f"fc_{k}", "call_id": f"c{k}", "name": "f",
                   "arguments": "{\"a\": 1}", "status": "completed"},
                  {"type": "function_call_output", "call_id": f"c{k}", "output": [{"type": "input_text", "text": "ok"}]},
                  {"role": "user", "content": [{"type": "input_text", "text": f"more {k}"},
                                               {"type": "input_image", "image_url": "data:x", "detail": "low"}]}]
    return out


def _interleaved(make) -> list[dict]:
    convs = [make(c, 6) for c in range(3)]
    return [body for turn in zip(*convs) for body in turn]


@pytest.mark.parametrize("make", [_chat, _responses])
def test_every_request_renders_as_a_fresh_render_does_and_each_message_once(make):
    memo = PieceMemo()
    bodies = _interleaved(make)
    for body in bodies:
        assert _as_tuples(R.request_pieces(body, memo=memo)) == _as_tuples(R.request_pieces(body))
    sent = [m for b in bodies for m in b.get("messages", b.get("input"))]
    # json.dumps keeps key order and writes 1 / 1.0 / True and 0.0 / -0.0 apart: its distinct texts
    # are the distinct messages (a system message sent late is rendered as a system one, then raised)
    assert memo.hits == len(sent) - len({json.dumps(m) for m in sent}) > len(sent) // 2


def test_a_piece_a_request_changed_is_not_the_next_requests():
    """`_in_layer_order` raises a system message sent after the conversation started to the messages
    layer, in place: the memo hands out copies, so the same message sent first keeps its system layer."""
    system = {"role": "system", "content": "rules"}
    user = {"role": "user", "content": "hi"}
    memo = PieceMemo()
    late = R.request_pieces({"model": "gpt-4o", "messages": [user, dict(system)]}, memo=memo)
    assert [p.layer for p in late] == [Layer.MESSAGES, Layer.MESSAGES]
    first = R.request_pieces({"model": "gpt-4o", "messages": [dict(system), user]}, memo=memo)
    assert memo.hits == 2
    assert [p.layer for p in first] == [Layer.SYSTEM, Layer.MESSAGES]
    assert [p.path for p in first] == ["messages[0]", "messages[1]"]
    assert first[0] is not late[1] and first[1] is not late[0]


def test_what_a_recent_request_sent_is_known_by_identity_and_other_values_by_content(monkeypatch):
    """A recent line's unchanged members are the same objects (sources/linejson, a conversation's
    request lines back too): found without their key, tool schemas too; an equal copy goes by its key
    (tools: rendered)."""
    from prefixsim.wire import reuse

    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    system, user = {"role": "system", "content": "rules"}, {"role": "user", "content": "hi"}
    memo = PieceMemo()
    one = R.request_pieces({"model": "gpt-4o", "tools": [tool], "messages": [system, user]}, memo=memo)
    keys: list = []
    real = reuse.exact_key
    monkeypatch.setattr(reuse, "exact_key", lambda v: keys.append(v) or real(v))
    body = {"model": "gpt-4o", "tools": [tool], "messages": [system, user, {"role": "assistant", "content": "yo"}]}
    two = R.request_pieces(body, memo=memo)
    keyed = lambda v: any(k is v for k in keys)   # noqa: E731
    assert keyed(body["messages"][2]) and not keyed(system) and not keyed(user) and not keyed(tool)
    assert memo.hits == 3
    assert _as_tuples(two) == _as_tuples(R.request_pieces(body)) and _as_tuples(two[:3]) == _as_tuples(one)
    for _ in range(5):   # other conversations' requests in between
        R.request_pieces({"model": "gpt-4o", "messages": [{"role": "user", "content": "other"}]}, memo=memo)
    keys.clear()
    hits = memo.hits
    copy_of_tool = copy.deepcopy(tool)
    copy_of_user = dict(user)
    three = R.request_pieces({"model": "gpt-4o", "tools": [copy_of_tool], "messages": [system, copy_of_user]},
                             memo=memo)
    assert keyed(copy_of_user) and not keyed(system) and not keyed(copy_of_tool)
    assert memo.hits == hits + 2   # system by identity five requests on, the user's copy by key
    assert _as_tuples(three) == _as_tuples(one) and three[0] is not one[0]


def test_values_are_known_by_identity_for_the_last_requests_only():
    # Each entry holds its value alive: a log of distinct requests keeps a bounded number of them.
    memo = PieceMemo()
    first = {"role": "user", "content": "first"}
    R.request_pieces({"model": "gpt-4o", "messages": [first]}, memo=memo)
    for i in range(6000):
        R.request_pieces({"model": "gpt-4o", "messages": [{"role": "user", "content": f"m{i}"}]}, memo=memo)
        assert len(memo._ids) <= 4097
    assert id(first) not in memo._ids   # alive here, so no other value has its id


def test_what_is_no_json_value_is_rendered_as_before():
    memo = PieceMemo()
    loop: list = []
    loop.append(loop)   # a YAML alias can make one
    for bad in ({"role": "user", "content": loop}, {"role": "user", "content": {1, 2}}):
        with pytest.raises((ValueError, TypeError)) as fresh:
            R.request_pieces({"model": "gpt-4o", "messages": [bad]})
        with pytest.raises(type(fresh.value), match=str(fresh.value)):
            R.request_pieces({"model": "gpt-4o", "messages": [bad]}, memo=memo)


def test_a_full_memo_starts_again_and_still_renders_right():
    memo = PieceMemo(limit=200)
    bodies = _interleaved(_chat)
    for body in bodies:
        assert _as_tuples(R.request_pieces(body, memo=memo)) == _as_tuples(R.request_pieces(body))
    assert 0 < memo.hits


def _gemini(conv: int, turns: int) -> list[dict]:
    contents: list = [{"role": "user", "parts": [{"text": f"q {conv}"}]}]
    out = []
    for k in range(turns):
        out.append({"model": "gemini-2.5-flash", "systemInstruction": {"parts": [{"text": "sys"}]},
                    "contents": copy.deepcopy(contents)})
        contents.append({"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"x": 1 if k % 2 else 1.0}}},
                                                    {"text": "t", "thoughtSignature": "s"}]})
        contents.append({"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"ok": True}}},
                                                   {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]})
    return out


def test_gemini_turns_render_as_a_fresh_render_does_and_each_once():
    memo = PieceMemo()
    bodies = _interleaved(_gemini)
    for body in bodies:
        assert _as_tuples(G.own_pieces(body, memo)) == _as_tuples(G.own_pieces(body))
    turns = sum(len(b["contents"]) for b in bodies)
    assert memo.hits == turns + len(bodies) - len({json.dumps(c) for b in bodies for c in b["contents"]}) - 1
    reply = {"candidates": [{"content": {"parts": [{"text": "answer"}]}}]}
    assert _as_tuples([G.output_piece(reply, memo)]) == _as_tuples([G.output_piece(reply)])


def _log(tmp_path, bodies, usage=True):
    path = tmp_path / "log.jsonl"
    with path.open("w") as fh:
        for i, body in enumerate(bodies):
            line = {"timestamp": f"2026-11-01T10:00:{i:02d}Z", "request": body}
            if usage:
                line["usage"] = {"prompt_tokens": 400 + 40 * i, "completion_tokens": 20,
                                 "prompt_tokens_details": {"cached_tokens": 128 * (i // 3)}}
            fh.write(json.dumps(line) + "\n")
    return path


@pytest.mark.parametrize("make", [_chat, _responses])
def test_a_log_reads_as_it_did_rendering_every_message_again(tmp_path, monkeypatch, make):
    path = _log(tmp_path, _interleaved(make))
    calls: list[int] = []
    real = R.message_pieces
    monkeypatch.setattr(R, "message_pieces", lambda *a: calls.append(1) or real(*a))
    with_memo = openai_log.load_jsonl(path, openai_log.Sizer(len))
    rendered = len(calls)
    monkeypatch.setattr(PieceMemo, "_get", lambda self, render, value, path, args, by_content: render(value, path, *args))
    without = openai_log.load_jsonl(path, openai_log.Sizer(len))
    assert with_memo == without
    assert rendered * 3 < len(calls)


@pytest.mark.parametrize("usage", [True, False], ids=["sized by usage", "counted"])
def test_a_conversations_repeated_blocks_are_one_object_and_read_as_made_anew(tmp_path, monkeypatch, usage):
    # issue 35: a log repeats each conversation's history, and its blocks (same bytes, path, size)
    # were made again on every line, their content keys hashed again.
    from prefixsim.sources.openai_sizes import SizerMemory

    path = _log(tmp_path, _interleaved(_chat), usage)
    shared = openai_log.load_jsonl(path, openai_log.Sizer(len))
    monkeypatch.setattr(SizerMemory, "block", lambda self, piece, tokens: piece.block(tokens))
    assert shared == openai_log.load_jsonl(path, openai_log.Sizer(len))
    last: dict = {}
    same = 0
    for rec in shared:
        before = last.get(rec.call.stream)
        if before is not None:
            same += sum(a is b for a, b in zip(before.call.request.blocks, rec.call.request.blocks))
        last[rec.call.stream] = rec
    assert same > len(shared)


def test_a_gemini_log_reads_as_it_did_rendering_every_turn_again(tmp_path, monkeypatch):
    path = tmp_path / "gemini.jsonl"
    with path.open("w") as fh:
        for i, body in enumerate(_interleaved(_gemini)):
            fh.write(json.dumps({"timestamp": f"2026-11-01T10:00:{i:02d}Z", "request": body, "response": {
                "candidates": [{"content": {"role": "model", "parts": [{"text": f"r{i}"}]}}],
                "usageMetadata": {"promptTokenCount": 100 + 10 * i, "candidatesTokenCount": 5,
                                  "totalTokenCount": 105 + 10 * i}}}) + "\n")
    with_memo = gemini_log.load_jsonl(path, openai_log.Sizer(len))
    monkeypatch.setattr(PieceMemo, "_get", lambda self, render, value, path, args, by_content: render(value, path, *args))
    assert with_memo == gemini_log.load_jsonl(path, openai_log.Sizer(len))


def test_a_router_body_without_markers_keeps_its_objects_and_a_marked_one_loses_only_its_markers():
    """sources/routers.breakpoints copied every message and tool of every request, so none was the line
    before's object any more (the identity path above never found one)."""
    from prefixsim.sources import routers

    tool, plain = {"type": "function", "function": {"name": "f"}}, {"role": "user", "content": [{"type": "text", "text": "a"}]}
    marked = {"role": "user", "content": [{"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}]}
    body = {"model": "anthropic/claude-sonnet-4.5", "tools": [tool], "messages": [plain, marked]}
    out, marks, auto = routers.breakpoints(body)
    assert out["tools"][0] is tool and out["messages"][0] is plain
    assert out["messages"][1] == {"role": "user", "content": [{"type": "text", "text": "b"}]}
    assert marks == {"messages[1].content[0]": "5m"} and not auto
    assert "cache_control" in marked["content"][0]   # the body is read, never changed
