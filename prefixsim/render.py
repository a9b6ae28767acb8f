"""Render a request body into blocks, tools -> system -> messages (pure).

Bytes are what was given: keys keep their order, separators are fixed, nothing is normalised, so a
tool schema whose keys arrive in another order is another prefix, exactly as on the wire.
"""
from __future__ import annotations

import json
from typing import Any

from .errors import RequestError
from .model import TTL_SECONDS, Block, Layer, Request


# One encoder for every block: json.dumps with these options builds a new encoder per call, which is a
# fifth of rendering time when a log repeats every request's whole history.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps(value: Any) -> bytes:
    """Fixed-separator JSON that keeps key order: equal input always gives equal bytes. A lone
    surrogate (`"\\ud800"` is valid JSON) keeps its code point rather than failing to encode."""
    return _encode(value).encode("utf-8", "surrogatepass")


def cache_ttl(marker: Any, where: str) -> str | None:
    """The TTL named by a `cache_control` marker (None when absent)."""
    if marker is None:
        return None
    if not isinstance(marker, dict):
        raise RequestError(f"{where}.cache_control must be an object, got {type(marker).__name__}")
    ttl = marker.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise RequestError(f"{where}.cache_control.ttl must be one of {sorted(TTL_SECONDS)}, got {ttl!r}")
    return ttl


def _without_marker(block: dict) -> dict:
    if "cache_control" not in block:
        return block
    return {k: v for k, v in block.items() if k != "cache_control"}


# Which request parameters invalidate which layer (A-PC "What invalidates the cache"; A-TU adds
# disable_parallel_tool_use, which lives inside tool_choice). Each enters the chain at the start
# of the layer the table names, so the layered invalidation falls out of the digest chain.
SYSTEM_LAYER_PARAMS = ("speed",)                       # + web search tool, citations (derived)
MESSAGES_LAYER_PARAMS = ("tool_choice", "thinking", "output_config")  # + images (derived)


def layer_params(body: dict, images: bool, citations: bool) -> tuple[bytes, bytes, bytes]:
    tools = body.get("tools") or []
    web_search = any(isinstance(t, dict) and str(t.get("type", "")).startswith("web_search")
                     for t in tools)
    system: dict[str, Any] = {k: body[k] for k in SYSTEM_LAYER_PARAMS if k in body}
    if web_search:
        system["web_search"] = True
    if citations:
        system["citations"] = True
    messages: dict[str, Any] = {k: body[k] for k in MESSAGES_LAYER_PARAMS if k in body}
    if images:
        messages["images"] = True
    return (b"", dumps(system) if system else b"", dumps(messages) if messages else b"")


def tool_block(tool: dict, i: int) -> Block:
    if not isinstance(tool, dict):
        raise RequestError(f"tools[{i}] must be an object")
    return Block(Layer.TOOLS, dumps(_without_marker(tool)), f"tools[{i}]",
                 cache_ttl(tool.get("cache_control"), f"tools[{i}]"))


def system_blocks(system: Any) -> list[Block]:
    """A string `system` is one text block, as the API reads it."""
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    if system is not None and not isinstance(system, list):
        raise RequestError(f"system must be a string or a list of text blocks, got {type(system).__name__}")
    out = []
    for i, part in enumerate(system or []):
        if not isinstance(part, dict):
            raise RequestError(f"system[{i}] must be an object")
        out.append(Block(Layer.SYSTEM, dumps(_without_marker(part)), f"system[{i}]",
                         cache_ttl(part.get("cache_control"), f"system[{i}]")))
    return out


# Encoded content blocks whose keys and values are all strings (text, tool results given as text): a
# log repeats its whole history in every line and these are most of it. The key is the items in
# order, compared exactly, so equal keys encode to equal bytes. Bounded by the bytes it holds.
_PARTS: dict[tuple, bytes] = {}
_PARTS_LIMIT = 16 << 20   # many sessions of history; small beside a replay's memory budget
_parts_held = 0


def _encoded_part(part: dict) -> bytes:
    global _parts_held
    items = tuple(part.items())
    if "cache_control" in part or not all(type(k) is str and type(v) is str for k, v in items):
        return dumps(_without_marker(part))
    data = _PARTS.get(items)
    if data is None:
        data = dumps(part)
        if _parts_held > _PARTS_LIMIT:
            _PARTS.clear()
            _parts_held = 0
        _PARTS[items] = data
        _parts_held += 2 * len(data)   # the encoding and the strings the key keeps alive
    return data


def _role(role: Any) -> bytes:
    data = _ROLES.get(role) if isinstance(role, str) else None
    return data if data is not None else dumps({"role": role})


_ROLES = {r: dumps({"role": r}) for r in ("user", "assistant")}


def message_blocks(msg: Any, mi: int, first: int = 0) -> list[Block]:
    """One block per content block; the first carries the role, so moving a block to another
    message changes the bytes. `first`: msg's content is that message's content from block `first`
    on (a caller that shares the blocks of the leading part between messages renders the rest)."""
    if not isinstance(msg, dict):
        raise RequestError(f"messages[{mi}] must be an object")
    content = msg.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise RequestError(f"messages[{mi}].content must be a string or a list of blocks")
    role = _role(msg.get("role"))
    out = []
    for ci, part in enumerate(content, first):
        where = f"messages[{mi}].content[{ci}]"
        if not isinstance(part, dict):
            raise RequestError(f"{where} must be an object")
        data = _encoded_part(part)
        out.append(Block(Layer.MESSAGES, role + data if ci == 0 else data, where,
                         cache_ttl(part.get("cache_control"), where)))
    return out


def _parts(messages: list):
    return (part for msg in messages if isinstance(msg, dict) and isinstance(msg.get("content"), list)
            for part in msg["content"] if isinstance(part, dict))


def content_flags(messages: list) -> tuple[bool, bool]:
    """(has_images, has_citations) in one pass over the content blocks (a long history is long)."""
    images = citations = False
    for part in _parts(messages):
        if not images and (part.get("type") == "image" or _has_nested_image(part)):
            images = True
        c = part.get("citations")
        if not citations and isinstance(c, dict) and bool(c.get("enabled")):
            citations = True
    return images, citations


def render_anthropic(body: dict, history: "History | None" = None) -> Request:
    """An Anthropic Messages API request body -> Request.

    One block per tool definition, per system text block and per message content block: the unit
    Anthropic counts for breakpoints and the 20-block lookback (A-PC).
    """
    if not isinstance(body, dict):
        raise RequestError("a request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("request has no 'model'")
    tools = body.get("tools") or []
    messages = body.get("messages") or []
    if not isinstance(tools, list) or not isinstance(messages, list):
        raise RequestError("'tools' and 'messages' must be lists")
    blocks = [tool_block(t, i) for i, t in enumerate(tools)]
    blocks += system_blocks(body.get("system"))
    if history is None:
        for mi, msg in enumerate(messages):
            blocks += message_blocks(msg, mi)
    else:
        blocks += history.blocks(messages)
    return Request(model=model, blocks=tuple(blocks),
                   layer_params=layer_params(body, *content_flags(messages)),
                   auto_cache=cache_ttl(body.get("cache_control"), "request"))


class History:
    """The previous request's plain messages and their blocks. A log repeats the conversation on
    every line, so re-rendering each line costs its whole history; a message equal to the one at
    the same place last time reuses its blocks. Only plain messages (string content, or content
    blocks of string values without cache_control) are reused: there `==` means equal bytes once
    key order matches (numbers would not: 1 == 1.0 == True)."""

    def __init__(self) -> None:
        self._last: list[tuple[Any, list | None, list[Block]]] = []

    def blocks(self, messages: list) -> list[Block]:
        last, out, now = self._last, [], []
        for mi, msg in enumerate(messages):
            keys = _plain_keys(msg)
            if keys is not None and mi < len(last) and last[mi][1] == keys and last[mi][0] == msg:
                got = last[mi][2]
            else:
                got = message_blocks(msg, mi)
            now.append((msg, keys, got))
            out += got
        self._last = now
        return out


def _plain_keys(msg: Any) -> list | None:
    """The key order of a plain message's content blocks (a string content: []), else None."""
    if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
        return None
    content = msg.get("content")
    if isinstance(content, str):
        return [list(msg)]
    if not isinstance(content, list):
        return None
    keys = [list(msg)]
    for part in content:
        if not isinstance(part, dict) or "cache_control" in part or \
                not all(type(v) is str for v in part.values()):
            return None
        keys.append(list(part))
    return keys


def _has_nested_image(part: dict) -> bool:
    inner = part.get("content") if part.get("type") == "tool_result" else None
    return isinstance(inner, list) and any(isinstance(x, dict) and x.get("type") == "image" for x in inner)
