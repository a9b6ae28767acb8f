"""One Claude Code API call as the transcript shows it (`Raw`), before calibration (calibrate.py), and
the transcripts' timestamp form (`_iso`)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from prefixsim.model import Usage


@dataclass(frozen=True, slots=True)
class Raw:
    """One deduplicated API call as the transcript shows it, before calibration."""

    request_id: str
    stream: str
    kind: str            # main | agent | compaction
    family: str          # who shares the static prefix
    model: str
    start: float
    response: float
    usage: Usage
    timestamp: str
    path: str
    line: int
    parent: str | None   # the stream a compaction call forks
    event: str | None    # compaction | rerender | None: the history before this call was replaced
    first_text: str      # visible text of the stream's first user message (for the static estimate)
    order: int
    shared: str = ""     # who shares the cross-session prefix: harness version, main or agent type, model
    fork: str | None = None   # the earlier request of the stream whose reply this prompt follows (a rewind)
    env: str = ""        # the working directory the system prompt names (its session part changes with it)
    thinking: str = ""   # the turn's thinking setting ("" off): a change invalidates the messages (or all)
    folder: str = ""     # the directory the session was launched in (its project's MCP servers and settings)
    generated: int | None = 0   # output characters written by the response's earliest line (generated.py)
    said: int | None = None     # a request opening a user turn: tokens of the text typed (else None)
    stripped: bool = False      # its prompt leaves out earlier turns' thinking (`fork` is where it returns)
    suggests: bool = False      # its harness version may send the prompt-suggestion request (versions.py)


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
