"""Turns one resolved variant (base conversation + timeline) into timed calls.

`Timeline` holds what every step uses: the text generator, the content it makes (tools, system
prompt, turns), the base conversation, and `send`, which turns the conversation into a timed call.
The steps themselves are functions in `steps/`, one module per family, looked up by kind in `play`.
The conversation state (messages rendered once, breakpoints) is in `state.py`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace

from prefixsim.core.sharedseq import PrefixTuple, share_tuple
from prefixsim.core.tokens import get_tokenizer
from prefixsim.errors import UserError
from prefixsim.model import Block, CachedRef, Call, Request
from prefixsim.providers.gemini_explicit import CachedContent
from prefixsim.providers.tables import claude_code_ttl
from prefixsim.scenario.schema import HistorySpec, Settings, TextSpec, ToolsSpec
from prefixsim.scenario.state import Conv, apply_breakpoints
from prefixsim.scenario.steps import STEPS
from prefixsim.scenario.textgen import TextGen
from prefixsim.wire.anthropic import layer_params

DEFAULT_TOOL_NAMES = ("Bash", "Read", "Edit", "Write", "Glob", "Grep", "Agent", "WebFetch", "WebSearch",
                      "TodoWrite", "NotebookEdit", "BashOutput", "KillShell", "ExitPlanMode", "SlashCommand",
                      "Skill")


@dataclass
class _Cache:
    """A Gemini CachedContent on the timeline: its life, the blocks it holds, the call creating it."""

    life: CachedContent
    blocks: tuple[Block, ...]
    call: int


class Timeline:
    """Plays a variant's timeline and collects the calls it makes."""

    def __init__(self, settings: Settings, base_dir: str, load_json) -> None:
        self.s = settings
        self.base_dir = base_dir
        self.load_json = load_json
        self.gen = TextGen(get_tokenizer(settings.tokenizer or "cl100k_base"), settings.seed or 0)
        self.calls: list[Call] = []
        self.t = 0.0
        self.counter: dict[str, int] = {}
        self.pending_event: str | None = None   # a cause the next main request carries (compaction)
        self.sizes = HistorySpec()   # the base history's turn sizes, which later turns repeat (set by play)
        self._tool_id = 0
        self.caches: dict[str, _Cache] = {}   # Gemini explicit caches by name (the latest of each)
        self._created: list[_Cache] = []
        self.step_of: list[int] = []   # the timeline step that made each call, so its mistakes find their line

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
        """Send `conv` as it stands: one call on `stream` at `t` writing with `ttl` (else the stream's)."""
        blocks, auto = apply_breakpoints(conv, self.s.breakpoints or "last_message", ttl or self.ttl(True))
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
                               ttft=self.s.ttft, parent=parent, event=event, cached=self._reference(blocks, t)))

    def _reference(self, blocks: list[Block], t: float) -> CachedRef | None:
        """The live explicit cache a request starts with (the longest), which it names: an application
        passes `cached_content` and sends only what follows it (G-CC)."""
        best = None
        for c in self.caches.values():
            n = len(c.blocks)
            if c.life.alive(t) and n <= len(blocks) and (best is None or n > len(best.blocks)) and \
                    all(a.key == b.key for a, b in zip(c.blocks, blocks)):
                best = c
        return CachedRef(best.life.name, len(best.blocks)) if best is not None else None

    def create_cached(self, held: Conv, name: str, life: CachedContent, label: str) -> None:
        """One call creating the explicit cache `name` holding `held` (billed as input, no reply)."""
        blocks, _ = apply_breakpoints(held, "none", "5m")
        if not blocks:
            raise UserError(f"create_cache {name!r}: the conversation holds nothing to cache yet")
        req = Request(model=held.model, blocks=tuple(blocks),
                      layer_params=layer_params({}, held.images(), False, held.model))
        c = _Cache(life, tuple(blocks), len(self.calls))
        self.caches[name] = c
        self._created.append(c)
        self.calls.append(Call(t=self.t, request=req, stream=f"cache {name}", label=label, output_tokens=0,
                               ttft=self.s.ttft, cached=CachedRef(name, len(blocks), create=True)))

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
        """Play the timeline from the base conversation; the calls it made, in the order made."""
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
            try:
                conv = STEPS[kind](self, conv, body, k)
            except UserError as e:   # a step the timeline cannot take (no such tool, no such cache) is at its line
                raise e.at("step", k)
            self.step_of += [k] * (len(self.calls) - len(self.step_of))
        for c in self._created:   # an explicit cache's storage runs to its delete or expiry, known only now
            call = self.calls[c.call]
            self.calls[c.call] = replace(call, cached=replace(call.cached, kept_s=c.life.kept_s))
        return self.calls
