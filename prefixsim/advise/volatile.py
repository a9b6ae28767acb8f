"""Volatile content: spans that differ between a request and the one before it (its stream's
previous request, else its parent's, else the traffic's previous one) at the same JSON path —
timestamps, ids, counters — and tools or keys that come in another order. Each is named with an
excerpt, its path, how often it changed and what the requests it broke lost."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import lru_cache
from typing import Callable, Iterable

from prefixsim.advise.rewrite import Step, calls, with_blocks
from prefixsim.model import Block, Layer, Request
from prefixsim.sources.record import Record

#: Values that change by themselves from one request to the next. Named groups give the kind; the
#: order matters (a date is tried before a number, a UUID before a hex id).
VOLATILE = re.compile(rb"""
    (?P<timestamp>\d{4}-\d{2}-\d{2}(?:[T\x20]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?
                 |\b\d{1,2}:\d{2}(?::\d{2})?(?:\x20?[AaPp][Mm])?\b)
   |(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)
   |(?P<id>\b[A-Za-z]+_[A-Za-z0-9]{12,}\b|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{12,}\b)
   |(?P<counter>\b\d+(?:\.\d+)?\b)
""", re.X)
#: Kinds a replay can hold constant (the value's span is replaced by its first value).
NORMALISABLE = ("timestamp", "uuid", "id", "counter")
CONTEXT = 24


@dataclass
class Span:
    """One volatile span, summed over the request pairs where it changed."""

    path: str
    kind: str            # timestamp | uuid | id | counter | reordered keys | reordered tools | edit
    before: str          # the first change: an excerpt of the earlier request ...
    after: str           # ... and of the later one
    changes: int = 0     # pairs of requests where it changed
    compared: int = 0    # pairs of requests that both had the path
    requests: list[int] = field(default_factory=list)   # the later request of each change
    lost_usd: Decimal = Decimal(0)


def _excerpt(data: bytes, start: int, end: int) -> str:
    lo, hi = max(0, start - CONTEXT), min(len(data), end + CONTEXT)
    return ("…" if lo else "") + data[lo:hi].decode("utf-8", "replace") + ("…" if hi < len(data) else "")


@lru_cache(maxsize=256)
def _masked(data: bytes) -> bytes:
    """`data` with every volatile value blanked (cached: a walk masks each system block per request)."""
    return VOLATILE.sub(b"\0", data)


def block_spans(a: Block, b: Block) -> list[tuple[str, str, str]]:
    """(kind, excerpt of a, excerpt of b) for each way `b` differs from `a` at the same path."""
    x, y = a.data, b.data
    if _masked(x) == _masked(y):
        out = []
        for ma, mb in zip(VOLATILE.finditer(x), VOLATILE.finditer(y)):
            if ma.group() != mb.group():
                out.append((mb.lastgroup or "counter", _excerpt(x, *ma.span()), _excerpt(y, *mb.span())))
        return out
    try:
        if b.layer != Layer.MESSAGES and json.loads(x) == json.loads(y):
            return [("reordered keys", x[:CONTEXT * 2].decode("utf-8", "replace"),
                     y[:CONTEXT * 2].decode("utf-8", "replace"))]
    except ValueError:
        pass
    p = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
    return [("edit", _excerpt(x, p, p + 1), _excerpt(y, p, p + 1))]


def cached_until(r: Request) -> int:
    """The index of the block that closes the request's cached prefix (its last breakpoint; without
    markers, its last block): content from there on is new each turn, not volatile."""
    marked = [i for i, x in enumerate(r.blocks) if x.breakpoint]
    return marked[-1] if marked and not r.auto_cache else max(0, len(r.blocks) - 1)


def pair_spans(a: Request, b: Request) -> list[tuple[str, str, str, str]]:
    """(path, kind, before, after) of every volatile difference between consecutive requests, in
    the blocks before the later one's last breakpoint."""
    out = []
    ta = [x.data for x in a.blocks if x.layer == Layer.TOOLS]
    tb = [x.data for x in b.blocks if x.layer == Layer.TOOLS]
    if ta != tb and sorted(ta) == sorted(tb):
        k = next(i for i in range(len(ta)) if ta[i] != tb[i])
        out.append(("tools", "reordered tools", ta[k][:CONTEXT * 2].decode("utf-8", "replace"),
                    tb[k][:CONTEXT * 2].decode("utf-8", "replace")))
    else:
        by_path = {x.path: x for x in a.blocks if x.path}
        for y in b.blocks[:cached_until(b)]:
            x = by_path.get(y.path)
            if x is not None and x.key != y.key and x.layer == y.layer:
                out.extend((y.path, *s) for s in block_spans(x, y))
    return out


def scan(records: Iterable[Record], lost: Callable[[int, str], Decimal]) -> tuple[Span, ...]:
    """Every volatile span of the traffic (request logs: transcripts carry no content). `lost(index,
    path)` is what request `index` lost at a breaker at `path` (0 where it broke elsewhere or lost
    nothing); it is charged to the first span that changed at that path, where the prefix parts.
    Most costly first."""
    last: dict[str, Request] = {}
    prev: Request | None = None
    spans: dict[tuple[str, str], Span] = {}
    for i, rec in enumerate(records):
        c = rec.call
        req = c.request
        if rec.main is not None:   # a transcript's blocks stand for sizes, not content: nothing to compare
            continue
        ref = last.get(c.stream) or last.get(c.parent or "") or prev
        if ref is not None and ref.model == req.model:
            seen = set()
            charged = set()
            paths = {x.path for x in ref.blocks} & {x.path for x in req.blocks}
            for path, kind, before, after in pair_spans(ref, req):
                s = spans.get((path, kind))
                if s is None:
                    s = spans[(path, kind)] = Span(path, kind, before, after)
                if (path, kind) not in seen:
                    seen.add((path, kind))
                    s.changes += 1
                    s.requests.append(i)
                if path not in charged:
                    charged.add(path)
                    s.lost_usd += lost(i, path)
            for (path, kind), s in spans.items():
                if (path in paths or path == "tools") and (path, kind) not in seen:
                    s.compared += 1
            for key in seen:
                spans[key].compared += 1
        last[c.stream] = prev = req
    return tuple(sorted(spans.values(), key=lambda s: (-s.lost_usd, -s.changes, s.path, s.kind)))


def normalise(paths: frozenset[str]) -> Callable[[], Step]:
    """The what-if of moving volatile values out of the cached prefix: at each of `paths`, a block
    that differs from the first one seen there only in volatile values is sent as that first one
    (a real edit becomes the new reference)."""
    def make() -> Step:
        first: dict[str, Block] = {}

        def one(c):
            out = []
            for b in c.request.blocks:
                ref = first.get(b.path) if b.path in paths else None
                if b.path not in paths:
                    out.append(b)
                elif ref is None or (ref.data != b.data and _masked(ref.data) != _masked(b.data)):
                    first[b.path] = b
                    out.append(b)
                else:
                    out.append(replace(b, data=ref.data) if ref.data != b.data else b)
            return with_blocks(c, out)
        return lambda rec: calls(rec, one)
    return make
