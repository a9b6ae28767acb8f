"""What one Claude Code transcript message holds: its visible text and its usage as token classes."""
from __future__ import annotations

import json

from ..model import Usage
from .record import token_count


def text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if isinstance(part, dict):
            if part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif part.get("type") == "tool_result":
                inner = part.get("content")
                parts.append(inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False))
    return "\n".join(parts)


def usage_of(u: dict) -> Usage:
    """The usage fields as token classes (UserError: a field is not a count)."""
    read = token_count(u.get("cache_read_input_tokens"), "cache_read_input_tokens")
    created = token_count(u.get("cache_creation_input_tokens"), "cache_creation_input_tokens")
    detail = u.get("cache_creation")
    if isinstance(detail, dict):
        w1h = token_count(detail.get("ephemeral_1h_input_tokens"), "cache_creation.ephemeral_1h_input_tokens")
        w5m = token_count(detail["ephemeral_5m_input_tokens"], "cache_creation.ephemeral_5m_input_tokens") \
            if "ephemeral_5m_input_tokens" in detail else created - w1h
    else:
        w5m, w1h = created, 0
    if w5m + w1h != created:  # older logs without the split count everything as 5m
        w5m, w1h = created, 0
    return Usage(input_tokens=token_count(u.get("input_tokens"), "input_tokens"), cache_write_5m=w5m,
                 cache_write_1h=w1h, cache_read=read,
                 output_tokens=token_count(u.get("output_tokens"), "output_tokens"))
