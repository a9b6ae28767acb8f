"""Render an Amazon Bedrock Converse request body into blocks, tools -> system -> messages (pure).

Converse writes content blocks as one-key objects (`{"text": ...}`, `{"toolUse": ...}`,
`{"image": ...}`) and marks a cache checkpoint with a block of its own, `{"cachePoint": {"type":
"default", "ttl": "5m" | "1h"}}`: the prefix cached is everything before it, so the checkpoint
becomes the breakpoint of the block it follows (in `toolConfig.tools`, `system` or a message's
content; at the head of a list, the last block before that list). Blocks keep the paths of the body
as sent, checkpoints counted, so a cause names the place a user can find. The request parameters
map to the layers as the Anthropic renderer maps their Messages counterparts: `toolConfig.toolChoice`
is `tool_choice`, `additionalModelRequestFields.thinking` (Claude) and `reasoningConfig` (Nova 2) the
thinking configuration, an image anywhere invalidates the messages; `inferenceConfig` (temperature,
maxTokens) changes no prefix.
"""
from __future__ import annotations

from typing import Any

from prefixsim.errors import RequestError
from prefixsim.model import TTL_SECONDS, Block, Layer, Request
from prefixsim.providers.bedrock import NOVA_TOOL_CHOICE_LAYER, NOVA_TOOLS_CHECKPOINT, nova_family
from prefixsim.providers.tables import anthropic_strips_thinking
from prefixsim.wire.anthropic import dumps, layer_params

#: Content blocks of a Converse message that are a model's reasoning (stripped like thinking blocks).
REASONING = "reasoningContent"


def _checkpoint(part: object, where: str) -> str | None:
    """The TTL of a `cachePoint` block of tools, system or a message's content; None for a content
    block (RequestError: the block is no object)."""
    if not isinstance(part, dict):
        raise RequestError(f"{where} must be an object")
    return checkpoint_ttl(part["cachePoint"], where) if "cachePoint" in part else None


def checkpoint_ttl(marker: Any, where: str) -> str:
    """The TTL of a `cachePoint` (5m unless it says 1h); RequestError: not an object, or another TTL."""
    if not isinstance(marker, dict):
        raise RequestError(f"{where}.cachePoint must be an object, got {type(marker).__name__}")
    ttl = marker.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise RequestError(f"{where}.cachePoint.ttl must be one of {sorted(TTL_SECONDS)}, got {ttl!r}")
    return str(ttl)


class _Blocks:
    """The blocks rendered so far; a checkpoint marks the last of them."""

    def __init__(self) -> None:
        self.out: list[Block] = []

    def mark(self, ttl: str) -> None:
        if self.out:
            self.out[-1] = self.out[-1].with_breakpoint(ttl)


def _items(value: Any, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError(f"{where} must be a list, got {type(value).__name__}")
    return value


def _human(msg: Any) -> bool:
    """A user message that is not only tool results (a turn the person wrote)."""
    if not isinstance(msg, dict) or msg.get("role") != "user":
        return False
    content = msg.get("content")
    return not (isinstance(content, list) and content and
                all(isinstance(p, dict) and ("toolResult" in p or "cachePoint" in p) for p in content))


def _has_image(part: dict) -> bool:
    if "image" in part:
        return True
    result = part.get("toolResult")
    inner = result.get("content") if isinstance(result, dict) else None
    return isinstance(inner, list) and any(isinstance(x, dict) and "image" in x for x in inner)


def render_converse(body: dict, model: str) -> Request:
    """A Converse (or ConverseStream) request body sent to `model` -> Request. One block per tool
    definition, per system block and per message content block, as the Claude-on-Bedrock rules count
    them for checkpoints and the lookback (AWS)."""
    if not isinstance(body, dict):
        raise RequestError("a request body must be a JSON object")
    if not isinstance(model, str) or not model:
        raise RequestError("request has no model id")
    nova = nova_family(model) is not None
    acc = _Blocks()
    config = body.get("toolConfig")
    if config is not None and not isinstance(config, dict):
        raise RequestError("toolConfig must be an object")
    config = config or {}
    for i, tool in enumerate(_items(config.get("tools"), "toolConfig.tools")):
        where = f"toolConfig.tools[{i}]"
        ttl = _checkpoint(tool, where)
        if ttl is not None:
            if not (nova and not NOVA_TOOLS_CHECKPOINT.value):   # Nova caches no tools field: no checkpoint
                acc.mark(ttl)
            continue
        acc.out.append(Block(Layer.TOOLS, dumps(tool), where))
    for i, part in enumerate(_items(body.get("system"), "system")):
        where = f"system[{i}]"
        ttl = _checkpoint(part, where)
        if ttl is not None:
            acc.mark(ttl)
            continue
        acc.out.append(Block(Layer.SYSTEM, dumps(part), where))
    messages = _items(body.get("messages"), "messages")
    strip = anthropic_strips_thinking(model)
    cut = next((mi for mi in range(len(messages) - 1, -1, -1) if _human(messages[mi])), -1) if strip else -1
    images = False
    for mi, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise RequestError(f"messages[{mi}] must be an object")
        content = msg.get("content")
        if not isinstance(content, list):
            raise RequestError(f"messages[{mi}].content must be a list of blocks")
        role = dumps({"role": msg.get("role")})
        first = True
        for ci, part in enumerate(content):
            where = f"messages[{mi}].content[{ci}]"
            ttl = _checkpoint(part, where)
            if ttl is not None:
                acc.mark(ttl)
                continue
            if mi < cut and msg.get("role") == "assistant" and REASONING in part:
                continue   # earlier turns' reasoning leaves the prompt on these models (A-TH)
            images = images or _has_image(part)
            acc.out.append(Block(Layer.MESSAGES, role + dumps(part) if first else dumps(part), where))
            first = False
    extra = body.get("additionalModelRequestFields")
    extra = extra if isinstance(extra, dict) else {}
    params: dict[str, Any] = {}
    if "toolChoice" in config:
        params["tool_choice"] = config["toolChoice"]
    for key in ("thinking", "output_config", "reasoningConfig"):
        if key in extra:
            params["thinking" if key == "reasoningConfig" else key] = extra[key]
    ahead = b""
    if nova and "tool_choice" in params and NOVA_TOOL_CHOICE_LAYER.value == "tools":
        ahead = dumps({"tool_choice": params.pop("tool_choice")})
    tools_p, system_p, messages_p = layer_params(params, images, False, model)
    return Request(model=model, blocks=tuple(acc.out), layer_params=(ahead + tools_p, system_p, messages_p))


def ignored_checkpoints(body: dict, model: str) -> list[str]:
    """The paths of checkpoints a model takes no notice of (a Nova request's `toolConfig.tools`)."""
    if nova_family(model) is None or NOVA_TOOLS_CHECKPOINT.value:
        return []
    config = body.get("toolConfig") if isinstance(body, dict) else None
    tools = config.get("tools") if isinstance(config, dict) else None
    return [f"toolConfig.tools[{i}]" for i, t in enumerate(tools if isinstance(tools, list) else ())
            if isinstance(t, dict) and "cachePoint" in t]
