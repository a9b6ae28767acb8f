"""Each closed form checked against the simulator on sample points: the curves we draw are the
numbers `prefixsim run` would print for the same requests."""
from __future__ import annotations

from decimal import Decimal

from . import fork_vs_subagent as fvs
from . import invalidation as inv
from . import minimum as mini
from . import stagger as stg
from . import ttl as ttlmod
from .common import Prices


def verify(study: str, p: Prices, book, f) -> dict:
    pairs: list[tuple[Decimal, Decimal]] = []
    if study == "fork-vs-subagent":
        for h in (0, 20_000, 80_000):
            pairs += list(zip(fvs.closed_form(p, f, h), fvs.simulate(p, book, f, h)))
    elif study == "ttl":
        gaps = [10, 299, 300, 1200, 3599, 3600, 7200]
        for t in ("5m", "1h"):
            pairs.append((ttlmod.closed_form(p, f, t, gaps), ttlmod.simulate(p, book, f, t, gaps)))
    elif study == "stagger":
        for d in (0.0, f.ttft / 2, f.ttft):
            pairs.append((stg.closed_form(p, f, d), stg.simulate(p, book, f, d)))
    elif study == "invalidation":
        for kind in inv.KINDS:
            for m in (2, max(2, f.turns // 3)):
                pairs.append((inv.closed_form(p, f, kind, m), inv.simulate(p, book, f, kind, m)))
    elif study == "minimum":
        pairs += list(zip(mini.closed_form(p, f), mini.simulate(p, book, f)))
    elif study == "gemini-explicit":
        from .gemini_explicit import check_pairs
        pairs += check_pairs(p, book, f)
    diff = max((abs(a - b) for a, b in pairs), default=Decimal(0))
    return {"points": len(pairs), "max_abs_diff_usd": float(diff)}
