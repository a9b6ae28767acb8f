"""The design a replay runs under (as recorded, or another TTL, provider, model or breakpoint
placement), and one recorded request rewritten for it."""
from __future__ import annotations

from dataclasses import dataclass, replace

from prefixsim.model import Call
from prefixsim.providers.tables import claude_code_ttl

TTL_CHOICES = ("observed", "5m", "1h")
BREAKPOINT_POLICIES = ("observed", "last", "auto", "none")


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The design a replay runs under; every field `observed`/None means as recorded (the provider
    as recorded is each request's own: Anthropic for transcripts and Messages logs, OpenAI or
    DeepSeek for an OpenAI-format log)."""

    ttl: str = "observed"
    model: str | None = None
    provider: str = "observed"
    breakpoints: str = "observed"

    def describe(self) -> str:
        parts = [f"ttl={self.ttl}", f"provider={self.provider}", f"breakpoints={self.breakpoints}"]
        if self.model:
            parts.append(f"model={self.model}")
        return ", ".join(parts)


def apply_variant(call: Call, v: WhatIf, main: bool | None = None) -> Call:
    """The same request under another TTL, model or breakpoint placement. For a harness with TTL
    buckets (`main` not None: Claude Code), a TTL what-if is the main conversation's: the other
    bucket keeps writing 5m (CC-PC), as the harness would."""
    if v.ttl == "observed" and v.breakpoints == "observed" and not v.model:
        return call   # the request as recorded: no per-block work (the default replay, every request)
    req = call.request
    blocks = req.blocks
    auto = req.auto_cache
    marked = [i for i, b in enumerate(blocks) if b.breakpoint]
    if v.breakpoints == "none":
        blocks, auto = tuple(b.with_breakpoint(None) for b in blocks), None
    elif v.breakpoints == "last" and marked:
        last = marked[-1]
        blocks = tuple(b.with_breakpoint(b.breakpoint if i == last else None) for i, b in enumerate(blocks))
    elif v.breakpoints == "auto":
        ttl = next((blocks[i].breakpoint for i in marked), None) or auto or "5m"
        blocks, auto = tuple(b.with_breakpoint(None) for b in blocks), ttl
    if v.ttl != "observed":
        ttl = v.ttl if main is None else claude_code_ttl(main, v.ttl)
        blocks = tuple(b.with_breakpoint(ttl) if b.breakpoint else b for b in blocks)
        auto = ttl if auto else None
    model = v.model or req.model
    if blocks is req.blocks and auto == req.auto_cache and model == req.model:
        return call
    return replace(call, request=replace(req, blocks=tuple(blocks), auto_cache=auto, model=model))
