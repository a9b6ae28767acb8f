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
and a trace's `sessionId` where the export joined it. JSON Lines, one JSON array, or `{"data": [...]}`
as the API pages it. docs/rules.md#langfuse-observations.

A call whose messages were logged is replayed through the provider's reader (`genai.record`); one
without is audited.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.sources import problems
from prefixsim.sources.files import check_regular, open_regular
from prefixsim.sources.genai import Seen, count, in_time_order, iso_seconds, record, usage_of
from prefixsim.sources.jsonl import iter_jsonl
from prefixsim.sources.record import Record, first_given

#: LiteLLM call types that are a model call with a prompt (embeddings, images, audio are not).
_LITELLM_CALLS = frozenset({"completion", "acompletion", "text_completion", "atext_completion", "anthropic_messages",
                            "responses", "aresponses", "generate_content", "agenerate_content"})


def kind_of(obj: object) -> str | None:
    """"litellm" or "langfuse" for a line of either export (format detection), else None."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("standard_logging_object"), dict):
        obj = obj["standard_logging_object"]
    if "call_type" in obj and "model" in obj and ("startTime" in obj or "prompt_tokens" in obj) \
            and ("custom_llm_provider" in obj or "response_cost" in obj):
        return "litellm"
    if obj.get("type") in ("GENERATION", "SPAN", "EVENT") and "traceId" in obj and "startTime" in obj:
        return "langfuse"
    return None


def sniff_document(p: Path) -> str | None:
    """"langfuse" for a Langfuse export as one JSON document (an array, or the API's `{"data": [...]}`
    page), "litellm" for a pretty-printed payload or array of them (a payload's head names its call
    type and provider), else None."""
    with open_regular(p) as fh:
        head = fh.read(4096).lstrip()
    if head[:1] not in (b"[", b"{") or b"\n" not in head:
        return None
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
    # One payload or observation pretty-printed, a JSON array of them, or the API's {"data": [...]}.
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


def langfuse_seen(obj: object) -> Seen | None:
    """One Langfuse observation as a recorded call (None: a SPAN or EVENT, no model call)."""
    if not isinstance(obj, dict):
        raise UserError("an observation is a JSON object")
    if kind_of(obj) != "langfuse":
        raise UserError("not a Langfuse observation (needs type, traceId and startTime)")
    if obj.get("type") != "GENERATION":
        return None
    details = obj.get("usageDetails") if isinstance(obj.get("usageDetails"), dict) else None
    if details is not None:
        # Langfuse sums its usage keys to `total`: `input` is the uncached part.
        usage = usage_of(count(details, "input"), count(details, "output"),
                         count(details, "cache_read_input_tokens", "input_cached_tokens", "input_cache_read"),
                         count(details, "cache_creation_input_tokens", "input_cache_creation"), inclusive=False)
    else:
        legacy = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
        usage = usage_of(count(legacy, "input", "promptTokens"), count(legacy, "output", "completionTokens"), None, None)
    model = obj.get("model") or obj.get("providedModelName")
    if not isinstance(model, str) or not model:
        raise UserError(f"the GENERATION names no model (model: {shown(model)})")
    inp = obj.get("input")
    if isinstance(inp, dict) and isinstance(inp.get("messages"), list):
        inp = inp["messages"]
    msgs = inp if isinstance(inp, list) and inp and all(isinstance(m, dict) and "role" in m for m in inp) else None
    params = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    provider = str(params.get("ls_provider") or params.get("provider") or "")
    rid = str(first_given(obj.get("id")) or "")
    if not rid:
        raise UserError("the observation has no id")
    return Seen(rid, str(obj.get("sessionId") or obj.get("traceId") or "main"), model, provider,
                iso_seconds(obj.get("startTime"), "startTime"), usage, msgs)


def load(path: Path, fmt: str, sizer: Any) -> list[Record]:
    """Every model call of a LiteLLM or Langfuse export, in time order; a bad line is skipped and named."""
    where = str(path)
    read = litellm_seen if fmt == "litellm" else langfuse_seen
    calls = []
    for n, label, obj in _lines(path):
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
