"""Checks the schema cannot make, run at load time so `prefixsim validate` finds what `run` would:
names checked against the tables (provider, tokenizer, model and its price), `file:` references,
`price_date`, and the scale of what a scenario asks for (a typo of a few zeros must fail fast, not
hang the machine).
"""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any, Callable

from prefixsim.core.pricing import PriceBook
from prefixsim.core.tokens import TOKENIZERS
from prefixsim.errors import UserError
from prefixsim.io.jsonfile import load_json
from prefixsim.io.suggest import unknown
from prefixsim.providers.registry import model_provider, PROVIDERS, get_policy
from prefixsim.scenario.literal import conversation_problem
from prefixsim.scenario.mistakes import Mistakes
from prefixsim.scenario.schema import HistorySpec, Settings, ToolsSpec

DEFAULT_MODEL = "claude-sonnet-4-5"   # the builder's default (scenario/builder.py)
#: Requests one run may make, and block bytes hashed per run (requests x prompt tokens): beyond these
#: a run takes minutes to hours, which is never what a scenario meant.
MAX_REQUESTS = 200_000
MAX_WORK = 5_000_000_000

Where = Callable[[str], tuple[int | None, int | None]]


def resolve_file(scenario_path: str, rel: str) -> Path:
    """A `file:` reference: relative to the scenario, inside the scenario's folder tree, a file that
    is not the scenario itself."""
    base = Path(scenario_path).resolve().parent
    target = (base / rel).resolve()
    if base != target and base not in target.parents:
        raise UserError(f"file {rel!r} points outside the scenario's folder (keep request bodies in that folder "
                        "or below it)")
    if target == Path(scenario_path).resolve():
        raise UserError(f"file {rel!r} is this scenario file itself (file: names a JSON request body)")
    if not target.exists():
        raise UserError(f"file {rel!r} does not exist (paths are relative to the scenario's folder)")
    if target.is_dir():
        raise UserError(f"file {rel!r} is a folder (file: names a JSON request body)")
    return target


def shown_path(scenario_path: str, rel: str) -> str:
    """A `file:` reference as the user would type it from where prefixsim runs."""
    return os.path.normpath(os.path.join(os.path.dirname(scenario_path), rel))


def read_body(target: Path, shown: str | None = None) -> dict:
    """A request body JSON file, checked for the shape the timeline builder reads; errors name it
    as `shown` (the path as the user wrote it, from the scenario's folder)."""
    name = shown or str(target)
    body = load_json(str(target), "request body", shown=name)
    if not isinstance(body, dict):
        raise UserError("a request body is a JSON object ({\"model\", \"system\", \"tools\", \"messages\"})",
                        name, 1)
    if "model" in body and not isinstance(body["model"], str):
        raise UserError("'model' must be text", name)
    problem = conversation_problem(body.get("tools", []), body.get("system", ""), body.get("messages", []))
    if problem:
        raise UserError(problem, name)
    return body


def provider_of_model(model: Any) -> str | None:
    """The provider a scenario without `provider:` runs under: the one its model id names (a Bedrock or
    Vertex spelling that cloud, else its family's provider: registry.model_provider), as a
    replay's model id does (issue 34 item 8: `model: gpt-4o` was "unknown Anthropic model"); None (the
    Claude API) for Claude and for a family no rules know, whose refusal then names the valid models."""
    family = model_provider(str(model)) if model else "anthropic"
    return None if family in ("anthropic", "other") else family


def check_run(s: Settings, scenario: Any, path: str, where: Where, step_where: Callable[[int], tuple],
              check_models: bool = True) -> None:
    """Every check for one variant's merged settings; errors point at the key that caused them. Each
    check runs whatever the others found, and all their mistakes are raised together. `check_models`:
    False when the provider or model was refused already (the loader's salvage, scenario/mistakes.py)."""
    found = Mistakes(path)
    provider_known = s.provider is None or s.provider in PROVIDERS
    if not provider_known:
        found.add(UserError(unknown("provider", s.provider, PROVIDERS, show=len(PROVIDERS)), path, *where("provider")))
    if s.tokenizer is not None and s.tokenizer not in TOKENIZERS:
        found.add(UserError(f"unknown tokenizer {s.tokenizer!r} (valid: {', '.join(TOKENIZERS)})", path,
                            *where("tokenizer")))
    when = None
    with found.catch():
        when = price_date(scenario, path, where)
    with found.catch():
        start_time(scenario, path, where)
    model, model_at = s.model, where("model")
    if s.base is not None and s.base.file:
        try:
            body = read_body(resolve_file(path, s.base.file), shown_path(path, s.base.file))
            if model is None and body.get("model"):
                model, model_at = body["model"], where("base.file")
        except UserError as e:
            found.add(e.located(path, *where("base.file")) if not e.path else e)
    models = [(model or DEFAULT_MODEL, model_at)]
    for k, step in enumerate(s.timeline or []):
        for name in model_switches(step):
            models.append((name, step_where(k)))
    checked: set[str] = set()
    for name, at in models:
        if name not in checked and provider_known and check_models:   # an unknown provider has no models to look in
            checked.add(name)
            with found.catch():
                check_model(name, s.provider or "anthropic", scenario.prices, when, path, at)
    with found.catch():
        check_scale(s, path, where)
    found.check()


def price_date(scenario: Any, path: str, where: Where) -> dt.date | None:
    if not scenario.price_date:
        return None
    try:
        return dt.date.fromisoformat(scenario.price_date)
    except ValueError:
        raise UserError(f"price_date {scenario.price_date!r} is not a date (YYYY-MM-DD, e.g. 2026-11-30)", path,
                        *where("price_date")) from None


def start_time(scenario: Any, path: str, where: Where) -> dt.datetime | None:
    """The scenario's `start:` as an aware instant (UTC when no offset is given)."""
    if not scenario.start:
        return None
    try:
        return parse_start(scenario.start)
    except ValueError as e:
        raise UserError(f"start {scenario.start!r} {e}", path, *where("start")) from None


#: The last instant a clock can show (Python's datetime): a timeline must end by then.
CLOCK_END = dt.datetime.max.replace(tzinfo=dt.UTC)


def parse_start(text: str) -> dt.datetime:
    """An ISO 8601 instant in UTC (no offset: UTC); a ValueError saying what is wrong with it, to
    follow the option or key that gave it."""
    try:
        t = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError("is not a date and time (ISO 8601, e.g. 2026-11-24T16:30:00Z)") from None
    try:
        return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
    except OverflowError:   # 0001-01-01T00:00:00+14:00 is in the year 0 in UTC
        raise ValueError("is out of range: in UTC it falls outside the years 1 to 9999") from None


def clock_overrun(start: dt.datetime, seconds: float) -> str | None:
    """None when a timeline of `seconds` from `start` ends by CLOCK_END; else what is wrong, in words."""
    try:
        if start + dt.timedelta(seconds=seconds) <= CLOCK_END:
            return None
    except OverflowError:
        pass
    return (f"the timeline runs {seconds:,.0f} s from {start:%Y-%m-%dT%H:%M:%SZ}, past the last instant a clock can "
            "show (9999-12-31T23:59:59Z)")


def check_model(model: str, provider: str, sheet: dict | None, when: dt.date | None, path: str,
                at: tuple[int | None, int | None]) -> None:
    """The provider's tables know the model, and it has a price (the scenario's sheet or genai-prices)."""
    try:
        get_policy(provider).describe(model)
        PriceBook(sheet, when=when).rates(model, provider)
    except UserError as e:
        raise UserError(e.message, path, *at) from None


def model_switches(step: Any) -> list[str]:
    """The models a timeline step switches to (switch_model, or a child's modify)."""
    kind = next(iter(type(step).model_fields))
    body = getattr(step, kind)
    if kind == "switch_model":
        return [body]
    return [m.switch_model for m in getattr(body, "modify", None) or () if m.switch_model]


def check_scale(s: Settings, path: str, where: Where) -> None:
    """An upper bound of the requests and prompt sizes the timeline makes, against the limits above."""
    base = _base_tokens(s)
    h = s.base.history if s.base is not None and isinstance(s.base.history, HistorySpec) else HistorySpec()
    turn = h.user + h.assistant + h.tool_use + h.tool_result
    requests, prompt, work = 0, base, 0
    for step in s.timeline or []:
        kind = next(iter(type(step).model_fields))
        body = getattr(step, kind)
        children = getattr(body, "children", 1)
        turns = getattr(body, "turns", 1)
        if not hasattr(body, "label"):   # a change step sends nothing and adds at most a tool
            n, added = 0, _spec_tokens(body)
        elif kind == "wait":
            n, added = 0, 0
        else:
            n = children * turns if hasattr(body, "turns") else 1
            added = children * turns * (_spec_tokens(body) + turn)
        requests += n
        prompt += added
        work += n * prompt
    if requests > MAX_REQUESTS or work > MAX_WORK:
        raise UserError(f"this timeline makes up to {requests:,} requests over prompts up to {prompt:,} tokens "
                        f"(limits: {MAX_REQUESTS:,} requests, {MAX_WORK:,} request x prompt tokens); "
                        "lower children, turns or sizes", path, *where("timeline"))


def _base_tokens(s: Settings) -> int:
    b = s.base
    if b is None:
        return 0
    n = 0
    if isinstance(b.tools, ToolsSpec):
        n += b.tools.count * b.tools.size
    n += _spec_tokens(b.system) if b.system is not None else 0
    if isinstance(b.history, HistorySpec):
        h = b.history
        n += h.turns * (h.user + h.assistant + h.tool_use + h.tool_result)
    return n


def _spec_tokens(v: Any) -> int:
    """Every token size inside a step or text spec, added up (counts multiply the sizes they count)."""
    if isinstance(v, bool) or v is None:
        return 0
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        return len(v) // 4
    if isinstance(v, ToolsSpec):
        return v.count * v.size
    if hasattr(type(v), "model_fields"):
        skip = ("children", "turns", "count", "position", "after", "at", "stagger", "seconds", "join",
                "boundary", "distinct")
        return sum(_spec_tokens(getattr(v, f)) for f in type(v).model_fields if f not in skip)
    if isinstance(v, list):
        return sum(_spec_tokens(x) for x in v)
    return 0
