"""A scenario's `optimize:` dimensions, and the designs they span.

Each dimension lists the values a design may take; the designs are every combination (the grid),
applied to each run the scenario asks for (every variant at every sweep value). A design is an
ordinary scenario run whose settings are the run's with the dimension values put in, so it is
simulated, checked and collected exactly as `prefixsim run` does a variant (scenario/simulate.py: simulate).

- `ttl`: the scenario's `ttl` (steps that set their own keep it).
- `breakpoints`: the scenario's `breakpoints`, any value the field takes.
- `stagger`: every fork and subagent step's `stagger` (seconds, or `hold`).
- `spawn`: every fork and subagent step becomes this kind; what both kinds have (children, turns,
  stagger, tool_call, result, join, ttl, label, after, at) carries over, and the child's instruction
  (a fork's `directive`, a sub-agent's `task`) becomes the other's. `{subagent: {system: 4000, ...}}`
  sets the fields only the target kind has.
"""
from __future__ import annotations

import itertools
from typing import Any, Literal, Union

from pydantic import Field, field_validator

from prefixsim.scenario.fields import TTL, Breakpoints, Stagger, Strict

#: Designs one file may ask for (each is a full simulation), as a sweep's values are held.
MAX_DESIGNS = 1_000
DIMENSIONS = ("ttl", "breakpoints", "stagger", "spawn")
#: Providers whose requests carry no cache_control (automatic caching or a serving engine): a TTL or
#: breakpoint placement changes nothing there.
NO_MARKS = ("openai", "deepseek", "gemini", "vllm", "sglang")
#: Fields a fork and a sub-agent both have, carried over when `spawn` changes a step's kind.
SHARED = ("label", "after", "at", "ttl", "children", "turns", "stagger", "tool_call", "result", "join")

#: `fork`, `subagent`, or `{subagent: {fields only a sub-agent has}}` (checked against the step's own
#: spec when the designs are made, at the field's line).
SpawnChoice = Union[Literal["fork", "subagent"], dict[Literal["fork", "subagent"], dict[str, Any]]]


def _values():
    return Field(None, min_length=1, max_length=50)


class OptimizeSpec(Strict):
    """Design dimensions: each lists the values a design may take (`prefixsim search` tries every combination)."""

    ttl: list[TTL] | None = _values()
    breakpoints: list[Breakpoints] | None = _values()
    stagger: list[Stagger] | None = _values()
    spawn: list[SpawnChoice] | None = _values()

    @field_validator("spawn")
    @classmethod
    def _one_kind(cls, v):
        for x in v or []:
            if isinstance(x, dict) and len(x) != 1:
                raise ValueError("a spawn value is fork, subagent or one mapping, e.g. {subagent: {system: 4000}}")
        return v


def spawn_kind(choice) -> str:
    return choice if isinstance(choice, str) else next(iter(choice))


def label(dim: str, value) -> str:
    """How a design names a dimension's value: ttl=1h, stagger=2s, spawn=subagent, breakpoints=tools+system."""
    if dim == "spawn":
        return spawn_kind(value)
    if dim == "stagger" and value != "hold":
        return f"{value:g}s"
    if isinstance(value, list):
        return "+".join(value)
    return str(value)


def points(spec: OptimizeSpec) -> list[tuple[tuple[str, Any], ...]]:
    """Every combination of the dimensions' values: dimensions in DIMENSIONS order (the last varies
    fastest), each one's values in the order the file lists them."""
    dims = [(d, getattr(spec, d)) for d in DIMENSIONS if getattr(spec, d) is not None]
    return [tuple(zip([d for d, _ in dims], combo)) for combo in itertools.product(*[vs for _, vs in dims])]
