"""Where the money goes: cost by token class, and the money each request lost against the same
request had it read every prefix an earlier request of the traffic wrote and the provider's rules
let it read — summed by cause, by stream and by breaker (the layer and JSON path where a request's
prefix parts from the one before it, with the bytes that differ).

The readable part is measured, not guessed: the traffic is replayed once more with every request at
t = 0 and its writes readable at once (rewrite.timeless), so nothing expires or is pending while the
breakpoints, the lookback window and the minimums still decide what is read. A request whose prefix
parted from its stream's previous one (prefix_changed, compaction, model_switch) could, had it not
parted, have read what that request cached: the lesser of the two cached extents (on Claude's
platforms, where a request caches up to its breakpoints; an automatic cache's parting is not
priced, as what it would have read depends on its units and retention, and shows $0)."""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from prefixsim.advise.rewrite import Rewritten, timeless
from prefixsim.core.pricing import MTOK, PriceBook, Rates
from prefixsim.model import CauseKind, Request, Usage
from prefixsim.providers.tables import CLAUDE_PLATFORMS
from prefixsim.replay.run import Facts, ReplayResult, _instant, replay
from prefixsim.replay.unpriced import Lenient, lenient
from prefixsim.replay.whatif import WhatIf
from prefixsim.sources.traffic import Traffic

#: Causes whose loss is a parting of the prefix: these have a breaker.
PARTING = (CauseKind.PREFIX_CHANGED, CauseKind.COMPACTION, CauseKind.MODEL_SWITCH)
#: Token classes, in the order tables show them.
CLASSES = ("uncached", "cache write 5m", "cache write 1h", "cache read", "output")
SIZES_ONLY = "(a transcript logs sizes, not the bytes)"
_ADDED_BY = re.compile(r" \(added by [^)]*\)")


@dataclass(frozen=True, slots=True)
class Breaker:
    """Where prefixes part (summed over the requests that parted there)."""

    layer: str
    path: str
    before: str          # the bytes of the earlier request at the parting (the costliest instance)
    after: str           # ... and of the later one
    requests: tuple[int, ...]
    lost_usd: Decimal


@dataclass(frozen=True, slots=True)
class Attribution:
    by_class: tuple[tuple[str, int | None, Decimal], ...]   # class, tokens, usd (storage: no tokens)
    lost_by_cause: tuple[tuple[str, int, Decimal, Decimal], ...]   # cause, requests, cost, lost
    lost_by_stream: tuple[tuple[str, int, Decimal, Decimal], ...]  # stream, requests, cost, lost
    breakers: tuple[Breaker, ...]
    lost: tuple[Decimal, ...]                                # per request, in replay order
    breaker_paths: tuple[str, ...]                           # per request: its breaker's path, or ""

    @property
    def lost_usd(self) -> Decimal:
        return sum(self.lost, Decimal(0))


def prices_for(traffic: Traffic) -> Lenient:
    """The price book a replay of `traffic` uses (its clock starts at the first timestamp); a model
    without a price costs $0 there, as in the replay (replay/unpriced.py), never an abort."""
    f = Facts.of(traffic)
    return lenient(PriceBook(when=f.date, start=f.start))


def read_more(u: Usage, read: int) -> Usage:
    """`u` with `read` tokens read: the extra comes off the writes (1h entries lie before 5m ones)
    and then the uncached tail, in prompt order."""
    extra = max(0, min(read, u.prompt_tokens) - u.cache_read)
    w1 = min(extra, u.cache_write_1h)
    w5 = min(extra - w1, u.cache_write_5m)
    return Usage(u.input_tokens - (extra - w1 - w5), u.cache_write_5m - w5, u.cache_write_1h - w1,
                 u.cache_read + extra, u.output_tokens)


def class_costs(u: Usage, r: Rates) -> tuple[Decimal, ...]:
    p = u.prompt_tokens
    return tuple(n * rate.at(p) / MTOK for n, rate in (
        (u.input_tokens, r.input), (u.cache_write_5m, r.cache_write_5m), (u.cache_write_1h, r.cache_write_1h),
        (u.cache_read, r.cache_read), (u.output_tokens, r.output)))


def group_path(path: str) -> str:
    """A breaker's path without the transcript's per-request note, so one place groups."""
    return _ADDED_BY.sub("", path)


def _reads(traffic: Traffic, variant: WhatIf) -> ReplayResult:
    """The oracle's replay: its reads are all attribution takes of it, so a retention range's
    optimistic end (a second simulator per provider) is not walked."""
    return replay(traffic, variant, ranges=False)


def attribute(traffic: Traffic, base: ReplayResult, run=_reads) -> Attribution:
    """Attribution of `base`, the replay of `traffic` as recorded; `run` replays the oracle."""
    oracle = run(Rewritten(traffic, timeless), WhatIf())
    acc = Attributing(traffic)
    for rec, row, orow in zip(traffic, base.rows, oracle.rows, strict=True):
        acc.add(rec, row, orow)
    return acc.result()


class Attributing:
    """Attribution summed one request at a time: its record, its row as replayed, the oracle's row
    (`attribute` walks the three together; advise.one_pass.replay_with_losses steps it in the replay's own
    pass over the traffic)."""

    def __init__(self, traffic: Traffic, prices: Lenient | None = None) -> None:
        self.prices = prices if prices is not None else prices_for(traffic)   # a shard's: the whole traffic's
        self.classes = [[0, Decimal(0)] for _ in CLASSES]
        self.causes: dict[str, list] = defaultdict(lambda: [0, Decimal(0), Decimal(0)])
        self.streams: dict[str, list] = {}
        self.parted: dict[tuple[str, str], list] = {}
        self.lost: list[Decimal] = []
        self.paths: list[str] = []
        self.storage = Decimal(0)   # a Gemini explicit cache's storage, billed on its creation
        self.last: dict[str, tuple[Request, int]] = {}   # stream -> its previous request and what it cached

    def add(self, rec, row, orow) -> None:
        p = row.predicted
        rates = self.prices.rates(row.model, row.provider, _instant(row.timestamp) or self.prices.start)
        for k, (n, usd) in enumerate(zip((p.input_tokens, p.cache_write_5m, p.cache_write_1h, p.cache_read,
                                          p.output_tokens), class_costs(p, rates))):
            self.classes[k][0] += n
            self.classes[k][1] += usd
        self.storage += row.storage_usd
        cached = p.cache_read + p.cache_creation
        ref = self.last.get(row.stream) or self.last.get(rec.call.parent or "")
        ideal = max(p.cache_read, orow.predicted.cache_read)
        kind = row.cause.kind
        if kind in PARTING and ref is not None and row.provider in CLAUDE_PLATFORMS:
            ideal = max(ideal, min(ref[1], cached))
        loss = max(Decimal(0), rates.cost(p) - rates.cost(read_more(p, ideal)))
        path = ""
        if kind in PARTING and ref is not None:
            # replay's text measures losses too: a replay whose prefixes part nowhere loads no API log reader
            from prefixsim.replay.diff import where_parted  # lazy: the diff module loads the readers
            d = where_parted(ref[0], rec.call.request)
            path = group_path(d.path)
            # a transcript's blocks stand for logged sizes: their bytes are no content to show
            before, after = (d.before, d.after) if rec.main is None else (SIZES_ONLY, "")
            b = self.parted.setdefault((d.layer, path), [before, after, [], Decimal(0), Decimal(-1)])
            b[2].append(row.index)
            b[3] += loss
            if loss > b[4]:
                b[0], b[1], b[4] = before, after, loss
        self.lost.append(loss)
        self.paths.append(path)
        c = self.causes[kind or "hit"]
        c[0] += 1
        c[1] += row.cost_predicted
        c[2] += loss
        s = self.streams.setdefault(row.stream, [0, Decimal(0), Decimal(0)])
        s[0] += 1
        s[1] += row.cost_predicted
        s[2] += loss
        self.last[row.stream] = (rec.call.request, cached)

    def result(self) -> Attribution:
        order = lambda t: (-t[3], -t[2], t[0])  # noqa: E731  (most lost, then most cost, then name)
        breakers = sorted((Breaker(layer, path, v[0], v[1], tuple(v[2]), v[3])
                           for (layer, path), v in self.parted.items()),
                          key=lambda b: (-b.lost_usd, b.layer, b.path))
        by_class = [(name, n, usd) for name, (n, usd) in zip(CLASSES, self.classes)]
        if self.storage:
            by_class.append(("explicit cache storage", None, self.storage))
        return Attribution(tuple(by_class),
                           tuple(sorted(((k, *v) for k, v in self.causes.items()), key=order)),
                           tuple(sorted(((k, *v) for k, v in self.streams.items()), key=order)),
                           tuple(breakers), tuple(self.lost), tuple(self.paths))


def losses(traffic: Traffic, base: ReplayResult, run=_reads) -> list[Decimal]:
    """Each request's money lost to the cache (`attribute(...).lost`), as `replay`'s money summary
    shows it: [] when nothing was replayed (`usage_only`)."""
    if usage_only(base.rows):
        return []
    return list(attribute(traffic, base, run).lost)


def usage_only(rows) -> bool:
    """Whether no request was replayed (traffic of usage only: its rows carry their own loss)."""
    return not rows or all(r.audit for r in rows)
