"""OpenCode's event stream (the server's bus, `GET /event`: `{type, properties}` events, as a JSON array,
JSON Lines or SSE text) folded into `Session`s: a later update of a message or part replaces the
earlier, removals delete, sessions carry their parent. A bad event is skipped and named at its line."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from prefixsim.errors import UserError
from prefixsim.sources import problems
from prefixsim.sources.files import open_regular
from prefixsim.sources.opencode.session import Message, Session, _obj, _parent, _time, _version

#: The events that carry sessions, messages and parts (every other event type is passed over).
SESSION_EVENTS = frozenset({"session.created", "session.updated", "session.deleted"})
MESSAGE_EVENTS = frozenset({"message.updated", "message.removed", "message.part.updated", "message.part.removed"})
#: How much of a file is looked at to tell an event stream, and how many of its events.
EVENTS_HEAD = 1 << 20
EVENTS_SNIFF = 20
#: A file whose first 64 KiB name no event `properties` is no event stream: only then is the rest of
#: the head read (detection runs on every file a replay is given).
EVENTS_MARK = 1 << 16


def _event(obj: object) -> dict | None:
    """`obj` as a bus event `{type, properties}` (unwrapped from `/global/event`'s `{directory, payload}`), else None."""
    if isinstance(obj, dict) and isinstance(obj.get("payload"), dict) and "type" not in obj:
        obj = obj["payload"]
    if isinstance(obj, dict) and isinstance(obj.get("type"), str) and "properties" in obj:
        return obj
    return None


def _ses(value: object) -> bool:
    return isinstance(value, str) and value.startswith("ses_")


def _opencode_event(e: dict) -> bool:
    """An event only OpenCode writes: a message, part or session event whose object names an OpenCode
    session (`ses_…`; OpenCode's ids are prefixed by kind)."""
    props = e["properties"]
    if not isinstance(props, dict):
        return False
    if e["type"] == "message.updated" and isinstance(props.get("info"), dict):
        return _ses(props["info"].get("sessionID"))
    if e["type"] == "message.part.updated" and isinstance(props.get("part"), dict):
        return _ses(props["part"].get("sessionID")) and isinstance(props["part"].get("messageID"), str)
    if e["type"] in ("session.created", "session.updated") and isinstance(props.get("info"), dict):
        return _ses(props["info"].get("id"))
    return False


def _sse(line: str) -> str | None:
    """A line's JSON text: the line itself (JSON Lines) or an SSE `data:` field; None for SSE's other
    fields, its comments and blank lines."""
    text = line.strip()
    if text.startswith("data:"):
        return text[5:].strip()
    if not text or text.startswith(":") or re.match(r"(event|id|retry):", text):
        return None
    return text


def is_events(path: Path) -> bool:
    """An OpenCode event stream, from the first events of its first MiB: a JSON array of events or one
    event a line (JSON Lines, SSE `data:` lines), most of them `{type, properties}` and at least one a
    message, part or session event of an OpenCode session. Another format's lines are not events."""
    with open_regular(path) as fh:
        head = fh.read(EVENTS_MARK)
        if b'"properties"' not in head:
            return False
        head += fh.read(EVENTS_HEAD - EVENTS_MARK)
        whole = not fh.read(1)
    text = head.decode("utf-8", "replace")
    found: list[object] = []
    if text.lstrip().startswith("["):
        decoder, i = json.JSONDecoder(), text.index("[") + 1
        while len(found) < EVENTS_SNIFF:
            while i < len(text) and text[i] in " \t\r\n,":
                i += 1
            if i >= len(text) or text[i] == "]":
                break
            try:
                obj, i = decoder.raw_decode(text, i)
            except (json.JSONDecodeError, RecursionError):
                break   # cut at the head's end, or malformed: judged on the events before it
            found.append(obj)
    else:
        lines = text.splitlines()
        for line in lines if whole else lines[:-1]:   # the head's last line may be cut
            body = _sse(line)
            if body is None:
                continue
            try:
                found.append(json.loads(body))
            except (json.JSONDecodeError, RecursionError):
                continue   # a malformed line: named when the file is read
            if len(found) >= EVENTS_SNIFF:
                break
    events = [e for e in map(_event, found) if e is not None]
    return len(events) * 2 > len(found) and any(_opencode_event(e) for e in events)


def _event_lines(path: Path) -> Iterator[tuple[int, object]]:
    """(line, parsed value) of each event of the file; a line that does not parse is skipped and named."""
    where = str(path)
    with open_regular(path) as fh:
        first = fh.read(65536).lstrip()
    if first.startswith(b"["):
        # lazy: only a JSON-array stream needs the element-by-element reader
        from prefixsim.sources.claude_code.hookdump import iter_elements

        yield from iter_elements(path)
        return
    with open_regular(path) as fh:
        for n, raw in enumerate(fh, start=1):
            def parse(raw: bytes = raw) -> object:
                body = _sse(raw.decode("utf-8"))
                try:
                    return _NONE if body is None else json.loads(body)
                except json.JSONDecodeError as e:
                    raise UserError(f"not valid JSON ({e.msg})") from None
            obj = problems.guarded(where, n, parse)
            if obj is not None and obj is not _NONE:
                yield n, obj


_NONE = object()


@dataclass(slots=True)
class _Fold:
    """The stream folded so far: the latest of each session, message and part, with the line it came on."""
    sessions: dict[str, tuple[dict, int]] = field(default_factory=dict)
    messages: dict[str, tuple[dict, int]] = field(default_factory=dict)
    parts: dict[str, dict[str, dict]] = field(default_factory=dict)   # message id -> part id -> part


def _id(obj: object, key: str, what: str) -> str:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, str) or not value:
        raise UserError(f"{what} has no {key} ({key}: {value!r})"[:200])
    return value


def _apply(fold: _Fold, line: int, obj: object) -> None:
    """One event into the fold; an event that is not one, or lacks the ids it needs, raises (skipped)."""
    e = _event(obj)
    if e is None:
        raise UserError("not an event (a JSON object with `type` and `properties`)")
    typ, props = e["type"], e["properties"]
    if typ not in SESSION_EVENTS and typ not in MESSAGE_EVENTS:
        return   # permissions, status, diffs, part deltas, the server's own: no message
    props = _obj(props, f"a {typ} event's properties")
    if typ in SESSION_EVENTS:
        info = _obj(props.get("info"), f"a {typ} event's info")
        sid = _id(info, "id", f"a {typ} event's session")
        if typ == "session.deleted":
            fold.sessions[sid] = ({"deleted": True}, line)
        else:
            fold.sessions[sid] = (info, line)
    elif typ == "message.updated":
        info = _obj(props.get("info"), "a message.updated event's info")
        mid = _id(info, "id", "a message.updated event's message")
        _id(info, "sessionID", "a message.updated event's message")
        fold.messages[mid] = (info, line)
    elif typ == "message.part.updated":
        part = _obj(props.get("part"), "a message.part.updated event's part")
        pid = _id(part, "id", "a message.part.updated event's part")
        fold.parts.setdefault(_id(part, "messageID", "a message.part.updated event's part"), {})[pid] = part
    elif typ == "message.removed":
        mid = _id(props, "messageID", "a message.removed event")
        fold.messages.pop(mid, None)
        fold.parts.pop(mid, None)
    else:   # message.part.removed
        mid = _id(props, "messageID", "a message.part.removed event")
        fold.parts.get(mid, {}).pop(_id(props, "partID", "a message.part.removed event"), None)


def from_events(path: Path) -> list[Session]:
    """The sessions an event stream shows, each message as its last update left it, its parts in id
    (creation) order; a session no session event describes is made from its messages (created at the
    earliest). A deleted session is left out with its messages."""
    where = str(path)
    fold = _Fold()
    for line, obj in _event_lines(path):
        problems.guarded(where, line, _apply, fold, line, obj)
    sessions: dict[str, Session] = {}
    gone = {sid for sid, (info, _) in fold.sessions.items() if info.get("deleted") is True}
    for sid, (info, _) in fold.sessions.items():
        if sid not in gone:
            sessions[sid] = Session(sid, _parent(info.get("parentID")), _time(info), where, version=_version(info))
    for mid in sorted(fold.messages):
        info, line = fold.messages[mid]
        sid = info["sessionID"]
        if sid in gone:
            continue
        s = sessions.get(sid)
        if s is None:
            s = sessions[sid] = Session(sid, None, _time(info), where)
        elif not _has_time(fold.sessions.get(sid)):
            s.created = min(s.created, _time(info)) if s.created else _time(info)
        parts = fold.parts.pop(mid, {})
        s.messages.append(Message(info, [parts[k] for k in sorted(parts)], where, f"message {mid} (line {line})"))
    orphans = sum(len(p) for p in fold.parts.values())
    if orphans:
        problems.note(where, None, f"{orphans} part(s) of {len(fold.parts)} message(s) the stream never "
                                   "describes (no message.updated) are not read")
    if not sessions:
        raise UserError("an OpenCode event stream with no session or message events", where)
    return list(sessions.values())


def _has_time(entry: tuple[dict, int] | None) -> bool:
    return entry is not None and _time(entry[0]) > 0
