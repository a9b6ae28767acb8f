"""Conversation steps: main-conversation requests, a wait, a compaction and an image added to the
conversation."""
from __future__ import annotations

from typing import TYPE_CHECKING

from prefixsim.model import Block
from prefixsim.scenario.state import Conv
from prefixsim.scenario.steps.registry import step

if TYPE_CHECKING:
    from prefixsim.scenario.builder import Timeline


@step("request")
def request(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    h = tl.sizes
    for _ in range(spec.turns):
        tl.user_turn(conv, spec.user if spec.user is not None else h.user,
                     spec.tool_result if spec.tool_result is not None else h.tool_result)
        label = spec.label or tl.label("main")
        event, tl.pending_event = tl.pending_event, None
        asst = spec.assistant if spec.assistant is not None else h.assistant
        use = spec.tool_use if spec.tool_use is not None else h.tool_use
        think = tl.thinks(conv)   # thinking is billed as output
        tl.send(conv, "main", tl.t, label, think + asst + use, event=event)
        tl.assistant_turn(conv, asst, use, think)
        tl.t += tl.pace
    return conv


@step("wait")
def wait(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    tl.t += spec.seconds
    return conv


@step("compact")
def compact(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    side = conv.fork()
    tl.user_turn(side, 1, tl.sizes.tool_result)
    last = side.messages.pop()
    side.add_message("user", last.content + [{"type": "text", "text": "<compact>" + tl.text(spec.instruction)}])
    tl.send(side, "compact", tl.t, spec.label or tl.label("compact"), spec.summary, parent="main",
            ttl=tl.ttl(False, spec.ttl))
    tl.t += tl.pace
    fresh = conv.fork()
    fresh.messages, fresh.marks = [], set()
    fresh.add_message("user", [{"type": "text", "text": "<summary>" + tl.text(spec.summary)}])
    tl.pending_event = "compaction"
    return fresh


@step("add_image")
def add_image(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    tl.user_turn(conv, 1, tl.sizes.tool_result)
    last = conv.messages.pop()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": tl.text(spec.size).encode().hex()[: 8 * spec.size]}}
    conv.add_message("user", last.content + [image])
    # Fixed size: an image's token cost is set by its pixels, not by the bytes we fake for it.
    m = conv.messages[-1]
    m.blocks[-1] = Block(m.blocks[-1].layer, m.blocks[-1].data, m.blocks[-1].path, None, spec.size)
    return conv
