"""Turns one resolved variant (base conversation + timeline) into timed calls.

The conversation is kept as rendered blocks that are built once and reused by every later request,
so a long session costs work per new turn, not per history length.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..model import Block, Call, Request
from ..providers.tables import anthropic_strips_thinking, claude_code_ttl
from ..render import THINKING_TYPES, layer_params, message_blocks, system_blocks, tool_block
from ..sharedseq import PrefixTuple, share_tuple
from .schema import HistorySpec, Modification, Settings, TextSpec, ToolsSpec
from .textgen import TextGen

#: seed 000: every fork child sees this constant result for each of the parent's tool_use blocks.
FORK_PLACEHOLDER = "Fork started -- processing in background"

DEFAULT_TOOL_NAMES = ("Bash", "Read", "Edit", "Write", "Glob", "Grep", "Agent", "WebFetch", "WebSearch",
                      "TodoWrite", "NotebookEdit", "BashOutput", "KillShell", "ExitPlanMode", "SlashCommand",
                      "Skill")


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


def _apply_breakpoints(conv: Conv, policy: Any, ttl: str) -> tuple[list[Block], str | None]:
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


class Timeline:
    """Plays a variant's timeline and collects the calls it makes."""

    def __init__(self, settings: Settings, base_dir: str, load_json) -> None:
        self.s = settings
        self.base_dir = base_dir
        self.load_json = load_json
        from ..tokenize import get_tokenizer
        self.gen = TextGen(get_tokenizer(settings.tokenizer or "cl100k_base"), settings.seed or 0)
        self.calls: list[Call] = []
        self.t = 0.0
        self.counter: dict[str, int] = {}
        self._pending_event: str | None = None
        self._tool_id = 0

    # --- text and content ------------------------------------------------------------------------
    def text(self, n: int, kind: str = "prose") -> str:
        return self.gen.text(n, kind)

    def make_tools(self, spec: ToolsSpec | list | None, offset: int = 0) -> list[dict]:
        if spec is None:
            return []
        if isinstance(spec, list):
            return [copy.deepcopy(t) for t in spec]
        names = list(spec.names or [])
        for name in DEFAULT_TOOL_NAMES[offset:] + tuple(f"Tool{i}" for i in range(spec.count)):
            if len(names) >= spec.count:
                break
            if name not in names:
                names.append(name)
        return [self.make_tool(n, spec.size) for n in names[: spec.count]]

    def make_tool(self, name: str, size: int) -> dict:
        # ~45 tokens of schema scaffolding; the description carries the rest of the size.
        desc = self.text(max(size - 45, 1))
        return {"name": name, "description": desc,
                "input_schema": {"type": "object",
                                 "properties": {"command": {"type": "string", "description": "What to run"},
                                                "timeout": {"type": "number", "description": "Seconds"},
                                                "path": {"type": "string", "description": "Working directory"}},
                                 "required": ["command"]}}

    def make_system(self, spec: TextSpec | str | int | None) -> list[dict]:
        if spec is None:
            return []
        if isinstance(spec, str):
            return [{"type": "text", "text": spec}]
        if isinstance(spec, int):
            return [{"type": "text", "text": self.text(spec)}]
        if spec.text is not None:
            return [{"type": "text", "text": spec.text}]
        return [{"type": "text", "text": self.text(spec.size or 0)}] if spec.size else []

    def next_tool_id(self) -> str:
        self._tool_id += 1
        return f"toolu_{self._tool_id:06d}"

    def tool_use(self, conv: Conv, size: int, name: str | None = None) -> dict:
        names = [t.get("name", "tool") for t in conv.tools] or ["Bash"]
        name = name or names[self._tool_id % len(names)]
        return {"type": "tool_use", "id": self.next_tool_id(), "name": name,
                "input": {"command": self.text(max(size - 15, 1), "code")}}

    def tool_result(self, conv: Conv, use: dict, size: int) -> dict:
        if use["name"] in conv.refused:
            # The definition stays in the prefix; the harness refuses the call (seed 003).
            content = f"Error: {use['name']} is not permitted here; the call was refused."
            return {"type": "tool_result", "tool_use_id": use["id"], "content": content, "is_error": True}
        return {"type": "tool_result", "tool_use_id": use["id"], "content": self.text(size, "code")}

    # --- the base conversation -------------------------------------------------------------------
    def base(self) -> Conv:
        b = self.s.base
        model = self.s.model or "claude-sonnet-4-5"
        if b is None:
            return Conv(model, [], [], [])
        tools: list[dict] = []
        system: list[dict] = []
        messages: list[dict] = []
        if b.file:
            body = self.load_json(b.file)
            tools, messages = list(body.get("tools") or []), list(body.get("messages") or [])
            sys_ = body.get("system") or []
            system = [{"type": "text", "text": sys_}] if isinstance(sys_, str) else list(sys_)
            model = self.s.model or body.get("model") or model
        if b.tools is not None:
            tools = self.make_tools(b.tools)
        if b.system is not None:
            system = self.make_system(b.system)
        conv = Conv(model, tools, system, [])
        for m in messages:
            conv.add_message(m.get("role", "user"), m["content"] if isinstance(m.get("content"), list)
                             else [{"type": "text", "text": m.get("content", "")}])
        h = b.history
        if isinstance(h, list):
            for m in h:
                content = m.get("content", "")
                conv.add_message(m.get("role", "user"), content if isinstance(content, list)
                                 else [{"type": "text", "text": str(content)}])
        elif isinstance(h, HistorySpec):
            for _ in range(h.turns):
                self.user_turn(conv, h.user, h.tool_result)
                self.assistant_turn(conv, h.assistant, h.tool_use)
        return conv

    def user_turn(self, conv: Conv, user: int, tool_result: int) -> None:
        """Answer a pending tool call with its result, or else write a user prompt."""
        last = conv.messages[-1] if conv.messages else None
        if last is not None and last.role == "user":
            return
        uses = [p for p in last.content if p.get("type") == "tool_use"] if last else []
        if uses:
            conv.add_message("user", [self.tool_result(conv, u, tool_result) for u in uses])
        else:
            conv.add_message("user", [{"type": "text", "text": self.text(max(user, 1))}])

    def thinks(self, conv: Conv) -> int:
        """Tokens of the thinking block opening each reply: `history.thinking` while the request
        turns thinking on (set_thinking with type enabled or adaptive), else 0."""
        on = isinstance(conv.thinking, dict) and conv.thinking.get("type") in ("enabled", "adaptive")
        return self.sizes.thinking if on else 0

    def assistant_turn(self, conv: Conv, assistant: int, tool_use: int, thinking: int = 0) -> int:
        content = []
        if thinking:
            content.append({"type": "thinking", "thinking": self.text(thinking),
                            "signature": f"sig_{len(self.calls):06d}"})
        if assistant:
            content.append({"type": "text", "text": self.text(assistant)})
        if tool_use:
            content.append(self.tool_use(conv, tool_use))
        if not content:
            content.append({"type": "text", "text": self.text(1)})
        conv.add_message("assistant", content)
        return assistant + tool_use

    # --- sending ---------------------------------------------------------------------------------
    def ttl(self, main: bool, explicit: str | None = None) -> str:
        """The TTL a stream writes with: the step's own, else the scenario's; under the claude_code
        preset only the main conversation's bucket takes the scenario's (CC-PC), the rest write 5m.
        Other presets stand for an application marking its own requests: all at the scenario's TTL."""
        if explicit is not None:
            return explicit
        asked = self.s.ttl or "5m"
        return claude_code_ttl(main, asked) if self.s.breakpoints == "claude_code" else asked

    def send(self, conv: Conv, stream: str, t: float, label: str, output: int, parent: str | None = None,
             event: str | None = None, ttl: str | None = None) -> None:
        blocks, auto = _apply_breakpoints(conv, self.s.breakpoints or "last_message", ttl or self.ttl(True))
        # A request repeating another stream's request before it (a fork's sibling, or the parent)
        # refers to the blocks they share instead of copying them: N children each repeat the history
        # and N placeholders (sharedseq). A stream's next request after its own flat tuple is left
        # flat (nothing shared to gain, and a plain tuple reads fastest); after a shared one, shared.
        last = self.calls[-1] if self.calls else None
        like = last.request.blocks if last is not None and (
            last.stream != stream or isinstance(last.request.blocks, PrefixTuple)) else None
        body = {}
        if conv.tool_choice is not None:
            body["tool_choice"] = conv.tool_choice
        if conv.thinking is not None:
            body["thinking"] = conv.thinking
        req = Request(model=conv.model, blocks=share_tuple(blocks, like),
                      layer_params=layer_params(body, conv.images(), False, conv.model), auto_cache=auto)
        self.calls.append(Call(t=t, request=req, stream=stream, label=label, output_tokens=output,
                               ttft=self.s.ttft, parent=parent, event=event))

    def label(self, stream: str) -> str:
        """`main #3`; another stream's first request is named by the stream alone."""
        n = self.counter[stream] = self.counter.get(stream, 0) + 1
        return f"{stream} #{n}" if stream == "main" or n > 1 else stream

    @property
    def pace(self) -> float:
        return 10.0 if self.s.pace is None else self.s.pace

    @property
    def output(self) -> int:
        return 300 if self.s.output is None else self.s.output

    # --- the timeline ----------------------------------------------------------------------------
    def play(self) -> list[Call]:
        conv = self.base()
        h = self.s.base.history if self.s.base and isinstance(self.s.base.history, HistorySpec) else HistorySpec()
        self.sizes = h
        for k, step in enumerate(self.s.timeline or []):
            kind = next(iter(type(step).model_fields))
            body = getattr(step, kind)
            start = getattr(body, "at", None)
            after = getattr(body, "after", None)
            if start is not None:
                self.t = max(self.t, start)
            if after is not None:
                self.t += after
            conv = getattr(self, f"step_{kind}")(conv, body, k)
        return self.calls

    def step_request(self, conv: Conv, spec, k: int) -> Conv:
        h = self.sizes
        for _ in range(spec.turns):
            self.user_turn(conv, spec.user if spec.user is not None else h.user,
                           spec.tool_result if spec.tool_result is not None else h.tool_result)
            label = spec.label or self.label("main")
            event, self._pending_event = self._pending_event, None
            asst = spec.assistant if spec.assistant is not None else h.assistant
            use = spec.tool_use if spec.tool_use is not None else h.tool_use
            think = self.thinks(conv)   # thinking is billed as output
            self.send(conv, "main", self.t, label, think + asst + use, event=event)
            self.assistant_turn(conv, asst, use, think)
            self.t += self.pace
        return conv

    def _spawn_call(self, conv: Conv, n: int, size: int) -> list[dict]:
        """The parent's reply that starts the children: one Agent tool_use per child."""
        last = conv.messages[-1] if conv.messages else None
        uses = [self.tool_use(conv, size, name="Agent") for _ in range(n)]
        if last is not None and last.role == "assistant":
            # The parent's newest reply becomes the spawning call (it was not yet in any prefix).
            text = [p for p in last.content if p.get("type") == "text"]
            conv.messages.pop()
            conv.add_message("assistant", text + uses)
        else:
            conv.add_message("assistant", uses)
        return uses

    def _child_loop(self, child: Conv, stream: str, t0: float, turns: int, parent: str | None, ttl: str) -> float:
        h = self.sizes
        t = t0
        for turn in range(turns):
            if turn:
                self.user_turn(child, h.user, h.tool_result)
            think = self.thinks(child)
            out = think + h.assistant + h.tool_use
            self.send(child, stream, t, self.label(stream), out, parent=parent if turn == 0 else None, ttl=ttl)
            self.assistant_turn(child, h.assistant, h.tool_use, think)
            t += self.pace
        return t

    def _join(self, conv: Conv, uses: list[dict], result: int) -> None:
        conv.add_message("user", [{"type": "tool_result", "tool_use_id": u["id"], "content": self.text(result)}
                                  for u in uses])

    def step_fork(self, conv: Conv, spec, k: int) -> Conv:
        parent = conv if spec.join else conv.fork()   # a probe that does not join leaves the parent as it was
        uses = self._spawn_call(parent, spec.children, spec.tool_call)
        end = self.t
        # Every child's first message starts with the same placeholders (one per child): made and
        # rendered once and shared, so N children hold N placeholder blocks, not N x N.
        placeholders = [{"type": "tool_result", "tool_use_id": u["id"], "content": FORK_PLACEHOLDER} for u in uses]
        shared: tuple[int, list[Block]] | None = None
        for i in range(spec.children):
            child = parent.fork()
            for mod in spec.modify:
                self.modify(child, mod)
            child.refused |= set(spec.refuse)
            directive = {"type": "text", "text": "<fork-directive>" + self.text(spec.directive) + "</fork-directive>"}
            mi = len(child.messages)
            if shared is None or shared[0] != mi:
                shared = (mi, message_blocks({"role": "user", "content": placeholders}, mi))
            child.add_message("user", placeholders + [directive],
                              shared[1] + message_blocks({"role": "user", "content": [directive]}, mi, first=len(placeholders)),
                              images=False)   # tool results of plain text and a text directive
            if spec.boundary:
                # seed 000: the cache boundary sits right before the directive, so siblings can read
                # the shared prefix (history + spawning call + placeholders) one of them wrote.
                child.marks.add((len(child.messages) - 1, len(placeholders) - 1))
            stream = f"{spec.label}.{i + 1}" if spec.label and spec.children > 1 else (spec.label or f"fork{k}.{i + 1}")
            end = max(end, self._child_loop(child, stream, self.t + i * spec.stagger, spec.turns, "main",
                                             self.ttl(False, spec.ttl)))
        if spec.join:
            self._join(conv, uses, spec.result)
            self.t = end
        return conv

    def step_subagent(self, conv: Conv, spec, k: int) -> Conv:
        parent = conv if spec.join else conv.fork()
        uses = self._spawn_call(parent, spec.children, spec.tool_call)
        tools = self.make_tools(spec.tools, offset=0)
        system = self.make_system(spec.system)
        end = self.t
        for i in range(spec.children):
            if spec.distinct and i:
                tools, system = self.make_tools(spec.tools, offset=0), self.make_system(spec.system)
            child = Conv(conv.model, tools, system, [])
            child.add_message("user", [{"type": "text", "text": self.text(spec.task)}])
            stream = f"{spec.label}.{i + 1}" if spec.label and spec.children > 1 else (spec.label or f"sub{k}.{i + 1}")
            end = max(end, self._child_loop(child, stream, self.t + i * spec.stagger, spec.turns, None,
                                             self.ttl(False, spec.ttl)))
        if spec.join:
            self._join(conv, uses, spec.result)
            self.t = end
        return conv

    def step_btw(self, conv: Conv, spec, k: int) -> Conv:
        side = conv.fork()
        last = side.messages[-1] if side.messages else None
        question = {"type": "text", "text": self.text(spec.question)}
        if last is not None and last.role == "user":
            side.messages.pop()
            side.add_message("user", last.content + [question])
        elif last is not None and any(p.get("type") == "tool_use" for p in last.content):
            # A pending tool call must be answered before a user turn; the side question rides along.
            uses = [p for p in last.content if p.get("type") == "tool_use"]
            side.add_message("user", [self.tool_result(side, u, self.sizes.tool_result) for u in uses] + [question])
        else:
            side.add_message("user", [question])
        stream = spec.label or "btw"
        # A side question runs inline with the main conversation: its bucket (CC-PC lists /btw in
        # neither bucket; "helpers run inline" with the main conversation are the closest).
        self.send(side, stream, self.t, self.label(stream), spec.answer, parent="main", ttl=self.ttl(True, spec.ttl))
        self.t += self.pace
        return conv

    def step_wait(self, conv: Conv, spec, k: int) -> Conv:
        self.t += spec.seconds
        return conv

    def step_compact(self, conv: Conv, spec, k: int) -> Conv:
        side = conv.fork()
        self.user_turn(side, 1, self.sizes.tool_result)
        last = side.messages.pop()
        side.add_message("user", last.content + [{"type": "text", "text": "<compact>" + self.text(spec.instruction)}])
        self.send(side, "compact", self.t, spec.label or self.label("compact"), spec.summary, parent="main",
                  ttl=self.ttl(False, spec.ttl))
        self.t += self.pace
        fresh = conv.fork()
        fresh.messages, fresh.marks = [], set()
        fresh.add_message("user", [{"type": "text", "text": "<summary>" + self.text(spec.summary)}])
        self._pending_event = "compaction"
        return fresh

    def step_add_image(self, conv: Conv, spec, k: int) -> Conv:
        self.user_turn(conv, 1, self.sizes.tool_result)
        last = conv.messages.pop()
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": self.text(spec.size).encode().hex()[: 8 * spec.size]}}
        conv.add_message("user", last.content + [image])
        # Fixed size: an image's token cost is set by its pixels, not by the bytes we fake for it.
        m = conv.messages[-1]
        m.blocks[-1] = Block(m.blocks[-1].layer, m.blocks[-1].data, m.blocks[-1].path, None, spec.size)
        return conv

    # parent-level changes: the same operations a fork child's `modify` uses
    def _change(self, conv: Conv, field: str, value: Any) -> Conv:
        self.modify(conv, Modification(**{field: value}))
        return conv

    def step_remove_tool(self, conv, v, k): return self._change(conv, "remove_tool", v)
    def step_add_tool(self, conv, v, k): return self._change(conv, "add_tool", v)
    def step_reorder_tools(self, conv, v, k): return self._change(conv, "reorder_tools", v)
    def step_reorder_keys(self, conv, v, k): return self._change(conv, "reorder_keys", v)
    def step_edit_system(self, conv, v, k): return self._change(conv, "edit_system", v)
    def step_set_tool_choice(self, conv, v, k): return self._change(conv, "set_tool_choice", v)
    def step_set_thinking(self, conv, v, k): return self._change(conv, "set_thinking", v)
    def step_switch_model(self, conv, v, k): return self._change(conv, "switch_model", v)

    def step_refuse_tool_at_call_time(self, conv: Conv, name: str, k: int) -> Conv:
        self._tool_named(conv, name)
        conv.refused.add(name)
        return conv

    def _tool_named(self, conv: Conv, name: str) -> int:
        for i, t in enumerate(conv.tools):
            if t.get("name") == name:
                return i
        raise UserError(f"no tool named {name!r} (tools: {', '.join(t.get('name', '?') for t in conv.tools)})")

    def modify(self, conv: Conv, mod: Modification) -> None:
        if mod.remove_tool is not None:
            i = self._tool_named(conv, mod.remove_tool)
            conv.set_tools(conv.tools[:i] + conv.tools[i + 1:])
        if mod.add_tool is not None:
            tools = list(conv.tools)
            pos = len(tools) if mod.add_tool.position is None else mod.add_tool.position
            tools.insert(pos, self.make_tool(mod.add_tool.name, mod.add_tool.size))
            conv.set_tools(tools)
        if mod.reorder_tools is not None:
            r = mod.reorder_tools
            if r == "reverse":
                conv.set_tools(conv.tools[::-1])
            elif r == "rotate":
                conv.set_tools(conv.tools[1:] + conv.tools[:1])
            else:
                order = [self._tool_named(conv, n) for n in r]
                rest = [t for i, t in enumerate(conv.tools) if i not in order]
                conv.set_tools([conv.tools[i] for i in order] + rest)
        if mod.reorder_keys is not None:
            i = self._tool_named(conv, mod.reorder_keys)
            tool = conv.tools[i]
            schema = tool.get("input_schema", {})
            props = schema.get("properties", {})
            new_schema = {**schema, "properties": dict(reversed(list(props.items())))}
            reordered = {k: (new_schema if k == "input_schema" else v) for k, v in reversed(list(tool.items()))}
            conv.set_tools(conv.tools[:i] + [reordered] + conv.tools[i + 1:])
        if mod.edit_system is not None:
            e = mod.edit_system
            system = [dict(p) for p in conv.system] or [{"type": "text", "text": ""}]

            def as_text(v):
                return v if isinstance(v, str) else self.text(v)
            if e.replace is not None:
                system = [{"type": "text", "text": as_text(e.replace)}]
            if e.prepend is not None:
                system[0]["text"] = as_text(e.prepend) + "\n" + system[0]["text"]
            if e.append is not None:
                system[-1]["text"] = system[-1]["text"] + "\n" + as_text(e.append)
            conv.set_system(system)
        if mod.set_tool_choice is not None or "set_tool_choice" in mod.model_fields_set:
            conv.tool_choice = mod.set_tool_choice
        if mod.set_thinking is not None or "set_thinking" in mod.model_fields_set:
            conv.thinking = mod.set_thinking
        if mod.switch_model is not None:
            conv.model = mod.switch_model

