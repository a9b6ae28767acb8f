"""One pass for a whole LRU capacity curve: the stack distance of every block access (Mattson et
al. 1970). `engines.lru` explains why the stack describes the block pool at a capacity (inclusion)
and when it does not (a long request reading past its first C blocks), and replays one capacity.
"""
from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, repeat
from operator import attrgetter
from typing import Hashable, Protocol, Sequence

_FAR = 1 << 62     # rank of a block never requested before: past every capacity
_KEYS = attrgetter("keys")
_CHUNK = 10        # live stamps are counted per 2**_CHUNK stamps, so a rank costs one short scan + one sum


class NotExact(Exception):
    """A request repeats a block key: only the block pool counts that as it does."""


class KeyedRequest(Protocol):
    keys: tuple[Hashable, ...]
    input_length: int


class Curve:
    """Stack distances of a whole trace: totals at any capacity the stack describes.

    A block read at unlimited capacity is read at capacity C when the largest rank up to it in its
    request is at most C; a cached block is kept (not stored again) at C when its own rank is at most
    C. Where a request's cached blocks lead and their ranks rise, the two are equal: `lead` holds
    them one by one and `seg_start` / `seg_end` as runs of consecutive ranks [start, end) (the blocks
    one earlier request freed together); other requests give `pm` (largest rank so far) and `ranks`
    apart. `partial` holds the blocks worth less than a block size of tokens, with what they lack;
    `diverge` the capacity intervals where a long request read past its first C blocks.
    """

    def __init__(self, bs: int, lead: list[int], seg_start: list[int], seg_end: list[int], pm: list[int],
                 ranks: list[int], partial: list[tuple[int, int]], lengths: list[int], distinct: int,
                 diverge: list[tuple[int, int]]) -> None:
        self.bs = bs
        self.lead, self.pm, self.ranks = sorted(lead), sorted(pm), sorted(ranks)
        self.seg_start, self.seg_end = seg_start, seg_end
        self.partial = partial
        self.lengths = lengths
        self.distinct = distinct
        self.diverge = diverge
        # Sorted, with running sums: a capacity's sums over runs and lengths are then two bisections
        # each (`at`), not a pass over every run and request per capacity.
        self._starts, self._ends, self._lens = sorted(seg_start), sorted(seg_end), sorted(lengths)
        self._start_sums, self._end_sums, self._len_sums = ([0, *accumulate(x)] for x in
                                                            (self._starts, self._ends, self._lens))

    def exact_at(self, capacity: int | None) -> bool:
        """Whether the stack describes a pool of `capacity` blocks (else replay it on its own)."""
        return capacity is None or not any(lo <= capacity <= hi for lo, hi in self.diverge)

    def at(self, capacity: int | None) -> tuple[int, int, int]:
        """(hit blocks, hit tokens, evictions) of a pool of `capacity` blocks (None: unlimited)."""
        assert self.exact_at(capacity)
        if capacity is None:
            hb = len(self.lead) + len(self.pm) + sum(self.seg_end) - sum(self.seg_start)
            return hb, hb * self.bs - sum(x for _, x in self.partial), 0
        c = capacity
        # Ranks of a run [start, end) at most c: min(end, c + 1) - start when start <= c. A run
        # ending at or below c + 1 starts below it (start < end): those add end - start, the others
        # that start at or below c add c + 1 - start.
        ns, ne = bisect_right(self._starts, c), bisect_right(self._ends, c + 1)
        runs = self._end_sums[ne] + (c + 1) * (ns - ne) - self._start_sums[ns]
        lead = bisect_right(self.lead, c) + runs
        hb = lead + bisect_right(self.pm, c)
        lack = sum(x for p, x in self.partial if p <= c)
        # Each request stores its missing blocks, its head only when it is longer than the pool;
        # whatever was stored and is not in the final pool (the top C of the stack) was evicted.
        nl = bisect_right(self._lens, c)
        stored = self._len_sums[nl] + c * (len(self._lens) - nl) - lead - bisect_right(self.ranks, c)
        return hb, hb * self.bs - lack, stored - min(c, self.distinct)


def lru_curve(requests: Sequence[KeyedRequest], block_size: int) -> Curve:
    """One pass over `requests` that ranks every block access in the LRU stack (raises `NotExact`
    when a request repeats a key).

    A block's rank before a request is the number of distinct blocks freed since it was last
    freed, itself included: with stamps in freeing order (the request's blocks get consecutive
    stamps, its tail the oldest), the live stamps (each block's latest) at or after its stamp. Live
    stamps are a bytearray, counted per chunk, so a rank is a short scan plus a sum over chunks.
    The stamps are handed out in order, so `now` alone says which are in use.

    A block's stamp is not written per block: each block records the request that freed it last
    (one shared int, no new int per block), and its stamp is that request's first stamp less its
    position there, found where it stands now when the ids chain (checked), else looked up.
    """
    bs = block_size
    lengths = list(map(len, map(_KEYS, requests)))
    total = sum(lengths)
    # Stamps not handed out yet are set too (one fill, not one write per request): a rank counted up
    # to the end of the current chunk takes off the `ahead` of them it met.
    chunks = (total >> _CHUNK) + 2
    live = bytearray(b"\x01") * (chunks << _CHUNK)
    cnt = [1 << _CHUNK] * chunks
    last: dict = {}         # block -> the request that freed it last
    get, note_all = last.get, last.update
    heads: list[int] = []   # a request's first block's stamp (its newest)
    lead: list[int] = []
    seg_start: list[int] = []
    seg_end: list[int] = []
    pm: list[int] = []
    ranks: list[int] = []
    zeros = memoryview(bytes(4096))
    partial: list[tuple[int, int]] = []
    diverge: list[tuple[int, int]] = []
    now = 0                 # the next stamp
    lcount = live.count

    def live_in(a: int, b: int) -> int:
        """Live stamps in [a, b)."""
        ca, cb = a >> _CHUNK, b >> _CHUNK
        if ca == cb:
            return lcount(1, a, b)
        return lcount(1, a, (ca + 1) << _CHUNK) + sum(cnt[ca + 1:cb]) + lcount(1, cb << _CHUNK, b)

    def stamp(k: Hashable, j: int, p: int) -> int:
        """The stamp request `j` gave block `k`, at position `p` in the current request."""
        ks = requests[j].keys
        if p >= len(ks) or ks[p] != k:
            p = ks.index(k)   # not chained: where it stood there (a block repeated raised before)
        return heads[j] - p

    for ri, (r, n) in enumerate(zip(requests, lengths)):
        keys = r.keys
        olds = list(map(get, keys))
        before = len(last)
        note_all(zip(keys, repeat(ri)))
        heads.append(now + n - 1)
        absent = olds.count(None)
        if len(last) - before != absent:
            raise NotExact
        nn = n - absent
        if nn:
            f = n if nn == n else olds.index(None)
            rk = None
            if f == nn:
                j = olds[0]
                ks = requests[j].keys
                t = heads[j] - (0 if ks[0] == keys[0] else ks.index(keys[0]))   # `stamp`, inline
                c = t >> _CHUNK
                cn = now >> _CHUNK
                ahead = ((cn + 1) << _CHUNK) - now
                r0 = lcount(1, t, (c + 1) << _CHUNK) - ahead + (sum(cnt[c + 1:cn + 1]) if c < cn else 0)
                if nn == 1:
                    live[t] = 0
                    cnt[c] -= 1
                    lead.append(r0)
                    rk = p = [r0]
                else:
                    j1 = olds[1]
                    t1 = heads[j1] - 1
                    if t1 < t and olds[1:nn].count(j1) == nn - 1 and keys[1:nn] == requests[j1].keys[1:nn]:
                        # the rest is one run of consecutive stamps (blocks one earlier request
                        # freed together, where they stand here; else `_leading_ranks` finds the
                        # run): their ranks are consecutive too
                        r1 = r0 + live_in(t1, t)
                        tl = t1 - nn + 2
                        live[t] = 0
                        cnt[c] -= 1
                        live[tl:t1 + 1] = zeros[:nn - 1] if nn <= 4097 else bytes(nn - 1)
                        if tl >> _CHUNK == t1 >> _CHUNK:
                            cnt[t1 >> _CHUNK] -= nn - 1
                        else:
                            for cc in range(tl >> _CHUNK, (t1 >> _CHUNK) + 1):
                                cnt[cc] -= min(t1 + 1, (cc + 1) << _CHUNK) - max(tl, cc << _CHUNK)
                        lead.append(r0)
                        seg_start.append(r1)
                        seg_end.append(r1 + nn - 1)
                        rk = lead
                        if f * bs > r.input_length:
                            n_in = r.input_length
                            for i in range(n_in // bs, f):
                                partial.append((r1 + i - 1 if i else r0, bs - max(0, min(bs, n_in - i * bs))))
                    else:
                        olds[:nn] = map(stamp, keys[:nn], olds[:nn], range(nn))
                        rk = _leading_ranks(olds, nn, t, r0, live, cnt, live_in)
                        if rk is not None:
                            # ranks rise by at least one a block from at least 1: none is at most its index
                            lead += rk
                            p = rk
            if rk is None:
                if f != nn:   # else stamped above
                    olds = [None if j is None else stamp(k, j, p) for p, (k, j) in enumerate(zip(keys, olds))]
                rk = _ranks(keys, olds, now, live, cnt, live_in)
                p = list(accumulate(rk, max))
                f = n if p[-1] < _FAR else next(i for i, x in enumerate(p) if x >= _FAR)
                pm += p[:f]
                ranks += (x for x in rk if x < _FAR)
                diverge += ((x, i) for i, x in enumerate(rk) if x <= i)
            if rk is not lead and f * bs > r.input_length:
                n_in = r.input_length
                for i in range(n_in // bs, f):
                    partial.append((p[i], bs - max(0, min(bs, n_in - i * bs))))
        now += n   # this request's blocks are the newest stamps now (already set)
    return Curve(bs, lead, seg_start, seg_end, pm, ranks, partial, lengths, len(last), diverge)


def _leading_ranks(olds: list, nn: int, t: int, r: int, live: bytearray, cnt: list[int],
                   live_in) -> list[int] | None:
    """Ranks of the leading `nn` (> 1) cached blocks, the first (stamp `t`) ranked `r`, when their
    stamps fall from head to tail (each request's head is its newest block), and their stamps
    retired; None (nothing retired) when they do not fall."""
    c = t >> _CHUNK
    t1 = olds[1]
    if t1 < t and olds[1:nn] == list(range(t1, t1 - nn + 1, -1)):
        # the rest is one run of consecutive stamps (the blocks one earlier request freed together)
        r1 = r + live_in(t1, t)
        tl = t1 - nn + 2
        live[t] = 0
        cnt[c] -= 1
        live[tl:t1 + 1] = bytes(nn - 1)
        for cc in range(tl >> _CHUNK, (t1 >> _CHUNK) + 1):
            cnt[cc] -= min(t1 + 1, (cc + 1) << _CHUNK) - max(tl, cc << _CHUNK)
        return [r, *range(r1, r1 + nn - 1)]
    out = [r]
    prev = t
    for t in olds[1:nn]:
        if t >= prev:
            return None     # nothing retired yet: the general path starts from the same state
        r += 1 if prev - t == 1 else live_in(t, prev)
        out.append(r)
        prev = t
    for t in olds[:nn]:
        live[t] = 0
        cnt[t >> _CHUNK] -= 1
    return out


def _ranks(keys: Sequence[Hashable], olds: list, now: int, live: bytearray, cnt: list[int], live_in) -> list[int]:
    """Ranks of every block of a request in any order (_FAR for new ones), and their stamps retired."""
    if len(set(keys)) != len(keys):
        raise NotExact
    order = sorted((t, i) for i, t in enumerate(olds) if t is not None)
    rk = [_FAR] * len(keys)
    r = 0
    prev = now
    for t, i in reversed(order):    # newest stamp first
        r += live_in(t, prev)
        rk[i] = r
        prev = t
    for t, _ in order:
        live[t] = 0
        cnt[t >> _CHUNK] -= 1
    return rk
