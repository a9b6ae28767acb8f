"""The Gemini API's wire shapes as a log or cassette holds them: one call (`GeminiExchange`) split from a
line, what kind of call it is (generateContent, or a CachedContent's create / update / delete),
its usage as token classes, the durations and times of a cache, and a streamed response joined.
REST camelCase and the google-genai SDK's snake_case alike (`wire/gemini.py: field`)."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.model import Usage
from prefixsim.sources.cassette import _bytes, _events, _unpacked
from prefixsim.sources.openai_log import _body_of as decoded
from prefixsim.sources.record import checked_usage, first_given, token_count
from prefixsim.wire import gemini as G

_USAGE_KEYS = ("promptTokenCount", "prompt_token_count", "cachedContentTokenCount", "cached_content_token_count",
               "candidatesTokenCount", "candidates_token_count")


@dataclass(frozen=True, slots=True)
class GeminiExchange:
    """One recorded call: request body, response body, time, uri and HTTP method (or SDK method)."""

    body: dict
    response: dict | None
    stamp: Any
    uri: str = ""
    method: str = ""


def _body_of(value: Any) -> Any:
    return decoded(value)


def split(obj: Any) -> GeminiExchange | None:
    """A log line in any accepted shape: {request|body|params, response, timestamp|time, uri|url,
    method}, or a bare request body (optionally with its `response`)."""
    if not isinstance(obj, dict):
        return None
    raw = obj.get("request") or obj.get("body") or obj.get("params")
    body = _body_of(raw) if raw is not None else obj
    resp = obj.get("response")
    resp = _body_of(resp) if resp is not None else None
    if not isinstance(body, dict):
        return None
    uri = obj.get("uri") or obj.get("url") or ""
    method = obj.get("method") or ""
    return GeminiExchange(body, resp if isinstance(resp, dict) else None, first_given(obj.get("timestamp"), obj.get("time")),
                    uri if isinstance(uri, str) else "", method if isinstance(method, str) else "")


def looks_gemini(obj: Any) -> bool:
    """Gemini traffic: a usageMetadata of Gemini's, a generateContent / cachedContents uri, or a body
    with `contents` (and no `messages` or `input`, which are Anthropic's and OpenAI's)."""
    ex = split(obj)
    if ex is None:
        return False
    usage = G.field(ex.response, "usageMetadata")
    if isinstance(usage, dict) and any(k in usage for k in _USAGE_KEYS):
        return True
    if "generateContent" in ex.uri or "cachedContents" in ex.uri or ex.method.lower().startswith("caches."):
        return True
    return G.setting(ex.body, "contents") is not None and "messages" not in ex.body and "input" not in ex.body


def kind(ex: GeminiExchange) -> str:
    """'create', 'update' or 'delete' of a CachedContent, else 'generate'."""
    method = ex.method.upper()
    path = ex.uri.split("?", 1)[0].rstrip("/")
    if "cachedContents/" in path and method in ("DELETE", "PATCH"):
        return "delete" if method == "DELETE" else "update"
    if path.endswith("/cachedContents"):
        return "create"
    low = ex.method.lower()
    if "cache" in low:   # an SDK log: caches.create / caches.update / caches.delete
        for k in ("create", "update", "delete"):
            if k in low:
                return k
    name = G.field(ex.response, "name")
    if isinstance(name, str) and name.startswith("cachedContents/") and "contents" in ex.body \
            and G.cache_name(G.setting(ex.body, "cachedContent")) is None and not G.field(ex.response, "candidates"):
        return "create"
    return "generate"


def observed_usage(u: Any) -> Usage | None:
    """usageMetadata (either spelling) as token classes; None without one."""
    if not isinstance(u, dict) or not any(k in u for k in _USAGE_KEYS):
        return None
    prompt = token_count(G.field(u, "promptTokenCount"), "promptTokenCount")
    cached = token_count(G.field(u, "cachedContentTokenCount"), "cachedContentTokenCount")
    out = token_count(G.field(u, "candidatesTokenCount"), "candidatesTokenCount")
    thoughts = token_count(G.field(u, "thoughtsTokenCount"), "thoughtsTokenCount")
    return checked_usage(Usage(input_tokens=prompt - cached, cache_read=cached, output_tokens=out + thoughts))


def _duration(value: Any, name: str) -> float:
    """A protobuf Duration as the API writes it ("120s", "3.5s") or seconds as a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        secs = float(value)
    elif isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?s", value.strip()):
        secs = float(value.strip()[:-1])
    else:
        raise UserError(f"{name} is not a duration like '3600s': {shown(value)}")
    if not 0 < secs < 10**9:
        raise UserError(f"{name} must be positive: {shown(value)}")
    return secs


def _instant(value: Any, name: str) -> float:
    """An RFC 3339 time (nanoseconds allowed) as epoch seconds."""
    if not isinstance(value, str):
        raise UserError(f"{name} is not a time: {shown(value)}")
    text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip()).replace("Z", "+00:00")
    try:
        t = dt.datetime.fromisoformat(text)
    except ValueError:
        raise UserError(f"{name} is not an RFC 3339 time: {shown(value)}") from None
    return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp()


def _ttl(ex: GeminiExchange, stamped: str) -> float | None:
    """Seconds a create or update keeps the cache from now: the response's expireTime minus its
    `stamped` time (createTime / updateTime), else the request's ttl, else None."""
    expire, at = G.field(ex.response, "expireTime"), G.field(ex.response, stamped)
    if expire is not None and at is not None:
        return max(0.0, _instant(expire, "expireTime") - _instant(at, stamped))
    ttl = G.setting(ex.body, "ttl")
    return None if ttl is None else _duration(ttl, "ttl")


def streamed(response: Any) -> dict | None:
    """A streamGenerateContent body (Server-Sent Events) as one response: the first candidate's parts
    joined (consecutive text chunks into one text part, as a client sends the turn back) and the
    last usageMetadata (it is cumulative)."""
    raw = _bytes(response.get("body") if isinstance(response, dict) else None)
    if not raw:
        return None
    parts: list[dict] = []
    last: dict = {}
    for ev in _events(_unpacked(raw).decode("utf-8", "replace")):
        if not isinstance(ev, dict):
            continue
        last = {**last, **{k: v for k, v in ev.items() if k != "candidates"}}
        cands = G.field(ev, "candidates")
        content = cands[0].get("content") if isinstance(cands, list) and cands and isinstance(cands[0], dict) else None
        for part in (content or {}).get("parts") or []:
            if isinstance(part, dict) and set(part) == {"text"} and parts and set(parts[-1]) == {"text"}:
                parts[-1] = {"text": parts[-1]["text"] + str(part["text"])}
            elif isinstance(part, dict):
                parts.append(part)
    if not last and not parts:
        return None
    return {**last, "candidates": [{"content": {"role": "model", "parts": parts}}]}


def is_call(uri: str) -> bool:
    """A Gemini API call a cassette holds: generateContent or a CachedContent's create/update/delete."""
    path = uri.split("?", 1)[0]
    return path.endswith((":generateContent", ":streamGenerateContent")) or "/cachedContents" in path
