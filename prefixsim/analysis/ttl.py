"""TTL choice: 5-minute vs 1-hour writes as a function of the gap between requests.

A request that comes `gap` seconds after the previous one (which read or wrote the prefix P) reads
P if gap < ttl + grace, else writes it again (A-PC: the lifetime runs from the start of the last
request that read or wrote it, and the TTL is a minimum: public traffic reads 5 s past it,
providers/tables.py: anthropic_lifetime). Per request:  cost_ttl(gap) = r·P if gap < life else w_ttl·P.
Against no caching, a write pays for itself after k* = (w/p − 1) / (1 − r/p) reads: 0.28 -> 1 read
for 5m (1.25x), 1.11 -> 2 reads for 1h (2x), as A-PC / A-PR state.
"""
from __future__ import annotations

import math
from decimal import Decimal

from prefixsim.analysis.common import Prices
from prefixsim.providers.tables import anthropic_lifetime
from prefixsim.scenario.studyparams import TTLParams


def per_request(p: Prices, f: TTLParams, ttl: str, gap: float) -> Decimal:
    return (p.read if gap < anthropic_lifetime(ttl) else p.write(ttl)) * f.prefix


def closed_form(p: Prices, f: TTLParams, ttl: str, gaps: list[float]) -> Decimal:
    """The first write plus one request per gap."""
    return cost_at(p, ttl, gaps, f.prefix, [f.prefix] * (len(gaps) + 1))


def cost_at(p: Prices, ttl: str, gaps: list[float], prefix: int, lengths: list[int]) -> Decimal:
    """The same rule at given sizes: the prefix (a breakpoint on it) is read when the gap since the
    previous request is under the TTL, else written (sent uncached below the model's minimum); the
    rest of each prompt has no breakpoint and is sent uncached."""
    m = p.min_tokens()
    total = Decimal(0)
    for j, n in enumerate(lengths):
        read = prefix if j > 0 and gaps[j - 1] < anthropic_lifetime(ttl) and prefix >= m else 0
        write = prefix - read if prefix >= m else 0
        total += p.input_cost(n, read, write, n - read - write, ttl)
    return total


def reads_to_pay_off(p: Prices, ttl: str) -> tuple[float, int]:
    """(k*, whole reads) after which a write at this TTL beats sending the prefix uncached."""
    k = float((p.write(ttl) / p.input - 1) / (1 - p.read / p.input))
    return k, max(1, math.ceil(k - 1e-12))


def curve(p: Prices, f: TTLParams, gaps: list[float]) -> list[dict]:
    return [{"gap_s": g, "cost_5m_usd": float(per_request(p, f, "5m", g)),
             "cost_1h_usd": float(per_request(p, f, "1h", g)),
             "cost_no_cache_usd": float(p.input * f.prefix)} for g in gaps]


def requests_for_1h_to_win(p: Prices, gap: float) -> int | None:
    """Requests at a steady gap after which 1h writes cost less in total than 5m writes (None: never)."""
    w5, w1, r = p.write_5m, p.write_1h, p.read
    per5 = r if gap < anthropic_lifetime("5m") else w5
    per1 = r if gap < anthropic_lifetime("1h") else w1
    if per1 >= per5:
        return None
    # w1 + (n-1)·per1 < w5 + (n-1)·per5  <=>  n - 1 > (w1 - w5) / (per5 - per1)
    return int(math.floor((w1 - w5) / (per5 - per1))) + 2


def distribution(p: Prices, f: TTLParams, gaps: list[float]) -> dict:
    """Expected cost per request under each TTL for an observed list of gaps."""
    n = len(gaps) + 1
    c5, c1 = closed_form(p, f, "5m", gaps), closed_form(p, f, "1h", gaps)
    return {"requests": n, "expected_5m_usd": float(c5 / n), "expected_1h_usd": float(c1 / n),
            "cheaper": "1h" if c1 < c5 else "5m",
            "share_gaps_5m_to_1h": sum(1 for g in gaps if anthropic_lifetime("5m") <= g < anthropic_lifetime("1h"))
            / len(gaps) if gaps else 0.0}
