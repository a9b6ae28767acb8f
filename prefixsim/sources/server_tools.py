"""Requests that ran server tools (web search, code execution, …): one usage covers several model
iterations, each a request of its own to the cache (docs/rules.md#anthropic-server-tools). These
rebuild the later iterations' bodies from the response and mark the API's own breakpoint."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from prefixsim.model import Request


def _is_server_result(block: Any) -> bool:
    """A result block the API appends itself after running a server tool (web_search_tool_result,
    web_fetch_tool_result, code_execution_tool_result, bash_code_execution_tool_result, …); a client
    tool's `tool_result` never appears in a response."""
    t = block.get("type") if isinstance(block, dict) else None
    return isinstance(t, str) and t.endswith("_tool_result") and t != "tool_result"


def server_iterations(body: dict, content: list | None) -> list[dict]:
    """The request bodies of the model iterations after the first of a request that ran server
    tools: the response's content up to each run of server-tool results that the model went on
    from, as an assistant turn (a response that stops at a result, `pause_turn`, ran no iteration
    after it)."""
    if not content or not isinstance(body.get("messages"), list):
        return []
    out = []
    for i, block in enumerate(content):
        if _is_server_result(block) and i + 1 < len(content) and not _is_server_result(content[i + 1]):
            out.append({**body, "messages": [*body["messages"], {"role": "assistant", "content": content[:i + 1]}]})
    return out


def server_breakpoint(request: Request) -> Request:
    """The API caches up to the last server-tool result when the request has any cache_control, with a
    5-minute TTL (docs/rules.md#anthropic-server-tools). Under automatic caching that is already its
    last block; with four explicit breakpoints there is no slot left (*simplified*: none is added)."""
    marked = sum(1 for b in request.blocks if b.breakpoint)
    if request.auto_cache or not marked or marked >= 4 or request.blocks[-1].breakpoint:
        return request
    return replace(request, blocks=(*request.blocks[:-1], request.blocks[-1].with_breakpoint("5m")))
