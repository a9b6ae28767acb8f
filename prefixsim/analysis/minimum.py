"""Minimum cacheable length: a prefix below the model's minimum is never cached, silently (A-PC).
Padding it up to the minimum M makes it cacheable. Re-sent n times within the TTL:

    below the minimum:  n·p·P            padded:  w·M + (n − 1)·r·M
    padding pays off once n ≥ n* = ⌈(w − r)·M / (p·P − r·M)⌉   (never if p·P ≤ r·M)
"""
from __future__ import annotations

import math
from decimal import Decimal

from prefixsim.analysis.common import Prices
from prefixsim.scenario.studyparams import MinimumParams


def minimum(p: Prices) -> int:
    return p.min_tokens()


def closed_form(p: Prices, f: MinimumParams) -> tuple[Decimal, Decimal]:
    """(cost as sent, cost padded to the minimum) for n requests."""
    m = max(minimum(p), f.prefix)
    n = f.requests
    as_sent = n * p.input * f.prefix if f.prefix < minimum(p) else p.write(f.ttl) * f.prefix + (n - 1) * p.read * f.prefix
    return as_sent, p.write(f.ttl) * m + (n - 1) * p.read * m


def cost_at(p: Prices, f: MinimumParams, prefix: int, lengths: list[int]) -> Decimal:
    """n requests whose first `prefix` tokens carry a breakpoint (the rest uncached), within the TTL of
    each other: the first writes the prefix, the others read it, if it reaches the minimum; else
    every request sends it uncached."""
    m = minimum(p)
    total = Decimal(0)
    for j, n in enumerate(lengths):
        read = prefix if j and prefix >= m else 0
        write = prefix - read if prefix >= m else 0
        total += p.input_cost(n, read, write, n - read - write, f.ttl)
    return total


def requests_to_pay_off(p: Prices, prefix: int, ttl: str = "5m") -> int | None:
    m = minimum(p)
    gain = p.input * prefix - p.read * m
    if prefix >= m or gain <= 0:
        return None
    return max(1, math.ceil((p.write(ttl) - p.read) * m / gain))


def curve(p: Prices, f: MinimumParams, prefixes: list[int]) -> list[dict]:
    rows = []
    for size in prefixes:
        sent, padded = closed_form(p, MinimumParams(size, f.requests, f.ttl))
        rows.append({"prefix_tokens": size, "as_sent_usd": float(sent), "padded_usd": float(padded),
                     "saving_usd": float(sent - padded)})
    return rows
