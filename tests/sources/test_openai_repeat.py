"""A Chat request built from its conversation's previous request (`sources.openai_repeat`): what it
repeats of it (the same tool and message objects) keeps that request's pieces, digests, counts, sizes
and blocks, and the requests are those a build of every request from nothing gives (issue 35)."""
from __future__ import annotations

import json

import pytest

from prefixsim import sources
from prefixsim.sources import openai_repeat as repeat
from prefixsim.sources.openai_repeat import Built

TOOL = {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}


def _log(edit: str) -> list[str]:
    """Three conversations interleaved, each line the whole conversation so far with usage; `edit`
    changes one conversation mid-way, as a client may."""
    convs = [[{"role": "system", "content": "You are terse. " * 60},
              {"role": "user", "content": f"task {c}: " + "plan the work " * (30 + c)}] for c in range(3)]
    tools = [[TOOL] for _ in range(3)]
    models = ["gpt-4o"] * 3
    out = []
    for k in range(6):
        for c, messages in enumerate(convs):
            if c == 1 and k == 3:
                if edit == "message changed":
                    messages[2] = {**messages[2], "content": "an earlier answer, rewritten"}
                elif edit == "tools changed":
                    tools[c] = [TOOL, {**TOOL, "function": {**TOOL["function"], "name": "write"}}]
                elif edit == "model changed":
                    models[c] = "gpt-4.1-mini"
                elif edit == "marker added":
                    messages[1] = {**messages[1], "content": [{"type": "text", "text": messages[1]["content"],
                                                               "cache_control": {"type": "ephemeral"}}]}
                elif edit == "history cut":
                    del messages[2:4]
            sec = k * 20 + c
            prompt = sum(len(json.dumps(m)) for m in messages) // 4
            body = {"model": models[c], "messages": messages, "tools": tools[c], "prompt_cache_key": f"conv-{c}"}
            out.append(json.dumps({
                "timestamp": f"2026-11-01T10:{sec // 60:02d}:{sec % 60:02d}Z", "request": body,
                "response": {"id": f"chatcmpl-{c}-{k}", "choices": [{"index": 0, "message": {
                    "role": "assistant", "content": f"step {k} " * (20 + 7 * c)}}]},
                "usage": {"prompt_tokens": prompt + 11 * k, "completion_tokens": 40 + c,
                          "prompt_tokens_details": {"cached_tokens": prompt // 2 // 128 * 128}}}) + "\n")
            messages += [{"role": "assistant", "content": f"step {k} " * (20 + 7 * c)},
                         {"role": "user", "content": f"go on {k} " * (15 + k)}]
    return out


def _requests(path, monkeypatch, reuse: bool) -> list:
    taken = [0]
    if not reuse:
        monkeypatch.setattr(repeat, "repeated", lambda last, head, body: None)
    else:
        real = repeat.repeated

        def counting(last, head, body):
            k = real(last, head, body)
            taken[0] += k is not None
            return k

        monkeypatch.setattr(repeat, "repeated", counting)
    records = list(sources.open_many([path], errors=[]))
    monkeypatch.undo()
    return [(r.call, r.observed) for r in records], taken[0]


@pytest.mark.parametrize("edit", ["none", "message changed", "tools changed", "model changed", "marker added",
                                  "history cut"])
def test_a_request_built_from_the_previous_one_is_the_one_built_from_nothing(tmp_path, monkeypatch, edit):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(_log(edit)))
    fresh, _ = _requests(path, monkeypatch, reuse=False)
    built, taken = _requests(path, monkeypatch, reuse=True)
    assert taken >= 12   # most requests were built from their conversation's previous one
    assert built == fresh
    # sizes and digests alike, block by block
    assert [[(b.data, b.path, b.tokens, b.key) for b in c.request.blocks] for c, _ in built] == \
        [[(b.data, b.path, b.tokens, b.key) for b in c.request.blocks] for c, _ in fresh]


def test_only_chat_bodies_are_kept_by_conversation():
    assert repeat.conversation({"messages": [], "prompt_cache_key": "a"}) == ("a", None)
    assert repeat.conversation({"messages": [], "user": "u"}) == (None, "u")
    assert repeat.conversation({"input": []}) is None   # Responses
    assert repeat.conversation({"messages": [], "instructions": "x"}) is None
    assert repeat.conversation({"messages": "hi"}) is None
    assert repeat.conversation({"messages": [], "prompt_cache_key": {"not": "text"}}) is None


def _built(tools, messages, head=("openai", "gpt-4o", b"")) -> Built:
    return Built(head, tools, messages, [0] * (len(messages) + 1), [], [], [], [(0, 0)], [], ())


def test_what_is_repeated_is_the_same_objects_in_the_same_namespace():
    a, b, c = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}
    last = _built([TOOL], [a, b])
    head = ("openai", "gpt-4o", b"")
    assert repeat.repeated(None, head, {"messages": [a]}) is None
    assert repeat.repeated(last, head, {"tools": [TOOL], "messages": [a, b, c]}) == 2
    assert repeat.repeated(last, head, {"tools": [TOOL], "messages": [a, dict(b), c]}) == 1   # equal, not the same
    assert repeat.repeated(last, head, {"tools": [TOOL], "messages": [c]}) == 0
    assert repeat.repeated(last, head, {"tools": [dict(TOOL)], "messages": [a, b]}) is None
    assert repeat.repeated(last, head, {"messages": [a, b]}) is None   # no tools now
    assert repeat.repeated(last, ("openai", "gpt-4.1", b""), {"tools": [TOOL], "messages": [a, b]}) is None
    assert repeat.repeated(_built(None, [a]), head, {"messages": [a, c]}) == 1


def test_sizes_are_taken_only_between_anchors_both_requests_share():
    last = Built(("openai", "gpt-4o", b""), None, [], [], pieces=[None] * 6, chain=[], counts=[],
                 marks=[(0, 0), (2, 50), (4, 90), (6, 130)], sizes=[20, 30, 15, 25, 19, 21], blocks=())
    # the same anchors up to piece 4: the sizes of pieces 0-3 are its own
    assert repeat.spread_before(last, [(0, 0), (2, 50), (4, 90), (6, 131), (9, 200)], 6) == ([20, 30, 15, 25], 2)
    # not past the pieces shared
    assert repeat.spread_before(last, [(0, 0), (2, 50), (4, 90), (9, 200)], 3) == ([20, 30], 1)
    # not its final piece's span (its count carried the reply primer)
    assert repeat.spread_before(last, [(0, 0), (2, 50), (4, 90), (6, 130), (9, 200)], 6) == ([20, 30, 15, 25], 2)
    # an anchor that moved
    assert repeat.spread_before(last, [(0, 0), (2, 51), (4, 90)], 6) == ([], 0)
    assert repeat.spread_before(None, [(0, 0), (2, 50)], 6) == ([], 0)


def test_the_messages_a_previous_request_sent_as_they_are_carry_no_marker():
    from prefixsim.sources import routers

    a, b = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}
    marked = {"role": "user", "content": [{"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}}]}
    body = {"model": "claude-sonnet-4-5", "messages": [a, b, marked]}
    cleaned, marks, _ = routers.breakpoints(body)
    assert cleaned["messages"][:2] == [a, b] and cleaned["messages"][2] is not marked   # its marker taken off
    last = _built(None, cleaned["messages"])
    nxt = {"model": "claude-sonnet-4-5", "messages": [a, b, marked, {"role": "user", "content": "d"}]}
    assert repeat.unmarked(last, nxt) == 2   # the marked one was sent cleaned: not the same object
    assert repeat.unmarked(None, nxt) == 0
    assert routers.breakpoints(nxt, repeat.unmarked(last, nxt)) == routers.breakpoints(nxt)
    assert marks == {"messages[2].content[0]": "5m"}


def test_only_the_conversations_the_line_parser_still_shares_with_are_kept():
    memory: dict = {}
    for c in range(repeat.KEPT + 5):
        repeat.kept(memory, (f"conv-{c}", None), _built(None, []))
    assert len(memory) == repeat.KEPT and ("conv-0", None) not in memory
    repeat.kept(memory, ("conv-5", None), _built(None, []))   # built again: the most recent
    assert list(memory)[-1] == ("conv-5", None)
