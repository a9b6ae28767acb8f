"""The designs a scenario's `optimize:` spans (its dimensions: scenario/optimize.py): every run the
file asks for (each variant at each sweep value) x every combination of the listed values, each an
ordinary Run whose settings carry the values, checked as the loader checks a variant."""
from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from prefixsim.errors import UserError
from prefixsim.scenario.checks import check_run
from prefixsim.scenario.loader import Run, _where, input_boundary, load_runs, locate, read_yaml
from prefixsim.scenario.mistakes import validation_error
from prefixsim.scenario.optimize import DIMENSIONS, MAX_DESIGNS, NO_MARKS, SHARED, label, points, spawn_kind
from prefixsim.scenario.schema import _STEP_MODELS, ForkSpec, OptimizeSpec, Settings, SubagentSpec


def _spawns(timeline) -> list[int]:
    return [k for k, step in enumerate(timeline or []) if next(iter(type(step).model_fields)) in ("fork", "subagent")]


def _convert(body, kind: str, over: Any):
    """A fork or subagent step body as `kind`, with `over`'s fields (those it sets) on top."""
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
    """The run's settings with one design's dimension values put in. A step changes kind (`spawn`)
    before it takes the `stagger` value, so the stagger dimension wins over a stagger the spawn
    mapping sets."""
    s = dict(settings)
    timeline = list(settings.timeline or [])
    for dim, value in sorted(point, key=lambda dv: dv[0] != "spawn"):
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


def written(settings, dims) -> dict[str, str]:
    """How a run as written names each of `dims`, as a design's name does (`label`): what `apply`
    would put in, read back. Steps that disagree (two forks, different staggers) are listed joined
    by `/`; a TTL or placement left to its default says so."""
    timeline = list(settings.timeline or [])
    out: dict[str, str] = {}
    for dim in dims:
        if dim == "ttl":
            out[dim] = label(dim, settings.ttl) if settings.ttl is not None else "5m (default)"
        elif dim == "breakpoints":
            out[dim] = label(dim, settings.breakpoints) if settings.breakpoints is not None else "default"
        else:
            seen: list[str] = []
            for k in _spawns(timeline):
                kind = next(iter(type(timeline[k]).model_fields))
                value = kind if dim == "spawn" else getattr(timeline[k], kind).stagger
                if label(dim, value) not in seen:
                    seen.append(label(dim, value))
            out[dim] = "/".join(seen) or "none"
    return out


def _step_class(kind: str):
    return _STEP_MODELS[kind]


def check(spec: OptimizeSpec, runs: list, node: Any, path: str) -> None:
    """What pydantic cannot see: a value listed twice, a dimension that changes nothing in these
    runs, a spawn change a step cannot make, and the grid's size. One line at the value's line."""
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
    kind = spawn_kind(choice)
    try:
        (ForkSpec if kind == "fork" else SubagentSpec).model_validate(choice[kind])
    except ValidationError as e:
        err = validation_error(e, node["optimize"]["spawn"][i][kind], path)
        raise UserError(f"optimize.spawn {kind}: {err.message}", path, err.line, err.col) from None


def design_runs(path: str) -> list:
    """A scenario file's designs: each run it asks for x every combination of its `optimize:` values,
    as Runs named `variant · ttl=1h stagger=hold` (the variant left out when it is the only, unnamed one)."""
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
