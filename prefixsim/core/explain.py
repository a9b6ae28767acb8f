"""Why a request missed: the cause of every token it could not read, to the layer, block and byte.

Kept apart from the simulator that computes the numbers (core/simulator.py), so what a user reads
first (the cause) has one place to be read and tested.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from prefixsim.core.store import EntryState, Store
from prefixsim.core.view import View
from prefixsim.model import Call, Cause, CauseKind, Layer, Request
from prefixsim.providers.tables import ANTHROPIC_TTL_SLACK, anthropic_strips_thinking, canonical_model


def explain(call: Call, v: View, ref: View | None, hit: int, below_minimum: bool,
            known: tuple[int, EntryState, Found | None] | None, breakpoints: tuple[int, ...],
            total: int, breakpoint_rules: bool) -> Cause:
    """Why a request read less than it could have: the deepest entry it saw but could not use
    (expired, not yet readable, evicted, outside the lookback), else where it parted from the
    request it continues, else why nothing was cached. `breakpoint_rules`: Claude's explicit
    breakpoints and lookback explain a live entry that was not read."""
    req, now = call.request, call.t
    if known is not None and known[0] > hit:
        j, state, entry = known
        where = req.blocks[j].path or f"block {j}"
        if state is EntryState.EXPIRED and entry is not None and entry.expires_at >= entry.cap:
            return Cause(CauseKind.TTL_EXPIRED,
                         f"entry at {where} written {now - entry.written_at:.0f} s ago, past its "
                         f"{entry.cap - entry.written_at:.0f} s maximum lifetime")
        if state is EntryState.EXPIRED and entry is not None and entry.ttl == 0:
            # a best-effort cache at its pessimistic end (Gemini implicit): no hit is promised
            return Cause(CauseKind.TTL_EXPIRED, f"entry at {where}: best effort, no hit assumed at the "
                                                "pessimistic end (the optimistic figures assume one)")
        if state is EntryState.EXPIRED and entry is not None:
            idle = now - entry.last_used
            edge = ("; within the TTL's slack, where an entry is often still read (the TTL is a minimum)"
                    if breakpoint_rules and idle - entry.ttl <= float(ANTHROPIC_TTL_SLACK.value) else "")
            # an entry expires when its idle time reaches the TTL: at the TTL itself the detail says so
            cmp = ">=" if f"{idle:.0f}" == f"{entry.ttl:.0f}" else ">"
            return Cause(CauseKind.TTL_EXPIRED, f"entry at {where} idle {idle:.0f} s {cmp} ttl {entry.ttl:.0f} s{edge}")
        if state is EntryState.PENDING and entry is not None:
            return Cause(CauseKind.NOT_YET_AVAILABLE,
                         f"entry at {where} written at t={clock(entry.written_at)}s, readable from "
                         f"t={clock(entry.available_at)}s")
        if state is EntryState.EVICTED:
            return Cause(CauseKind.EVICTED, f"entry at {where} evicted for capacity")
        if state is EntryState.LIVE and not breakpoint_rules:
            return Cause(CauseKind.LOOKBACK_EXCEEDED, f"entry at {where} is not one of this request's "
                                                      "cache lookup boundaries")
        if state is EntryState.LIVE:
            after = [b for b in breakpoints if b >= j]
            if not after:
                return Cause(CauseKind.LOOKBACK_EXCEEDED,
                             f"entry at {where} lies after the last breakpoint")
            return Cause(CauseKind.LOOKBACK_EXCEEDED,
                         f"entry at {where} is {after[0] - j + 1} blocks back from the breakpoint at "
                         f"{req.blocks[after[0]].path or after[0]} (window 20)")
    if ref is not None and hit < ref.extent:
        if canonical_model(ref.request.model) != canonical_model(req.model):
            return Cause(CauseKind.MODEL_SWITCH, f"{ref.request.model} -> {req.model}")
        part = v.parting
        if part is not None and part <= ref.extent:
            kind = call.event or CauseKind.PREFIX_CHANGED
            return Cause(kind, describe_parting(ref.request, req, part))
    if hit < 0 and total > 0:
        if below_minimum:
            return Cause(CauseKind.BELOW_MINIMUM, f"{total} tokens")
        if call.event:
            return Cause(call.event)
        if not breakpoints and breakpoint_rules:
            return Cause(CauseKind.COLD, "no cache_control breakpoint")
        return Cause(CauseKind.COLD)
    return Cause()


def clock(t: float) -> str:
    """A time as a cause names it, to the millisecond and no more digits than it needs: a scenario's
    15 s reads `15`, a log's (seconds since 1970) `1793610000.5`, never `1.79361e+09`, which gave
    the write and its readable time as one number."""
    return f"{t:.3f}".rstrip("0").rstrip(".")


# A rendered thinking block opens with its type (after the role, on a message's first block).
_THINKING = re.compile(rb'^(?:\{"role":"assistant"\})?\{"type":"(?:redacted_)?thinking"')


@dataclass(frozen=True, slots=True)
class Found:
    """An entry's times before a request looked at it (the request may rewrite the entry)."""

    written_at: float
    available_at: float
    last_used: float
    ttl: float
    expires_at: float
    cap: float        # the maximum lifetime's end (inf: none)


def found(store: Store, d: bytes) -> Found | None:
    e = store.get(d)
    return None if e is None else Found(e.written_at, e.available_at, e.last_used, e.ttl, e.expires_at, e.cap)


def describe_parting(old: Request, new: Request, i: int) -> str:
    if i >= len(new.blocks):
        return f"history cut at block {i}"
    nb = new.blocks[i]
    place = f"{nb.layer.label} layer, block {i} ({nb.path})" if nb.path else f"{nb.layer.label} layer, block {i}"
    if i < len(old.blocks):
        ob = old.blocks[i]
        if ob.key == nb.key:
            if nb.layer == Layer.TOOLS:   # only effort enters there
                return f"{place}: effort changed (rendered ahead of the tools on {new.model})"
            return f"{place}: {nb.layer.label}-layer parameters changed"
        a, b = ob.data, nb.data
        k = next((x for x in range(min(len(a), len(b))) if a[x] != b[x]), min(len(a), len(b)))
        if _THINKING.search(a[:48]) and anthropic_strips_thinking(new.model):
            return (f"{place}: earlier turns' thinking blocks stripped after a new user turn "
                    f"({new.model} keeps the last turn's only; A-TH)")
        return f"{place}, byte {k}"
    return place
