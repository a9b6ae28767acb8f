"""One LLM call as an observability tool recorded it (an OpenTelemetry span or event, a gateway's log
line) -> a Record: replayed through the provider's own reader when the prompt was recorded, else an
audit row (`Record.audit`: the observed usage, priced, with nothing predicted).

The readers of those exports (`otel.py`, `gateway_logs.py`) fill a `Seen`; this module names the
provider whose rules apply, renders the recorded messages as that provider's request body and
hands it, with the usage in that provider's own shape, to `anthropic_log.line_record` or
`openai_log.line_record`, so a recorded prompt is sized and replayed exactly as an API log line
would be. docs/rules.md#observability-exports.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, replace
from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.model import Block, Call, Layer, Request, Usage
from prefixsim.providers.registry import model_provider
from prefixsim.sources import problems
from prefixsim.sources.record import LATEST_EPOCH, Record, checked_usage, request_key, token_count

#: Provider names the exports write (OTel `gen_ai.provider.name` / `gen_ai.system`, OpenInference
#: `llm.provider` / `llm.system`, LiteLLM `custom_llm_provider`) -> prefixsim's provider.
PROVIDER_NAMES = {
    "anthropic": "anthropic", "claude": "anthropic",
    "aws.bedrock": "bedrock", "aws_bedrock": "bedrock", "bedrock": "bedrock", "bedrock_converse": "bedrock",
    "gcp.vertex_ai": "vertex", "vertex_ai": "vertex", "vertexai": "vertex", "vertex_ai_beta": "vertex",
    "openai": "openai", "azure": "openai", "azure.ai.openai": "openai", "az.ai.openai": "openai",
    "text-completion-openai": "openai",
    "deepseek": "deepseek",
    "gcp.gemini": "gemini", "gemini": "gemini", "google": "gemini", "gcp.gen_ai": "gemini", "google_ai_studio": "gemini",
}

#: The default spacing of calls without a time (as the API-log readers space them).
SPACING = 10.0


@dataclass(frozen=True, slots=True)
class Seen:
    """What an export says of one call. `usage` None: the export recorded no usage; `messages` None:
    it recorded no prompt (the call is audited). `system` is the system text recorded apart from the
    messages (OTel `gen_ai.system_instructions`)."""

    rid: str
    stream: str
    model: str
    provider_name: str
    t: float
    usage: Usage | None
    messages: list[dict] | None = None
    system: str | None = None


def provider_of(name: str, model: str) -> str:
    """The provider whose cache rules and prices apply: the export's provider name, else the one the
    model id names (registry.model_provider: a Bedrock or Vertex spelling that cloud, a `claude` model
    Anthropic, a gpt / o-series one OpenAI, an id no family names OpenAI's format); a router's prefix
    (`anthropic/claude-…`) names the maker too. A platform serving several makers' models (Vertex AI,
    Azure) names the platform only for the model it has rules for there."""
    known = PROVIDER_NAMES.get(name.strip().lower())
    low = model.lower().rpartition("/")[2]
    if known == "vertex" and "claude" not in low:
        known = None   # Vertex AI serves Gemini as well: prefixsim's `vertex` is Claude on Vertex
    if known is not None and not (known == "openai" and "claude" in low):
        return known
    named = model_provider(model)   # as every other path infers it from the id alone
    if named != "other":
        return named
    return "anthropic" if "claude" in low else "openai"


def model_name(model: str) -> str:
    """The model as the provider's tables spell it: a router's or gateway's `provider/` prefix dropped
    (LiteLLM `anthropic/claude-…`, `openai/gpt-4o`); a Bedrock id keeps its dots."""
    return model.rpartition("/")[2] if "/" in model else model


def count(attrs: dict, *names: str) -> int | None:
    """The first of `names` that `attrs` holds, as a token count (None: none of them). OTLP JSON writes
    an int64 as a decimal string and Claude Code writes its counts as text: such a string is read."""
    for n in names:
        v = attrs.get(n)
        if v is None:
            continue
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v.strip())
        return token_count(v, n)
    return None


def usage_of(prompt: int | None, output: int | None, read: int | None, write: int | None,
             inclusive: bool | None = None) -> Usage | None:
    """Observed usage from an export's counts. The GenAI conventions count cached tokens inside
    `input_tokens` (as OpenAI does); some writers pass Anthropic's own `input_tokens`, which leaves
    them out. `inclusive` None: inside when the prompt holds them (prompt >= read + write), else
    outside (a prompt smaller than its cached part can only be the uncached rest)."""
    if prompt is None and output is None and read is None and write is None:
        return None
    p, r, w = prompt or 0, read or 0, write or 0
    if inclusive is None:
        inclusive = p >= r + w
    uncached = p - r - w if inclusive else p
    if uncached < 0:
        raise UserError(f"input tokens {p:,} are fewer than the cached ones ({r:,} read, {w:,} written)")
    return checked_usage(Usage(input_tokens=uncached, cache_write_5m=w, cache_read=r, output_tokens=output or 0))


def nanos(value: object, name: str) -> float:
    """An OTLP `*UnixNano` time (a decimal string or a number) as epoch seconds."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value / 1e9 <= LATEST_EPOCH:
        raise UserError(f"{name} is no time in nanoseconds since 1970: {shown(value)}")
    return value / 1e9


def iso_seconds(value: object, name: str) -> float:
    """An ISO 8601 time, or epoch seconds / milliseconds, as epoch seconds (a zone-less ISO time is UTC)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value:
        t = value / 1000.0 if value > 1e11 else float(value)
    elif isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise UserError(f"{name} is no ISO 8601 time: {shown(value)}") from None
        t = (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()
    else:
        raise UserError(f"{name} is no time: {shown(value)}")
    if not 0 < t <= LATEST_EPOCH:
        raise UserError(f"{name} is out of range: {shown(value)}")
    return t


def stamp(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def text_of(content: object) -> str | list | None:
    """A recorded message's content as the provider receives it: text, or a list of content parts
    (kept as recorded); a JSON-encoded list (OpenLLMetry writes content so) is decoded."""
    if isinstance(content, str):
        s = content.strip()
        if s.startswith("[") and s.endswith("]"):
            try:
                parts = json.loads(s)
            except ValueError:
                return content
            if isinstance(parts, list) and all(isinstance(p, dict) and "type" in p for p in parts):
                return parts
        return content
    if isinstance(content, list):
        return content
    return None if content is None else json.dumps(content, ensure_ascii=False, sort_keys=True)


def in_time_order(calls: list[tuple[Seen, Any, Any]]) -> list[tuple[Seen, Any, Any]]:
    """(call, line, label) in the order they are sized and replayed: by time, ties by id, then by what
    was recorded, never by the export's order (its recorded prompts are sized as they come, and a
    call recorded twice keeps its earliest copy: docs/rules.md#request-logs-line-order-ids-and-skipped-requests)."""
    return sorted(calls, key=lambda c: (c[0].t, c[0].rid, repr(c[0])))


def record(seen: Seen, path: str, line: int, index: int, sizer: Any) -> Record:
    """The Record of one recorded call (UserError: its values cannot be used, the line is skipped)."""
    request_key(seen.rid)
    if not seen.model.strip():
        raise UserError("the call names no model")
    provider = provider_of(seen.provider_name, seen.model)
    model = model_name(seen.model)
    if seen.messages and provider in ("anthropic", "bedrock", "vertex", "openai", "deepseek"):
        try:
            rec = _replayed(seen, provider, model, path, line, index, sizer)
        except problems.LINE_ERRORS as e:   # messages the provider's reader cannot take: the usage still counts
            problems.note(path, line or None, f"call {seen.rid}: its recorded messages do not render as a {provider} "
                                              f"request ({problems.unusable(e)}); audited by its usage")
        else:
            return replace(rec, call=replace(rec.call, stream=seen.stream))
    return audited(seen, provider, model, path, line)


def audited(seen: Seen, provider: str, model: str, path: str, line: int) -> Record:
    """A call known by its usage only: one block the size of its prompt, never stepped (Record.audit)."""
    u = seen.usage
    size = u.prompt_tokens if u is not None else 0
    req = Request(model=model, blocks=(Block(Layer.MESSAGES, seen.rid.encode("utf-8", "backslashreplace"),
                                             "prompt (not recorded)", tokens=size),))
    call = Call(t=seen.t, request=req, stream=seen.stream, label=seen.rid,
                output_tokens=u.output_tokens if u is not None else 0)
    return Record(call, seen.rid, stamp(seen.t), u, path, line, provider=provider, audit=True)


def _replayed(seen: Seen, provider: str, model: str, path: str, line: int, index: int, sizer: Any) -> Record:
    """The recorded prompt as the provider's request body, through that provider's log reader."""
    from prefixsim.sources import anthropic_log, openai_log   # lazy: an audit never loads the wire renderers

    u = seen.usage
    msgs = [m for m in seen.messages or () if isinstance(m, dict)]
    if provider in ("openai", "deepseek"):
        if any("role" not in m for m in msgs):   # the Responses API's input items: tool calls and their outputs
            body: dict = {"model": model, "input": msgs, **({"instructions": seen.system} if seen.system else {})}
        else:
            body = {"model": model, "messages": ([{"role": "system", "content": seen.system}] if seen.system else [])
                    + [{"role": m.get("role"), "content": m.get("content")} for m in msgs]}
        usage = None if u is None else {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.output_tokens,
                                        "prompt_tokens_details": {"cached_tokens": u.cache_read}}
        return openai_log.line_record({"request": body, "usage": usage, "timestamp": stamp(seen.t)}, seen.rid, index,
                                      path, line, sizer, None, provider)
    system = [seen.system] if seen.system else []
    turns = []
    for m in msgs:
        if m.get("role") == "system":
            system.append(m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content")))
        else:
            turns.append({"role": m.get("role"), "content": m.get("content")})
    body = {"model": model, "messages": turns}
    if system:
        body["system"] = "\n\n".join(s for s in system if isinstance(s, str))
    if u is not None and (u.cache_read or u.cache_creation):
        # The exports keep no cache_control: the usage shows the request was cached, so its prompt is
        # taken as cached to its end (Anthropic's top-level automatic breakpoint), and said so.
        body["cache_control"] = {"type": "ephemeral"}
    usage = None if u is None else {"input_tokens": u.input_tokens, "cache_read_input_tokens": u.cache_read,
                                    "cache_creation_input_tokens": u.cache_creation, "output_tokens": u.output_tokens}
    url = f"/model/{model}/invoke" if provider == "bedrock" else None
    return anthropic_log.line_record({"request": body, "usage": usage, "timestamp": stamp(seen.t),
                                      **({"url": url} if url else {})}, seen.rid, index, path, line, sizer, None)
