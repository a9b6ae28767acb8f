"""OpenTelemetry exports in OTLP JSON: GenAI spans (`resourceSpans[].scopeSpans[].spans[]`) and Claude
Code's `claude_code.api_request` events (`resourceLogs[].scopeLogs[].logRecords[]`) -> Records.

A file is one export request (a collector's or SDK's JSON dump, pretty-printed or not) or JSON Lines
of them (the collector's file exporter writes one per line). Attributes are OTLP `{key, value:
{stringValue | intValue | doubleValue | boolValue | arrayValue | kvlistValue}}`.

A span is an LLM call when it names a model (`gen_ai.request.model` / `gen_ai.response.model`, the
OpenInference `llm.model_name`) or carries token counts; agent, chain and tool spans are passed over:
those without a model, those whose `gen_ai.operation.name` is an agent's or a tool's (`invoke_agent`,
`create_agent`, `execute_tool`: their messages are the agent's, their counts, where set, the sum of the
calls below them), and those that name a model but record neither usage nor a prompt (a collector that
copies the agent's model onto every span, as kagent does for Claude Code's tool and interaction spans:
there is nothing to replay or audit; how many is noted).
Usage: `gen_ai.usage.input_tokens` / `output_tokens`, cache reads and writes as the GenAI conventions
(`gen_ai.usage.cache_read.input_tokens`, `cache_creation.input_tokens`), OpenLLMetry
(`gen_ai.usage.cache_read_input_tokens`, `cache_creation_input_tokens`) and OpenInference
(`llm.token_count.prompt` / `completion`, `llm.token_count.prompt_details.cache_read` / `cache_write`)
write them. The prompt, where recorded: OpenLLMetry's `gen_ai.prompt.N.role` / `.content`, OpenInference's
`llm.input_messages.N.message.role` / `.content`, or the conventions' `gen_ai.input.messages` JSON
(with `gen_ai.system_instructions`). The stream is the session (`session.id`,
`gen_ai.conversation.id`, `langfuse.session.id`), else the trace. docs/rules.md#opentelemetry-genai-spans.

Claude Code's own traces (its beta tracing) make each API call a `claude_code.llm_request` span with
the counts of its event below (`model`, `input_tokens` uncached, `cache_read_tokens`,
`cache_creation_tokens`, `output_tokens`, `request_id`, `session.id`); such a span is a call, read from
those counts when no GenAI usage key is set (a collector recipe may copy them there), and audited.
docs/rules.md#claude-code-telemetry-events.

Claude Code's event carries `model`, `input_tokens` (uncached, as Anthropic counts), `output_tokens`,
`cache_read_tokens`, `cache_creation_tokens`, `cost_usd`, `duration_ms` and `session.id`, never the
prompt: each is audited per session. docs/rules.md#claude-code-telemetry-events.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prefixsim.errors import UserError
from prefixsim.sources import problems
from prefixsim.sources.files import check_regular, open_regular
from prefixsim.sources.genai import Seen, count, in_time_order, iso_seconds, nanos, record, text_of, usage_of
from prefixsim.sources.jsonl import iter_jsonl
from prefixsim.sources.record import Record, first_given

#: Keys of a span that say it is a model call (any one).
_MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
_INPUT = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens", "llm.token_count.prompt")
_OUTPUT = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.usage.completion_tokens",
           "llm.token_count.completion")
_READ = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
         "gen_ai.usage.input_tokens.cached", "llm.token_count.prompt_details.cache_read",
         "gen_ai.usage.cached_input_tokens")
_WRITE = ("gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_write.input_tokens",
          "gen_ai.usage.cache_creation_input_tokens", "gen_ai.usage.input_tokens.cache_write",
          "llm.token_count.prompt_details.cache_write")
_SESSION = ("session.id", "gen_ai.conversation.id", "langfuse.session.id")
_PROVIDER = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
#: `gen_ai.operation.name` values of spans that are never a model call (the conventions' agent and tool
#: operations): an agent span's messages are the agent's, its counts the sum of the calls below it.
_NOT_CALLS = frozenset({"invoke_agent", "create_agent", "execute_tool"})

#: The name of the span Claude Code's own tracing gives each API call, and where such a span names its model.
_CLAUDE_CODE_CALL = "claude_code.llm_request"
_NATIVE_MODEL_KEYS = (*_MODEL_KEYS, "model")

#: What `span_seen` gives for a span that names a model but records neither usage nor a prompt.
NOTHING = object()


def value(v: object) -> Any:
    """An OTLP JSON AnyValue as a Python value (an array as a list, a kvlist as a dict)."""
    if not isinstance(v, dict):
        return None
    for k in ("stringValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    if "intValue" in v:   # int64 is a decimal string in OTLP JSON
        x = v["intValue"]
        return int(x) if isinstance(x, str) and x.lstrip("-").isdigit() else x
    if "arrayValue" in v:
        return [value(x) for x in (v["arrayValue"] or {}).get("values") or ()]
    if "kvlistValue" in v:
        return attributes((v["kvlistValue"] or {}).get("values"))
    return None


def attributes(kvs: object) -> dict[str, Any]:
    """A list of OTLP `{key, value}` pairs as a dict (a pair without a text key is left out)."""
    out: dict[str, Any] = {}
    for kv in kvs if isinstance(kvs, list) else ():
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = value(kv.get("value"))
    return out


def is_export(obj: object) -> str | None:
    """"spans" or "logs" for an OTLP JSON export request (format detection), else None."""
    if isinstance(obj, dict):
        if isinstance(obj.get("resourceSpans"), list):
            return "spans"
        if isinstance(obj.get("resourceLogs"), list):
            return "logs"
    return None


def sniff_document(p: Path) -> str | None:
    """A pretty-printed export (its first line is no JSON value): "spans" or "logs" from its head."""
    with open_regular(p) as fh:
        head = fh.read(4096).lstrip()
    if not head.startswith(b"{"):
        return None
    if b'"resourceSpans"' in head:
        return "spans"
    return "logs" if b'"resourceLogs"' in head else None


def documents(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, export request): each JSON line, or the whole file when it is one pretty-printed document."""
    check_regular(path)
    with open_regular(path) as fh:
        first = fh.readline().strip()
    try:
        json.loads(first)
        one_per_line = True
    except ValueError:
        one_per_line = False
    if one_per_line:
        yield from iter_jsonl(path)
        return
    with open_regular(path) as fh:
        text = fh.read()
    try:
        yield 1, json.loads(text.decode("utf-8"))
    except ValueError as e:
        raise UserError(f"not an OTLP JSON export: {e}", str(path)) from None


def _items(doc: object, kind: str) -> Iterator[tuple[str, dict, dict]]:
    """(where, resource attributes, item) for every span or log record of one export request."""
    if not isinstance(doc, dict) or is_export(doc) is None:
        raise UserError("not an OTLP JSON export (needs resourceSpans or resourceLogs)")
    outer, scopes, inner = (("resourceSpans", "scopeSpans", "spans") if kind == "spans"
                            else ("resourceLogs", "scopeLogs", "logRecords"))
    for i, res in enumerate(doc.get(outer) or ()):
        if not isinstance(res, dict):
            continue
        rattrs = attributes((res.get("resource") or {}).get("attributes"))
        for j, scope in enumerate(res.get(scopes) or res.get("instrumentationLibrarySpans") or ()):
            for k, item in enumerate((scope or {}).get(inner) or ()):
                yield f"{outer}[{i}].{scopes}[{j}].{inner}[{k}]", rattrs, item


def _indexed(a: dict, prefix: str) -> list[dict]:
    """`prefix.N.role` / `prefix.N.content` attributes as messages in N order."""
    found: dict[int, dict] = {}
    for key, v in a.items():
        if key.startswith(prefix):
            n, _, field = key[len(prefix):].partition(".")
            if n.isdigit() and field in ("role", "content", "message.role", "message.content"):
                found.setdefault(int(n), {})[field.rpartition(".")[2]] = v
    return [found[n] for n in sorted(found)]


def messages(a: dict) -> tuple[list[dict] | None, str | None]:
    """The prompt a span recorded (None: none), and its system instructions recorded apart."""
    msgs = _indexed(a, "gen_ai.prompt.") or _indexed(a, "llm.input_messages.")
    system = a.get("gen_ai.system_instructions")
    if not msgs and isinstance(a.get("gen_ai.input.messages"), str):
        parsed = json.loads(a["gen_ai.input.messages"])
        if not isinstance(parsed, list):
            raise UserError("gen_ai.input.messages is no JSON list of messages")
        for m in parsed:   # the conventions' parts: [{type: text, content}, ...]
            if isinstance(m, dict):
                parts = m.get("parts")
                text = "".join(p.get("content", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"
                               and isinstance(p.get("content"), str)) if isinstance(parts, list) else m.get("content")
                msgs.append({"role": m.get("role"), "content": text})
    if isinstance(system, str) and system.startswith("["):
        parts = json.loads(system)
        system = "".join(p.get("content", "") for p in parts if isinstance(p, dict)) if isinstance(parts, list) else None
    out = [{"role": m.get("role"), "content": text_of(m.get("content"))} for m in msgs]
    return (out or None), (system if isinstance(system, str) and system else None)


def span_seen(span: object, rattrs: dict) -> Seen | None | object:
    """One span as a recorded call (None: no model call; NOTHING: a span that names a model but records
    neither usage nor a prompt; UserError: its values cannot be used)."""
    if not isinstance(span, dict):
        raise UserError("a span is a JSON object")
    a = attributes(span.get("attributes"))
    if a.get("gen_ai.operation.name") in _NOT_CALLS:
        return None   # an agent or tool span, whatever model or counts it carries
    native = span.get("name") == _CLAUDE_CODE_CALL
    model = next((a[k] for k in (_NATIVE_MODEL_KEYS if native else _MODEL_KEYS) if isinstance(a.get(k), str) and a[k]),
                 None)
    usage = usage_of(count(a, *_INPUT), count(a, *_OUTPUT), count(a, *_READ), count(a, *_WRITE))
    if usage is None and native:   # Claude Code's own counts are Anthropic's: input leaves the cached out
        usage = usage_of(count(a, "input_tokens"), count(a, "output_tokens"), count(a, "cache_read_tokens"),
                         count(a, "cache_creation_tokens"), inclusive=False)
    if model is None:
        if usage is None:
            return None   # an agent, chain or tool span
        raise UserError("a span with token counts names no model (gen_ai.request.model)")
    msgs, system = messages(a)
    if usage is None and msgs is None:
        return NOTHING
    trace = str(span.get("traceId") or "")
    session = next((str(a.get(k) or rattrs.get(k)) for k in _SESSION if a.get(k) or rattrs.get(k)), None)
    provider = next((str(a[k]) for k in _PROVIDER if a.get(k)), "anthropic" if native else "")
    rid = str(first_given(a.get("gen_ai.response.id"), a.get("request_id") if native else None,
                          f"{trace}/{first_given(span.get('spanId')) or ''}"))
    return Seen(rid, session or trace or "main", model, provider, nanos(span.get("startTimeUnixNano"), "startTimeUnixNano"),
                usage, msgs, system)


def log_seen(rec: object, rattrs: dict) -> Seen | None:
    """A Claude Code `api_request` event as a recorded call (None: another event)."""
    if not isinstance(rec, dict):
        raise UserError("a log record is a JSON object")
    a = attributes(rec.get("attributes"))
    body = attributes([{"key": "b", "value": rec.get("body")}]).get("b")
    if body != "claude_code.api_request" and a.get("event.name") not in ("api_request", "claude_code.api_request"):
        return None
    model = a.get("model")
    if not isinstance(model, str) or not model:
        raise UserError("an api_request event names no model")
    # Claude Code's counts are Anthropic's: input_tokens leaves the cached tokens out.
    usage = usage_of(count(a, "input_tokens"), count(a, "output_tokens"), count(a, "cache_read_tokens"),
                     count(a, "cache_creation_tokens"), inclusive=False)
    at = a.get("event.timestamp")
    t = iso_seconds(at, "event.timestamp") if at else nanos(rec.get("timeUnixNano") or rec.get("observedTimeUnixNano"),
                                                           "timeUnixNano")
    session = str(a.get("session.id") or rattrs.get("session.id") or "main")
    prompt = first_given(a.get("prompt.id"))
    rid = str(first_given(a.get("request_id"), f"{prompt}/{a.get('event.sequence', '')}" if prompt is not None else None,
                          f"{session}/{a.get('event.sequence', '')}/{t}"))
    return Seen(rid, session, model, "anthropic", t, usage)


def load(path: Path, sizer: Any) -> list[Record]:
    """Every model call of an OTLP JSON export, in time order; a bad span or event is skipped and named."""
    where = str(path)
    calls = []
    empty: list[int] = []   # the lines of spans that name a model but record nothing to read
    for line, doc in documents(path):
        kind = is_export(doc)
        items = problems.guarded(where, line, lambda d: list(_items(d, kind or "spans")), doc)
        for label, rattrs, item in items or ():
            read = span_seen if kind == "spans" else log_seen
            s = problems.guarded(where, line, read, item, rattrs, where=label)
            if s is NOTHING:
                empty.append(line)
            elif s is not None:
                calls.append((s, line, label))
    if empty:
        problems.note(where, empty[0], f"{len(empty)} span{'s' if len(empty) > 1 else ''} name a model but record "
                      "neither usage nor a prompt (tool or agent steps): not read as calls")
    out: list[Record] = []
    seen: set[str] = set()
    for s, line, label in in_time_order(calls):
        if s.rid in seen:
            problems.note(where, line, f"{label}: request {s.rid} is recorded again; the earliest is kept")
            continue
        got = problems.guarded(where, line, record, s, where, line, len(out), sizer, where=label)
        if got is not None:
            seen.add(s.rid)   # a copy that cannot be used leaves the next one usable
            out.append(got)
    return out
