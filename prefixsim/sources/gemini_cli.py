"""Gemini CLI session files -> Records, replayed under Gemini's implicit caching.

Gemini CLI records each chat (`ChatRecordingService`, google-gemini/gemini-cli
`packages/core/src/services/chatRecordingService.ts`) under `~/.gemini/tmp/<project>/chats/`: as one
JSON `ConversationRecord` (`sessionId`, `projectHash`, `startTime`, `messages`, `kind` main or
subagent), or, in later versions, as JSON Lines: a metadata record, one `MessageRecord` per line,
`{"$rewindTo": <message id>}` when the user rewinds and `{"$set": {...}}` metadata updates. A
message of type `gemini` carries the `model` and `tokens` of the API call that produced it
(`input` = promptTokenCount, cached included; `cached` = cachedContentTokenCount; `output` =
candidatesTokenCount; `thoughts` = thoughtsTokenCount): one request each.

The prompts are rebuilt from those sizes as for Codex rollouts (`codex/calibrate.py`): within the
conversation the previous prompt, its reply (the candidates; thoughts are never sent back) and what
came since; a rewind returns to the history before the user turn it names; a smaller prompt (a chat
compression) keeps only the static prefix. docs/rules.md#gemini-cli-sessions.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import xxhash

from prefixsim.core.tokens import remembered_count
from prefixsim.errors import UserError
from prefixsim.model import Usage
from prefixsim.sources import problems
from prefixsim.sources.claude_code.raw import _iso
from prefixsim.sources.stamps import parse_time
from prefixsim.sources.codex.calibrate import Calibrator
from prefixsim.sources.codex.rollout import Raw
from prefixsim.sources.files import check_regular, open_regular, suffix
from prefixsim.sources.jsonl import iter_jsonl
from prefixsim.sources.record import Record, check_model, checked_usage, token_count

MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


def is_session_record(obj: object) -> bool:
    """A Gemini CLI session: the whole JSON record, or its JSONL metadata line (format detection)."""
    return isinstance(obj, dict) and "sessionId" in obj and "projectHash" in obj


def _records(path: Path) -> Iterator[tuple[int | None, str, Any]]:
    """(line, label, record): the messages of a whole-JSON session (named by their index), or each
    JSONL line."""
    check_regular(path)
    with open_regular(path) as fh:
        head = fh.read(4096).lstrip()
    if suffix(path) == ".json" or (head.startswith(b"{") and b'"messages"' in head and b"\n" not in head.rstrip()):
        with open_regular(path) as fh:
            doc = json.loads(fh.read().decode("utf-8"))
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            raise UserError("a Gemini CLI session is an object with a `messages` list", str(path))
        yield None, "", {k: v for k, v in doc.items() if k != "messages"}
        for i, m in enumerate(doc["messages"]):
            yield None, f"message {i}", m
        return
    for n, o in iter_jsonl(path):
        yield n, "", o


def parse(path: Path, prefix: str = "") -> list[Raw]:
    """Every API call of one session file, in file order."""
    where = str(path)
    stream = prefix + "main"
    s: dict = {"session": path.stem, "kind": "main", "at": None, "turn": False, "first": "", "users": [],
               "rewound": 0}
    out: list[Raw] = []

    def one(n: int | None, o: object) -> None:
        if not isinstance(o, dict):
            raise UserError("a session record is a JSON object")
        if "$rewindTo" in o:
            target = o["$rewindTo"]
            users = s["users"]
            if target in users:   # every user turn from the named one on is dropped
                s["rewound"] += len(users) - users.index(target)
                del users[users.index(target):]
            return
        if "$set" in o or is_session_record(o):
            meta = o.get("$set") if "$set" in o else o
            if isinstance(meta, dict):
                if isinstance(meta.get("sessionId"), str):
                    s["session"] = meta["sessionId"]
                if meta.get("kind") == "subagent":
                    s["kind"] = "agent"
            return
        typ = o.get("type")
        if typ not in MESSAGE_TYPES:
            raise UserError(f"message of unknown type {typ!r}")
        t = parse_time(o.get("timestamp"))
        if typ == "user":
            s["turn"], s["at"] = True, t
            s["users"].append(o.get("id"))
            if not s["first"]:
                s["first"] = _text(o.get("content"))
            return
        if typ != "gemini":
            return
        tokens = o.get("tokens")
        if not isinstance(tokens, dict) or not any(tokens.get(k) for k in ("input", "output", "cached", "thoughts")):
            # a message without usage (an error, a cancelled stream), or with every count 0 (a tool call
            # recorded on its own after the response that asked for it): no request to compare
            s["at"] = _last_tool_time(o) or t
            return
        prompt = token_count(tokens.get("input"), "tokens.input")
        cached = token_count(tokens.get("cached"), "tokens.cached")
        output = token_count(tokens.get("output"), "tokens.output")
        thoughts = token_count(tokens.get("thoughts"), "tokens.thoughts")
        if cached > prompt:
            raise UserError(f"tokens.cached {cached:,} exceed tokens.input {prompt:,}")
        model = check_model(o.get("model"), "gemini")
        start = s["at"] if s["at"] is not None and s["at"] <= t else t
        rid = "gemini-cli-" + xxhash.xxh3_64_hexdigest(f"{s['session']}|{o.get('id')}|{t}".encode())
        out.append(Raw(rid, stream, s["kind"], s["session"], f"gemini-cli|{model}", model, start, t,
                       checked_usage(Usage(input_tokens=prompt - cached, cache_read=cached,
                                           output_tokens=output + thoughts)),
                       prompt, output, _iso(start), where, n or 0, len(out), s["turn"], False,
                       "rollback" if s["rewound"] else None, s["rewound"], s["first"], None, "gemini"))
        s.update(turn=False, rewound=0, at=_last_tool_time(o) or t)

    for n, label, o in _records(path):
        problems.guarded(where, n, one, n, o, where=label)
    return out


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _last_tool_time(o: dict) -> float | None:
    """When the message's tool calls finished: the next request is sent with their results."""
    stamps = [c.get("timestamp") for c in o.get("toolCalls") or () if isinstance(c, dict)]
    times = [parse_time(x) for x in stamps if isinstance(x, str)]
    return max(times) if times else None


def load(path: Path) -> list[Record]:
    """The requests of one session file, or of every session file under a folder, time-ordered."""
    files = sorted(f for f in path.rglob("*.json*") if f.suffix in (".json", ".jsonl")) if path.is_dir() else [path]
    raws: list[Raw] = []
    for f in files:
        own = f"{f.with_suffix('').relative_to(path).as_posix()}/" if path.is_dir() and len(files) > 1 else ""
        raws.extend(parse(f, own))
    raws.sort(key=lambda r: (r.start, r.order))
    return list(map(Calibrator(remembered_count("cl100k_base")).step, raws))
