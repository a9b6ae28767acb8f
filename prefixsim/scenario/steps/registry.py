"""The step registry: each family module registers its step functions here by kind; the package
imports every family, so importing `steps` fills `STEPS`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from prefixsim.scenario.builder import Timeline
    from prefixsim.scenario.state import Conv

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
