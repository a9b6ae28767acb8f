"""The changes worth trying on a traffic, each as a what-if of the same traffic (a WhatIf and/or a
rewrite of its requests), and the ones the data cannot test, with the reason."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from prefixsim.advise import rewrite
from prefixsim.advise.attribution import Attribution
from prefixsim.advise.volatile import NORMALISABLE, Span, normalise
from prefixsim.core.tokens import TokenCounter, get_tokenizer
from prefixsim.model import CauseKind, Layer
from prefixsim.providers.tables import CLAUDE_PLATFORMS, anthropic_min_tokens
from prefixsim.replay import ReplayResult, WhatIf
from prefixsim.sources.traffic import Traffic

#: Why a Claude Code transcript cannot test a change of the prompt's content.
NO_CONTENT = ("a Claude Code transcript carries no system prompt or tool definitions (each prompt is "
              "rebuilt from its logged sizes), so a replay cannot change them")

#: Streams tried alone at another TTL (those that lost most to expiry).
PER_STREAM = 3


@dataclass(frozen=True, slots=True)
class Candidate:
    """One change. Candidates of one `group` exclude each other (two TTLs, two last breakpoints)."""

    change: str
    group: str
    variant: WhatIf = WhatIf()
    rewrites: tuple[tuple[Callable, bool], ...] = ()   # (make a per-walk step, reorders times)


def applied(traffic: Traffic, cands: tuple[Candidate, ...]) -> tuple[Traffic, WhatIf]:
    """`traffic` and the WhatIf under every candidate of `cands` at once (time-moving rewrites last)."""
    v = WhatIf()
    for c in cands:
        if c.variant.ttl != "observed":
            v = WhatIf(ttl=c.variant.ttl, breakpoints=v.breakpoints)
        if c.variant.breakpoints != "observed":
            v = WhatIf(ttl=v.ttl, breakpoints=c.variant.breakpoints)
    steps = sorted((r for c in cands for r in c.rewrites), key=lambda r: r[1])
    for make, reorder in steps:
        traffic = rewrite.Rewritten(traffic, make, reorder)
    return traffic, v


def _min_tokens(provider: str, model: str) -> int | None:
    if provider not in CLAUDE_PLATFORMS:
        return None
    try:
        return anthropic_min_tokens(model, provider).value
    except Exception:   # a model the table does not know has no minimum to pad to
        return None


def candidates(traffic: Traffic, base: ReplayResult, attr: Attribution,
               spans: tuple[Span, ...]) -> tuple[tuple[Candidate, ...], tuple[tuple[str, str], ...]]:
    """(candidates to replay, (change, reason) pairs that cannot be tested from this data)."""
    rows = base.rows
    transcript = False
    held: set[tuple[str, str]] = set()
    pads: dict[str, int] = {}
    ttl_lost: set[str] = set()
    counter = TokenCounter(get_tokenizer("approx"))   # the replay's tokenizer
    for rec, row in zip(traffic, rows):
        transcript = transcript or rec.main is not None
        kind = row.cause.kind
        if kind == CauseKind.TTL_EXPIRED:
            ttl_lost.add(row.stream)
        if kind == CauseKind.NOT_YET_AVAILABLE:
            held.add((row.stream, row.request_id))
        minimum = _min_tokens(row.provider, row.model) if kind == CauseKind.BELOW_MINIMUM else None
        marked = [i for i, b in enumerate(rec.call.request.blocks) if b.breakpoint]
        if minimum is not None and marked:
            upto = sum(counter.count(b) for b in rec.call.request.blocks[:marked[0] + 1])
            pads[row.stream] = max(pads.get(row.stream, 0), minimum - upto)
    out = [Candidate("write the cache at ttl=5m", "ttl", WhatIf(ttl="5m")),
           Candidate("write the cache at ttl=1h", "ttl", WhatIf(ttl="1h")),
           Candidate("add a cache breakpoint after the tools", "breakpoint after tools",
                     rewrites=((rewrite.add_breakpoint(Layer.TOOLS), False),)),
           Candidate("add a cache breakpoint after the system prompt", "breakpoint after system",
                     rewrites=((rewrite.add_breakpoint(Layer.SYSTEM), False),)),
           Candidate("move the last cache breakpoint to the end of the prompt", "last breakpoint",
                     rewrites=((lambda: rewrite.move_last_breakpoint(), False),)),
           Candidate("use automatic caching (one top-level cache_control)", "last breakpoint",
                     WhatIf(breakpoints="auto"))]
    # Per stream, where more than one stream ran: the streams that lost most to expiry at 1h, the
    # others as recorded (a harness with TTL buckets is left to the whole-traffic what-if above).
    expired = [(lost, stream) for stream, _, _, lost in attr.lost_by_stream if lost > 0 and stream in ttl_lost]
    if len(attr.lost_by_stream) > 1 and not transcript:
        for _, stream in sorted(expired, key=lambda x: (-x[0], x[1]))[:PER_STREAM]:
            out.append(Candidate(f"write stream {stream}'s cache at ttl=1h", "ttl",
                                 rewrites=(((lambda s: lambda: rewrite.stream_ttl(s, "1h"))(stream), False),)))
    if held:
        out.append(Candidate("hold parallel siblings until the first one's response begins", "hold",
                             rewrites=((rewrite.hold(frozenset(held)), True),)))
    if pads:
        out.append(Candidate("pad the prefix to the model's minimum cacheable length", "pad",
                             rewrites=((rewrite.pad(dict(sorted(pads.items()))), False),)))
    untestable: list[tuple[str, str]] = []
    vol = sorted({s.path for s in spans if s.kind in NORMALISABLE})
    order = any(s.kind.startswith("reordered") for s in spans)
    if transcript:
        untestable += [("keep tool and key order stable", NO_CONTENT),
                       ("move volatile content after the last breakpoint", NO_CONTENT)]
        untestable += [(f"stop rewriting {b.layer} {b.path}", "a Claude Code transcript logs each message's size, "
                        "not its content, so what rewrote it cannot be replayed without it")
                       for b in attr.breakers if b.layer == "messages"]
    else:
        for path in vol:
            kinds = ", ".join(sorted({s.kind for s in spans if s.path == path and s.kind in NORMALISABLE}))
            out.append(Candidate(f"move the volatile {kinds} at {path} after the last breakpoint",
                                 f"volatile {path}", rewrites=((normalise(frozenset((path,))), False),)))
        if order:
            out.append(Candidate("keep tool and key order stable", "order",
                                 rewrites=((lambda: rewrite.stable_order(), False),)))
    return tuple(out), tuple(untestable)
