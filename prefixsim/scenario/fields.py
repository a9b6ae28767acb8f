"""Value types of the scenario format: its limits, durations, token counts and prices, and the
strict base every part of the format is a model of.

Token counts are numbers or text as people write them: 30K, 2k, 1.5M, 30_000 (`size_value`)."""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from prefixsim.core.pricing import MAX_PRICE
from prefixsim.core.sizes import whole_tokens
from prefixsim.scenario.fielddocs import document

MAX_TOKENS = 10_000_000   # a single block or prompt larger than this is a typo, not a design
MAX_COUNT = 10_000
#: A duration past a year is a typo: the longest cache TTL is an hour, and times of that size lose
#: the sub-second precision availability (start + time to first token) is decided with.
MAX_SECONDS = 365 * 24 * 3600
#: Runs one sweep may ask for (values x variants are each a full simulation).
MAX_SWEEP = 1_000

_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m)?\s*(?:(\d+(?:\.\d+)?)s)?\s*$")


def parse_duration(v: Any) -> float:
    if isinstance(v, bool):
        raise ValueError("a duration is seconds or a string like '90s', '5m', '1h'")
    if isinstance(v, (int, float)):
        if v < 0:
            raise ValueError("a duration cannot be negative")
        return _at_most_a_year(float(v), v)
    if isinstance(v, str):
        m = _DURATION.match(v)
        if m and any(m.groups()):
            h, mi, s = (float(x) if x else 0.0 for x in m.groups())
            return _at_most_a_year(h * 3600 + mi * 60 + s, v)
    raise ValueError(f"{v!r} is not a duration (seconds, or a string like '90s', '5m', '1h')")


def _at_most_a_year(seconds: float, given: Any) -> float:
    if not seconds <= MAX_SECONDS:   # also NaN, and "99...9h", which float() reads as infinity
        shown = repr(given) if len(repr(given)) <= 40 else repr(given)[:37] + "..."
        raise ValueError(f"{shown} is too long (at most {MAX_SECONDS:,} seconds, a year)")
    return seconds


#: The schema an editor checks: seconds, or text such as "90s", "5m", "1h", "2m30s" (_DURATION).
_DURATION_SCHEMA = {"anyOf": [{"type": "number", "minimum": 0, "maximum": MAX_SECONDS},
                              {"type": "string", "pattern": _DURATION.pattern}], "format": "duration"}
Duration = Annotated[float, BeforeValidator(parse_duration), WithJsonSchema(_DURATION_SCHEMA)]


def _stagger(v: Any) -> Any:
    if v == "hold":
        return v
    try:
        return parse_duration(v)
    except ValueError as e:
        raise ValueError(f"{e}, nor hold (siblings wait for the first one's response)") from None


#: Seconds between sibling launches, or `hold`: the siblings after the first wait until its response
#: begins (one time to first token) and then start together (CC-WF, docs/rules.md).
Stagger = Annotated[Union[float, Literal["hold"]], BeforeValidator(_stagger), WithJsonSchema(
    {"anyOf": [*_DURATION_SCHEMA["anyOf"], {"const": "hold"}], "format": "duration"})]
#: How Claude Code launches parallel siblings, the default of a scenario's fork and subagent steps and
#: of the fork-vs-subagent study (which models it as a stagger of one time to first token): held until
#: the first agent's response begins (CC-WF, docs/rules.md#claude-code-harness).
SIBLING_LAUNCH: Literal["hold"] = "hold"

def size_value(v: str) -> int | None:
    """'30K' -> 30000, '1.5M' -> 1500000, '30_000' -> 30000, read exactly (core/sizes.py, as every size
    option is); None when the text is not a size; ValueError for a fraction of a token."""
    return whole_tokens(v)


def parse_size(v: Any) -> Any:
    """A token count: a number, or text such as '30K' (a size written as text would otherwise be
    taken as literal text where a field takes both, silently); anything else is left for the type check."""
    if isinstance(v, str):
        n = size_value(v)
        if n is not None and n > MAX_TOKENS:   # named as written: '40 digits k', not the number it reads as
            shown = repr(v) if len(v) <= 40 else repr(v[:37] + "...")
            raise ValueError(f"{shown} is too large (at most {MAX_TOKENS:,} tokens; more is a typo, not a design)")
        if n is not None:
            return n
    return v


_SIZE_SCHEMA = {"anyOf": [{"type": "integer", "minimum": 0, "maximum": MAX_TOKENS},
                          {"type": "string", "pattern": r"^\s*\d[\d_]*(\.\d+)?\s*[kKmM]?\s*$"}]}
Tokens = Annotated[int, BeforeValidator(parse_size), Field(ge=0, le=MAX_TOKENS), WithJsonSchema(_SIZE_SCHEMA)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
TTL = Literal["5m", "1h"]
Breakpoints = Union[Literal["none", "system_and_tools", "last_message", "automatic", "claude_code"],
                    list[Literal["tools", "system", "last_message", "previous_message"]]]
Price = Annotated[float, Field(ge=0, le=MAX_PRICE)]


class Strict(BaseModel):
    # allow_inf_nan: a float field must not take "inf" or "nan" written as text either.
    # json_schema_extra: every key's one line and example in the JSON Schema (fielddocs.py).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, json_schema_extra=document)


class StepBase(Strict):
    """What every timeline step may set: its label and when it starts."""

    label: str | None = None
    after: Duration | None = Field(None, description="Start this long after the previous step.")
    at: Duration | None = Field(None, description="Start at this time since the scenario began.")


def one_of(names: tuple[str, ...]) -> WithJsonSchema:
    """A closed set of names as a JSON Schema enum (an editor completes it), validated as text so
    that checks.py refuses a wrong one at its line with a did-you-mean."""
    return WithJsonSchema({"type": "string", "enum": list(names)})
