"""The break-even studies of a design-review page at the scenario's own sizes: where no scenario
names a study (`studies:`), the page's study runs with the sizes the design scenario itself has —
its parent's tools and system prompt, its first prompt, its children and their instructions —
read from the scenario's first run as simulated, instead of the study's defaults, which describe
another agent."""
from __future__ import annotations

from typing import Any

from prefixsim.core.tokens import TokenCounter, get_tokenizer
from prefixsim.model import Layer, Outcome
from prefixsim.scenario.results import ScenarioResult
from prefixsim.scenario.studycheck import ranges

#: Studies whose parameters a scenario's sizes fill (`minimum` studies prompts near the provider's
#: minimum, which a scenario's prompts are not: it keeps its defaults).
SIZED = ("fork-vs-subagent", "ttl", "stagger", "invalidation")


def _layers(o: Outcome, counter: TokenCounter) -> tuple[int, int]:
    """(tools, system) tokens of one request, as the simulator counted them."""
    tools = system = 0
    for b in o.call.request.blocks:
        if b.layer == Layer.TOOLS:
            tools += counter.count(b)
        elif b.layer == Layer.SYSTEM:
            system += counter.count(b)
    return tools, system


def _spawn(run) -> tuple[str, Any] | None:
    """The first fork or subagent step of the run's timeline: (kind, its body)."""
    for step in run.settings.timeline or []:
        kind = next(iter(type(step).model_fields))
        if kind in ("fork", "subagent"):
            return kind, getattr(step, kind)
    return None


def scenario_sizes(res: ScenarioResult, run) -> dict[str, dict[str, Any]]:
    """study -> its parameters at the sizes of `res`'s first variant (`run`, its Run)."""
    v = res.variants[0]
    main = [o for o in v.outcomes if o.call.stream == "main"]
    if not main:
        return {}
    counter = TokenCounter(get_tokenizer(run.settings.tokenizer or "cl100k_base"))
    tools, system = _layers(main[0], counter)
    static = tools + system
    out: dict[str, dict[str, Any]] = {"ttl": {"prefix": main[0].usage.prompt_tokens}}
    if tools and system:
        out["invalidation"] = {"tools": tools, "system": system}
    spawn = _spawn(run)
    if spawn is not None and static:
        kind, body = spawn
        fork: dict[str, Any] = {"children": body.children, "turns": body.turns, "parent_static": static}
        stagger: dict[str, Any] = {"children": body.children, "shared": static}
        sub = next((o for o in v.outcomes if o.call.stream.startswith("sub")), None)
        sub_static = sum(_layers(sub, counter)) if sub is not None else _optimized_sub(run)
        if sub_static:
            fork["sub_static"] = stagger["shared"] = sub_static
        if sub is None and not isinstance(getattr(body, "task", None), int):
            task = _optimized_field(run, "task")
            if task:
                fork["task"] = stagger["task"] = task
        for key, field in (("task", "task"), ("directive", "directive"), ("call", "tool_call")):
            value = getattr(body, field, None)
            if isinstance(value, int) and not isinstance(value, bool):
                fork[key] = value
                if key == "task":
                    stagger[key] = value
        out["fork-vs-subagent"] = fork
        out["stagger"] = stagger
    return out


def serving_sizes(res: ScenarioResult, run) -> dict[str, Any]:
    """api-vs-selfhosted's parameters at the sizes of `res`'s first variant (`run`, its Run): its main
    conversation as the study's session, each turn `growth` tokens on a shared `static` prefix
    (tools + system prompt as counted), `turns` its requests, `output` their mean output, `pace` and
    `ttl` the scenario's. The study's session is `static + k x growth` at turn k, so `growth` is the
    one whose mean prompt, static + growth x (turns + 1) / 2, is the conversation's: the session's
    prompt tokens, what both sides price, are the scenario's; a figure outside the study's range is
    left to its default (SelfHostedParams), and the limits over several are study_designs' to check."""
    main = [o for o in res.variants[0].outcomes if o.call.stream == "main"]
    if not main:
        return {}
    counter = TokenCounter(get_tokenizer(run.settings.tokenizer or "cl100k_base"))
    static = sum(_layers(main[0], counter))
    turns = len(main)
    out: dict[str, Any] = {"static": static, "turns": turns,
                           "growth": max(1, round(2 * (sum(o.usage.prompt_tokens for o in main) / turns - static)
                                                  / (turns + 1))),
                           "output": max(1, round(sum(o.usage.output_tokens for o in main) / turns))}
    if run.settings.pace is not None:
        out["pace"] = float(run.settings.pace)
    if run.settings.ttl is not None:
        out["ttl"] = run.settings.ttl
    rs = ranges("api-vs-selfhosted")
    return {k: v for k, v in out.items() if (v in rs[k].choices if rs[k].choices else rs[k].low <= v <= rs[k].high)}


def _optimized_choice(run) -> dict | None:
    """The sub-agent a scenario's `optimize: {spawn: [..., {subagent: {...}}]}` turns its forks into."""
    spec = run.scenario.optimize
    for choice in (spec.spawn or []) if spec is not None else []:
        if isinstance(choice, dict) and isinstance(choice.get("subagent"), dict):
            return choice["subagent"]
    return None


def _optimized_field(run, name: str) -> int | None:
    value = (_optimized_choice(run) or {}).get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _optimized_sub(run) -> int:
    """A sub-agent's own tools + system as that choice states them (tokens as written: a count times
    a size for the tools), where the scenario as written runs none."""
    choice = _optimized_choice(run) or {}
    tools = choice.get("tools")
    n = tools["count"] * tools["size"] if isinstance(tools, dict) and {"count", "size"} <= set(tools) else 0
    system = choice.get("system")
    return n + (system if isinstance(system, int) and not isinstance(system, bool) else 0)
