"""`prefixsim advise`: where real traffic loses money to the cache, and which changes a what-if
replay of the same traffic shows would save it. First slice: money by miss cause, and TTL
recommendations kept only when their replay shows a saving."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from ..replay import ReplayResult, Variant, compare, replay


@dataclass(frozen=True, slots=True)
class Recommendation:
    change: str
    saved_usd: Decimal
    percent: float
    rebuilds_avoided: int
    evidence: str        # which streams change under the replay


@dataclass(frozen=True, slots=True)
class Advice:
    total_usd: Decimal
    by_cause: tuple[tuple[str, int, Decimal], ...]   # cause, requests, predicted cost of those requests
    recommendations: tuple[Recommendation, ...]


def cost_by_cause(base: ReplayResult) -> tuple[tuple[str, int, Decimal], ...]:
    acc: dict[str, list] = defaultdict(lambda: [0, Decimal(0)])
    for r in base.rows:
        a = acc[r.cause.kind or "hit"]
        a[0] += 1
        a[1] += r.cost_predicted
    return tuple(sorted(((k, n, c) for k, (n, c) in acc.items()), key=lambda t: (-t[2], t[0])))


def advise(traffic, run=replay) -> Advice:
    """`run` is the replay; every recommendation is the difference between two of its results."""
    base = run(traffic, Variant())
    recs: list[Recommendation] = []
    for ttl in ("5m", "1h"):
        cmp = compare(base, run(traffic, Variant(ttl=ttl)))
        t = cmp.total
        saved = -t.cost_delta
        if saved > 0:
            changed = [s.stream for s in cmp.streams if s.cost_delta != 0]
            recs.append(Recommendation(f"write cache at ttl={ttl}", saved,
                                       float(saved / t.cost_base * 100) if t.cost_base else 0.0,
                                       t.rebuilds_base - t.rebuilds_variant, ", ".join(changed[:3])))
    total = sum((r.cost_predicted for r in base.rows), Decimal(0))
    return Advice(total, cost_by_cause(base), tuple(recs))
