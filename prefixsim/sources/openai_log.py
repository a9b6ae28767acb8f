"""OpenAI Chat Completions and Responses request logs (JSONL), with usage when present.

One block per tool definition and per message (Responses: per input item), in the order sent; a
message's role is part of its bytes. Sizes are counted with cl100k and, with usage, scaled to the
observed prompt size. OpenAI counts cached tokens inside the prompt: uncached = prompt - cached.

The same log format carries DeepSeek's API (OpenAI-compatible; usage `prompt_cache_hit_tokens`, DS
kv_cache guide): a record is replayed with the rules and prices of the provider its model belongs
to (`provider_of`), never Anthropic's.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from ..model import Block, Call, Layer, Request, Usage
from ..render import dumps
from ..providers.tables import canonical_model
from .anthropic_log import DEFAULT_SPACING, DEFAULT_TTFT, Sizer, _seconds, _stamp_text, generated_id, sized
from .record import Record, check_model, checked_usage, request_key, token_count


def _parts(obj: dict) -> tuple[dict | None, dict | None]:
    body = obj.get("request") or obj.get("body") or obj
    resp = obj.get("response") or {}
    usage = obj.get("usage") or (resp.get("usage") if isinstance(resp, dict) else None)
    return (body if isinstance(body, dict) else None), (usage if isinstance(usage, dict) else None)


def looks_openai(obj: dict) -> bool:
    """Chat Completions or Responses traffic: OpenAI usage keys, or an `input` list / system-role message."""
    body, usage = _parts(obj)
    if usage and ("prompt_tokens" in usage or "input_tokens_details" in usage):
        return True
    if not body or "model" not in body:
        return False
    if isinstance(body.get("input"), (list, str)) and "messages" not in body:
        return True
    msgs = body.get("messages")
    return isinstance(msgs, list) and any(isinstance(m, dict) and m.get("role") in ("system", "developer", "tool")
                                          for m in msgs)


def render_openai(body: dict) -> Request:
    """A Chat Completions or Responses body -> Request (tools, then messages / input items)."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise UserError("request has no 'model'")
    blocks = [Block(Layer.TOOLS, dumps(t), f"tools[{i}]") for i, t in enumerate(body.get("tools") or [])]
    items: Any = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if body.get("instructions"):
        blocks.append(Block(Layer.SYSTEM, dumps({"instructions": body["instructions"]}), "instructions"))
    key = "messages" if "messages" in body else "input"
    explicit = []
    for i, m in enumerate(items or []):
        layer = Layer.SYSTEM if isinstance(m, dict) and m.get("role") in ("system", "developer") else Layer.MESSAGES
        m, marked = _unmarked(m)
        if marked:
            explicit.append(len(blocks))
        blocks.append(Block(layer, dumps(m), f"{key}[{i}]"))
    retention = body.get("prompt_cache_retention")
    options = body.get("prompt_cache_options")
    mode = options.get("mode") if isinstance(options, dict) else None
    return Request(model=model, blocks=tuple(blocks), retention=retention if isinstance(retention, str) else "",
                   cache_mode=mode if isinstance(mode, str) else "", explicit=tuple(explicit))


def _unmarked(item: Any) -> tuple[Any, bool]:
    """The item without its `prompt_cache_breakpoint` markers (a marker is not part of the prefix, as
    Anthropic's cache_control is not), and whether one was set. O-PC places the breakpoint at the end of
    the marked content block; one block per message here, so it is taken at the message's end (exact
    when the marked part is the message's last, as in every O-PC example)."""
    if not isinstance(item, dict):
        return item, False
    marked = False
    for field in ("content", "output"):
        parts = item.get(field)
        if isinstance(parts, list) and any(isinstance(p, dict) and "prompt_cache_breakpoint" in p for p in parts):
            marked = True
            item = {**item, field: [{k: v for k, v in p.items() if k != "prompt_cache_breakpoint"}
                                    if isinstance(p, dict) else p for p in parts]}
    return item, marked


def provider_of(model: str) -> str:
    """The provider whose cache rules and prices apply to a model in an OpenAI-format log."""
    return "deepseek" if canonical_model(model).startswith("deepseek") else "openai"


def observed_usage(u: dict | None) -> Usage | None:
    """Usage as token classes (cached tokens are inside the prompt); UserError for fields that are not counts."""
    if not u:
        return None
    if "prompt_tokens" in u:   # Chat Completions (and DeepSeek's variant of it)
        names = ("prompt_tokens", "prompt_tokens_details", "completion_tokens")
    else:                      # Responses
        names = ("input_tokens", "input_tokens_details", "output_tokens")
    prompt = token_count(u.get(names[0]), names[0])
    details = u.get(names[1])
    details = details if isinstance(details, dict) else {}
    if "cached_tokens" in details:
        cached = token_count(details.get("cached_tokens"), f"{names[1]}.cached_tokens")
    else:
        cached = token_count(u.get("prompt_cache_hit_tokens"), "prompt_cache_hit_tokens")
    written = token_count(details.get("cache_write_tokens"), f"{names[1]}.cache_write_tokens")
    return checked_usage(Usage(input_tokens=prompt - cached - written, cache_write_5m=written, cache_read=cached,
                               output_tokens=token_count(u.get(names[2]), names[2])))


def request_id(obj: Any) -> str | None:
    """A log line's request id (None without one); UserError: the line is no OpenAI request."""
    body, _ = _parts(obj) if isinstance(obj, dict) else (None, None)
    if body is None or "model" not in body:
        raise UserError("not an OpenAI request; needs 'model' and 'messages' or 'input'")
    return request_key(obj.get("id"))


def line_record(obj: dict, rid: str | None, index: int, path: str, line: int, sizer: Sizer,
                history: object = None) -> Record:
    """The request of a line `request_id` accepted (UserError: its body, usage or timestamp cannot be
    used). Same shape as the Anthropic reader's; `history` is not used (OpenAI bodies render cheaply)."""
    body, usage = _parts(obj)
    request = render_openai(body)
    provider = provider_of(request.model)   # render_openai checked it is a name
    check_model(request.model, provider)
    obs = observed_usage(usage)
    request = sized(request, sizer, obs.prompt_tokens if obs else None)
    stamp = obj.get("timestamp") or obj.get("created")
    t = _seconds(stamp, path, line) if stamp else index * DEFAULT_SPACING
    rid = rid or generated_id(path, index)
    stream = request_key(body.get("prompt_cache_key") or body.get("user"), "prompt_cache_key / user") or "main"
    call = Call(t=t, request=request, stream=stream, label=rid,
                output_tokens=obs.output_tokens if obs else 0, ttft=DEFAULT_TTFT)
    return Record(call, rid, _stamp_text(stamp, t), obs, path, line, provider=provider)


def load_jsonl(path: Path, sizer: Sizer) -> list[Record]:
    """One request per line: a body, or {request|body, response|usage, timestamp}, in file order. A
    line that is no request, or whose body, usage or timestamp cannot be used, is skipped and named."""
    from .api_log import scan

    return [rec for _, rec in scan(path, request_id, line_record, sizer)]
