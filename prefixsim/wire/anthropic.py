"""Render a request body into blocks, tools -> system -> messages (pure).

Bytes are what was given: keys keep their order, separators are fixed, nothing is normalised, so a
tool schema whose keys arrive in another order is another prefix, exactly as on the wire.
"""
from __future__ import annotations

import json
import operator
from typing import Any

from prefixsim.errors import RequestError
from prefixsim.model import TTL_SECONDS, Block, Layer, Request
from prefixsim.providers.tables import ANTHROPIC_DEFAULT_EFFORT, anthropic_config_layer, anthropic_strips_thinking

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
MESSAGES_LAYER_PARAMS = ("tool_choice", "output_config")  # + images (derived)
# Effort enters where the model renders it: ahead of the tools on some models, at the messages on
# others (tables.ANTHROPIC_CONFIG_LAYER); the thinking configuration at the messages (tables.THINKING_LAYER).


def _resolved(body: dict) -> dict[str, Any]:
    """The thinking configuration and effort as the prompt renders them: an effort equal to the
    model's default is no effort at all (A-EF, A-PC)."""
    out: dict[str, Any] = {}
    if "thinking" in body:
        out["thinking"] = body["thinking"]
    oc = body.get("output_config")
    if isinstance(oc, dict) and "effort" in oc and oc["effort"] != ANTHROPIC_DEFAULT_EFFORT.value:
        out["effort"] = oc["effort"]
    return out


def layer_params(body: dict, images: bool, citations: bool, model: str = "") -> tuple[bytes, bytes, bytes]:
    tools = body.get("tools") or []
    web_search = any(isinstance(t, dict) and str(t.get("type", "")).startswith("web_search")
                     for t in tools)
    system: dict[str, Any] = {k: body[k] for k in SYSTEM_LAYER_PARAMS if k in body}
    if web_search:
        system["web_search"] = True
    if citations:
        system["citations"] = True
    messages: dict[str, Any] = {k: body[k] for k in MESSAGES_LAYER_PARAMS if k in body}
    oc = messages.get("output_config")
    if isinstance(oc, dict):   # its effort is rendered with the thinking configuration; the rest stays here
        rest = {k: v for k, v in oc.items() if k != "effort"}
        if rest:
            messages["output_config"] = rest
        else:
            del messages["output_config"]
    config = _resolved(body)
    ahead: dict[str, Any] = {}
    if "effort" in config and anthropic_config_layer(model) == "tools":
        ahead = {"effort": config.pop("effort")}
    messages.update(config)
    if images:
        messages["images"] = True
    return (dumps(ahead) if ahead else b"", dumps(system) if system else b"", dumps(messages) if messages else b"")


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


THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


def _human(m: Any) -> bool:
    """A user message that is not only tool results (a turn the person wrote)."""
    if not isinstance(m, dict) or m.get("role") != "user":
        return False
    content = m.get("content")
    return not (isinstance(content, list) and content and
                all(isinstance(p, dict) and p.get("type") == "tool_result" for p in content))


def thinking_cut(messages: list) -> int:
    """Index of the last user message that is not only tool results (-1: none). On models that keep
    the last turn's thinking only, thinking blocks of assistant messages before it leave the prompt."""
    for mi in range(len(messages) - 1, -1, -1):
        if _human(messages[mi]):
            return mi
    return -1


def message_blocks(msg: Any, mi: int, strip_thinking: bool = False, first: int = 0) -> list[Block]:
    """One block per content block; the first carries the role, so moving a block to another
    message changes the bytes. With `strip_thinking` the message's thinking blocks are left out, as
    the API leaves them out (the paths keep the indices of the request as sent). `first`: msg's
    content is that message's content from block `first` on (a caller that shares the blocks of the
    leading part between messages renders the rest)."""
    if not isinstance(msg, dict):
        raise RequestError(f"messages[{mi}] must be an object")
    content = msg.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise RequestError(f"messages[{mi}].content must be a string or a list of blocks")
    role = _role(msg.get("role"))
    out: list[Block] = []
    for ci, part in enumerate(content, first):
        where = f"messages[{mi}].content[{ci}]"
        if not isinstance(part, dict):
            raise RequestError(f"{where} must be an object")
        if strip_thinking and part.get("type") in THINKING_TYPES:
            continue
        data = _encoded_part(part)
        out.append(Block(Layer.MESSAGES, role + data if not out and first == 0 else data, where,
                         cache_ttl(part.get("cache_control"), where)))
    return out


def _message_flags(msg: Any) -> tuple[bool, bool]:
    """(has_images, has_citations) of one message's content blocks."""
    images = citations = False
    content = msg.get("content") if isinstance(msg, dict) else None
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        if not images and (part.get("type") == "image" or _has_nested_image(part)):
            images = True
        c = part.get("citations")
        if not citations and isinstance(c, dict) and bool(c.get("enabled")):
            citations = True
    return images, citations


def content_flags(messages: list) -> tuple[bool, bool]:
    """(has_images, has_citations) of the messages' content blocks."""
    images = citations = False
    for msg in messages:
        i, c = _message_flags(msg)
        images, citations = images or i, citations or c
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
    if history is None:
        blocks = [tool_block(t, i) for i, t in enumerate(tools)]
        blocks += system_blocks(body.get("system"))
        cut = thinking_cut(messages) if anthropic_strips_thinking(model) else -1
        for mi, msg in enumerate(messages):
            blocks += message_blocks(msg, mi, _strips(msg, mi, cut))
        flags = content_flags(messages)
    else:
        blocks = history.head(tools, body.get("system"))
        flags = history.messages(messages, anthropic_strips_thinking(model), blocks)
    return Request(model=model, blocks=tuple(blocks), layer_params=layer_params(body, *flags, model),
                   auto_cache=cache_ttl(body.get("cache_control"), "request"))


def _same(a: Any, b: Any) -> bool:
    """The same objects in the same places (a line parsed against the previous one shares them)."""
    return a is b or (type(a) is list and type(b) is list and len(a) == len(b)
                      and all(x is y for x, y in zip(a, b)))


class _Seen:
    """One message of the previous request: what rendering it gave, and what it tells."""

    __slots__ = ("msg", "keys", "blocks", "strip", "human", "flags")

    def __init__(self, msg: Any, keys: list | None, blocks: list[Block], strip: bool, human: bool,
                 flags: tuple[bool, bool]) -> None:
        self.msg, self.keys, self.blocks, self.strip, self.human, self.flags = msg, keys, blocks, strip, human, flags


class History:
    """The previous request's tools, system and messages and their blocks. A log repeats the
    conversation on every line, so rendering each line costs its whole history; what is the same
    object as the previous line's at the same place (`sources.linejson` shares a member whose raw
    text is unchanged) reuses its blocks, whatever it holds. A message that is only equal reuses
    its blocks when it is plain (string content, or content blocks of string values without
    cache_control): there `==` means equal bytes once key order matches (numbers would not:
    1 == 1.0 == True, 0.0 == -0.0). A body is read, never changed: a caller that edits a message in
    place and renders it again must start a new History."""

    def __init__(self) -> None:
        self._head: tuple[Any, Any, list[Block]] = ([], [], [])
        # The previous request's messages; per message: what it gave, and running over the messages,
        # the block count, (images, citations) and the last human turn's index (-1: none).
        self._msgs: list = []
        self._last: list[_Seen] = []
        self._flat: list[Block] = []
        self._ends: list[int] = []
        self._flags: list[tuple[bool, bool]] = []
        self._humans: list[int] = []
        self._cut = -1

    def head(self, tools: list, system: Any) -> list[Block]:
        """The tool and system blocks (a new list the caller may extend)."""
        last_tools, last_system, blocks = self._head
        if not (_same(tools, last_tools) and _same(system, last_system)) or not blocks:
            blocks = [tool_block(t, i) for i, t in enumerate(tools)]
            blocks += system_blocks(system)
            self._head = (tools, system, blocks)
        return list(blocks)

    def messages(self, messages: list, strips_thinking: bool, out: list[Block]) -> tuple[bool, bool]:
        """Appends the messages' blocks to `out` (assistant messages before the last human turn lose
        their thinking when `strips_thinking`: thinking_cut); returns (has_images, has_citations).
        The leading messages that are the previous request's, under the same cut, are taken whole
        (list slices); only the others are looked at one by one."""
        last = self._last
        m = min(len(messages), len(self._msgs))
        same = list(map(operator.is_, messages[:m], self._msgs[:m]))
        k = same.index(False) if False in same else m
        cut = -1
        if strips_thinking:
            cut = next((mi for mi in range(len(messages) - 1, k - 1, -1) if _human(messages[mi])), -1)
            if cut < 0 and k:
                cut = self._humans[k - 1]
        keep = k if cut == self._cut else max(0, min(k, cut, self._cut))
        flat = self._flat[:self._ends[keep - 1]] if keep else []
        now, ends, flags, humans = last[:keep], self._ends[:keep], self._flags[:keep], self._humans[:keep]
        images, citations = flags[-1] if keep else (False, False)
        human = humans[-1] if keep else -1
        for mi in range(keep, len(messages)):
            msg = messages[mi]
            strip = _strips(msg, mi, cut)
            old = last[mi] if mi < len(last) else None
            if old is not None and old.msg is msg:
                seen = old if old.strip == strip else \
                    _Seen(msg, old.keys, message_blocks(msg, mi, strip), strip, old.human, old.flags)
            else:
                keys = _plain_keys(msg)
                if keys is not None and old is not None and old.keys == keys and old.msg == msg \
                        and old.strip == strip:
                    got = old.blocks
                else:
                    got = message_blocks(msg, mi, strip)
                seen = _Seen(msg, keys, got, strip, _human(msg), _message_flags(msg))
            now.append(seen)
            flat += seen.blocks
            ends.append(len(flat))
            images, citations = images or seen.flags[0], citations or seen.flags[1]
            flags.append((images, citations))
            human = mi if seen.human else human
            humans.append(human)
        self._msgs, self._last, self._flat, self._ends, self._flags, self._humans, self._cut = \
            messages, now, flat, ends, flags, humans, cut
        out += flat
        return images, citations


def _strips(msg: Any, mi: int, cut: int) -> bool:
    return mi < cut and isinstance(msg, dict) and msg.get("role") == "assistant"


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
