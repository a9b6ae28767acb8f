"""What one Claude Code transcript message holds: its visible text, its usage as token classes, its
content blocks as the API counts them, and the thinking setting its turn was sent with."""
from __future__ import annotations

import json

from prefixsim.model import Usage
from prefixsim.sources.usage import messages_usage


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
    """The usage fields as token classes, checked as every reader's are (`usage.messages_usage`;
    UserError: a field is not a count, or the fields contradict each other)."""
    return messages_usage(u)


def thinking_setting(meta: object) -> str | None:
    """The thinking setting a user turn was sent with, from its `thinkingMetadata`: "" when off, else
    its level or budget; None when the line has none. 2.0.x writes a level (off when `disabled` or
    "none"), 2.1.x the budget (`maxThinkingTokens`, off at 0)."""
    if not isinstance(meta, dict):
        return None
    budget = meta.get("maxThinkingTokens")
    if "level" not in meta and isinstance(budget, int) and not isinstance(budget, bool):
        return str(budget) if budget > 0 else ""
    level = meta.get("level")
    return "" if meta.get("disabled") or not isinstance(level, str) or level == "none" else level


def not_only_tool_results(content: object) -> bool:
    """Whether a user message carries anything but tool results (text: a new turn for the API)."""
    if isinstance(content, str):
        return True
    return any(isinstance(p, dict) and p.get("type") != "tool_result" for p in content or ())


def parts(content: object, leave_out: tuple[str, ...] = ()) -> int:
    """How many content blocks a message adds to the prompt (the API's lookback counts blocks)."""
    if isinstance(content, str):
        return 1
    return sum(1 for p in content or () if isinstance(p, dict) and p.get("type") not in leave_out)
