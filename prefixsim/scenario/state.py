"""The mutable state of one conversation in the scenario builder: its messages rendered once into
blocks and laid out end to end, and where a request's cache_control breakpoints fall.

The conversation is kept as rendered blocks that are built once and reused by every later request,
so a long session costs work per new turn, not per history length.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prefixsim.model import Block
from prefixsim.providers.tables import anthropic_strips_thinking
from prefixsim.wire.anthropic import THINKING_TYPES, message_blocks, system_blocks, tool_block


@dataclass(eq=False)   # compared by identity: a message is rendered once, and its object names it
class Message:
    role: str
    content: list[dict]
    blocks: list[Block] = field(default_factory=list)
    index: int = 0                     # its position when rendered (the blocks' paths say it)
    thinking: bool = False             # an assistant message holding thinking blocks
    images: bool = False               # holds an image block (looked at once, not per request)
    _bare: list[Block] | None = None

    def bare(self) -> list[Block]:
        """Its blocks without the thinking blocks, as a model that strips earlier turns' thinking sees it."""
        if self._bare is None:
            self._bare = message_blocks({"role": self.role, "content": self.content}, self.index, True)
        return self._bare


def _thinking_cut(messages: list[Message]) -> int:
    """thinking_cut() over rendered messages: the last user message that is not only tool results."""
    for mi in range(len(messages) - 1, -1, -1):
        m = messages[mi]
        if m.role == "user" and not (m.content and all(p.get("type") == "tool_result" for p in m.content)):
            return mi
    return -1


@dataclass
class _Flat:
    """Every message's blocks end to end, extended as messages are appended, so a request does not
    walk its whole history again; a message popped or replaced since starts it over."""

    source: list[Message] = field(default_factory=list)   # the messages laid out, in order
    blocks: list[Block] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)        # where each message's blocks start
    images: int = 0                                        # messages holding an image block
    stripped: set[int] = field(default_factory=set)        # messages laid out without their thinking
    thinking: list[int] = field(default_factory=list)      # laid-out messages holding thinking, in order

    def update(self, messages: list[Message], cut: int = -1) -> "_Flat":
        """Lay out `messages`; assistant messages before `cut` without their thinking blocks."""
        k = len(self.source)
        if k > len(messages) or messages[:k] != self.source:   # identical objects compare in C
            k = 0
        # A message laid out with (or without) thinking that now needs the other form starts it over there.
        for i in self.thinking:   # only messages holding thinking can change form
            if i >= k:
                break
            if (i < cut) != (i in self.stripped):
                k = i
                break
        if k < len(self.source):
            self.blocks, self.starts = self.blocks[:self.starts[k]] if k else [], self.starts[:k]
            self.images = sum(any(p.get("type") == "image" for p in m.content) for m in messages[:k])
            self.stripped = {i for i in self.stripped if i < k}
            self.thinking = [i for i in self.thinking if i < k]
        for i in range(k, len(messages)):
            m = messages[i]
            self.starts.append(len(self.blocks))
            if m.thinking:
                self.thinking.append(i)
            if m.thinking and i < cut:
                self.blocks.extend(m.bare())
                self.stripped.add(i)
            else:
                self.blocks.extend(m.blocks)
            self.images += m.images
        self.source = list(messages)
        return self

    def copy(self) -> "_Flat":
        return _Flat(list(self.source), list(self.blocks), list(self.starts), self.images, set(self.stripped),
                     list(self.thinking))


@dataclass
class Conv:
    """The mutable state of one conversation: what the next request will render."""

    model: str
    tools: list[dict]
    system: list[dict]
    messages: list[Message]
    tool_choice: dict | None = None
    thinking: dict | None = None
    refused: set[str] = field(default_factory=set)
    marks: set[tuple[int, int]] = field(default_factory=set)  # (message, content block) given a breakpoint
    _tool_blocks: list[Block] | None = None
    _system_blocks: list[Block] | None = None
    _flat: _Flat = field(default_factory=_Flat)
    _thinking_seen: bool = False   # a message holding thinking was ever added

    def fork(self) -> "Conv":
        """A copy that shares the rendered history blocks (they are immutable)."""
        return Conv(self.model, list(self.tools), list(self.system), list(self.messages), self.tool_choice,
                    self.thinking, set(self.refused), set(self.marks), self._tool_blocks, self._system_blocks,
                    self._flat.copy(), self._thinking_seen)

    def add_message(self, role: str, content: list[dict], blocks: list[Block] | None = None,
                    images: bool | None = None) -> None:
        """Append a message; `blocks` and `images`, when given, are its rendered blocks (message_blocks
        of it) and whether it holds an image block."""
        mi = len(self.messages)
        thinking = role == "assistant" and any(p.get("type") in THINKING_TYPES for p in content)
        if blocks is None:
            blocks = message_blocks({"role": role, "content": content}, mi)
        if images is None:
            images = any(p.get("type") == "image" for p in content)
        self.messages.append(Message(role, content, blocks, mi, thinking, images))
        self._thinking_seen |= thinking

    def _laid_out(self) -> _Flat:
        # Only a history holding thinking needs the cut (the scan can reach far back in a tool loop).
        strips = self._thinking_seen and anthropic_strips_thinking(self.model)
        cut = _thinking_cut(self.messages) if strips else -1
        return self._flat.update(self.messages, cut)

    def set_tools(self, tools: list[dict]) -> None:
        self.tools, self._tool_blocks = tools, None

    def set_system(self, system: list[dict]) -> None:
        self.system, self._system_blocks = system, None

    def blocks(self) -> tuple[list[Block], list[Block], list[Block]]:
        if self._tool_blocks is None:
            self._tool_blocks = [tool_block(t, i) for i, t in enumerate(self.tools)]
        if self._system_blocks is None:
            self._system_blocks = system_blocks(self.system)
        return self._tool_blocks, self._system_blocks, self._laid_out().blocks

    def message_starts(self) -> list[int]:
        """Index of each message's first block among the message blocks."""
        return self._laid_out().starts

    def images(self) -> bool:
        return self._laid_out().images > 0


def apply_breakpoints(conv: Conv, policy: Any, ttl: str) -> tuple[list[Block], str | None]:
    """The next request's blocks (tools, system, messages) with a cache_control of `ttl` where the
    scenario's `breakpoints` policy puts one, and the TTL of a top-level (automatic) cache_control."""
    tools, system, msgs = conv.blocks()
    blocks = [*tools, *system, *msgs]
    if policy == "automatic":
        return blocks, ttl
    anchors: list[str]
    if policy in (None, "none"):
        anchors = []
    elif policy == "system_and_tools":
        anchors = ["tools", "system"]
    elif policy == "last_message":
        anchors = ["last_message"]
    elif policy == "claude_code":
        anchors = ["system", "last_message"]   # Claude Code marks the system prompt and the newest message
    else:
        anchors = list(policy)
    marks: set[int] = set()
    for a in anchors:
        if a == "tools" and tools:
            marks.add(len(tools) - 1)
        elif a == "system" and (system or tools):
            marks.add(len(tools) + len(system) - 1)
        elif a == "last_message" and msgs:
            marks.add(len(blocks) - 1)
        elif a == "previous_message" and len(conv.messages) >= 3:
            # the last block of the message before the previous assistant turn (the prior user turn)
            upto = conv.message_starts()[len(conv.messages) - 2]
            marks.add(len(tools) + len(system) + upto - 1)
    if policy not in (None, "none") and conv.marks:
        starts, base = conv.message_starts(), len(tools) + len(system)
        marks |= {base + starts[mi] + ci for mi, ci in conv.marks if mi < len(starts)}
    for i in marks:
        blocks[i] = blocks[i].with_breakpoint(ttl)
    return blocks, None
