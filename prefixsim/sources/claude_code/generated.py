"""What a response had generated when its line was written (in characters). Claude Code writes one transcript line
per content block of a response, once the block is complete; the request's time (its prompt's line to
the response's earliest line) therefore holds the generation of that block and of every block before
it, beside the time to the first token. `replay --latency` takes it out (latency/fit.py)."""
from __future__ import annotations

import json
from functools import cache
from typing import Callable

from prefixsim.core.tokens import remembered_count


@cache
def _counter() -> Callable[[str], int]:
    return remembered_count("cl100k_base")


def block_text(part: object) -> str | None:
    """The text a content block's tokens were generated as; None where the transcript does not hold it
    (a thinking block logged without its text, a redacted one: what was decoded is not shown)."""
    if not isinstance(part, dict):
        return ""
    kind = part.get("type")
    if kind == "text":
        return part.get("text") if isinstance(part.get("text"), str) else ""
    if kind == "thinking":
        text = part.get("thinking")
        return text if isinstance(text, str) and text else None
    if kind == "redacted_thinking":
        return None
    if "input" in part:   # tool_use and the server's tools: the call's name and its arguments
        return f"{part.get('name', '')}{json.dumps(part.get('input'), ensure_ascii=False, separators=(',', ':'))}"
    return ""


def generated_chars(content: object) -> int | None:
    """Characters of a line's content blocks; None if any block's generated text is not in the
    transcript. Characters, not tokens: counting every response's text would cost a replay a fifth of
    its time on new data, and the fit needs only a size proportional to the tokens decoded."""
    if not isinstance(content, list):
        return len(content) if isinstance(content, str) else 0
    total = 0
    for part in content:
        text = block_text(part)
        if text is None:
            return None
        total += len(text)
    return total


def add(a: int | None, b: int | None) -> int | None:
    """Generation through two lines of one response: unknown if either is."""
    return None if a is None or b is None else a + b


def text_tokens(content: object) -> int:
    """Tokens of a user message's text (its string, or its text blocks): what the user typed."""
    if isinstance(content, str):
        return _counter()(content) if content else 0
    if not isinstance(content, list):
        return 0
    return sum(_counter()(p["text"]) for p in content
               if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) and p["text"])
