"""Fast LRU replay of block-key traces: one ordered-dict pass per capacity here, and one
stack-distance pass (Mattson et al. 1970) for a whole capacity curve (`engines.stack`). Both give
exactly what `vllm.BlockPool` gives for instantaneous requests (`trace.replay` without a decode
rate), which stays the reference.

What the block pool does with one request when nothing is held (docs/rules.md#engine-traces-mooncake-bailian):
its cached blocks are withdrawn from the free queue, the least recently freed other blocks are evicted
to make room for its missing ones, and then all its blocks are freed in reverse order, so afterwards
they are the most recent, the chain's head newest. Hence:

- Ordered dict: move the request's blocks to the recent end in reverse order, then evict from the old
  end until the capacity holds. Those evicted are the oldest blocks not in the request, as the pool's.
- Inclusion: the pool of C blocks then holds the C most recent blocks of the global recency stack
  (every block ever requested, ordered by when it was last freed), provided a request longer than C
  reads nothing past its first C blocks. A block is cached at capacity C exactly when its stack
  distance (rank) is at most C, so one pass that ranks every block access gives every capacity.
  When a request longer than C reads a block past its first C (never in chained hash ids, whose
  head is always more recent than their tail), the pool keeps the blocks it read and drops its
  tail instead, the stack no longer describes that capacity, and `lru_curve` says so.

A request that names one block twice is counted by the pool as two missing blocks (one more store,
one more eviction); neither fast path reproduces that, and both raise `NotExact` so the caller uses
the pool.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict, deque
from itertools import repeat, takewhile
from operator import attrgetter, itemgetter
from typing import Hashable, Sequence

# the curve's pass (its own module); callers import it from here too
from prefixsim.engines.stack import Curve, KeyedRequest, NotExact, lru_curve  # noqa: F401
from prefixsim.model import CauseKind

_EVICTED, _COLD, _HIT = CauseKind.EVICTED, CauseKind.COLD, CauseKind.HIT
_INPUT, _KEYS, _FIRST = attrgetter("input_length"), attrgetter("keys"), itemgetter(0)


class LruPass:
    """One capacity's replay: totals, and per request (when asked) hit blocks and the miss cause."""

    __slots__ = ("hit_blocks", "hit_tokens", "evictions", "runs", "tokens", "causes", "chained")

    def __init__(self, hit_blocks: int, hit_tokens: int, evictions: int, runs: list[int] | None,
                 tokens: list[int] | None, causes: list[str] | None, chained: bool = False) -> None:
        self.hit_blocks, self.hit_tokens, self.evictions = hit_blocks, hit_tokens, evictions
        self.runs, self.tokens, self.causes, self.chained = runs, tokens, causes, chained  # `_unlimited`


def replay_lru(requests: Sequence[KeyedRequest], capacity: int | None, block_size: int,
               per_request: bool = True, seen: LruPass | None = None) -> LruPass:
    """Replay `requests` through an LRU pool of `capacity` blocks (None: unlimited).

    Equal to `BlockPool` request by request (hit blocks, hit tokens = min(run x block size,
    input_length), the cause of each miss) and in total evictions. Raises `NotExact` when a request
    repeats a block key and the capacity is finite.

    A miss's cause is whether its first missing block was evicted. While every request fits the
    pool, each stores all its blocks, so a block not cached was evicted iff it was stored before; and
    while the keys stored are exactly the ints 0 .. dense-1 (hash ids numbered in order of first
    appearance, as Mooncake's), that is `key < dense`: no set of evicted keys (a C-level insert per
    eviction) is kept. From the first request that leaves them otherwise (other keys, a gap, a
    request longer than the pool, a cached block behind a missing one) the set is kept, starting
    from range(dense).
    `seen`, the unlimited pass, gives causes with no set of keys ever evicted: if no request outgrows
    the pool (all keys are stored) and keys seen before lead (`seen.chained`), a missing key was
    evicted iff an earlier request had it, iff the run stops short of the unlimited run.
    """
    if capacity is None:
        return _unlimited(requests, block_size, per_request)
    if seen is not None and (not (per_request and seen.chained) or any(len(r.keys) > capacity for r in requests)):
        seen = None
    keep = per_request and seen is None   # causes from the keys stored so far
    dense = 0 if keep else None           # the keys stored are range(dense); None: `evicted` is kept
    runs: list[int] = []
    tokens: list[int] = []
    causes: list[str] = []
    od: OrderedDict = OrderedDict()
    contains, move, popitem = od.__contains__, od.move_to_end, od.popitem
    consume = deque(maxlen=0).extend   # runs an iterator for its effects, in C
    evicted: set = set()    # keys evicted at some time: for a key not cached, the pool's `evicted`
    hit_blocks = hit_tokens = evictions = 0
    for r in requests:
        keys = r.keys
        n = len(keys)
        run = len(tuple(takewhile(contains, keys)))   # up to the first block missing
        t = run * block_size
        n_in = r.input_length
        if t > n_in:   # hit tokens = min(run x block size, input length)
            t = n_in
        if per_request:
            runs.append(run)
            tokens.append(t)
        else:
            hit_blocks += run
            hit_tokens += t
        if n > capacity:
            if dense is not None:
                evicted, dense = set(range(dense)), None
            flags = list(map(contains, keys))
            if keep:
                causes.append(_HIT if run == n else _EVICTED if keys[run] in evicted else _COLD if run == 0 else _HIT)
            held = _cut(keys, flags, capacity)
            for k in reversed(held):
                if k in od:
                    move(k)
                else:
                    od[k] = None
        elif run == n:
            if keep:
                causes.append(_HIT)
            consume(map(move, reversed(keys)))
            continue
        else:
            # Chained hash ids: the cached blocks lead and the rest are new. Insert the tail, then
            # bring the head to the recent end, head last.
            tail = keys[run:]
            before = len(od)
            for k in reversed(tail):
                od[k] = None
            grown = len(od) - before
            if grown == n - run:
                x = tail[0]
                if dense is not None:
                    d = dense
                    dense = _dense_after(tail, d)
                    if dense is not None:
                        causes.append(_EVICTED if x < d else _COLD if run == 0 else _HIT)
                    else:
                        evicted = set(range(d))
                if dense is None and keep:
                    causes.append(_EVICTED if x in evicted else _COLD if run == 0 else _HIT)
                if run:
                    consume(map(move, reversed(keys[:run])))
            else:
                # A block past the run is cached, or one repeats: take back the blocks just added,
                # then the general order.
                consume(map(popitem, repeat(True, grown)))
                if len(set(keys)) != n:
                    raise NotExact
                if dense is not None:
                    evicted, dense = set(range(dense)), None
                if keep:
                    causes.append(_EVICTED if keys[run] in evicted else _COLD if run == 0 else _HIT)
                for k in reversed(keys):
                    if k in od:
                        move(k)
                    else:
                        od[k] = None
        e = len(od) - capacity
        if e > 0:
            # The request's blocks are the most recent now, so the oldest e are not among them.
            evictions += e
            if dense is None and keep:
                evicted.update(map(_FIRST, map(popitem, repeat(False, e))))
            else:
                consume(map(popitem, repeat(False, e)))
    if seen is not None:
        causes = [_HIT if run == n else _EVICTED if run < s else _COLD if run == 0 else _HIT
                  for run, n, s in zip(runs, map(len, map(_KEYS, requests)), seen.runs)]  # type: ignore[arg-type]
    if per_request:
        hit_blocks, hit_tokens = sum(runs), sum(tokens)
    return LruPass(hit_blocks, hit_tokens, evictions, runs, tokens, causes)


def _dense_after(tail: Sequence[Hashable], d: int) -> int | None:
    """The next `dense` once `tail` (distinct keys, none cached) is stored after the ints 0 .. d-1:
    d + its new ids, when those are d, d+1, ... and the rest are ints below d; else None."""
    try:
        s = sorted(tail)
        if type(sum(s)) is not int:   # not all ints (a float, ...; a tuple or a str raised)
            return None
    except TypeError:
        return None
    # Distinct ints, sorted: those from d on are d .. d+m-1 iff the first is d and the last d+m-1.
    m = len(s)
    if s[0] >= d:   # all new: the common case
        return d + m if s[0] == d and s[-1] == d + m - 1 else None
    j = bisect_left(s, d)
    m -= j
    if s[0] < 0 or (m and (s[j] != d or s[-1] != d + m - 1)):
        return None
    return d + m


def _cut(keys: Sequence[Hashable], flags: list[bool], capacity: int) -> list[Hashable]:
    """The blocks a request longer than the pool holds: every cached one, then its first missing
    ones while room is left once every other block is evicted (`BlockPool.acquire` keeps the head
    of the missing list)."""
    if len(set(keys)) != len(keys):
        raise NotExact
    room = capacity - flags.count(True)
    held = []
    for k, cached in zip(keys, flags):
        if cached:
            held.append(k)
        elif room > 0:
            held.append(k)
            room -= 1
    return held


def _unlimited(requests: Sequence[KeyedRequest], bs: int, per_request: bool) -> LruPass:
    """No capacity, no eviction: a set of every key seen is the pool (any eviction policy)."""
    runs: list[int] = []
    tokens: list[int] = []
    causes: list[str] = []
    seen: set = set()
    update = seen.update
    hit_blocks = hit_tokens = 0
    chained = True
    for r in requests:
        keys = r.keys
        run = 0
        for k in keys:
            if k not in seen:
                break
            run += 1
        before = len(seen)
        update(keys)
        chained = chained and len(seen) - before == len(keys) - run  # else a key seen before past the run
        hit_blocks += run
        t = run * bs
        n_in = r.input_length
        if t > n_in:
            t = n_in
        hit_tokens += t
        if per_request:
            runs.append(run)
            tokens.append(t)
            causes.append(_COLD if run == 0 and keys else _HIT)
    return LruPass(hit_blocks, hit_tokens, 0, runs, tokens, causes, per_request and chained)
