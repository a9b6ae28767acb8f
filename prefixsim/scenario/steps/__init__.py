"""The timeline's steps, one function per step kind, registered by kind and grouped by family:
conversation steps (conversation.py), spawns (spawns.py: fork, sub-agent, btw) and edits (edits.py:
tools, system prompt, request settings) and Gemini explicit caches (cached.py).
`Timeline.play` looks each step up here, so a new step is
one function in its family's module (and its spec in schema.py)."""
from __future__ import annotations

# Importing the families registers their steps (each imports `step` from .registry, never from
# this package, so the imports point one way).
from prefixsim.scenario.steps import cached, conversation, edits, spawns  # noqa: F401
from prefixsim.scenario.steps.registry import STEPS, StepFn, step

__all__ = ["STEPS", "StepFn", "step"]
