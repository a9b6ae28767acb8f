"""`prefixsim advise`: where real traffic loses money to the cache, and which changes a what-if
replay of the same traffic shows would save it.

Every figure of a recommendation is the difference between two replays of the same traffic: the
recorded design and the changed one (`verify`). A change is kept only when that replay costs less;
changes are then tried together and the cheapest combination reported, with the replays from
today's cost to it step by step (the waterfall)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from itertools import combinations

from prefixsim.advise.attribution import Attribution, attribute, prices_for
from prefixsim.advise.candidates import Candidate, applied, candidates
from prefixsim.advise.volatile import Span, scan
from prefixsim.replay import ReplayResult, WhatIf, compare, replay

#: Past this many kept changes, combinations are built greedily rather than all tried.
EXHAUSTIVE = 6


@dataclass(frozen=True, slots=True)
class Recommendation:
    change: str
    saved_usd: Decimal
    percent: float
    rebuilds_avoided: int
    evidence: str        # which requests change under the replay
    cost_usd: Decimal = Decimal(0)          # the traffic's cost under the change (the replay's)
    requests: tuple[int, ...] = ()          # the requests (replay order) whose cost changes


@dataclass(frozen=True, slots=True)
class Advice:
    total_usd: Decimal
    by_cause: tuple[tuple[str, int, Decimal], ...]   # cause, requests, predicted cost of those requests
    recommendations: tuple[Recommendation, ...]
    attribution: Attribution | None = None
    volatile: tuple[Span, ...] = ()
    best: Recommendation | None = None               # the cheapest combination (or single change)
    waterfall: tuple[tuple[str, Decimal], ...] = ()  # (change added, cost after it), from today's cost
    untestable: tuple[tuple[str, str], ...] = ()     # (change, why this data cannot test it)
    rejected: tuple[Recommendation, ...] = ()        # replayed alone, and not cheaper: not recommended


def cost_by_cause(base: ReplayResult) -> tuple[tuple[str, int, Decimal], ...]:
    acc: dict[str, list] = defaultdict(lambda: [0, Decimal(0)])
    for r in base.rows:
        a = acc[r.cause.kind or "hit"]
        a[0] += 1
        a[1] += r.cost_predicted
    return tuple(sorted(((k, n, c) for k, (n, c) in acc.items()), key=lambda t: (-t[2], t[0])))


def _evidence(base: ReplayResult, other: ReplayResult) -> tuple[int, ...]:
    """The requests (base order) whose cost differs: matched by stream, id and occurrence, as a
    rewrite may move a request in time."""
    def keyed(rows):
        seen: dict[tuple[str, str], int] = defaultdict(int)
        out = {}
        for r in rows:
            k = (r.stream, r.request_id)
            out[(*k, seen[k])] = r
            seen[k] += 1
        return out
    was, now = keyed(base.rows), keyed(other.rows)
    return tuple(sorted(r.index for k, r in was.items() if k not in now or now[k].cost_predicted != r.cost_predicted))


def _at(breaker: str, path: str) -> bool:
    """A breaker lies at a span's path ("tools" stands for the whole tool list, reordered)."""
    return breaker == path or (path == "tools" and breaker.startswith("tools["))


def describe_requests(requests: tuple[int, ...], total: int) -> str:
    shown = ", ".join(f"#{i}" for i in requests[:6])
    more = f", … ({len(requests)} of {total} requests)" if len(requests) > 6 else \
        f" ({len(requests)} of {total} requests)"
    return shown + more if requests else "no request changes"


def verify(traffic, base: ReplayResult, cands: tuple[Candidate, ...], run=replay) -> Recommendation:
    """The replay of `traffic` under every change of `cands`, against `base`: what it saves."""
    t, v = applied(traffic, cands)
    other = run(t, v)
    total = compare(base, other).total
    saved = -total.cost_delta
    changed = _evidence(base, other)
    return Recommendation(" + ".join(c.change for c in cands), saved,
                          float(saved / total.cost_base * 100) if total.cost_base else 0.0,
                          total.rebuilds_base - total.rebuilds_variant, describe_requests(changed, len(base.rows)),
                          total.cost_variant, changed)


def advise(traffic, run=replay) -> Advice:
    """`run` is the replay; every recommendation is the difference between two of its results."""
    if run is replay:   # one price book for every replay of the same traffic (each would resolve it anew)
        run = partial(replay, prices=prices_for(traffic))
    base = run(traffic, WhatIf())
    attr = attribute(traffic, base, run)
    spans = scan(traffic, lambda i, path: attr.lost[i] if _at(attr.breaker_paths[i], path) else Decimal(0))
    cands, untestable = candidates(traffic, base, attr, spans)
    tried = [(c, verify(traffic, base, (c,), run)) for c in cands]
    kept = sorted(((c, r) for c, r in tried if r.saved_usd > 0), key=lambda cr: (-cr[1].saved_usd, cr[1].change))
    # A change that saves nothing alone may save together with another (a breakpoint after a system
    # prompt that stops changing): those the traffic suggested first, then the breakpoint placements,
    # join the combinations; a TTL that costs more alone stays out.
    inert = sorted((c for c, r in tried if r.saved_usd <= 0 and c.group != "ttl"),
                   key=lambda c: "breakpoint" in c.group)
    best, members = _best(traffic, base, kept, inert, run)
    steps: list[tuple[str, Decimal]] = []
    for k in range(1, len(members) + 1):   # today's cost -> the best combination, one change at a time
        step = best if k == len(members) else verify(traffic, base, members[:k], run)
        steps.append((members[k - 1].change, step.cost_usd))
    total = sum((r.cost_predicted for r in base.rows), Decimal(0))
    rejected = tuple(r for _, r in tried if r.saved_usd <= 0 and r.requests)
    return Advice(total, cost_by_cause(base), tuple(r for _, r in kept), attr, spans, best, tuple(steps),
                  untestable, rejected)


def _best(traffic, base: ReplayResult, kept: list[tuple[Candidate, Recommendation]], inert: list[Candidate],
          run) -> tuple[Recommendation | None, tuple[Candidate, ...]]:
    """The cheapest of the changes alone and together (one per group), by replay: every combination
    of the kept changes and the others (`inert`), at most EXHAUSTIVE of them, kept ones first; past that, the kept ones added one at a time in order of their own saving."""
    best, members = (kept[0][1], (kept[0][0],)) if kept else (None, ())
    pool = [c for c, _ in kept] + inert
    if len(kept) <= EXHAUSTIVE:
        pool = pool[:EXHAUSTIVE]
        trials = [combo for n in range(2, len(pool) + 1) for combo in combinations(pool, n)]
    else:
        trials = [tuple(c for c, _ in kept[:n]) for n in range(2, len(kept) + 1)]
    for combo in trials:
        if len({c.group for c in combo}) < len(combo):
            continue
        rec = verify(traffic, base, combo, run)
        if rec.saved_usd > 0 and (best is None or rec.saved_usd > best.saved_usd):
            best, members = rec, combo
    return best, members
