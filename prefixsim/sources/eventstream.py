"""Amazon Bedrock's streamed responses (`application/vnd.amazon.eventstream`): the binary frames of a
ConverseStream body, and the Converse response they stream.

A frame is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes, big-endian),
its headers (name length, name, value type, value; `:event-type` names the event), a JSON payload
and a CRC32 of everything before it. The events: `messageStart` (role), `contentBlockStart` (a tool
call's name and id), `contentBlockDelta` (text, tool input JSON, reasoning text and signature),
`contentBlockStop`, `messageStop` (stop reason) and `metadata` (usage and metrics). A stream that
breaks off keeps the frames before the break; a stream without `metadata` has no usage.
"""
from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

_PRELUDE = 12
_STRING = 7   # header value type of text (the only one Bedrock's events use for their names)
#: Header value types of fixed size (bool true/false, byte, short, int, long, timestamp, uuid).
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


def _prelude(raw: bytes, i: int) -> tuple[int, int] | None:
    """(total length, headers length) of the frame at `i`, when its prelude checks out."""
    if len(raw) < i + _PRELUDE:
        return None
    total, headers = struct.unpack(">II", raw[i:i + 8])
    if struct.unpack(">I", raw[i + 8:i + 12])[0] != zlib.crc32(raw[i:i + 8]) or total < _PRELUDE + 4 \
            or headers > total - _PRELUDE - 4:
        return None
    return total, headers


def is_eventstream(raw: bytes) -> bool:
    """Whether bytes begin with a frame prelude whose CRC holds (the rest may be cut off)."""
    return _prelude(raw, 0) is not None


def _headers(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    i = 0
    while i < len(data):
        n = data[i]
        name = data[i + 1:i + 1 + n].decode("utf-8", "replace")
        i += 1 + n
        kind = data[i]
        i += 1
        if kind in (_STRING, 6):   # string, or bytes: a 2-byte length
            size = struct.unpack(">H", data[i:i + 2])[0]
            value = data[i + 2:i + 2 + size]
            out[name] = value.decode("utf-8", "replace") if kind == _STRING else value
            i += 2 + size
        elif kind in _FIXED:
            i += _FIXED[kind]
        else:   # an unknown value type: the rest cannot be read
            break
    return out


def frames(raw: bytes) -> Iterator[tuple[dict[str, Any], bytes]]:
    """(headers, payload) of each whole frame, in order; stops at the first frame that does not
    check out (cut off, or corrupt)."""
    i = 0
    while (pre := _prelude(raw, i)) is not None:
        total, hlen = pre
        frame = raw[i:i + total]
        if len(frame) < total or struct.unpack(">I", frame[-4:])[0] != zlib.crc32(frame[:-4]):
            return
        yield _headers(frame[_PRELUDE:_PRELUDE + hlen]), frame[_PRELUDE + hlen:-4]
        i += total


def events(raw: bytes) -> Iterator[tuple[str, Any]]:
    """(event type, parsed payload) of each event frame whose payload is JSON (exceptions included,
    under their `:exception-type`)."""
    for head, payload in frames(raw):
        kind = head.get(":event-type") or head.get(":exception-type")
        if not isinstance(kind, str):
            continue
        try:
            yield kind, json.loads(payload.decode("utf-8")) if payload else {}
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue


def assemble(stream: Iterable[tuple[str, Any]]) -> dict | None:
    """The Converse response a ConverseStream streamed: `output.message` with its content blocks
    built from their deltas, `stopReason`, and `usage` / `metrics` from `metadata` (None when the
    stream holds no event at all). Also takes a log's already parsed events (boto3 yields each as
    `{"messageStart": {...}}`): `converse_events` turns those into pairs."""
    message: dict[str, Any] = {"role": "assistant", "content": []}
    blocks: dict[int, dict] = {}
    tool_input: dict[int, str] = {}
    out: dict[str, Any] = {}
    seen = False
    for kind, ev in stream:
        seen = True
        if not isinstance(ev, dict):
            continue
        i = ev.get("contentBlockIndex")
        if kind == "messageStart" and isinstance(ev.get("role"), str):
            message["role"] = ev["role"]
        elif kind == "contentBlockStart" and isinstance(i, int) and isinstance(ev.get("start"), dict):
            blocks[i] = {k: dict(v) if isinstance(v, dict) else v for k, v in ev["start"].items()}
        elif kind == "contentBlockDelta" and isinstance(i, int) and isinstance(ev.get("delta"), dict):
            _delta(blocks.setdefault(i, {}), tool_input, i, ev["delta"])
        elif kind == "messageStop":
            out["stopReason"] = ev.get("stopReason")
        elif kind == "metadata":
            for key in ("usage", "metrics"):
                if isinstance(ev.get(key), dict):
                    out[key] = ev[key]
    if not seen:
        return None
    for i, text in tool_input.items():
        use = blocks[i].setdefault("toolUse", {})
        try:
            use["input"] = json.loads(text) if text else {}
        except (json.JSONDecodeError, RecursionError):
            use["input"] = text
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return {"output": {"message": message}, **out}


def _delta(block: dict, tool_input: dict[int, str], i: int, d: dict) -> None:
    if isinstance(d.get("text"), str):
        block["text"] = str(block.get("text", "")) + d["text"]
    use = d.get("toolUse")
    if isinstance(use, dict) and isinstance(use.get("input"), str):
        tool_input[i] = tool_input.get(i, "") + use["input"]
        block.setdefault("toolUse", {})
    reason = d.get("reasoningContent")
    if isinstance(reason, dict):
        have = block.setdefault("reasoningContent", {}).setdefault("reasoningText", {})
        for key in ("text", "signature"):
            if isinstance(reason.get(key), str):
                have[key] = str(have.get(key, "")) + reason[key]


def converse_events(items: Any) -> Iterator[tuple[str, Any]]:
    """A log's parsed stream (a list of one-key objects, `{"contentBlockDelta": {...}}`) as pairs."""
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and len(item) == 1:
            yield next(iter(item.items()))
