"""A scenario's `optimize:` dimensions, and the designs they span.

Each dimension lists the values a design may take; the designs are every combination (the grid),
applied to each run the scenario asks for (every variant at every sweep value). A design is an
ordinary scenario run whose settings are the run's with the dimension values put in, so it is
simulated, checked and collected exactly as `prefixsim run` does a variant (variants.simulate).

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

from ..errors import UserError
from .fields import TTL, Breakpoints, Stagger, Strict

#: Designs one file may ask for (each is a full simulation), as a sweep's values are held.
MAX_DESIGNS = 1_000
DIMENSIONS = ("ttl", "breakpoints", "stagger", "spawn")
#: Providers whose requests carry no cache_control (automatic caching or a serving engine): a TTL or
#: breakpoint placement changes nothing there.
NO_MARKS = ("openai", "deepseek", "gemini", "vllm", "sglang")
#: Fields a fork and a sub-agent both have, carried over when `spawn` changes a step's kind.
SHARED = ("label", "after", "at", "ttl", "children", "turns", "stagger", "tool_call", "result", "join")
SPAWNS = ("fork", "subagent")

#: `fork`, `subagent`, or `{subagent: {fields only a sub-agent has}}` (checked against the step's own
#: spec when the designs are made, at the field's line).
SpawnChoice = Union[Literal["fork", "subagent"], dict[Literal["fork", "subagent"], dict[str, Any]]]


def _values():
    return Field(None, min_length=1, max_length=50)


class OptimizeSpec(Strict):
    """Design dimensions: each lists the values a design may take (`prefixsim advise` tries every combination)."""

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
    """Every combination of the dimensions' values, in the order the file lists them (the last
    dimension varies fastest)."""
    dims = [(d, getattr(spec, d)) for d in DIMENSIONS if getattr(spec, d) is not None]
    return [tuple(zip([d for d, _ in dims], combo)) for combo in itertools.product(*[vs for _, vs in dims])]


def _spawns(timeline) -> list[int]:
    return [k for k, step in enumerate(timeline or []) if next(iter(type(step).model_fields)) in ("fork", "subagent")]


def _convert(body, kind: str, over: Any):
    """A fork or subagent step body as `kind`, with `over`'s fields (those it sets) on top."""
    from .schema import ForkSpec, SubagentSpec

    src = "fork" if isinstance(body, ForkSpec) else "subagent"
    fields = {f: getattr(body, f) for f in SHARED if f in body.model_fields_set}
    if src != kind:
        instruction = ("directive", "task") if src == "fork" else ("task", "directive")
        if instruction[0] in body.model_fields_set:
            fields[instruction[1]] = getattr(body, instruction[0])
    else:
        fields = {f: getattr(body, f) for f in body.model_fields_set}
    fields.update(over or {})
    return (ForkSpec if kind == "fork" else SubagentSpec).model_validate(fields)


def _fork_only(body) -> str | None:
    """What a fork step sets that a sub-agent has no counterpart for (refused, not silently dropped)."""
    if getattr(body, "modify", None):
        return "modifies its children (modify:)"
    if getattr(body, "refuse", None):
        return "refuses tools at call time (refuse:)"
    if getattr(body, "boundary", True) is False:
        return "sets boundary: false"
    return None


def apply(settings, point) -> Any:
    """The run's settings with one design's dimension values put in."""
    from .schema import Settings

    s = dict(settings)
    timeline = list(settings.timeline or [])
    for dim, value in point:
        if dim in ("ttl", "breakpoints"):
            s[dim] = value
            continue
        for k in _spawns(timeline):
            step = timeline[k]
            kind = next(iter(type(step).model_fields))
            body = getattr(step, kind)
            if dim == "stagger":
                timeline[k] = type(step)(**{kind: body.model_copy(update={"stagger": value})})
            else:
                target = spawn_kind(value)
                new = _convert(body, target, None if isinstance(value, str) else value[target])
                timeline[k] = _step_class(target)(**{target: new})
    s["timeline"] = timeline
    return Settings.model_construct(**s)


def _step_class(kind: str):
    from .schema import _STEP_MODELS

    return _STEP_MODELS[kind]


def check(spec: OptimizeSpec, runs: list, node: Any, path: str) -> None:
    """What pydantic cannot see: a value listed twice, a dimension that changes nothing in these
    runs, a spawn change a step cannot make, and the grid's size. One line at the value's line."""
    from .loader import locate

    def fail(msg: str, *loc) -> None:
        raise UserError(f"optimize.{msg}", path, *locate(node, ("optimize", *loc)))

    for dim in DIMENSIONS:
        vals = getattr(spec, dim)
        if vals is None:
            continue
        seen: list[str] = []
        for i, v in enumerate(vals):
            name = label(dim, v)
            if name in seen:
                fail(f"{dim}: {name} is listed twice (each value is one design)", dim, i)
            seen.append(name)
    marked = [r for r in runs if (r.settings.provider or "anthropic") not in NO_MARKS]
    for dim in ("ttl", "breakpoints"):
        if getattr(spec, dim) is not None and not marked:
            provider = runs[0].settings.provider
            fail(f"{dim}: provider {provider} caches without cache_control marks, so its {dim} changes nothing",
                 dim)
    for dim in ("stagger", "spawn"):
        if getattr(spec, dim) is not None and not any(_spawns(r.settings.timeline) for r in runs):
            fail(f"{dim}: the timeline has no fork or subagent step to change", dim)
    for i, v in enumerate(spec.spawn or []):
        if isinstance(v, dict):
            _check_fields(v, node, path, i)
        if spawn_kind(v) != "subagent":
            continue
        for r in runs:
            for k in _spawns(r.settings.timeline):
                body = getattr(r.settings.timeline[k], "fork", None)
                why = _fork_only(body) if body is not None else None
                if why:
                    fail(f"spawn: the fork at timeline[{k}] {why}, which a sub-agent has no counterpart for; "
                         "remove it or leave spawn out", "spawn", i)
    n = len(points(spec)) * len(runs)
    if n > MAX_DESIGNS:
        fail(f"{' x '.join(d for d in DIMENSIONS if getattr(spec, d))} x {len(runs)} run(s) gives {n:,} designs "
             f"(at most {MAX_DESIGNS:,}, each a full simulation); list fewer values", next(
                 d for d in DIMENSIONS if getattr(spec, d)))


def _check_fields(choice: dict, node: Any, path: str, i: int) -> None:
    """`{subagent: {...}}`'s fields, as the step itself would check them, at their own lines."""
    from pydantic import ValidationError

    from .loader import validation_error
    from .schema import ForkSpec, SubagentSpec

    kind = spawn_kind(choice)
    try:
        (ForkSpec if kind == "fork" else SubagentSpec).model_validate(choice[kind])
    except ValidationError as e:
        err = validation_error(e, node["optimize"]["spawn"][i][kind], path)
        raise UserError(f"optimize.spawn {kind}: {err.message}", path, err.line, err.col) from None


def design_runs(path: str) -> list:
    """A scenario file's designs: each run it asks for x every combination of its `optimize:` values,
    as Runs named `variant · ttl=1h stagger=hold` (the variant left out when it is the only, unnamed one)."""
    from .checks import check_run
    from .loader import Run, _where, input_boundary, load_runs, locate, read_yaml

    runs = load_runs(path)
    spec = runs[0].scenario.optimize if runs else None
    node = read_yaml(path)
    if spec is None:
        raise UserError("no `optimize:` dimensions to search (e.g. `optimize: {ttl: [5m, 1h]}`); "
                        "`prefixsim run` simulates a scenario as written", path, locate(node, ("name",))[0])
    check(spec, runs, node, path)
    out = []
    with input_boundary(path):
        for r in runs:
            vi = _variant_index(r)
            for point in points(spec):
                settings = apply(r.settings, point)
                check_run(settings, r.scenario, path, *_where(node, vi))   # a converted timeline's scale
                design = " ".join(f"{d}={label(d, v)}" for d, v in point)
                name = design if r.variant == "default" and not r.scenario.variants else f"{r.variant} · {design}"
                out.append(Run(r.scenario, name, settings, r.sweep_value, path))
    return out


def _variant_index(run) -> int | None:
    names = [v.name for v in run.scenario.variants or []]
    base = run.variant.split(" [")[0]
    return names.index(base) if base in names else None
