"""HTTP recordings (VCR cassettes) as (request body, response body, uri) per interaction, whatever
the recorder wrote.

Recorders differ in where the body is and how it is encoded:
- pydantic-ai style YAML: `request.parsed_body` / `response.parsed_body`, already parsed;
- vcrpy and pytest-recording (vcrpy underneath): `request.body` a JSON string (or bytes, or null),
  `response.body.string` a string or `!!binary` bytes, often gzip-compressed;
- Ruby VCR style: `http_interactions`, `body.string` or `body.base64_string`;
- the same cassettes serialized as JSON instead of YAML.
A body is taken as JSON after undoing base64 and gzip where the bytes say so (gzip's magic number);
a streamed response (Server-Sent Events) is assembled into the response object it streamed.
"""
from __future__ import annotations

import base64
import binascii
import datetime as dt
import gzip
import json
import re
import zlib
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from prefixsim.errors import UserError
from prefixsim.io.yamlsafe import check_aliases
from prefixsim.sources import problems
from prefixsim.sources.files import GZIP_MAGIC, read_regular, suffix

#: Keys that hold a cassette's interactions (vcrpy / pytest-recording, Ruby VCR).
INTERACTION_KEYS = ("interactions", "http_interactions")


def load_document(path: Path) -> Any:
    """The cassette file parsed (YAML, or JSON for a `.json` cassette); UserError when it does not parse."""
    from ruamel.yaml import YAML  # lazy: start-up: the YAML parser loads only to read YAML

    raw = read_regular(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"not UTF-8 text (byte {e.start})", str(path)) from None
    if suffix(path) == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise UserError(f"not valid JSON ({e.msg})", str(path), e.lineno) from None
        except RecursionError:
            raise UserError("nested too deeply to read", str(path)) from None
    try:
        doc = YAML(typ="safe", pure=True).load(text)
    except Exception as e:  # ruamel raises several types; all are the user's file being malformed
        mark = getattr(e, "problem_mark", None)
        why = problems.unusable(e) if isinstance(e, RecursionError) else getattr(e, "problem", e)
        raise UserError(f"not valid YAML: {why}", str(path), mark.line + 1 if mark else None) from None
    check_aliases(doc, str(path))
    return doc


def interactions(doc: Any, path: Path) -> list:
    """The list of recorded interactions (UserError: the document is no cassette)."""
    if isinstance(doc, dict):
        for key in INTERACTION_KEYS:
            if key in doc:
                if not isinstance(doc[key], list):
                    raise UserError(f"a cassette's `{key}:` must be a list", str(path), 1)
                return doc[key]
    raise UserError("a cassette is a mapping with a list of `interactions:`", str(path), 1)


def _bytes(value: Any) -> bytes | None:
    """A recorded body as bytes: text, bytes (YAML !!binary), or a recorder's {string | base64_string}."""
    if isinstance(value, dict):
        if "base64_string" in value:
            try:
                return base64.b64decode(str(value["base64_string"]), validate=False)
            except (binascii.Error, ValueError):
                return None
        value = value.get("string")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return None


def _unpacked(raw: bytes) -> bytes:
    """Undo gzip / zlib and base64 where the bytes show them (a body recorded compressed, or a
    compressed body stored as base64 text); anything else is returned as it is."""
    for _ in range(3):
        if raw[:2] == GZIP_MAGIC:
            try:
                raw = gzip.decompress(raw)
                continue
            except (OSError, EOFError, zlib.error):
                return raw
        stripped = raw.strip()
        if not stripped or stripped[:1] in (b"{", b"[", b":") or stripped.startswith((b"data:", b"event:")):
            return raw
        try:
            decoded = base64.b64decode(stripped, validate=True)
        except (binascii.Error, ValueError):
            return raw
        if decoded[:2] == GZIP_MAGIC or decoded.lstrip()[:1] in (b"{", b"["):
            raw = decoded
            continue
        return raw
    return raw


def decode_body(value: Any) -> Any:
    """A recorded request or response body as parsed JSON (a streamed response assembled into the
    object it streamed); None when it is empty or not JSON."""
    if isinstance(value, (dict, list)) and not (isinstance(value, dict) and ("string" in value or "base64_string" in value)):
        return value
    raw = _bytes(value)
    if not raw:
        return None
    raw = _unpacked(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    stripped = text.lstrip()
    if stripped.startswith(("data:", "event:", ":")):
        return assemble_stream(text)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def _events(text: str) -> Iterator[Any]:
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if not data or data == "[DONE]":
            continue
        try:
            yield json.loads(data)
        except (json.JSONDecodeError, RecursionError):
            continue


def assemble_stream(text: str) -> dict | None:
    """A Server-Sent Events body as the response it streamed: an Anthropic Messages stream assembled
    (`_anthropic_message`), the Responses API's final
    `response.completed` (or `.incomplete`) event, or Chat Completions chunks joined into one message
    (content, reasoning_content and tool-call deltas) with the last chunk's usage."""
    events = list(_events(text))
    if events and isinstance(events[0], dict) and events[0].get("type") == "message_start":
        return _anthropic_message(events)
    message: dict[str, Any] = {"role": "assistant"}
    calls: dict[int, dict] = {}
    usage = None
    head: dict[str, Any] = {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        if isinstance(ev.get("response"), dict) and str(ev.get("type", "")).startswith("response."):
            if ev["type"] in ("response.completed", "response.incomplete", "response.failed"):
                return ev["response"]
            continue
        if isinstance(ev.get("usage"), dict):
            usage = ev["usage"]
        for key in ("id", "model", "created"):
            # Azure OpenAI opens a stream with a content-filter chunk whose id and model are "" (and
            # created 0): the first chunk that names them does
            if ev.get(key) and key not in head:
                head[key] = ev[key]
        for choice in ev.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            for key in ("content", "reasoning_content"):
                if isinstance(delta.get(key), str):
                    message[key] = message.get(key, "") + delta[key]
            for tc in delta.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    continue
                slot = calls.setdefault(int(tc.get("index", len(calls)) or 0), {"id": None, "type": "function",
                                                                                "function": {"name": "", "arguments": ""}})
                if tc.get("id"):
                    slot["id"] = tc["id"]
                fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                for key in ("name", "arguments"):
                    if isinstance(fn.get(key), str):
                        slot["function"][key] += fn[key]
    if not head and usage is None and len(message) == 1:
        return None
    if calls:
        message["tool_calls"] = [calls[k] for k in sorted(calls)]
    return {**head, "choices": [{"index": 0, "message": message}], "usage": usage}


def _anthropic_message(events: list) -> dict | None:
    """An Anthropic Messages stream as the message it streamed: `message_start`'s message, its content
    blocks built from their deltas, and the usage of `message_start` updated by every `message_delta`,
    whose counts are cumulative (the last one holds the final input, cache and output counts)."""
    first = events[0].get("message")
    if not isinstance(first, dict):
        return None
    message = dict(first)
    usage = dict(first["usage"]) if isinstance(first.get("usage"), dict) else {}
    blocks: dict[int, dict] = {}
    partial: dict[int, str] = {}
    for ev in events[1:]:
        if not isinstance(ev, dict):
            continue
        kind, i = ev.get("type"), ev.get("index")
        if kind == "content_block_start" and isinstance(i, int) and isinstance(ev.get("content_block"), dict):
            blocks[i] = dict(ev["content_block"])
        elif kind == "content_block_delta" and i in blocks and isinstance(ev.get("delta"), dict):
            d = ev["delta"]
            if d.get("type") == "input_json_delta":
                partial[i] = partial.get(i, "") + str(d.get("partial_json", ""))
            for key in ("text", "thinking", "signature"):
                if isinstance(d.get(key), str):
                    blocks[i][key] = str(blocks[i].get(key, "")) + d[key]
        elif kind == "message_delta":
            if isinstance(ev.get("usage"), dict):
                usage.update({k: v for k, v in ev["usage"].items() if v is not None})
            if isinstance(ev.get("delta"), dict):
                message.update({k: v for k, v in ev["delta"].items() if k in ("stop_reason", "stop_sequence")})
    for i, text in partial.items():
        try:
            blocks[i]["input"] = json.loads(text) if text else {}
        except (json.JSONDecodeError, RecursionError):
            pass
    message["content"] = [blocks[i] for i in sorted(blocks)]
    message["usage"] = usage
    return message


def request_of(inter: Any) -> tuple[Any, Any, str, str]:
    """(request body, response body, uri, method) of one interaction, bodies decoded (None: absent
    or not JSON); UserError when the interaction is no mapping."""
    if not isinstance(inter, dict):
        raise UserError("is not a mapping")
    req = inter.get("request") if isinstance(inter.get("request"), dict) else {}
    resp = inter.get("response") if isinstance(inter.get("response"), dict) else {}
    body = req.get("parsed_body") if "parsed_body" in req else decode_body(req.get("body"))
    out = resp.get("parsed_body") if "parsed_body" in resp else decode_body(resp.get("body") or resp.get("content"))
    uri = req.get("uri") or req.get("url") or ""
    method = req.get("method") or ""
    return body, out, str(uri), str(method).upper()


def requests_in(path: Path) -> Iterator[tuple[Any, str, str]]:
    """(request body, uri, method) of each interaction of a cassette that reads; nothing when the
    document does not parse (its reader names why). What the format sniffers look at: every sniffer
    of a detection asks, so the document is parsed once per version of the file, not once each."""
    try:
        st = path.stat()
    except OSError:
        return iter(())
    return iter(_requests(path, st.st_mtime_ns, st.st_size))


@lru_cache(maxsize=8)
def _requests(path: Path, mtime_ns: int, size: int) -> tuple[tuple[Any, str, str], ...]:
    try:
        inters = interactions(load_document(path), path)
    except problems.LINE_ERRORS:
        return ()
    out = []
    for inter in inters:
        try:
            body, _, uri, method = request_of(inter)
        except problems.LINE_ERRORS:
            continue
        out.append((body, uri, method))
    return tuple(out)


#: What a replay says of a cassette whose calls it placed back to back.
BACK_TO_BACK_NOTE = ("no times recorded: calls placed back to back by their recorded durations (go-vcr `duration`), "
                     "the tools between them taking no time")
#: A Go `time.Duration` as go-vcr writes it: "1.5s", "325.616084ms", "1m2.5s", "850µs".
_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?)(h|ms|us|µs|μs|ns|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}


def duration_seconds(value: Any) -> float | None:
    """A recorded call's duration in seconds: a Go duration string, or a number of seconds; None
    when it is neither (or negative)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value >= 0 else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    parts = _GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def _duration(inter: Any) -> float | None:
    if not isinstance(inter, dict):
        return None
    resp = inter.get("response") if isinstance(inter.get("response"), dict) else {}
    return duration_seconds(resp.get("duration", inter.get("duration")))


def note_back_to_back(path: str, offsets: list[float] | None, records: list) -> None:
    """Say that calls were placed back to back, when at least one record took its time from the
    durations (a record whose response carries a time, OpenAI's `created`, keeps that time)."""
    if offsets is not None and any(r.timestamp.startswith("+") for r in records):
        problems.note(path, None, BACK_TO_BACK_NOTE)


def back_to_back(inters: list) -> list[float] | None:
    """Start offsets of a cassette's interactions placed back to back by their recorded durations
    (go-vcr keeps a `duration` per call and no time): each call starts as the one before it ends, the
    tools between them taking no time. None when any interaction lacks a duration, or when the
    cassette records times (Ruby VCR's `recorded_at`): then the reader's own clock stands."""
    if not inters or any(isinstance(x, dict) and "recorded_at" in x for x in inters):
        return None
    out, t = [], 0.0
    for x in inters:
        d = _duration(x)
        if d is None:
            return None
        out.append(t)
        t += d
    return out


def recorded_stamp(inter: Any) -> str | None:
    """When an interaction was recorded, as ISO text: Ruby VCR's `recorded_at`, else the response's
    HTTP `Date` header (RFC 9110: the server's clock when it sent the response, whole seconds;
    vcrpy and go-vcr keep the headers). None when neither is there or readable. A cassette's calls
    then sit on the clock they ran on, so cassettes one test run recorded share one cache, as they
    shared the account's."""
    if not isinstance(inter, dict):
        return None
    resp = inter.get("response") if isinstance(inter.get("response"), dict) else {}
    headers = resp.get("headers") if isinstance(resp.get("headers"), dict) else {}
    given = [inter.get("recorded_at"), *(v for k, v in headers.items() if str(k).lower() == "date")]
    for value in given:
        value = value[0] if isinstance(value, list) and value else value
        if not isinstance(value, str):
            continue
        try:
            from email.utils import parsedate_to_datetime   # lazy: a log's replay reads no HTTP date

            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            continue
        if when.tzinfo is None:   # RFC 5322's "-0000": UTC, no zone said
            when = when.replace(tzinfo=dt.UTC)
        return when.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return None
