"""OpenCode's sessions as every layout gives them (storage.py, events.py): a `Session` with its
`Message`s, each message's info and parts, and the fields read from a session's or message's info."""
from __future__ import annotations

from dataclasses import dataclass, field

from prefixsim.errors import UserError


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


def _obj(value: object, what: str) -> dict:
    if not isinstance(value, dict):
        raise UserError(f"{what} is not a JSON object")
    return value


def _time(info: dict) -> float:
    t = info.get("time")
    c = t.get("created") if isinstance(t, dict) else None
    return float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else 0.0


def _parent(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _version(info: dict) -> str | None:
    """The OpenCode version a session's info records (`version`, set when the session is created)."""
    v = info.get("version")
    return v.strip() if isinstance(v, str) and v.strip() else None
