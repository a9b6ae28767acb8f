"""Codex CLI rollouts -> the API calls they record (`Raw`), in file order.

A rollout is JSON Lines of `{timestamp, type, payload}` (openai/codex `RolloutLine`, `RolloutItem`):
`session_meta` (the session id, `forked_from_id`, `cli_version`, `source`: cli, vscode, exec, a
sub-agent), `turn_context` (the model of the request about to be sent), `response_item` (what the
model saw and said: messages, reasoning, function calls and their outputs), `compacted` (the history
replaced by a summary), `event_msg` (`user_message`, `task_started`, `thread_rolled_back`,
`token_count` with the usage of the latest request). What is read from them:

- a request is a `token_count` whose `info.last_token_usage` has input and whose cumulative
  `total_token_usage` changed: Codex writes each one again when the next request starts;
- it starts at the latest input line before its response (a `turn_context`, a tool output, a user
  message) and its response begins at its first response item;
- a `user_message` before it makes it the first request of a user turn; a `compacted` line, or
  `thread_rolled_back` (the history cut back by some user turns), comes with it as its event;
- whether its response reasoned (a `reasoning` item, or reasoning output tokens): OpenAI drops the
  reasoning of earlier turns when a new user message comes;
- `resume` appends to the same rollout (no new `session_meta`): the history is replayed from the file,
  the same bytes, so nothing marks it and the conversation simply goes on.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import xxhash

from prefixsim.errors import UserError, shown
from prefixsim.model import Usage
from prefixsim.sources import problems
from prefixsim.sources.claude_code.raw import _iso
from prefixsim.sources.stamps import parse_time
from prefixsim.sources.files import check_regular
from prefixsim.sources.jsonl import iter_jsonl
from prefixsim.sources.record import check_model, checked_usage, token_count

#: The line types of a rollout (`RolloutItem`); a line of another type is named in a note.
LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: Response items the model produced (its response began at the first of them).
OUTPUT_ITEMS = frozenset({"message", "reasoning", "function_call", "custom_tool_call", "local_shell_call",
                          "web_search_call", "image_generation_call", "tool_search_call"})
#: Items that feed the next request (it is sent after the latest of them).
INPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})


def is_rollout_line(obj: object) -> bool:
    """A line Codex writes to a rollout (format detection)."""
    return isinstance(obj, dict) and obj.get("type") in LINE_TYPES and "payload" in obj and "timestamp" in obj


@dataclass(frozen=True, slots=True)
class Raw:
    """One API call as the rollout shows it, before its prompt is rebuilt."""

    request_id: str
    stream: str
    kind: str            # main | agent (a sub-agent's session)
    session: str         # the session id: who owns the session's own prefix
    shared: str          # who shares the cross-session prefix: Codex version and model
    model: str
    start: float
    response: float
    usage: Usage         # observed: uncached input, cached input, output
    prompt: int          # input tokens, cached included
    output: int          # output tokens, reasoning included
    timestamp: str
    path: str
    line: int
    order: int
    new_turn: bool = False      # a user message came since the stream's previous request
    reasoned: bool = False      # its response holds reasoning
    event: str | None = None    # compaction | rollback | None: the history before it was replaced or cut
    rolled_back: int = 0        # user turns a rollback dropped
    first_text: str = ""        # the session's first user message (the static estimate)
    parent: str | None = None   # a fork: the stream of the session it was forked from
    provider: str = "openai"    # whose rules replay it (the Gemini CLI reader builds these too)


def _usage_fields(u: dict) -> tuple[int, int, int]:
    prompt = token_count(u.get("input_tokens"), "input_tokens")
    cached = token_count(u.get("cached_input_tokens"), "cached_input_tokens")
    output = token_count(u.get("output_tokens"), "output_tokens")
    if cached > prompt:
        raise UserError(f"cached_input_tokens {cached:,} exceed input_tokens {prompt:,}")
    return prompt, cached, output


def parse(path: Path, seen: set[str], prefix: str = "", order_start: int = 0,
          sessions: dict[str, str] | None = None) -> list[Raw]:
    """Every API call of one rollout. `seen` holds request keys already read (a fork's copy of its
    parent's lines, the same file given twice); `sessions` maps session ids to their stream (forks
    find their parent there) and gains this file's."""
    check_regular(path)
    where = str(path)
    sessions = {} if sessions is None else sessions
    out: list[Raw] = []
    s: dict = {"session": path.stem, "version": "", "kind": "main", "model": None, "start": None,
               "response": None, "turn": False, "reasoned": False, "event": None, "rolled": 0,
               "first": "", "total": None, "parent": None, "meta": False}
    unknown: dict[str, list[int]] = {}
    stream = prefix + "main"

    def one(n: int, o: object) -> None:
        if not isinstance(o, dict):
            raise UserError("a rollout line is a JSON object")
        typ, p = o.get("type"), o.get("payload")
        if typ not in LINE_TYPES:
            unknown.setdefault(shown(typ) if not isinstance(typ, str) else typ, [n, 0])[1] += 1
            return
        if not isinstance(p, dict):
            raise UserError(f"{typ} line has no payload object")
        t = parse_time(o.get("timestamp"))
        kind = p.get("type")
        if typ == "session_meta":
            if not s["meta"]:
                s["meta"] = True
                if isinstance(p.get("id"), str):
                    s["session"] = p["id"]
                s["version"] = str(p.get("cli_version") or "")
                source = p.get("source")
                s["kind"] = "agent" if isinstance(source, dict) and "subagent" in source else "main"
                fork = p.get("forked_from_id")
                s["parent"] = sessions.get(fork) if isinstance(fork, str) else None
                sessions[s["session"]] = stream
            return
        if typ == "turn_context":
            if isinstance(p.get("model"), str):
                s["model"] = p["model"]
            s["start"], s["response"] = t, None
        elif typ == "compacted":
            s["event"], s["start"], s["response"] = "compaction", t, None
        elif typ == "response_item":
            if kind in INPUT_ITEMS:
                s["start"], s["response"] = t, None
            elif kind in OUTPUT_ITEMS and not (kind == "message" and p.get("role") in ("user", "developer", "system")):
                if s["response"] is None:
                    s["response"] = t
                if kind == "reasoning":
                    s["reasoned"] = True
        elif typ == "event_msg":
            if kind == "user_message":
                s["turn"], s["start"], s["response"] = True, t, None
                if not s["first"] and isinstance(p.get("message"), str):
                    s["first"] = p["message"]
            elif kind == "task_started":
                s["start"], s["response"] = t, None
            elif kind == "thread_rolled_back":
                s["event"] = "rollback"
                s["rolled"] += token_count(p.get("num_turns"), "num_turns")
            elif kind == "token_count":
                raw = _request(n, t, p)
                if raw is not None:
                    out.append(raw)

    def _request(n: int, t: float, p: dict) -> Raw | None:
        info = p.get("info")
        if not isinstance(info, dict):
            return None   # a rate-limits-only count: no request
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if not isinstance(last, dict):
            raise UserError("token_count info has no last_token_usage")
        key = (repr(sorted(total.items())) if isinstance(total, dict) else None, repr(sorted(last.items())))
        if key == s["total"]:
            return None   # the same count written again as the next request starts
        prompt, cached, output = _usage_fields(last)
        s["total"] = key   # only once read: a corrupt count is read from its repeat, if any
        if prompt == 0:
            return None   # a count with no request (a compaction's, whose own call is not counted)
        # Codex gives a request no id: the time of its count and the counts name it (the same
        # rollout given twice, or lines copied into another rollout, are read once)
        rid = "codex-" + xxhash.xxh3_64_hexdigest(repr((t, key)).encode())
        if rid in seen:   # read already: it still ends the turn's flags, it is only left out
            s.update(turn=False, reasoned=False, event=None, rolled=0, start=t, response=None)
            return None
        model = check_model(s["model"], "openai") if s["model"] is not None else None
        if model is None:
            raise UserError("request has no model (no turn_context line before it names one)")
        reasoned = s["reasoned"] or token_count(last.get("reasoning_output_tokens"), "reasoning_output_tokens") > 0
        start = s["start"] if s["start"] is not None and s["start"] <= t else t
        response = s["response"] if s["response"] is not None and start <= s["response"] <= t else t
        seen.add(rid)
        raw = Raw(rid, stream, s["kind"], s["session"], f"{s['version']}|{model}", model, start, response,
                  checked_usage(Usage(input_tokens=prompt - cached, cache_read=cached, output_tokens=output)),
                  prompt, output, _iso(start), where, n, order_start + len(out), s["turn"], reasoned,
                  s["event"], s["rolled"], s["first"], s["parent"] if not out else None)
        s.update(turn=False, reasoned=False, event=None, rolled=0, start=t, response=None)
        return raw

    for n, o in iter_jsonl(path):
        problems.guarded(where, n, one, n, o)
    for typ, (first, count) in sorted(unknown.items(), key=lambda kv: kv[1][0]):
        problems.note(where, first, f"ignored {count} line{'s' if count > 1 else ''} of unknown type {typ!r}")
    return out
