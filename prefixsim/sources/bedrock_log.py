"""Amazon Bedrock Converse traffic: `/model/{modelId}/converse` and `/converse-stream` calls in VCR
cassettes and JSON Lines logs, replayed under the rules of the model Bedrock served (Claude with the
Claude-on-Bedrock rules, Nova with its own, any other model with the stated undocumented default:
providers/bedrock.py) and priced at Bedrock's prices (genai-prices' `aws`).

Usage is Converse's: `inputTokens` (uncached, after the last checkpoint), `cacheReadInputTokens`,
`cacheWriteInputTokens` (split by TTL in `cacheDetails`), `outputTokens`. A ConverseStream response
is the binary event stream (sources/eventstream.py) or, in a log, its events already parsed; its
usage is the `metadata` event's. Bodies are rendered by wire/bedrock.py and sized as Anthropic logs
are (cl100k counts scaled to the observed prompt: anthropic_log.sized).

A JSONL line is `{"url": ".../model/{id}/converse", "request": {body}, "response": {...}}` (also
`uri`, `body`, `timestamp`), or boto3's keyword arguments `{"modelId": ..., "messages": ...}` with the
response beside them under `response`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from prefixsim.errors import RequestError, UserError
from prefixsim.model import Call, Usage
from prefixsim.providers.anthropic import breakpoints as checkpoints
from prefixsim.providers.bedrock import bedrock_min_tokens, nova_family
from prefixsim.sources import problems
from prefixsim.sources.anthropic_log import (DEFAULT_SPACING, DEFAULT_TTFT, Sizer, _seconds, _stamp_text,
                                             generated_id, sized_with_end)
from prefixsim.sources.cassette import _bytes, back_to_back, decode_body, interactions, load_document, note_back_to_back
from prefixsim.sources.eventstream import assemble, converse_events, events, is_eventstream
from prefixsim.sources.record import Record, check_model, checked_usage, first_given, request_key, token_count
from prefixsim.sources.scan import LineChecks, scan
from prefixsim.sources.usage import cache_writes
from prefixsim.wire.anthropic import History
from prefixsim.wire.bedrock import ignored_checkpoints, render_converse

PROVIDER = "bedrock"
_CONVERSE_URL = re.compile(r"/model/([^/?#]+)/(converse(?:-stream)?)(?:[?#/]|$)")


def converse_model(url: object) -> str | None:
    """The model id (URL-decoded) of a Converse / ConverseStream URL; None for any other URL."""
    if not isinstance(url, str):
        return None
    m = _CONVERSE_URL.search(url)
    return unquote(m.group(1)) if m else None


def _url(obj: dict) -> object:
    req = obj.get("request")
    return obj.get("url") or obj.get("uri") or ((req.get("url") or req.get("uri")) if isinstance(req, dict) else None)


def _is_body(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list)


def split_line(obj: Any) -> tuple[dict | None, str | None, Any, Any]:
    """(request body, model id, response, timestamp) of a log line; body None: no Converse call."""
    if not isinstance(obj, dict):
        return None, None, None, None
    stamp = first_given(obj.get("timestamp"), obj.get("time"))
    model = converse_model(_url(obj))
    if model is None and isinstance(obj.get("modelId"), str) and _is_body(obj):   # boto3's arguments
        return obj, obj["modelId"], obj.get("response"), stamp
    if model is None:
        return None, None, None, None
    body = obj.get("request") if _is_body(obj.get("request")) else obj.get("body")
    if isinstance(body, dict) and not _is_body(body):
        body = body.get("body") if _is_body(body.get("body")) else body.get("parsed_body")
    elif isinstance(body, (str, bytes)):
        body = decode_body(body)
    return (body if _is_body(body) else None), model, obj.get("response"), stamp


def looks_converse(obj: Any) -> bool:
    """A log line that is a Bedrock Converse call (what format detection asks)."""
    return split_line(obj)[0] is not None


def response_of(resp: Any) -> dict | None:
    """A Converse response object: as logged, its `body`, a ConverseStream event stream assembled
    (the binary frames, or a log's parsed events), or None."""
    for _ in range(2):   # a log's {"body": ...} around the response
        if isinstance(resp, dict) and ("usage" in resp or "output" in resp):
            return resp
        if isinstance(resp, list):
            return assemble(converse_events(resp))
        if isinstance(resp, dict) and "body" in resp:
            resp = resp["body"]
            continue
        break
    raw = _bytes(resp) if isinstance(resp, (dict, str, bytes, bytearray)) else None
    if raw is not None and is_eventstream(raw):
        return assemble(events(raw))
    out = decode_body(resp) if resp is not None else None
    return out if isinstance(out, dict) else None


def observed_usage(u: Any) -> Usage | None:
    """Converse usage as token classes (None without `inputTokens`); `cacheDetails` splits the
    writes by TTL, and a log without it counts every write as 5m (UserError: a field is not a count)."""
    if not isinstance(u, dict) or "inputTokens" not in u:
        return None
    by_ttl: dict[str, int] = {}
    for i, d in enumerate(u.get("cacheDetails") or []):
        if isinstance(d, dict) and d.get("ttl") in ("5m", "1h"):
            n = token_count(d.get("inputTokens"), f"cacheDetails[{i}].inputTokens")
            by_ttl[d["ttl"]] = by_ttl.get(d["ttl"], 0) + n
    w5m, w1h = cache_writes(u.get("cacheWriteInputTokens"), by_ttl.get("5m"), by_ttl.get("1h"),
                            ("cacheWriteInputTokens", "cacheDetails 5m inputTokens", "cacheDetails 1h inputTokens"))
    return checked_usage(Usage(input_tokens=token_count(u.get("inputTokens"), "inputTokens"),
                               cache_write_5m=w5m, cache_write_1h=w1h,
                               cache_read=token_count(u.get("cacheReadInputTokens"), "cacheReadInputTokens"),
                               output_tokens=token_count(u.get("outputTokens"), "outputTokens")))


def _record(body: dict, model: str, resp: Any, stamp: Any, index: int, path: str, line: int, sizer: Sizer,
            rid: str | None, at: float | None = None) -> Record:
    """One Converse call (UserError: its body, usage or time cannot be used, or Bedrock would have
    refused it: a fifth checkpoint)."""
    model = model.strip()
    check_model(model, PROVIDER)
    request = render_converse(body, model)
    try:
        checkpoints(request)   # a request the API would reject never ran
    except RequestError as e:
        raise RequestError(e.message.replace("have cache_control", "are followed by a cachePoint")) from None
    r = response_of(resp)
    obs = observed_usage(r.get("usage") if isinstance(r, dict) else None)
    request = sized_with_end(request, sizer, obs, "end of the prompt after the last checkpoint")
    t = _seconds(stamp, path, line) if stamp is not None else at if at is not None else index * DEFAULT_SPACING
    rid = rid or generated_id(path, index)
    call = Call(t=t, request=request, stream="main", label=rid, output_tokens=obs.output_tokens if obs else 0,
                ttft=DEFAULT_TTFT)
    return Record(call, rid, _stamp_text(stamp, t), obs, path, line, provider=PROVIDER)


class _Notes:
    """What a Bedrock file's replay says once per model: whose rules apply, and where they are a default."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.models: dict[str, None] = {}
        self.ignored: list[str] = []

    def add(self, model: str, body: dict) -> None:
        self.models.setdefault(model.strip(), None)
        self.ignored += ignored_checkpoints(body, model.strip())

    def finish(self) -> None:
        claude = [m for m in self.models if bedrock_min_tokens(m)[1] and nova_family(m) is None]
        nova = [m for m in self.models if bedrock_min_tokens(m)[1] and nova_family(m) is not None]
        other = [m for m in self.models if not bedrock_min_tokens(m)[1]]
        if claude:
            problems.note(self.path, None, f"Bedrock Converse calls to {', '.join(claude)}: Claude's rules on Bedrock "
                                           "(cachePoint checkpoints), priced at Bedrock's prices (genai-prices aws)")
        if nova:
            problems.note(self.path, None, f"Amazon Nova ({', '.join(nova)}): checkpoints in system and messages from "
                                           "1,000 tokens, 5-minute TTL (AWS-NOVA)")
        for m in other:
            problems.note(self.path, None, f"{m} on Bedrock: rules undocumented; replayed with "
                                           f"{bedrock_min_tokens(m)[0].source.removeprefix('rules undocumented: ')}")
        if self.ignored:
            problems.note(self.path, None, f"{len(self.ignored)} cachePoint in toolConfig.tools of Nova requests not "
                                           "counted (Nova caches no tools field; a later checkpoint caches them)")


def _interaction(inter: Any, i: int, path: Path, index: int, sizer: Sizer, at: float | None,
                 notes: _Notes) -> Record | None:
    """One interaction's Converse call (None: another endpoint; UserError: it cannot be used)."""
    if not isinstance(inter, dict):
        raise UserError("is not a mapping")
    req = inter.get("request") if isinstance(inter.get("request"), dict) else {}
    model = converse_model(req.get("uri") or req.get("url"))
    if model is None or str(req.get("method") or "POST").upper() != "POST":
        return None
    body = req.get("parsed_body") if "parsed_body" in req else decode_body(req.get("body"))
    if body is None and req.get("body"):
        raise UserError("request body is not JSON")
    if not _is_body(body):
        raise UserError("request body is not a Converse body (needs 'messages')")
    resp = inter.get("response") if isinstance(inter.get("response"), dict) else {}
    out = resp.get("parsed_body") if "parsed_body" in resp else resp.get("body") or resp.get("content")
    rec = _record(body, model, out, None, index, str(path), 0, sizer, f"{path}#{i}", at)
    notes.add(model, body)
    return rec


def load_cassette(path: Path, sizer: Sizer) -> list[Record]:
    """A cassette's Converse and ConverseStream calls (other endpoints are passed over); an
    interaction that cannot be used is skipped and named."""
    inters = interactions(load_document(path), path)
    offsets = back_to_back(inters)
    where = str(path)
    checks, notes = LineChecks(path), _Notes(where)
    out: list[Record] = []
    for i, inter in enumerate(inters):
        at = offsets[i] if offsets is not None else None
        rec = problems.guarded(where, None, _interaction, inter, i, path, len(out), sizer, at, notes,
                               where=f"interaction {i}")
        if rec is not None:
            checks.usage(rec.observed, 0)
            out.append(rec)
    checks.finish()
    notes.finish()
    note_back_to_back(where, offsets, out)
    return out


def sniff_cassette(path: Path) -> bool:
    """Whether a cassette holds Converse calls (one is enough: the others are passed over)."""
    from prefixsim.sources.cassette import requests_in   # lazy: only a cassette's sniff reads it

    return any(converse_model(uri) is not None for _, uri, _ in requests_in(path))


def request_id(obj: Any) -> str | None:
    """A log line's request id (None without one); UserError: the line is no Converse call."""
    if not looks_converse(obj):
        raise UserError("not a Bedrock Converse call; needs a /model/{modelId}/converse url and a body with "
                        "'messages' (or boto3's modelId and messages)")
    resp = obj.get("response") if isinstance(obj.get("response"), dict) else {}
    meta = resp.get("ResponseMetadata") if isinstance(resp.get("ResponseMetadata"), dict) else {}
    return request_key(first_given(obj.get("id"), obj.get("request_id"), meta.get("RequestId")))


def line_time(obj: Any) -> float | None:
    """A request line's time as `_record` reads it (None: the line has none; its place in the log is
    its time). UserError: the line is no request (`timeorder.LineTime`)."""
    request_id(obj)
    stamp = split_line(obj)[3]
    return None if stamp is None else _seconds(stamp, "", 0)


def load_jsonl(path: Path, sizer: Sizer) -> list[Record]:
    """A JSONL log of Converse calls, in file order; a line that is no call, or whose body, usage or
    time cannot be used, is skipped and named."""
    notes = _Notes(str(path))

    def line_record(obj: Any, rid: str | None, index: int, where: str, line: int, sz: Sizer,
                    history: History) -> Record:
        body, model, resp, stamp = split_line(obj)
        assert body is not None and model is not None   # request_id accepted the line
        rec = _record(body, model, resp, stamp, index, where, line, sz, rid)
        notes.add(model, body)
        return rec

    out = [rec for _, rec in scan(path, request_id, line_record, sizer, line_time)]
    notes.finish()
    return out
