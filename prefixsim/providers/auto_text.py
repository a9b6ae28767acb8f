"""The words a run prints for an automatic-caching rule (`AutomaticPolicy.describe`): each figure it
applies, and where the figure shown, the documented range and the traffic disagree, all of them."""
from __future__ import annotations

from prefixsim.providers.tables import AutoRule


def describe_rule(name: str, r: AutoRule) -> dict[str, str]:
    """What a run says of an automatic rule: its caching, minimum, unit, retention and sources."""
    where = "inside blocks (token level)" if r.partial else "at block boundaries"
    writes = {"every": "every position past the minimum", "end": "the request's end",
              "breakpoints": "its breakpoints (the latest eligible message end, explicit markers)"}[r.writes]
    if r.common_units:
        writes += ", and the common prefix of two requests (read from the next)"
    cap = "none" if r.max_lifetime == float("inf") else f"{r.max_lifetime:.0f} s from the write"
    out = {"provider": name, "caching": f"automatic; cached at {writes}; longest cached prefix read, {where}",
           "minimum cacheable tokens": _minimum_text(r),
           "hit increment": _increment_text(r),
           "retention": (f"{r.ttl:.0f} s idle, refreshed by a read; cap {cap}" if r.ttl == r.ttl_optimistic else
                         f"{r.ttl:.0f} s idle (pessimistic: the figures shown) to {r.ttl_optimistic:.0f} s "
                         f"idle (optimistic: the *_optimistic figures), refreshed by a read; cap {cap}"),
           "source": r.source}
    if r.measured is not None:
        low = ("best effort, a documented range from nothing read (pessimistic: no hit is promised)" if not r.ttl
               else f"a documented range from {r.ttl:.0f} s idle (pessimistic)")
        out["retention"] = (f"{low} to {r.ttl_optimistic:.0f} s idle (optimistic: the *_optimistic figures); the figures "
                            f"shown: {r.measured.ttl:.0f} s idle, as public traffic shows; refreshed by a read; cap {cap}")
        out["documentation vs traffic"] = disagreement(r)
        out["measured"] = r.measured.source
    return out


def disagreement(r: AutoRule) -> str:
    """Where a measured rule's printed figures part from the documentation's."""
    m = r.measured
    assert m is not None
    kept = f"{m.ttl / 60:.0f} min" if m.ttl < 3600 else f"{m.ttl / 3600:.0f} h"
    parts = [(f"retention documented as best effort (no hit promised, kept up to {r.ttl_optimistic / 3600:.0f} h)"
              if not r.ttl else f"retention documented as a range, read as {r.ttl / 3600:.0f} to {r.ttl_optimistic / 3600:.0f} h")
             + f", read in traffic for {kept} idle"]
    if m.min_tokens != r.min_tokens:
        parts.append(f"minimum documented {r.min_tokens:,}, seen {m.min_tokens:,}")
    if m.increment != r.increment:
        parts.append(f"reads in whole {m.increment:,}-token units (undocumented)")
    if not m.output:
        parts.append("the reply not read back with its prompt (undocumented)")
    return "; ".join(parts)


def _increment_text(r: AutoRule) -> str:
    def unit(n: int) -> str:
        return "exact boundary" if n == 1 else f"multiples of {n} tokens"
    shown = r.step("printed")
    return unit(shown) if shown == r.increment else \
        f"{unit(shown)} as public traffic shows (the figures shown); {unit(r.increment)} at the optimistic end"


def _minimum_text(r: AutoRule) -> str:
    """The minimum a run applies, and where the documentation and the traffic disagree, both."""
    shown, opt = r.minimum("printed"), r.minimum("optimistic")
    if shown == r.min_tokens == opt:
        return str(r.min_tokens)
    if shown == r.min_tokens:
        return (f"{r.min_tokens} documented (the figures shown); reads below it are seen in traffic, so the "
                f"*_optimistic figures apply {opt}")
    return (f"{shown} as public traffic shows (the figures shown{' and the *_optimistic ones' if opt == shown else ''}); "
            f"{r.min_tokens} documented: the documentation and the traffic disagree"
            + ("" if opt == shown else f"; the *_optimistic figures apply {opt}"))


def best_effort(described: dict[str, str]) -> bool:
    """Whether a described automatic rule is best effort, its pessimistic end reading nothing (Gemini),
    rather than a documented retention that still reads there (DeepSeek): the one test a cause note
    and a scenario's table make of a measured rule."""
    return "best effort" in described.get("retention", "")
