"""The thinking setting each turn of a transcript was sent with, per stream.

A change of it invalidates the messages (providers.tables.THINKING_LAYER). A user line states it in
its `thinkingMetadata` (2.0.x: a level; 2.1.x: a budget). A turn whose line states none (before 2.0,
or a line the harness wrote: an interruption, a background task's notification, a plan to implement)
was sent with the setting its responses show: on when one holds a thinking block; off when its first
response has none, on a model whose thinking is a budget (a response then begins with its thinking);
on a model that thinks adaptively a response without one says nothing, and the turn keeps the
setting of the turn before. A line right after a turn's prompt with no request between (a hook's
output) joins that turn. docs/rules.md#claude-code-transcripts-parent-chain.
"""
from __future__ import annotations

from prefixsim.providers.tables import anthropic_thinks_adaptively
from prefixsim.sources.claude_code.message import thinking_setting


class TurnSettings:
    """Fed a file's lines in order; `of` is the setting a request is sent with. A setting read from a
    response can change requests already made in the turn: `renamed` returns them, with their setting."""

    def __init__(self) -> None:
        self.turn: dict[str, str] = {}            # stream -> the setting of its latest turn ("" off)
        self.inferred: dict[str, list[str]] = {}  # stream -> its latest turn's requests, if read from them
        self.thinks_as: dict[str, str] = {}       # stream -> the latest stated setting with thinking on
        self.prompted: set[str] = set()           # streams whose latest new-turn line no request followed
        self.unnamed: dict[str, list[str]] = {}   # stream -> requests seen thinking before a level was stated
        self.thought: set[str] = set()            # streams whose inferred turn showed a thinking block

    def user_line(self, stream: str, meta: object) -> list[tuple[str, str]]:
        """A new user turn's line (text, not meta): its stated setting, if any."""
        setting = thinking_setting(meta)
        renamed: list[tuple[str, str]] = []
        if setting is not None:
            self.turn[stream] = setting
            self.inferred.pop(stream, None)
            if setting:
                self.thinks_as[stream] = setting
                # what the responses showed on is the level the session states (one a session unless
                # changed): named by the first one stated, so a change of it stays a change
                renamed = [(rid, setting) for rid in self.unnamed.pop(stream, ())]
        elif stream not in self.prompted:
            self.inferred[stream] = []
            self.thought.discard(stream)
        self.prompted.add(stream)
        return renamed

    def thinking_block(self, stream: str) -> list[tuple[str, str]]:
        """A response line of `stream` holds a thinking block: an inferred turn was sent thinking, from
        its first request on (one setting a turn)."""
        if stream not in self.inferred or stream in self.thought:
            return []
        self.thought.add(stream)
        if self.turn.get(stream):
            return []
        self.turn[stream] = on = self.thinks_as.get(stream, "on")
        if stream not in self.thinks_as:
            self.unnamed.setdefault(stream, []).extend(self.inferred[stream])
        return [(rid, on) for rid in self.inferred[stream]]

    def of(self, stream: str, rid: str, model: str) -> str:
        """The setting request `rid` (a new call of `stream`) is sent with."""
        self.prompted.discard(stream)
        if stream in self.inferred:
            if not self.inferred[stream] and stream not in self.thought and not anthropic_thinks_adaptively(model):
                self.turn[stream] = ""
            self.inferred[stream].append(rid)
            if self.turn.get(stream) and stream not in self.thinks_as:
                self.unnamed.setdefault(stream, []).append(rid)
        return self.turn.get(stream, "")
