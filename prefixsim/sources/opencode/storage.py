"""OpenCode's stored sessions -> `Session`s (their messages, each with its parts), whatever layout holds them.

OpenCode (`packages/opencode/src/storage/`) has kept sessions three ways:

- JSON storage, the versions before the SQLite move: under `<data>/storage/`, `session/<projectID>/<id>.json`,
  `message/<sessionID>/<id>.json`, `part/<messageID>/<id>.json` (`storage.ts`). Ids are
  `Identifier.ascending` (a time prefix), so name order is creation order.
- SQLite, later versions: `<data>/opencode.db`, tables `session` (`id`, `parent_id`, `time_created`, `version`),
  `message` and `part` (`id`, `message_id`, `session_id`, the rest of the object as JSON in `data`); the
  first start of such a version migrates the JSON storage into it (`json-migration.ts`), which stays on
  disk. Read here with sqlite3 in read-only mode: the replay never writes to a user's database.
- `opencode export <sessionID>`: one JSON document `{info: Session, messages: [{info, parts}]}`.
- an event stream: what the server publishes on its bus (`GET /event`, server-sent events `data: {type,
  properties}`; `/global/event` wraps each in `{directory, payload}`), kept by a client as a JSON array of
  events, as JSON Lines or as the SSE text. `message.updated` carries a message's whole info,
  `message.part.updated` a whole part, `session.created` / `session.updated` the session's info, each the
  object the storage writes (`session/message-v2.ts`, `session/index.ts` `Event`); a later update of the
  same id replaces the earlier (a message is published as it streams), `message.removed` and
  `message.part.removed` delete, `session.deleted` drops the session. Every other event (permissions,
  status, diffs, deltas, the server's own) is no message and is passed over.

A session file of the JSON storage given alone is that session and its sub-agents' sessions.

A file, row or event that does not read is skipped and named; the rest of the session is read.
"""
from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from prefixsim.errors import UserError
from prefixsim.sources import problems
from prefixsim.sources.files import check_regular, not_regular, open_regular

SQLITE_MAGIC = b"SQLite format 3\x00"
#: The database file names OpenCode uses (release channels name their own: opencode-beta.db, ...).
DB_NAMES = re.compile(r"opencode(-[a-z0-9]+)?\.db")
_EXPORT_HEAD = re.compile(rb'^\s*\{\s*"info"\s*:\s*\{')
#: `opencode export` writes this line to stderr; captured with `2>&1`, it opens the file.
_EXPORT_BANNER = re.compile(rb"^Exporting session[^\n]*\n")
#: The events that carry sessions, messages and parts (every other event type is passed over).
SESSION_EVENTS = frozenset({"session.created", "session.updated", "session.deleted"})
MESSAGE_EVENTS = frozenset({"message.updated", "message.removed", "message.part.updated", "message.part.removed"})
#: How much of a file is looked at to tell an event stream, and how many of its events.
EVENTS_HEAD = 1 << 20
EVENTS_SNIFF = 20


NOT_OPENCODE = "not an OpenCode session (an export, an event stream, opencode.db or a storage folder)"


@dataclass(slots=True)
class Message:
    info: dict
    parts: list[dict]
    where: str             # the file that holds it (a database: the database, `label` names the row)
    label: str = ""


@dataclass(slots=True)
class Session:
    id: str
    parent: str | None     # the session that started it (a `task` tool's sub-agent)
    created: float         # ms
    where: str
    messages: list[Message] = field(default_factory=list)
    #: the OpenCode version that created it (session info's `version`; None where the layout keeps none)
    version: str | None = None


def _json_file(path: Path, banner: bool = False) -> object:
    why = not_regular(path)
    if why is not None:
        raise UserError(f"{why}; not read")
    with open_regular(path) as fh:
        data = fh.read()
    try:
        return json.loads((_EXPORT_BANNER.sub(b"", data, count=1) if banner else data).decode("utf-8"))
    except json.JSONDecodeError as e:
        raise UserError(f"not valid JSON ({e.msg}, line {e.lineno} column {e.colno})") from None


def _obj(value: object, what: str) -> dict:
    if not isinstance(value, dict):
        raise UserError(f"{what} is not a JSON object")
    return value


def _time(info: dict) -> float:
    t = info.get("time")
    c = t.get("created") if isinstance(t, dict) else None
    return float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else 0.0


def storage_root(path: Path) -> Path | None:
    """The JSON storage folder at `path`: the folder itself (`storage/`), or its `storage/` (the data dir)."""
    for root in (path, path / "storage"):
        if (root / "session").is_dir() and (root / "message").is_dir():
            return root
    return None


def database(path: Path) -> Path | None:
    """The OpenCode database at `path`: the file itself, or `opencode.db` (or a channel's) in the data dir."""
    if path.is_file():
        return path if is_database(path) else None
    if path.is_dir():
        for f in sorted(path.glob("opencode*.db")):
            if DB_NAMES.fullmatch(f.name) and f.is_file() and is_database(f):
                return f
    return None


def is_database(path: Path) -> bool:
    with open_regular(path) as fh:
        return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def is_export(path: Path) -> bool:
    """An `opencode export` document: a JSON object whose first key is `info`, holding a session id."""
    with open_regular(path) as fh:
        head = _EXPORT_BANNER.sub(b"", fh.read(4096), count=1)
    return bool(_EXPORT_HEAD.match(head)) and b'"ses_' in head


def load(path: Path) -> list[Session]:
    """The sessions at `path` (a data dir, a storage folder, a database, an export or an event stream), in
    creation order."""
    db = database(path)
    if db is not None:
        if path.is_dir() and storage_root(path) is not None:
            problems.note(str(path), None, f"read {db.name}; the JSON storage beside it is what OpenCode migrated "
                                           "into it and is not read again")
        out = _from_db(db)
    elif path.is_dir():
        root = storage_root(path)
        if root is None:
            raise UserError("folder holds no OpenCode storage (session/ and message/) nor opencode.db", str(path))
        out = _from_storage(root)
    elif (root := session_file(path)) is not None:
        out = _from_storage(root, only=path.stem)
    elif path.is_file() and is_events(path):
        out = _from_events(path)
    else:
        out = [_from_export(path)]
    out.sort(key=lambda s: (s.created, s.id))
    return out


def _from_export(path: Path) -> Session:
    check_regular(path)
    if not is_export(path):
        raise UserError(NOT_OPENCODE, str(path))
    try:
        doc = _obj(_json_file(path, banner=True), "an OpenCode export")
    except (UserError, UnicodeDecodeError) as e:
        raise UserError(f"an OpenCode export that does not parse: {e}", str(path)) from None
    info = _obj(doc.get("info"), "the export's info")
    if not isinstance(doc.get("messages"), list):
        raise UserError("an OpenCode export has a `messages` list", str(path))
    s = Session(str(info.get("id") or path.stem), _parent(info.get("parentID")), _time(info), str(path),
                version=_version(info))
    for i, m in enumerate(doc["messages"]):
        def one(m: object = m) -> Message:
            m = _obj(m, "a message")
            parts = m.get("parts") or []
            if not isinstance(parts, list):
                raise UserError("a message's parts are not a list")
            return Message(_obj(m.get("info"), "a message's info"), [p for p in parts if isinstance(p, dict)],
                           str(path), f"message {i}")
        msg = problems.guarded(str(path), None, one, where=f"message {i}")
        if msg is not None:
            s.messages.append(msg)
    return s


def _parent(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _version(info: dict) -> str | None:
    """The OpenCode version a session's info records (`version`, set when the session is created)."""
    v = info.get("version")
    return v.strip() if isinstance(v, str) and v.strip() else None


def session_file(path: Path) -> Path | None:
    """The storage root of a session file given alone (`storage/session/<projectID>/<id>.json`)."""
    if path.suffix == ".json" and path.parent.parent.name == "session" and len(path.parents) > 2:
        return storage_root(path.parents[2])
    return None


def _from_storage(root: Path, only: str | None = None) -> list[Session]:
    """Every session of the storage, or only session `only` and its sub-agents' (whose messages alone are read)."""
    sessions = []
    for f in sorted((root / "session").glob("*/*.json")):
        info = problems.guarded(str(f), None, lambda f=f: _obj(_json_file(f), "a session file"))
        if info is not None:
            sessions.append(Session(f.stem, _parent(info.get("parentID")), _time(info), str(f), version=_version(info)))
    if only is not None:
        keep = {only}
        for _ in sessions:   # a sub-agent's sub-agents too, however deep
            grown = keep | {s.id for s in sessions if s.parent in keep}
            if grown == keep:
                break
            keep = grown
        sessions = [s for s in sessions if s.id in keep]
    for s in sessions:
        mdir = root / "message" / s.id
        for mf in sorted(mdir.glob("*.json")) if mdir.is_dir() else ():
            m = problems.guarded(str(mf), None, lambda mf=mf: _obj(_json_file(mf), "a message file"))
            if m is None:
                continue
            parts = []
            for pf in sorted((root / "part" / mf.stem).glob("*.json")):
                p = problems.guarded(str(pf), None, lambda pf=pf: _obj(_json_file(pf), "a part file"))
                if p is not None:
                    parts.append(p)
            s.messages.append(Message(m, parts, str(mf)))
    return sessions


def _from_db(db: Path) -> list[Session]:
    where = str(db)
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise UserError(f"cannot open the OpenCode database: {e}", where) from None
    try:
        sessions = {}
        columns = {row[1] for row in _rows(con, where, "PRAGMA table_info(session)")}
        version = "version" if "version" in columns else "NULL"   # the session's OpenCode version, where kept
        for sid, parent, created, v in _rows(con, where, "SELECT id, parent_id, time_created, "
                                                         f"{version} FROM session ORDER BY id"):
            when = created if isinstance(created, (int, float)) and not isinstance(created, bool) else 0
            sessions[sid] = Session(str(sid), _parent(parent), float(when), where, version=_version({"version": v}))
        parts: dict[str, list[dict]] = {}
        for pid, mid, data in _rows(con, where, "SELECT id, message_id, data FROM part ORDER BY message_id, id"):
            p = problems.guarded(where, None, _row, data, where=f"part {pid}")
            if p is not None:
                parts.setdefault(mid, []).append(p)
        for mid, sid, data in _rows(con, where, "SELECT id, session_id, data FROM message ORDER BY session_id, id"):
            info = problems.guarded(where, None, _row, data, where=f"message {mid}")
            if info is not None and sid in sessions:
                info.setdefault("id", mid)
                sessions[sid].messages.append(Message(info, parts.get(mid, []), where, f"message {mid}"))
        return list(sessions.values())
    finally:
        con.close()


def _rows(con: sqlite3.Connection, where: str, sql: str) -> list[tuple]:
    try:
        return con.execute(sql).fetchall()
    except sqlite3.Error as e:
        raise UserError(f"not an OpenCode database ({e})", where) from None


def _row(data: object) -> dict:
    if not isinstance(data, (str, bytes)):
        raise UserError("its data is not JSON text")
    try:
        return _obj(json.loads(data), "its data")
    except json.JSONDecodeError as e:
        raise UserError(f"its data is not valid JSON ({e.msg})") from None


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
        head = fh.read(EVENTS_HEAD)
        whole = not fh.read(1)
    if b'"properties"' not in head[:65536]:
        return False
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
        from prefixsim.sources.claude_code.hookdump import iter_elements   # a JSON array, element by element

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


def _from_events(path: Path) -> list[Session]:
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
