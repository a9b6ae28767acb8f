"""The timeline's steps, one function per step kind, registered by kind and grouped by family:
conversation steps (conversation.py), spawns (spawns.py: fork, sub-agent, btw) and edits (edits.py:
tools, system prompt, request settings). `Timeline.play` looks each step up here, so a new step is
one function in its family's module (and its spec in schema.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..builder import Timeline
    from ..state import Conv

#: A step: (timeline, conversation, the step's spec, its index in the timeline) -> the conversation after it.
StepFn = Callable[["Timeline", "Conv", Any, int], "Conv"]

STEPS: dict[str, StepFn] = {}


def step(kind: str) -> Callable[[StepFn], StepFn]:
    """Register a function as the step `kind` (a key of schema.STEP_KINDS)."""
    def register(fn: StepFn) -> StepFn:
        assert kind not in STEPS, f"step {kind!r} registered twice"
        STEPS[kind] = fn
        return fn
    return register


# The families register their steps on import (after `step` exists).
from . import conversation, edits, spawns  # noqa: E402,F401
