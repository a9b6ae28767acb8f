"""Anthropic Messages API logs: JSONL of request bodies (optionally with the response or its usage) and
VCR cassettes (YAML with `interactions[].request.parsed_body` / `response.parsed_body`).

Bodies are rendered exactly as sent (`render_anthropic`). Block sizes are counted with cl100k; when
the log has the response's usage, sizes are scaled so the prompt totals the observed size, which
keeps predicted and observed numbers on one scale (Claude's tokenizer is not public).
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from .jsonl import iter_jsonl
from ..model import Block, Call, Request, Usage
from ..render import render_anthropic
from .record import Record

#: Seconds between consecutive requests of a log without timestamps (well inside any TTL).
DEFAULT_SPACING = 10.0
DEFAULT_TTFT = 1.0


def is_body(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list) and "model" in obj


def split_entry(obj: Any) -> tuple[dict | None, dict | None, str | None]:
    """(request body, usage, timestamp) of one log entry in any of the accepted shapes."""
    if not isinstance(obj, dict):
        return None, None, None
    stamp = obj.get("timestamp") or obj.get("time")
    if is_body(obj):
        return obj, obj.get("usage") if isinstance(obj.get("usage"), dict) else None, stamp
    body = obj.get("request") or obj.get("body") or obj.get("params")
    if isinstance(body, dict) and not is_body(body):
        body = body.get("body") or body.get("parsed_body")
    resp = obj.get("response") or {}
    if isinstance(resp, dict) and isinstance(resp.get("body"), dict):
        resp = resp["body"]
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else (
        resp.get("usage") if isinstance(resp, dict) else None)
    return (body if is_body(body) else None), usage, stamp


def observed_usage(u: dict | None) -> Usage | None:
    if not isinstance(u, dict) or "input_tokens" not in u:
        return None
    created = int(u.get("cache_creation_input_tokens") or 0)
    detail = u.get("cache_creation") or {}
    w1h = int(detail.get("ephemeral_1h_input_tokens") or 0)
    return Usage(input_tokens=int(u.get("input_tokens") or 0), cache_write_5m=created - w1h, cache_write_1h=w1h,
                 cache_read=int(u.get("cache_read_input_tokens") or 0), output_tokens=int(u.get("output_tokens") or 0))


def sized(request: Request, count, total: int | None) -> Request:
    """Fix every block's size: counted, then scaled (cumulatively, so no rounding drift) to `total`."""
    counts = [count(b.data.decode("utf-8", errors="replace")) for b in request.blocks]
    counted = sum(counts)
    if total is None or counted == 0:
        sizes = counts
    else:
        sizes, cum, prev = [], 0, 0
        for c in counts:
            cum += c
            here = round(total * cum / counted)
            sizes.append(here - prev)
            prev = here
    blocks = tuple(Block(b.layer, b.data, b.path, b.breakpoint, tokens=n) for b, n in zip(request.blocks, sizes))
    return replace(request, blocks=blocks)


def _record(body: dict, usage: dict | None, stamp: str | None, index: int, path: str, line: int,
            count, rid: str | None = None) -> Record:
    try:
        request = render_anthropic(body)
    except UserError as e:
        raise e.located(path, line) from None
    obs = observed_usage(usage)
    request = sized(request, count, obs.prompt_tokens if obs else None)
    t = _seconds(stamp, path, line) if stamp else index * DEFAULT_SPACING
    call = Call(t=t, request=request, stream=str(body.get("metadata", {}).get("user_id") or "main")
                if isinstance(body.get("metadata"), dict) else "main",
                label=rid or f"{Path(path).name}#{index}", output_tokens=obs.output_tokens if obs else 0,
                ttft=DEFAULT_TTFT)
    return Record(call, rid or f"{Path(path).name}#{index}", stamp or f"+{t:g}s", obs, path, line)


def _seconds(stamp: Any, path: str, line: int) -> float:
    if isinstance(stamp, (int, float)):
        return float(stamp) / (1000.0 if stamp > 1e11 else 1.0)
    try:
        return dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise UserError(f"unreadable timestamp {stamp!r}", path, line) from None


def load_jsonl(path: Path, count) -> list[Record]:
    """A JSONL log: one request per line (a body, or {request, response|usage, timestamp})."""
    out = []
    for n, obj in iter_jsonl(path):
        body, usage, stamp = split_entry(obj)
        if body is None:
            raise UserError("line is not an Anthropic Messages request (needs 'model' and 'messages')",
                            str(path), n)
        rid = obj.get("id") or obj.get("request_id") if isinstance(obj, dict) else None
        out.append(_record(body, usage, stamp, len(out), str(path), n, count, rid))
    return out


def load_cassette(path: Path, count) -> list[Record]:
    """A VCR cassette: the Messages calls among its interactions (count_tokens calls are skipped)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"))
    except Exception as e:  # ruamel raises several types; all are the user's file being malformed
        mark = getattr(e, "problem_mark", None)
        raise UserError(f"not valid YAML: {getattr(e, 'problem', e)}", str(path),
                        mark.line + 1 if mark else None) from None
    out = []
    for i, inter in enumerate((doc or {}).get("interactions") or []):
        req = inter.get("request") or {}
        uri = str(req.get("uri", ""))
        body = req.get("parsed_body")
        if not is_body(body) or "count_tokens" in uri:
            continue
        resp = (inter.get("response") or {}).get("parsed_body") or {}
        usage = resp.get("usage") if isinstance(resp, dict) else None
        out.append(_record(body, usage, None, len(out), str(path), 0, count, f"{path.stem}#{i}"))
    return out
