"""The parameters of each break-even study, and their checks: from the command line (-p KEY=VALUE,
KEY=V1,V2 to compare) or a scenario's `studies:` mapping, checked alike: every value given is used, or
refused in one line. They live with the scenario format because a scenario names its own studies
(schema.py validates `studies:` here); the studies themselves (prefixsim/analysis/) import them."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from prefixsim.errors import UserError
from prefixsim.io.suggest import unknown
from prefixsim.providers.gemini_tables import GEMINI_EXPLICIT_DEFAULT_TTL
from prefixsim.scenario.fields import MAX_COUNT, MAX_SECONDS, MAX_TOKENS, size_value

#: Seconds between one child's requests, and between the parent's turn and the spawn: the
#: scenario builder's default pace; ttft must not exceed it (each request reads the one before).
PACE = 10.0


@dataclass(frozen=True)
class ForkParams:
    children: int = 5
    turns: int = 3                 # requests each child makes (its own loop)
    parent_static: int = 18_000    # parent tools + system, part of what a fork inherits
    sub_static: int = 16_000       # a sub-agent's own tools + system (most tools, its own prompt)
    task: int = 1_000              # a sub-agent's task: it must restate the context it needs
    directive: int = 200           # a fork child's directive
    call: int = 120                # per child: its tool_use in the spawning reply + its placeholder result
    growth: int = 1_500            # tokens a loop turn adds (reply + tool result)
    stagger: float = 2.0           # seconds between sibling launches (CC-WF: held until the first response)
    ttft: float = 2.0              # seconds until a write is readable
    ttl: str = "5m"


@dataclass(frozen=True)
class TTLParams:
    prefix: int = 20_000


@dataclass(frozen=True)
class StaggerParams:
    children: int = 5
    shared: int = 16_000
    task: int = 1_000
    ttft: float = 3.0
    ttl: str = "5m"


@dataclass(frozen=True)
class InvalidationParams:
    tools: int = 14_000
    system: int = 4_000
    growth: int = 1_500
    turns: int = 100
    ttl: str = "5m"


@dataclass(frozen=True)
class MinimumParams:
    prefix: int = 800
    requests: int = 10
    ttl: str = "5m"


@dataclass(frozen=True)
class ExplicitParams:
    prefix: int = 100_000
    reads: int = 6                        # reads of the prefix per hour
    ttl_s: float = float(GEMINI_EXPLICIT_DEFAULT_TTL.value)


STUDY_NAMES = ("fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum")

#: Studies priced on another provider than Anthropic (their default model); they stay out of the
#: design-review report, whose studies run on the scenarios' Claude model.
OTHER_PROVIDER = {"gemini-explicit": ("gemini", "gemini-2.5-pro")}
BREAKEVEN_STUDIES = (*STUDY_NAMES, *OTHER_PROVIDER)


def params_class(study: str):
    return {"fork-vs-subagent": ForkParams, "ttl": TTLParams, "stagger": StaggerParams,
            "invalidation": InvalidationParams, "minimum": MinimumParams, "gemini-explicit": ExplicitParams}[study]


#: Study parameters that count requests or agents; every other whole-number parameter is a size in
#: tokens and every fractional one a time in seconds. Each has a scenario's limit (schema.py), and
#: children x turns is held to STUDY_REQUESTS. Every design is also replayed through the scenario
#: builder to check it, so the builder's own scale limits apply (designs.TooLarge): it refuses
#: children=30 x turns=20 at the default sizes; 40 children x 5 turns took 12 s to check (2 cores shared).
COUNT_PARAMS = ("children", "turns", "requests")
STUDY_REQUESTS = 10_000


#: Studies that compare designs: a parameter may take a list of values (-p children=3,4,6).
LIST_STUDIES = ("fork-vs-subagent",)


def parse_pairs(study: str, pairs: tuple[str, ...] | list[str]):
    """-p KEY=VALUE (or KEY=V1,V2,... to compare) -> (params, {key: values listed})."""
    cls = params_class(study)
    fields = {f.name for f in dataclasses.fields(cls)}
    raw: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise UserError(f"--param {pair!r}: {study} takes KEY=VALUE with KEY one of {', '.join(sorted(fields))}")
        if key not in fields:
            raise UserError(f"--param {pair!r}: {unknown(f'{study} parameter', key, sorted(fields), show=20)}")
        if key in raw:
            raise UserError(f"--param {key} is given twice; to compare values list them: -p {key}=A,B")
        raw[key] = [v.strip() for v in value.split(",")] if "," in value else [value.strip()]
    return study_params(study, raw)


def study_params(study: str, values: dict[str, list], where: str = "--param"):
    """Checked study parameters from strings (-p) or a scenario's `studies:` values: (params, lists),
    where `lists` holds every key given, with its values in order (one or more)."""

    cls = params_class(study)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    lists: dict[str, list] = {}
    for key, raws in values.items():
        if key not in fields:
            raise UserError(f"{where} {key}: {unknown(f'{study} parameter', key, sorted(fields), show=20)}")
        if len(raws) > 1 and study not in LIST_STUDIES:
            raise UserError(f"{where} {key}: {study} takes one value (a list compares designs in "
                            f"{', '.join(LIST_STUDIES)} only)")
        if not raws or len(raws) > 50:
            raise UserError(f"{where} {key}: give 1 to 50 values")
        default = fields[key].default
        out = []
        for raw in raws:
            try:
                if isinstance(default, str):
                    v = str(raw)
                elif isinstance(raw, bool):
                    raise ValueError
                elif isinstance(default, int) and key not in COUNT_PARAMS and isinstance(raw, str) \
                        and size_value(raw) is not None:
                    v = size_value(raw)   # a token size as a scenario takes it (30K, 1.5M, 30_000)
                elif isinstance(default, int):
                    v = int(raw) if not isinstance(raw, float) or raw.is_integer() else int("x")
                else:
                    v = float(raw)
            except (ValueError, TypeError):
                what = ("a whole number of tokens (e.g. 30000 or 30K)" if isinstance(default, int)
                        and key not in COUNT_PARAMS else "a whole number" if isinstance(default, int)
                        else "a number of seconds (e.g. 2.5)")
                raise UserError(f"{where} {key}: {raw!r} is not {what}") from None
            if isinstance(v, (int, float)):
                if not math.isfinite(v) or v < 0:
                    raise UserError(f"{where} {key}: {raw!r} must be a finite number, not negative")
                if key in COUNT_PARAMS and v < 1:
                    raise UserError(f"{where} {key}: at least 1")
                limit, unit = ((MAX_COUNT, "") if key in COUNT_PARAMS else (MAX_SECONDS, " seconds")
                               if isinstance(v, float) else (MAX_TOKENS, " tokens"))
                if v > limit:
                    raise UserError(f"{where} {key}: {raw} is too large (at most {limit:,}{unit}; more is a typo, "
                                    "not a design)")
            if key == "ttl" and v not in ("5m", "1h"):
                raise UserError(f"{where} ttl: 5m or 1h")
            out.append(v)
        if len(set(out)) != len(out):
            raise UserError(f"{where} {key}: a value is listed twice")
        lists[key] = out
    f = cls(**{k: vs[0] for k, vs in lists.items()})
    for k, vs in lists.items():
        for v in vs:
            g = dataclasses.replace(f, **{k: v})
            requests = getattr(g, "children", 1) * getattr(g, "turns", 1)
            if requests > STUDY_REQUESTS:
                raise UserError(f"{where} children x turns = {requests:,} requests per simulated design (at most "
                                f"{STUDY_REQUESTS:,}); lower children or turns")
    if study == "fork-vs-subagent":
        for v in lists.get("ttft", [f.ttft]):
            if v > PACE:
                raise UserError(f"{where} ttft: at most {PACE:g} s (each child's next request comes {PACE:g} s later "
                                "and reads this one's write)")
        for v in lists.get("stagger", [f.stagger]):
            if v > 60:
                raise UserError(f"{where} stagger: at most 60 s between sibling launches")
    return f, lists




def as_lists(values: dict) -> dict[str, list]:
    """A scenario's study values: a scalar is one value, a list several."""
    return {str(k): list(v) if isinstance(v, list) else [v] for k, v in values.items()}


def check_studies(studies: dict) -> None:
    """A scenario's `studies:` (schema validator): known studies, their parameters checked as -p's are."""
    for name, values in studies.items():
        if name not in STUDY_NAMES:
            raise ValueError(f"unknown study {name!r} (one of {', '.join(STUDY_NAMES)})")
        try:
            study_params(name, as_lists(values or {}), where=name)
        except UserError as e:
            raise ValueError(e.message) from None
