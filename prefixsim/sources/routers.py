"""OpenAI-compatible Chat endpoints of routers and other providers: whose cache rules a request runs
under, the Anthropic breakpoints a router passes through, and Cohere's v2 Chat put in Chat Completions'
shape, for `openai_log`.

A request is replayed under the rules of the provider that served it (see
docs/rules.md#other-providers-behind-openai-compatible-endpoints): the host it was sent to (api.groq.com -> Groq, api.mistral.ai ->
Mistral, ...); behind a router (OpenRouter) the upstream its response names (`provider: "Anthropic"`),
else the vendor its model id names (`anthropic/claude-sonnet-4.6` -> Anthropic, `google/…` -> Gemini's
implicit cache, `openai/…` -> OpenAI, `deepseek/…` -> DeepSeek); with neither, the model's family. A
provider prefixsim has no rules for replays as "other", under the stated default
(`providers/others.py: STATED_DEFAULT`), never refused.
"""
from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal
from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.model import PROMPT_END, Block, CachedRef, Layer, Request, Usage
from prefixsim.providers.registry import family_provider, model_provider
from prefixsim.providers.gemini_tables import gemini_explicit_minimum
from prefixsim.wire import openai as R

#: Hosts (a substring of the URI) and the provider each is; "openrouter" routes by upstream and model.
HOSTS = (("openrouter.ai", "openrouter"), ("api.groq.com", "groq"), ("api.mistral.ai", "mistral"),
         ("api.x.ai", "xai"), ("api.z.ai", "zai"), ("bigmodel.cn", "zai"), ("moonshot.ai", "moonshot"),
         ("moonshot.cn", "moonshot"), ("together.xyz", "together"), ("together.ai", "together"),
         ("fireworks.ai", "fireworks"), ("cohere.com", "cohere"), ("cohere.ai", "cohere"), ("deepseek.com", "deepseek"),
         ("openai.azure.com", "openai"), ("azure.com", "openai"), ("api.openai.com", "openai"),
         ("generativelanguage.googleapis.com", "gemini"))
#: A router's model id `vendor/model` -> the provider whose rules apply.
VENDORS = {"anthropic": "anthropic", "google": "gemini", "openai": "openai", "deepseek": "deepseek",
           "mistralai": "mistral", "x-ai": "xai", "z-ai": "zai", "moonshotai": "moonshot"}
#: OpenRouter's names of the upstream that served a request (its response's `provider`), lowercased.
UPSTREAM = {"anthropic": "anthropic", "amazon bedrock": "bedrock", "google vertex": "vertex", "google": "vertex",
            "google ai studio": "gemini", "openai": "openai", "azure": "openai", "deepseek": "deepseek",
            "groq": "groq", "mistral": "mistral", "xai": "xai", "z.ai": "zai", "moonshot ai": "moonshot",
            "moonshotai": "moonshot", "together": "together", "fireworks": "fireworks"}


def host_provider(uri: str) -> str | None:
    host = uri.split("?", 1)[0].lower()
    return next((p for h, p in HOSTS if h in host), None)


def provider_of(model: str, uri: str = "", response: Any = None) -> str:
    """The provider whose cache rules and prices apply to a request (module docstring)."""
    host = host_provider(uri)
    if host is not None and host != "openrouter":
        return host
    upstream = response.get("provider") if isinstance(response, dict) else None
    if host == "openrouter" and isinstance(upstream, str) and upstream.strip():
        p = UPSTREAM.get(upstream.strip().lower(), "other")
        family = family_provider(model, strict=True)
        if p in ("vertex", "bedrock"):   # Claude there has its platform's rules; Gemini on Vertex, Gemini's
            return p if family == "anthropic" else "gemini" if p == "vertex" and family == "gemini" else "other"
        # an upstream with tables of its own serving a model they do not know (openai/gpt-oss on OpenAI)
        return "other" if p in ("anthropic", "openai", "deepseek", "gemini") and family != p else p
    vendor, _, rest = model.strip().lower().partition("/")
    if rest and vendor in VENDORS:
        p = VENDORS[vendor]
        # a vendor's own model the tables do not know (openai/gpt-oss-120b) has no documented rules
        return p if p in ("mistral", "xai", "zai", "moonshot") or family_provider(model, strict=True) == p else "other"
    return model_provider(model)


def router_model(model: Any) -> bool:
    """A model id in a router's `vendor/model` form (Anthropic's Messages API never writes one)."""
    return isinstance(model, str) and "/" in model.strip("/")


# --- Anthropic's cache_control in an OpenAI-format body ---------------------------------------

def _ttl(mark: Any) -> str | None:
    if not isinstance(mark, dict):
        return None
    return "1h" if mark.get("ttl") == "1h" else "5m"


def _unmarked(value: Any) -> Any:
    """`value` without its cache_control; the same object when it has none (a log's reader shares an
    unchanged message with the previous line, and renders it once: wire/reuse.py)."""
    return {k: v for k, v in value.items() if k != "cache_control"} \
        if isinstance(value, dict) and "cache_control" in value else value


def breakpoints(body: dict, clean: int = 0) -> tuple[dict, dict[str, str], bool]:
    """(the body without its cache_control markers, {block path: ttl} of each marker, whether the body
    asks for automatic caching with a top-level cache_control). A marker changes no byte of the prefix.
    `clean`: the leading messages known to carry no marker (an earlier request's, the same objects)."""
    marks: dict[str, str] = {}
    out = {k: v for k, v in body.items() if k != "cache_control"}
    tools = body.get("tools")
    if isinstance(tools, list):
        for i, t in enumerate(tools):
            if _ttl(t.get("cache_control") if isinstance(t, dict) else None):
                marks[f"tools[{i}]"] = _ttl(t["cache_control"])  # type: ignore[assignment]
        out["tools"] = [_unmarked(t) for t in tools]
    msgs = body.get("messages")
    if isinstance(msgs, list):
        cleaned = msgs[:clean]
        for i in range(clean, len(msgs)):
            m = msgs[i]
            if not isinstance(m, dict):
                cleaned.append(m)
                continue
            content = m.get("content")
            if not isinstance(content, list) and "cache_control" not in m:   # the common message: nothing to take off
                cleaned.append(m)
                continue
            if isinstance(content, list):
                for j, part in enumerate(content):
                    ttl = _ttl(part.get("cache_control") if isinstance(part, dict) else None)
                    if ttl:
                        marks[f"messages[{i}].content[{j}]"] = ttl
                if any(isinstance(p, dict) and "cache_control" in p for p in content):
                    m = {**m, "content": [_unmarked(p) for p in content]}
            ttl = _ttl(m.get("cache_control"))
            if ttl:   # on the message: its last block
                last = len(content) - 1 if isinstance(content, list) and content else None
                marks[f"messages[{i}]" if last is None else f"messages[{i}].content[{last}]"] = ttl
            cleaned.append(_unmarked(m))
        out["messages"] = cleaned
    return out, marks, _ttl(body.get("cache_control")) is not None


def claude_usage(obs: Usage | None, last: str, marks: dict[str, str], auto: bool) -> tuple[Usage | None, Usage | None]:
    """(the observed usage with its writes at the markers' TTL, the usage the blocks are sized to). The
    router reports one cache_write_tokens: 1h when every marker asks 1h. A request whose last block is
    cached still reports the few uncached tokens that close the prompt: they are kept apart from the
    blocks' sizes, as the Anthropic reader keeps them (docs/rules.md#anthropic-sizes-of-logged-requests)."""
    if obs is None:
        return None, None
    if marks and set(marks.values()) == {"1h"}:
        obs = replace(obs, cache_write_1h=obs.cache_write_5m, cache_write_5m=0)
    closing = (last in marks or auto) and obs.input_tokens < obs.prompt_tokens
    return obs, replace(obs, input_tokens=0) if closing else obs


def marked(blocks: tuple[Block, ...], marks: dict[str, str], closing: int) -> tuple[Block, ...]:
    """The blocks with the breakpoints the markers put on them, and the prompt's `closing` tokens as a
    last block of their own (never cached)."""
    out = tuple(b.with_breakpoint(marks[b.path]) if b.path in marks else b for b in blocks)
    if closing:
        out += (Block(Layer.MESSAGES, PROMPT_END, "end of the prompt after the last breakpoint", tokens=closing),)
    return out


def gemini_reference(body: dict, uri: str, request: Request, provider: str) -> tuple[Request, CachedRef | None]:
    """Gemini through OpenRouter with cache_control markers: OpenRouter makes a Gemini cache of the
    prefix through the last marker, which the request itself reads (its usage reports the tokens
    written and read at once), so the request reads that prefix by reference. The cache holds the
    marked content, not the chat framing around its message (OBS: 2,161 read where the framed system
    message counts 2,164), so those frame tokens move to the block after it. No reference elsewhere,
    nor below the model's explicit-cache minimum (the cache is not made)."""
    if provider != "gemini" or host_provider(uri) != "openrouter":
        return request, None
    marks = breakpoints(body)[1]
    last = max((i for i, b in enumerate(request.blocks) if b.path in marks), default=-1)
    try:
        least = int(gemini_explicit_minimum(request.model).value)
    except UserError:   # a Gemini model without explicit caching
        return request, None
    blocks = list(request.blocks)
    if 0 <= last < len(blocks) - 1:
        path, after = blocks[last].path, blocks[last + 1].path
        message = path.split(".content[", 1)[0]
        frame = (R.FRAME_BEFORE if path == message or path.endswith(".content[0]") else 0) + \
            (R.FRAME_AFTER if not after.startswith(message + ".") else 0)
        mark, nxt = blocks[last], blocks[last + 1]
        if mark.tokens is not None and nxt.tokens is not None and mark.tokens > frame:
            blocks[last] = replace(mark, tokens=mark.tokens - frame)
            blocks[last + 1] = replace(nxt, tokens=nxt.tokens + frame)
    if last < 0 or sum(b.tokens or 0 for b in blocks[:last + 1]) < least:
        return request, None
    return replace(request, blocks=tuple(blocks)), CachedRef(f"openrouter:{request.model}", last + 1)


# --- Cohere v2 Chat ---------------------------------------------------------------------------

def cohere_shape(response: Any) -> bool:
    """A Cohere v2 Chat response: a top-level `message` and usage with `billed_units` / `tokens`."""
    u = response.get("usage") if isinstance(response, dict) else None
    return isinstance(u, dict) and ("billed_units" in u or isinstance(u.get("tokens"), dict)) \
        and "choices" not in response


def from_cohere(response: dict) -> tuple[dict, dict]:
    """A Cohere v2 Chat response as Chat Completions' (response, usage): the prompt is
    `usage.tokens.input_tokens` (what the model ran on; `billed_units` leaves template tokens out),
    `usage.cached_tokens` inside it."""
    u = response["usage"]
    tokens = u.get("tokens") if isinstance(u.get("tokens"), dict) else u.get("billed_units") or {}
    usage = {"prompt_tokens": tokens.get("input_tokens"), "completion_tokens": tokens.get("output_tokens"),
             "prompt_tokens_details": {"cached_tokens": u.get("cached_tokens")}}
    message = response.get("message")
    shaped = {"id": response.get("id"), "usage": usage,
              "choices": [{"message": message}] if isinstance(message, dict) else []}
    return shaped, usage


def billed(usage: Any, uri: str) -> Decimal | None:
    """OpenRouter's own charge for a request (`usage.cost`, USD credits, upstream cost included; OR-PC
    "Usage accounting"), None elsewhere or when it is absent; a value that is no finite amount of at
    least 0 is refused (the line is skipped and named)."""
    if host_provider(uri) != "openrouter" or not isinstance(usage, dict) or usage.get("cost") is None:
        return None
    cost = usage["cost"]
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
        raise UserError(f"usage field cost is not an amount in USD: {shown(cost)}")
    return Decimal(repr(cost))


def cache_discount(usage: Any, response: Any, uri: str) -> Decimal | None:
    """What caching saved on an OpenRouter request, in USD (`cache_discount`, OR-PC "Inspecting cache
    usage": reads make it positive, Anthropic's writes, dearer than input, negative), from the usage
    (`usage.cache_discount`, `usage.cost_details.cache_discount`) or the response body; None elsewhere,
    or when absent or null. A value that is no finite amount is refused (the line is skipped and named)."""
    if host_provider(uri) != "openrouter":
        return None
    u = usage if isinstance(usage, dict) else {}
    details = u.get("cost_details") if isinstance(u.get("cost_details"), dict) else {}
    for where in (u, details, response if isinstance(response, dict) else {}):
        value = where.get("cache_discount")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise UserError(f"cache_discount is not an amount in USD: {shown(value)}")
        return Decimal(repr(value))
    return None


def charges(usage: Any, response: Any, uri: str) -> dict[str, Decimal | None]:
    """A Record's router figures: what it billed (`billed_usd`) and what it says caching saved."""
    return {"billed_usd": billed(usage, uri), "cache_discount_usd": cache_discount(usage, response, uri)}
