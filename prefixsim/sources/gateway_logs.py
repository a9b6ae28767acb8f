"""Gateway and observability exports -> Records: LiteLLM's `StandardLoggingPayload` as JSON Lines and
Langfuse's observation export (GENERATION observations).

LiteLLM (BerriAI/litellm `litellm/types/utils.py: StandardLoggingPayload`): `id`, `trace_id`,
`call_type`, `model`, `custom_llm_provider`, `messages` (the request's, in OpenAI's chat shape),
`prompt_tokens` / `completion_tokens` (OpenAI's counts: cached tokens inside the prompt),
`metadata.usage_object` (the response's usage: `cache_read_input_tokens`,
`cache_creation_input_tokens`, `prompt_tokens_details.cached_tokens`), `startTime` / `endTime` (epoch
seconds). A file may also hold the payload under `standard_logging_object`. docs/rules.md#litellm-standardloggingpayload.

Langfuse (langfuse/langfuse, the observations API and its export): `id`, `traceId`, `type`
(`GENERATION`), `startTime`, `model`, `input`, `output`, `usageDetails` (`input`, `output`,
`cache_read_input_tokens` or `input_cached_tokens`, `cache_creation_input_tokens`; Langfuse sums the
keys to `total`, so `input` leaves the cached tokens out) or the older `usage` (`input`, `output`),
and a trace's `sessionId` where the export joined it. JSON Lines, one JSON array, `{"data": [...]}`
as the API pages it, or one trace as the API returns it (`GET /api/public/traces/{id}`: `{trace,
observations}`, whose `input`, `output` and `metadata` are JSON text). docs/rules.md#langfuse-observations.

A call whose messages were logged is replayed through the provider's reader (`genai.record`); one
without is audited.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.model import Usage
from prefixsim.sources import problems
from prefixsim.sources.files import check_regular, open_regular
from prefixsim.sources.genai import Seen, count, in_time_order, iso_seconds, record, usage_of
from prefixsim.sources.jsonl import iter_jsonl
from prefixsim.sources.record import Record, first_given

#: LiteLLM call types that are a model call with a prompt (embeddings, images, audio are not).
_LITELLM_CALLS = frozenset({"completion", "acompletion", "text_completion", "atext_completion", "anthropic_messages",
                            "responses", "aresponses", "generate_content", "agenerate_content"})
#: Langfuse's usage keys for cached, cache-written and reasoning tokens: the names its OTel ingestion
#: maps (`OtelIngestionProcessor`) and the ones SDKs send as they are (LangChain's `input_cache_read`,
#: OpenInference's `prompt_details.*` in exports made before Langfuse renamed them).
_LF_READ = ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read", "prompt_details.cache_read",
            "cache_read.input_tokens", "cache_read_tokens")
_LF_WRITE = ("input_cache_creation", "cache_creation_input_tokens", "prompt_details.cache_write",
             "cache_creation.input_tokens", "cache_write_tokens")
_LF_REASONING = ("output_reasoning_tokens", "output_reasoning", "completion_details.reasoning", "reasoning.output_tokens")
#: Langfuse's observation types (`ObservationType`); only a GENERATION is a model call.
_LF_TYPES = frozenset({"GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR", "EMBEDDING",
                       "GUARDRAIL"})
#: Where the metadata of a generation sent through Langfuse's OTel endpoint names its provider.
_LF_PROVIDER = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
#: The head of one Langfuse trace as its API returns it: `{"trace": {"id": ..., "projectId": ...`.
_TRACE_HEAD = re.compile(rb'^\{\s*"trace"\s*:\s*\{')


def kind_of(obj: object) -> str | None:
    """"litellm" or "langfuse" for a line of either export (format detection), else None."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("standard_logging_object"), dict):
        obj = obj["standard_logging_object"]
    if "call_type" in obj and "model" in obj and ("startTime" in obj or "prompt_tokens" in obj) \
            and ("custom_llm_provider" in obj or "response_cost" in obj):
        return "litellm"
    if obj.get("type") in _LF_TYPES and "traceId" in obj and "startTime" in obj:
        return "langfuse"
    if isinstance(obj.get("trace"), dict) and isinstance(obj.get("observations"), list):
        return "langfuse"   # one trace with its observations, as the API returns it
    return None


def sniff_document(p: Path) -> str | None:
    """"langfuse" for a Langfuse export as one JSON document (an array, or the API's `{"data": [...]}`
    page), "litellm" for a pretty-printed payload or array of them (a payload's head names its call
    type and provider), else None."""
    with open_regular(p) as fh:
        head = fh.read(4096).lstrip()
    if head[:1] not in (b"[", b"{") or b"\n" not in head:
        return None
    if _TRACE_HEAD.match(head) and b'"projectId"' in head:
        return "langfuse"
    if b'"traceId"' in head and b'"GENERATION"' in head:
        return "langfuse"
    if b'"call_type"' in head and (b'"custom_llm_provider"' in head or b'"standard_logging_object"' in head):
        return "litellm"
    return None


def _lines(path: Path) -> Iterator[tuple[int | None, str, Any]]:
    """(line, label, object): each JSON line, or each element of one JSON document."""
    check_regular(path)
    with open_regular(path) as fh:
        first = fh.readline().strip()
    try:
        json.loads(first)
        per_line = not first.startswith(b"[")
    except ValueError:
        per_line = False
    if per_line:
        for n, o in iter_jsonl(path):
            yield n, "", o
        return
    with open_regular(path) as fh:
        try:
            doc = json.loads(fh.read().decode("utf-8"))
        except ValueError as e:
            raise UserError(f"neither JSON Lines nor one JSON document: {e}", str(path)) from None
    # One payload, observation or trace pretty-printed, a JSON array of them, or the API's {"data": [...]}.
    items = (doc.get("data") if "data" in doc else [doc]) if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise UserError("an export is JSON Lines, a JSON array or {\"data\": [...]}", str(path))
    for i, o in enumerate(items):
        yield None, f"item {i}", o


def litellm_seen(obj: object) -> Seen | None:
    """One StandardLoggingPayload as a recorded call (None: no model call, or a failed one)."""
    if not isinstance(obj, dict):
        raise UserError("a log line is a JSON object")
    if kind_of(obj) != "litellm":
        raise UserError("not a LiteLLM StandardLoggingPayload (needs call_type, model and its usage or provider)")
    p = obj.get("standard_logging_object") if isinstance(obj.get("standard_logging_object"), dict) else obj
    if p.get("status") == "failure" or (p.get("call_type") and p.get("call_type") not in _LITELLM_CALLS):
        return None
    if p.get("cache_hit") is True:   # answered from LiteLLM's own cache: no provider call was made
        return None
    meta = p.get("metadata") if isinstance(p.get("metadata"), dict) else {}
    u = meta.get("usage_object") if isinstance(meta.get("usage_object"), dict) else {}
    details = u.get("prompt_tokens_details") if isinstance(u.get("prompt_tokens_details"), dict) else {}
    read = count(u, "cache_read_input_tokens")
    if read is None:
        read = count(details, "cached_tokens")
    usage = usage_of(count(u, "prompt_tokens") if "prompt_tokens" in u else count(p, "prompt_tokens"),
                     count(u, "completion_tokens") if "completion_tokens" in u else count(p, "completion_tokens"),
                     read, count(u, "cache_creation_input_tokens"))
    msgs = p.get("messages")
    if isinstance(msgs, str):
        try:
            msgs = json.loads(msgs)
        except ValueError:
            msgs = None
    model = p.get("model")
    if not isinstance(model, str):
        raise UserError(f"model is not text: {shown(model)}")
    rid = str(first_given(p.get("id"), p.get("litellm_call_id")) or "")
    if not rid:
        raise UserError("the payload has no id")
    stream = str(p.get("trace_id") or meta.get("session_id") or p.get("end_user") or "main")
    return Seen(rid, stream, model, str(p.get("custom_llm_provider") or ""), iso_seconds(p.get("startTime"), "startTime"),
                usage, msgs if isinstance(msgs, list) and msgs else None)


def _json_text(value: object) -> object:
    """A field the Langfuse API returns as JSON text (a trace's observations keep `input`, `output` and
    `metadata` so) decoded; text that is no JSON object or array, and any other value, as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _langfuse_usage(details: dict) -> Usage | None:
    """The usage of `usageDetails`. Langfuse keeps its usage keys apart and sums them to `total`: `input`
    leaves the cached and written tokens out and `output` the reasoning, which is output all the same.
    An export that kept an SDK's own counts (`total` = `input` + `output` while cache or reasoning
    keys are non-zero) has them inside `input` and `output`."""
    inp, out = count(details, "input"), count(details, "output")
    read, write = count(details, *_LF_READ), count(details, *_LF_WRITE)
    reasoning = count(details, *_LF_REASONING) or 0
    total = count(details, "total")
    parts = (read or 0) + (write or 0) + reasoning
    inside = bool(parts) and total is not None and total == (inp or 0) + (out or 0)
    if not inside and out is not None:
        out += reasoning
    return usage_of(inp, out, read, write, inclusive=inside)


def langfuse_seen(obj: object) -> Seen | None:
    """One Langfuse observation as a recorded call (None: a SPAN or EVENT, no model call)."""
    if not isinstance(obj, dict):
        raise UserError("an observation is a JSON object")
    if kind_of(obj) != "langfuse" or "observations" in obj:
        raise UserError("not a Langfuse observation (needs type, traceId and startTime)")
    if obj.get("type") != "GENERATION":
        return None
    details = obj.get("usageDetails") if isinstance(obj.get("usageDetails"), dict) else None
    if details is not None:
        usage = _langfuse_usage(details)
    else:
        legacy = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
        usage = usage_of(count(legacy, "input", "promptTokens"), count(legacy, "output", "completionTokens"), None, None)
    model = obj.get("model") or obj.get("providedModelName")
    if not isinstance(model, str) or not model:
        raise UserError(f"the GENERATION names no model (model: {shown(model)})")
    inp = _json_text(obj.get("input"))
    if isinstance(inp, dict) and isinstance(inp.get("messages"), list):
        inp = inp["messages"]
    # chat messages, or the Responses API's input items (a message has a role, a tool call a type)
    msgs = inp if isinstance(inp, list) and inp and all(isinstance(m, dict) and ("role" in m or "type" in m)
                                                       for m in inp) else None
    params = _json_text(obj.get("metadata"))
    params = params if isinstance(params, dict) else {}
    attrs = params.get("attributes") if isinstance(params.get("attributes"), dict) else {}
    provider = str(params.get("ls_provider") or params.get("provider") or first_given(*map(attrs.get, _LF_PROVIDER))
                   or "")
    rid = str(first_given(obj.get("id")) or "")
    if not rid:
        raise UserError("the observation has no id")
    return Seen(rid, str(obj.get("sessionId") or obj.get("traceId") or "main"), model, provider,
                iso_seconds(obj.get("startTime"), "startTime"), usage, msgs)


def _observations(label: str, obj: object) -> Iterator[tuple[str, object]]:
    """(label, observation) of one item: a trace as the API returns it gives its observations, each on
    the trace's session; any other item is itself."""
    if not (isinstance(obj, dict) and isinstance(obj.get("trace"), dict) and isinstance(obj.get("observations"), list)):
        yield label, obj
        return
    session = obj["trace"].get("sessionId")
    for i, o in enumerate(obj["observations"]):
        if isinstance(o, dict) and session and not o.get("sessionId"):
            o = {**o, "sessionId": session}
        yield f"{label + ' ' if label else ''}observation {i}", o


def load(path: Path, fmt: str, sizer: Any) -> list[Record]:
    """Every model call of a LiteLLM or Langfuse export, in time order; a bad line is skipped and named."""
    where = str(path)
    read = litellm_seen if fmt == "litellm" else langfuse_seen
    calls = []
    for n, item_label, item in _lines(path):
        for label, obj in _observations(item_label, item) if fmt == "langfuse" else ((item_label, item),):
            s = problems.guarded(where, n, read, obj, where=label)
            if s is not None:
                calls.append((s, n, label))
    out: list[Record] = []
    seen: set[str] = set()
    for s, n, label in in_time_order(calls):
        if s.rid in seen:
            problems.note(where, n, f"{label + ': ' if label else ''}call {s.rid} is logged again; "
                                    "the earliest is kept")
            continue
        got = problems.guarded(where, n, record, s, where, n or 0, len(out), sizer, where=label)
        if got is not None:
            seen.add(s.rid)   # a copy that cannot be used leaves the next one usable
            out.append(got)
    return out
