"""Spawn steps: a fork (children that inherit the parent's whole prefix), sub-agents (children with
their own tools and system prompt) and a /btw side question; what they share (the spawning call,
each child's turns, the join)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from prefixsim.scenario.state import Conv
from prefixsim.scenario.steps.edits import modify
from prefixsim.scenario.steps.registry import step
from prefixsim.wire.anthropic import message_blocks

if TYPE_CHECKING:
    from prefixsim.model import Block
    from prefixsim.scenario.builder import Timeline

#: seed 000: every fork child sees this constant result for each of the parent's tool_use blocks.
FORK_PLACEHOLDER = "Fork started -- processing in background"


def spawn_call(tl: Timeline, conv: Conv, n: int, size: int) -> list[dict]:
    """The parent's reply that starts the children: one Agent tool_use per child."""
    last = conv.messages[-1] if conv.messages else None
    uses = [tl.tool_use(conv, size, name="Agent") for _ in range(n)]
    if last is not None and last.role == "assistant":
        # The parent's newest reply becomes the spawning call (it was not yet in any prefix).
        text = [p for p in last.content if p.get("type") == "text"]
        conv.messages.pop()
        conv.add_message("assistant", text + uses)
    else:
        conv.add_message("assistant", uses)
    return uses


def child_loop(tl: Timeline, child: Conv, stream: str, t0: float, turns: int, parent: str | None, ttl: str) -> float:
    """A child's `turns` requests from t0, `parent` named on the first; the time after its last."""
    h = tl.sizes
    t = t0
    for turn in range(turns):
        if turn:
            tl.user_turn(child, h.user, h.tool_result)
        think = tl.thinks(child)
        out = think + h.assistant + h.tool_use
        tl.send(child, stream, t, tl.label(stream), out, parent=parent if turn == 0 else None, ttl=ttl)
        tl.assistant_turn(child, h.assistant, h.tool_use, think)
        t += tl.pace
    return t


def join(tl: Timeline, conv: Conv, uses: list[dict], result: int) -> None:
    """The children's results come back to the parent: one tool_result per spawning tool_use."""
    conv.add_message("user", [{"type": "tool_result", "tool_use_id": u["id"], "content": tl.text(result)}
                              for u in uses])


def launch(tl: Timeline, spec, i: int) -> float:
    """When child i starts: `stagger` seconds after the one before it, or under `hold` (CC-WF) the
    first at once and the rest together when its response begins, one time to first token later."""
    if spec.stagger == "hold":
        return tl.t + (0.0 if i == 0 else 1.0 if tl.s.ttft is None else tl.s.ttft)
    return tl.t + i * spec.stagger


def child_stream(spec, default: str, i: int) -> str:
    """Child i's stream: the spawn's label (numbered when it has several children), else `default.i+1`."""
    if spec.label and spec.children > 1:
        return f"{spec.label}.{i + 1}"
    return spec.label or f"{default}.{i + 1}"


@step("fork")
def fork(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    parent = conv if spec.join else conv.fork()   # a probe that does not join leaves the parent as it was
    uses = spawn_call(tl, parent, spec.children, spec.tool_call)
    end = tl.t
    # Every child's first message starts with the same placeholders (one per child): made and
    # rendered once and shared, so N children hold N placeholder blocks, not N x N.
    placeholders = [{"type": "tool_result", "tool_use_id": u["id"], "content": FORK_PLACEHOLDER} for u in uses]
    shared: tuple[int, list[Block]] | None = None
    for i in range(spec.children):
        child = parent.fork()
        for mod in spec.modify:
            modify(tl, child, mod)
        child.refused |= set(spec.refuse)
        directive = {"type": "text", "text": "<fork-directive>" + tl.text(spec.directive) + "</fork-directive>"}
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
        stream = child_stream(spec, f"fork{k}", i)
        end = max(end, child_loop(tl, child, stream, launch(tl, spec, i), spec.turns, "main",
                                  tl.ttl(False, spec.ttl)))
    if spec.join:
        join(tl, conv, uses, spec.result)
        tl.t = end
    return conv


@step("subagent")
def subagent(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    parent = conv if spec.join else conv.fork()
    uses = spawn_call(tl, parent, spec.children, spec.tool_call)
    tools = tl.make_tools(spec.tools, offset=0)
    system = tl.make_system(spec.system)
    end = tl.t
    for i in range(spec.children):
        if spec.distinct and i:
            tools, system = tl.make_tools(spec.tools, offset=0), tl.make_system(spec.system)
        child = Conv(conv.model, tools, system, [])
        child.add_message("user", [{"type": "text", "text": tl.text(spec.task)}])
        stream = child_stream(spec, f"sub{k}", i)
        end = max(end, child_loop(tl, child, stream, launch(tl, spec, i), spec.turns, None,
                                  tl.ttl(False, spec.ttl)))
    if spec.join:
        join(tl, conv, uses, spec.result)
        tl.t = end
    return conv


@step("btw")
def btw(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    side = conv.fork()
    last = side.messages[-1] if side.messages else None
    question = {"type": "text", "text": tl.text(spec.question)}
    if last is not None and last.role == "user":
        side.messages.pop()
        side.add_message("user", last.content + [question])
    elif last is not None and any(p.get("type") == "tool_use" for p in last.content):
        # A pending tool call must be answered before a user turn; the side question rides along.
        uses = [p for p in last.content if p.get("type") == "tool_use"]
        side.add_message("user", [tl.tool_result(side, u, tl.sizes.tool_result) for u in uses] + [question])
    else:
        side.add_message("user", [question])
    stream = spec.label or "btw"
    # A side question runs inline with the main conversation: its bucket (CC-PC lists /btw in
    # neither bucket; "helpers run inline" with the main conversation are the closest).
    tl.send(side, stream, tl.t, tl.label(stream), spec.answer, parent="main", ttl=tl.ttl(True, spec.ttl))
    tl.t += tl.pace
    return conv
