"""What every importer yields: a timed call for the simulator plus what the provider reported for it,
and the checks every importer applies to a line's values before it becomes a Record."""
from __future__ import annotations

from decimal import Decimal

from dataclasses import dataclass
from functools import lru_cache

from prefixsim.errors import UserError, shown
from prefixsim.model import Call, Usage
from prefixsim.providers.registry import get_policy

#: Epoch seconds a timestamp may have: from 1970 to the end of year 9999 (what ISO text can write).
LATEST_EPOCH = 253402300799.0

#: A token count past this in one usage field is corrupt (the largest context windows hold about
#: 10M tokens), and priced it would only overflow the decimal arithmetic.
MAX_TOKENS = 10**9


@dataclass(frozen=True, slots=True)
class Record:
    """One deduplicated request of real traffic.

    `observed` is the usage the provider reported (None when the log has none); `timestamp` is the
    ISO time the source gives for the request start; `path`/`line` say where it came from.
    `output_final` is False when the source's output count is not the final one (Claude Code
    transcripts log a streaming snapshot), so costs leave output out. `main` says, for traffic of a
    harness with TTL buckets (Claude Code), whether the request belongs to the main conversation's
    bucket; None when the source knows no such buckets (every request writes as its client asks).
    `provider` is the provider that served the request (its rules and prices replay it as recorded).
    """

    call: Call
    request_id: str
    timestamp: str
    observed: Usage | None
    path: str
    line: int
    output_final: bool = True
    main: bool | None = None
    provider: str = "anthropic"
    #: The model iterations after the first of a request that ran server tools (web search, code
    #: execution): one request, one observed usage summing them all; each is stepped in turn.
    iterations: tuple[Call, ...] = ()
    #: Calls the data proves were sent though the log has no line for them, stepped after this request
    #: (they change the cache, not this request's row); learned from this request's observation.
    unlogged: tuple[Call, ...] = ()
    #: Calls of an earlier run of the same recording, stepped before this request (its own streams,
    #: no rows): a test's cassette whose first request read a cache the file never wrote
    #: (sources/earlier_run.py).
    earlier: tuple[Call, ...] = ()
    #: Calls standing for traffic outside the data that keeps an entry warm, stepped before this
    #: request (own streams, no rows): a prefix shared beyond the data (Claude Code's global cache
    #: scope, sources/claude_code/calibrate.py: Calibrator._outside).
    kept: tuple[Call, ...] = ()
    #: Calls of a conversation the data proves was sent though its transcript is not in the data,
    #: stepped before this request (own stream, no row): the latest request of the conversation a Claude
    #: Code compaction call forks (sources/claude_code/calibrate.py, docs/rules.md#claude-code-harness).
    absent: tuple[Call, ...] = ()
    #: A call the harness sends when a user turn ends that its transcript does not log, caching the
    #: conversation through the turn's last reply (Claude Code; sources/claude_code/calibrate.py:
    #: Calibrator._turn_end), stepped before this request (own stream, no row).
    ended: tuple[Call, ...] = ()
    #: The source recorded the usage but not the prompt (an OpenTelemetry span or a gateway log
    #: without messages): nothing to replay, so the row is an audit of `observed`, no prediction.
    audit: bool = False
    #: Why an audited record's usage cannot be priced in prefixsim's token classes, which are text's
    #: ("audio tokens": genai-prices prices a realtime response's audio apart from its text): its cost
    #: is left missing, never made up (replay/run.py: _audited). "" when it can.
    unpriced: str = ""
    #: What the router says it billed for the request (OpenRouter's `usage.cost`, USD), beside the
    #: price prefixsim computes from the observed tokens; None when the source reports none.
    billed_usd: Decimal | None = None
    #: What the router says caching saved on the request (OpenRouter's `cache_discount`, USD; negative
    #: where cache writes cost more than input); None when the source reports none.
    cache_discount_usd: Decimal | None = None
    #: The source timed the request: `call.ttft` is its response's stamp less its start's (Claude Code
    #: transcripts, Codex rollouts), not a default; `replay --latency` fits only such requests.
    timed: bool = False
    #: Output characters the response generated before the line that times it was written (a Claude Code
    #: transcript writes a response's first line once its first content block is complete): 0 where the
    #: time ends at the first token, None where the source does not show them (a thinking block logged
    #: without its text). `replay --latency` takes their decoding out of the time to first token.
    generated: int | None = 0


def token_count(value: object, name: str) -> int:
    """A usage field as a count: absent or null is 0; else a whole number from 0 to MAX_TOKENS
    (12.0 is accepted, as some writers emit floats). Rounding 12.7, reading `true` as 1, parsing "12"
    or holding 1e300 would each make up a count: UserError naming the field instead."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, float) and value.is_integer() and abs(value) <= MAX_TOKENS:
        n = int(value)
    else:
        raise UserError(f"usage field {name} is not a whole number of tokens: {shown(value)}")
    if not 0 <= n <= MAX_TOKENS:
        raise UserError(f"usage field {name} is {'negative' if n < 0 else 'implausibly large'}: {shown(value)} "
                        f"(a count is from 0 to {MAX_TOKENS:,})")
    return n


def checked_usage(u: Usage) -> Usage:
    """Observed usage derived from several fields (OpenAI: uncached = prompt - cached) is compared and
    priced: a negative class means the fields contradict each other."""
    if min(u.input_tokens, u.cache_write_5m, u.cache_write_1h, u.cache_read, u.output_tokens) < 0:
        raise UserError("usage fields contradict each other (a token class comes out negative)")
    return u


def first_given(*values: object) -> object:
    """The first value a line gives (not absent, null or empty text): 0 is a value. `a or b` would
    read an id 0 or a time 0 as no value at all."""
    return next((v for v in values if v is not None and v != ""), None)


def request_key(value: object, name: str = "request id") -> str | None:
    """A request id as text (None without one): text or a whole number, anything else is no id."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value.encode("utf-8")   # a lone surrogate: UnicodeEncodeError, the line is skipped
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise UserError(f"{name} is not text: {shown(value)}")


def check_model(model: object, provider: str) -> str:
    """The model a line names (UserError: missing, or a provider without rules, so that one line is
    skipped rather than the replay stopping at it). A model the provider's tables do not list is
    kept: it was really served, and the replay runs it under the provider's rule for unlisted
    models, said so (providers/unlisted.py)."""
    if not isinstance(model, str) or not model.strip():
        raise UserError(f"request has no model name (model: {shown(model)})")
    model.encode("utf-8")   # a lone surrogate: UnicodeEncodeError, the line is skipped
    _known(model, provider)
    return model


@lru_cache(maxsize=1024)
def _known(model: str, provider: str) -> None:
    get_policy(provider, listed_only=False).describe(model)   # raises UserError for a provider without rules
