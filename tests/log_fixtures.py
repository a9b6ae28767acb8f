"""A constructed Anthropic JSONL log whose lines repeat their history in every way that must not be
mistaken for "the same message again": equal as Python values but not as bytes (key order, 1 / 1.0 /
True, 0.0 / -0.0, escapes, spacing), tool_use inputs, thinking, images, citations, markers that
move, interleaved conversations, compaction, nested body shapes and a broken line."""
from __future__ import annotations

import copy
import json
from pathlib import Path

TOOLS = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object", "properties":
          {"path": {"type": "string"}, "limit": {"type": "integer", "default": 2000}}}},
         {"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}]
SYSTEM = [{"type": "text", "text": "You are a coding agent. " * 40, "cache_control": {"type": "ephemeral"}}]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _turns() -> list[dict]:
    """A conversation's messages in order: thinking + tool_use turns, results with images, text."""
    out: list[dict] = [{"role": "user", "content": "Fix the failing test in tests/test_x.py, please."}]
    for i in range(6):
        out.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"step {i}: look at the file", "signature": f"sig{i}"},
            {"type": "text", "text": f"Reading part {i}."},
            {"type": "tool_use", "id": f"toolu_{i}", "name": "Read",
             "input": {"path": f"src/m{i}.py", "limit": 1 if i % 2 else 1.0, "flags": [True, None, 0.5],
                       "offset": 0.0}}]})
        result = [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"line {i}\n" * 30}]
        if i == 2:
            result[0]["content"] = [{"type": "text", "text": "a screenshot"},
                                    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                 "data": PNG}}]
        out.append({"role": "user", "content": result})
        if i == 3:
            out.append({"role": "assistant", "content": "Done with the first pass."})
            out.append({"role": "user", "content": [
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"},
                 "citations": {"enabled": True}},
                {"type": "text", "text": "Now the second pass."}]})
    return out


def _mark(messages: list[dict]) -> list[dict]:
    """The body as Claude Code sends it: a cache_control on the last content block only."""
    messages = copy.deepcopy(messages)
    last = messages[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    last["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return messages


def _usage(i: int) -> dict:
    return {"input_tokens": 40 + i, "cache_read_input_tokens": 900 * i, "cache_creation_input_tokens": 300,
            "output_tokens": 120}


def lines() -> list[str]:
    """The log's lines (each ends with a newline)."""
    turns = _turns()
    out: list[str] = []
    other = [{"role": "user", "content": "A second conversation on the same gateway."}]

    def emit(entry: dict, **dump) -> None:
        out.append(json.dumps(entry, **dump) + "\n")

    for k in range(1, len(turns) + 1, 2):
        i = len(out)
        body = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "tools": TOOLS, "system": SYSTEM,
                "messages": _mark(turns[:k]), "metadata": {"user_id": "alice"}}
        stamp = f"2026-11-01T10:00:{i:02d}Z"
        if k == 5:     # the same history, another spacing and escaping: equal values, other raw text
            emit({"timestamp": stamp, "request": body, "usage": _usage(i)}, separators=(" ,", ":  "), ensure_ascii=True)
        elif k == 7:   # the earlier messages again but keys in another order (other bytes, == equal)
            swapped = _mark(turns[:k])
            swapped[1]["content"][2] = dict(reversed(list(swapped[1]["content"][2].items())))
            emit({"timestamp": stamp, "request": {**body, "messages": swapped}, "usage": _usage(i)})
        elif k == 9:   # 1.0 -> 1, 0.0 -> -0.0, True -> 1 in an earlier tool input (== equal, other bytes)
            changed = _mark(turns[:k])
            inp = changed[3]["content"][2]["input"]
            inp["limit"], inp["offset"], inp["flags"] = 1, -0.0, [1, None, 0.5]
            emit({"timestamp": stamp, "request": {"body": {**body, "messages": changed}}, "usage": _usage(i)})
        else:
            emit({"timestamp": stamp, "request": body, "usage": _usage(i)})
        if k == 3:     # another conversation interleaved, then a broken line, then an empty one
            emit({"timestamp": f"2026-11-01T10:00:{i:02d}.5Z", "request": {**body, "metadata": {"user_id": "bob"},
                                                                          "messages": _mark(other)}})
            out.append(json.dumps({"timestamp": stamp, "request": body})[:-40] + "\n")
            out.append("   \n")
        if k == 11:    # a duplicate "messages" key: the last one is the body's
            text = json.dumps({"timestamp": f"2026-11-01T10:01:{i:02d}Z", "request": body, "usage": _usage(i)})
            out.append(text.replace('"messages": ', '"messages": [], "messages": ', 1) + "\n")
    # compaction: the history replaced by a summary, then growing again
    summary = [{"role": "user", "content": [{"type": "text", "text": "Summary of the work so far."}]}]
    for j, tail in enumerate((turns[1:3], turns[1:5])):
        body = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "tools": TOOLS[::-1], "system": SYSTEM,
                "messages": _mark(summary + tail), "metadata": {"user_id": "alice"}}
        emit({"timestamp": f"2026-11-01T10:05:{j:02d}Z", "request": body, "usage": _usage(20 + j)})
    # a body at the top level, no wrapper, after a line whose body was wrapped
    emit({**body, "messages": _mark(summary + turns[1:7]), "timestamp": "2026-11-01T10:06:00Z", "usage": _usage(30)})
    return out


def session(requests: int) -> list[str]:
    """One agent session's log, `requests` lines: every turn a thinking + text + tool_use reply and
    a tool result, the cache marker on the last message only. Every fifth turn the person writes
    (earlier turns' thinking then leaves the prompt), line 3 has no usage (its blocks keep their
    counts, then line 4's usage rescales them) and the system prompt changes at line 10."""
    messages: list[dict] = [{"role": "user", "content": "Start."}]
    out = []
    for i in range(requests):
        system = SYSTEM if i < 10 else [{"type": "text", "text": "Another system prompt."}]
        body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "tools": TOOLS, "system": system,
                "messages": _mark(messages)}
        entry = {"timestamp": f"2026-11-01T11:{i // 60:02d}:{i % 60:02d}Z", "request": body}
        if i != 3:
            entry["usage"] = _usage(i)
        out.append(json.dumps(entry) + "\n")
        messages.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"turn {i}", "signature": f"s{i}"},
            {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"ls {i}", "n": i}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                                      "content": f"file{i}.py"}]})
        if i % 5 == 4:
            messages.append({"role": "assistant", "content": [{"type": "thinking", "thinking": "done",
                                                               "signature": "d"}, {"type": "text", "text": "Done."}]})
            messages.append({"role": "user", "content": f"Next step {i}."})
    return out


def timed_logs(folder) -> dict[str, list[str]]:
    """A folder of shipped cassettes as the JSONL logs a proxy would have written of them, one per
    format: a line per call, {timestamp, uri, method, request, response}, the cassettes one after
    another in name order; calls 7 s apart, each pair sharing one timestamp (ties the order of the
    lines must not decide)."""
    from pathlib import Path

    from prefixsim.sources import detect
    from prefixsim.sources.cassette import interactions, load_document, request_of

    logs: dict[str, list[str]] = {}
    for cassette in sorted(Path(folder).glob("*.yaml")):
        kind = detect(cassette)
        if kind == "realtime":   # a WebSocket session: no HTTP call a proxy would log
            continue
        out = logs.setdefault(kind, [])
        for inter in interactions(load_document(cassette), cassette):
            body, resp, uri, method = request_of(inter)
            if not isinstance(body, dict) or "count_tokens" in uri:
                continue
            k = len(out) // 2 * 7
            out.append(json.dumps({"timestamp": f"2026-11-01T10:{k // 60:02d}:{k % 60:02d}Z", "uri": uri,
                                   "method": method, "request": body, "response": resp}) + "\n")
    return logs


def exact_log(turns: int, ids: bool = True) -> list[str]:
    """One conversation's Anthropic log whose usage is what the cache rules give (each request reads
    the previous prompt and writes its growth, 3 tokens close each prompt), at sizes cl100k does not
    count (Claude's tokenizer is not public): replayed in time order every read is exact. A line
    every 5 s; `ids`: each line carries `req_K`."""
    import random

    rng = random.Random(1)
    system = [{"type": "text", "text": "You are a careful agent. " * 300, "cache_control": {"type": "ephemeral"}}]
    messages: list[dict] = []
    out: list[str] = []
    total = read = 2100
    for k in range(turns):
        for role in ("user", "assistant"):
            text = " ".join(f"w{rng.randrange(10**6)}" for _ in range(rng.randrange(150, 400)))
            messages.append({"role": role, "content": [{"type": "text", "text": text}]})
            total += int(len(text.split()) * 2.3)
        sent = _mark(messages[:-1])
        prompt = total - int(len(messages[-1]["content"][0]["text"].split()) * 2.3)
        usage = {"input_tokens": 3, "cache_read_input_tokens": read if k else 0,
                 "cache_creation_input_tokens": prompt - (read if k else 0), "output_tokens": 50}
        read = prompt
        entry = {"timestamp": f"2026-11-01T10:{k * 5 // 60:02d}:{k * 5 % 60:02d}Z",
                 "request": {"model": "claude-sonnet-4-5", "max_tokens": 100, "system": system, "messages": sent},
                 "usage": usage}
        out.append(json.dumps({"id": f"req_{k}", **entry} if ids else entry) + "\n")
    return out


def messages_cassette(path: Path, calls: list[tuple[dict, dict, str]]) -> Path:
    """A vcrpy cassette (our own) of Messages API calls at `path`: each call (request body, response,
    the response's `Date` header), the bodies as JSON strings as vcrpy records them."""
    lines = ["interactions:"]
    for body, resp, date in calls:
        lines += ["- request:", f"    body: {json.dumps(json.dumps(body))}", "    method: POST",
                  "    uri: https://api.anthropic.com/v1/messages", "  response:",
                  f"    body: {{string: {json.dumps(json.dumps(resp))}}}",
                  f"    headers: {{Date: ['{date}']}}", "    status: {code: 200, message: OK}"]
    path.write_text("\n".join(lines) + "\n")
    return path
