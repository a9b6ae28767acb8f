"""The parameters of each break-even study, each with the range it can take as data beside it, and
the limits of what a study's check may build: the one description `studycheck.py` checks every value
against, from the command line (-p) or a scenario's `studies:`, before any work starts.

A range is what the study's closed form and its check can take: a directive shorter than 10 tokens
can repeat a sibling's (the filler text is random words), and siblings with the same directive read
each other's writes, which the closed form does not count; a growth under 4 tokens cannot make the
check's 40,000 tokens of history in 10,000 turns. A limit bounds the work a check does across
parameters (requests, the largest prompt, the filler text it builds), so a value that would take
minutes or gigabytes is refused in the time it takes to multiply. They live with the scenario
format because a scenario names its own studies; the studies (prefixsim/analysis/) import them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from prefixsim.providers.gemini_tables import (
    GEMINI_EXPLICIT_DEFAULT_TTL,
    GEMINI_EXPLICIT_MINIMUM,
    GEMINI_RULES,
    gemini_explicit_minimum,
)
from prefixsim.scenario.fields import MAX_COUNT
from prefixsim.serving.capacity import MAX_BATCH
from prefixsim.serving.gpus import CATALOGUE
from prefixsim.serving.models import OPEN_MODELS, WEIGHT_DTYPES
from prefixsim.serving.roofline import COMPUTE_EFFICIENCY, MEMORY_EFFICIENCY
from prefixsim.scenario.studynames import BREAKEVEN_STUDIES, OTHER_PROVIDER, STUDY_NAMES  # noqa: F401

#: Seconds between one child's requests, and between the parent's turn and the spawn: the
#: scenario builder's default pace; ttft must not exceed it (each request reads the one before).
PACE = 10.0
#: The longest prompt a study may describe: no model's context holds more (1 M tokens).
MAX_PROMPT = 1_000_000
#: Requests one check may simulate, summed over the designs it compares.
STUDY_REQUESTS = 10_000
#: Tokens of filler text one check may build, summed over its designs (about 8 s of generation).
MAX_BUILT = 10_000_000
#: Designs one comparison may check (each is built and replayed at FORK_HISTORIES).
MAX_DESIGNS = 50
#: Values one parameter may list.
MAX_VALUES = 50
#: The studies' time to first token (seconds): the fork-vs-subagent default stagger is one of it, its model
#: of SIBLING_LAUNCH (scenario/fields.py), so the study and a scenario's default launch agree.
STUDY_TTFT = 2.0
#: Parent histories at which each fork design is replayed by the check (analysis/verify.py).
FORK_HISTORIES = (0, 40_000)
#: The fork-vs-subagent comparison when no children value is named.
DEFAULT_CHILDREN = (1, 2, 5, 8, 16)
#: An implicit Gemini cache lives at most this long from its write (G-VX): the closed form of the
#: implicit line holds within it, so an explicit cache's TTL in the study stays within it too.
IMPLICIT_LIFETIME = int(GEMINI_RULES["gemini-2.5-pro"].max_lifetime)

#: Why a text size has a floor: filler text this short can repeat between siblings or versions.
DISTINCT = "shorter filler text can repeat a sibling's, and the closed form counts each one as its own"


@dataclass(frozen=True)
class Range:
    """What one parameter can take. `kind`: tokens (a size: 30K, 1.5M), count (a whole number),
    seconds, or choice (one of `choices`). `model_low`: a floor that depends on the model priced."""

    kind: str
    low: float = 0
    high: float = MAX_PROMPT
    why: str = ""
    choices: tuple[str, ...] = ()
    model_low: Callable[[str], int] | None = None

    def text(self, low: float | None = None) -> str:
        """'4 to 1,000,000 tokens', '0 to 60 s', '5m or 1h', '0.001 to 10,000' (a number)."""
        if self.kind == "choice":
            return " or ".join(self.choices) if len(self.choices) <= 3 else "one of " + ", ".join(self.choices)
        unit = {"tokens": " tokens", "seconds": " s"}.get(self.kind, "")
        lo = self.low if low is None else low
        return f"{lo:,g} to {self.high:,g}{unit}" if self.kind in ("seconds", "number") \
            else f"{int(lo):,} to {int(self.high):,}{unit}"


def param(default: Any, kind: str, low: float = 0, high: float = MAX_PROMPT, why: str = "", **kw: Any) -> Any:
    return field(default=default, metadata={"range": Range(kind, low, high, why, **kw)})


def _ttl() -> Any:
    return param("5m", "choice", choices=("5m", "1h"))


@dataclass(frozen=True)
class Limit:
    """A bound on the work of a study's check, over several parameters: `value(params)` of one design
    (summed over the designs compared when `total`), at most `high`."""

    what: str
    unit: str
    value: Callable[[Any], int]
    high: int
    advice: str
    total: bool = False


def _requests(n: Callable[[Any], int], what: str, advice: str) -> Limit:
    return Limit(what, "requests the check simulates", n, STUDY_REQUESTS, advice, total=True)


def _prompt(n: Callable[[Any], int], advice: str) -> Limit:
    return Limit("the largest prompt", "tokens", n, MAX_PROMPT, advice)


def _built(n: Callable[[Any], int], advice: str = "lower the sizes or the designs compared") -> Limit:
    return Limit("the filler text the check builds", "tokens", n, MAX_BUILT, advice, total=True)


@dataclass(frozen=True)
class ForkParams:
    children: int = param(5, "count", 1, MAX_COUNT)
    turns: int = param(3, "count", 1, MAX_COUNT)          # requests each child makes (its own loop)
    parent_static: int = param(18_000, "tokens")           # parent tools + system, part of what a fork inherits
    sub_static: int = param(16_000, "tokens")              # a sub-agent's own tools + system
    task: int = param(1_000, "tokens", 10, why=DISTINCT)   # a sub-agent's task: it restates the context it needs
    directive: int = param(200, "tokens", 10, why=DISTINCT)   # a fork child's directive
    call: int = param(120, "tokens")                       # per child: its tool_use in the spawning reply + placeholder
    growth: int = param(1_500, "tokens", 4, why=f"the check builds {FORK_HISTORIES[-1]:,} tokens of parent history "
                        f"in whole turns of growth, at most {MAX_COUNT:,} of them")   # tokens a loop turn adds
    # SIBLING_LAUNCH (hold, CC-WF) as the closed form takes it: siblings one time to first token apart
    stagger: float = param(STUDY_TTFT, "seconds", 0, 60, "between sibling launches")
    ttft: float = param(STUDY_TTFT, "seconds", 0, PACE, f"each child's next request comes {PACE:g} s later and reads "
                        "this one's write")                # seconds until a write is readable
    ttl: str = _ttl()

    LIMITS: ClassVar[tuple[Limit, ...]] = (
        _requests(lambda f: 2 * len(FORK_HISTORIES) * f.children * f.turns,
                  f"children x turns x 2 designs x {len(FORK_HISTORIES)} histories",
                  "lower children, turns or the designs compared"),
        _prompt(lambda f: max(f.parent_static + FORK_HISTORIES[-1] + f.children * f.call + f.directive
                              + (f.turns - 1) * f.growth, f.sub_static + f.task + (f.turns - 1) * f.growth),
                "lower the sizes, turns or children"),
        _built(lambda f: len(FORK_HISTORIES) * (f.parent_static + f.sub_static + f.children * (
            f.call + f.directive + f.task + 2 * f.turns * f.growth)) + FORK_HISTORIES[-1]),
    )


@dataclass(frozen=True)
class TTLParams:
    prefix: int = param(20_000, "tokens")


@dataclass(frozen=True)
class StaggerParams:
    children: int = param(5, "count", 1, MAX_COUNT)
    shared: int = param(16_000, "tokens")
    task: int = param(1_000, "tokens", 10, why=DISTINCT)
    ttft: float = param(3.0, "seconds", 0, 60, "a time to first token past a minute is a typo, not a design")
    ttl: str = _ttl()

    LIMITS: ClassVar[tuple[Limit, ...]] = (
        _requests(lambda f: 3 * f.children, "3 launch delays x children", "lower children"),
        _prompt(lambda f: f.shared + f.task, "lower shared or task"),
        _built(lambda f: 3 * (f.shared + f.children * f.task), "lower children, shared or task"),
    )


def _checked_turn(f: InvalidationParams) -> int:
    """The later of the two turns the invalidation check changes something at (analysis/verify.py)."""
    return max(2, f.turns // 3)


@dataclass(frozen=True)
class InvalidationParams:
    tools: int = param(14_000, "tokens", 184, why="the check's tool list is 4 definitions of at least 46 tokens")
    system: int = param(4_000, "tokens", 10, why="the changed system prompt is another text of the same size, and "
                        "shorter filler text can repeat it")
    growth: int = param(1_500, "tokens")
    turns: int = param(100, "count", 1, MAX_COUNT)
    ttl: str = _ttl()

    LIMITS: ClassVar[tuple[Limit, ...]] = (
        _requests(lambda f: 8 * (2 + _checked_turn(f)), "8 sessions of up to turns / 3 requests", "lower turns"),
        _prompt(lambda f: f.tools + f.system + f.turns * f.growth, "lower turns, growth or the static sizes"),
        _built(lambda f: 6 * (f.tools + 2 * f.system + _checked_turn(f) * f.growth), "lower turns or the sizes"),
    )


@dataclass(frozen=True)
class MinimumParams:
    prefix: int = param(800, "tokens")
    requests: int = param(10, "count", 1, MAX_COUNT)
    ttl: str = _ttl()

    LIMITS: ClassVar[tuple[Limit, ...]] = (
        _requests(lambda f: 2 * f.requests, "2 prefix sizes x requests", "lower requests"),
    )


@dataclass(frozen=True)
class ExplicitParams:
    prefix: int = param(100_000, "tokens", min(m.value for m in GEMINI_EXPLICIT_MINIMUM.values()),
                        why="the smallest explicit cache the API creates for the model, G-CC",
                        model_low=lambda model: gemini_explicit_minimum(model).value)
    reads: int = param(6, "count", 0, 3600, "reads per hour: more than one a second comes before the write it "
                       "would read is readable, 1 s to the first token")   # reads of the prefix per hour
    ttl_s: float = param(float(GEMINI_EXPLICIT_DEFAULT_TTL.value), "seconds", 1, IMPLICIT_LIFETIME,
                         "the implicit line holds while an implicit cache may live: 24 h from its write, G-VX")

    LIMITS: ClassVar[tuple[Limit, ...]] = (
        _requests(lambda f: int(f.reads * f.ttl_s / 3600), "reads in one cache's life (reads x ttl_s / 3600)",
                  "lower reads or ttl_s"),
    )



#: The longest gap between a session's turns: each turn reads its predecessor's 5-minute write.
MAX_PACE = 240.0
#: Sessions of the self-hosted design the check and the measurement simulate at most.
SIM_SESSIONS = 8


@dataclass(frozen=True)
class SelfHostedParams:
    """One agent design (sessions of `turns` requests over a shared `static` prefix, `growth` tokens a
    turn, `output` decoded each) at `rate` requests a second, on the API and on `gpu`s serving
    `open_model` with `engine`'s prefix cache."""

    static: int = param(18_000, "tokens", 1, 200_000)       # tools + system prompt every session shares
    growth: int = param(1_500, "tokens", 1, 100_000)        # what a turn adds to the prompt (reply, tool result)
    turns: int = param(10, "count", 1, 200)                  # requests a session makes
    output: int = param(300, "tokens", 1, 32_000)           # tokens each request decodes
    rate: float = param(1.0, "number", 0.001, 10_000, "requests a second")
    pace: float = param(10.0, "seconds", 1, MAX_PACE, "a turn reads the previous turn's 5-minute write")
    ttl: str = _ttl()
    open_model: str = param("llama-3.1-70b", "choice", choices=tuple(OPEN_MODELS))
    gpu: str = param("h100-sxm", "choice", choices=tuple(CATALOGUE))   # --gpus FILE adds its own names
    engine: str = param("vllm", "choice", choices=("vllm", "sglang"))
    dtype: str = param("bf16", "choice", choices=WEIGHT_DTYPES)    # the weights' (the KV stays bf16)
    gpu_hour_usd: float = param(0.0, "number", 0, 1_000, "0 takes the catalogue's price")
    compute_efficiency: float = param(COMPUTE_EFFICIENCY, "number", 0.01, 1, "a share of the peak FLOPs")
    memory_efficiency: float = param(MEMORY_EFFICIENCY, "number", 0.01, 1, "a share of the peak bandwidth")
    max_batch: int = param(MAX_BATCH, "count", 1, 4_096)

    LIMITS: ClassVar[tuple[Limit, ...]] = (
        _prompt(lambda f: f.static + f.turns * f.growth + f.output, "lower static, growth, turns or output"),
        _requests(lambda f: 3 * SIM_SESSIONS * f.turns, f"{SIM_SESSIONS} sessions x 3 x turns", "lower turns"),
        _built(lambda f: f.static + f.turns * f.growth, "lower static, growth or turns"),
    )


#: Studies that compare designs: a parameter may take a list of values (-p children=3,4,6).
LIST_STUDIES = ("fork-vs-subagent",)


def params_class(study: str):
    return {"fork-vs-subagent": ForkParams, "ttl": TTLParams, "stagger": StaggerParams,
            "invalidation": InvalidationParams, "minimum": MinimumParams, "gemini-explicit": ExplicitParams,
            "api-vs-selfhosted": SelfHostedParams}[study]
