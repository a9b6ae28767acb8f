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
from pathlib import Path
from typing import TYPE_CHECKING

from prefixsim.errors import UserError
from prefixsim.sources import problems
from prefixsim.sources.files import check_regular, not_regular, open_regular
from prefixsim.sources.opencode import events
from prefixsim.sources.opencode.session import Message, Session, _obj, _parent, _time, _version

if TYPE_CHECKING:
    import sqlite3

SQLITE_MAGIC = b"SQLite format 3\x00"
#: The database file names OpenCode uses (release channels name their own: opencode-beta.db, ...).
DB_NAMES = re.compile(r"opencode(-[a-z0-9]+)?\.db")
_EXPORT_HEAD = re.compile(rb'^\s*\{\s*"info"\s*:\s*\{')
#: `opencode export` writes this line to stderr; captured with `2>&1`, it opens the file.
_EXPORT_BANNER = re.compile(rb"^Exporting session[^\n]*\n")


NOT_OPENCODE = "not an OpenCode session (an export, an event stream, opencode.db or a storage folder)"


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
    elif path.is_file() and events.is_events(path):
        out = events.from_events(path)
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
    import sqlite3   # lazy: only a database is read with it (every replay asks whether its path is OpenCode's)

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
    import sqlite3   # lazy: as in _from_db (already loaded there)

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
