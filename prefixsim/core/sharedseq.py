"""Sequences that share their leading items with another one: `base[:k] + tail`.

A fork's N children each send the parent's history, the spawning call and N placeholder results
before their own directive. Held as flat tuples and lists, every child's request, digest chain and
running token totals would hold all of that again: N children would cost N x N references. Held as
a reference to one shared base plus a short own tail, they cost what is their own. This is the
shape of a radix tree's shared path (SGLang's radix_cache) or vLLM's hash chain, where a block
names its parent instead of repeating it, kept to one level: a base is a flat tuple or list that
nothing ever changes, so reading an item is one comparison and one index.

`PrefixTuple` stands in for a request's block tuple (immutable, equal and hashing as the tuple it
holds); `PrefixList` for the per-request lists the runner builds (digests, running totals, known
positions): its tail can be appended to and cut, its base never changes.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import chain, islice
from typing import Any

#: Below this many shared items a plain copy costs less than the indirection on every read.
MIN_SHARED = 64


def _item(seq: "PrefixTuple | PrefixList", i: int) -> Any:
    """Item `i` (negative counts from the end) of a `base[:k] + tail` sequence."""
    k = seq.k
    if i < 0:
        i += k + len(seq.tail)
        if i < 0:
            raise IndexError(f"{type(seq).__name__} index out of range")
    return seq.base[i] if i < k else seq.tail[i - k]


class PrefixTuple(Sequence):
    """`base[:k] + tail` as one immutable sequence that compares and hashes as that tuple. The base
    is a tuple, or a list its owner only appends to (a Claude Code stream's blocks: appending
    leaves every `base[:k]` as it was)."""

    __slots__ = ("base", "k", "tail")

    def __init__(self, base: tuple | list, k: int, tail: tuple) -> None:
        assert type(base) in (tuple, list) and 0 <= k <= len(base) and type(tail) is tuple
        self.base, self.k, self.tail = base, k, tail

    def __len__(self) -> int:
        return self.k + len(self.tail)

    def __getitem__(self, i: Any) -> Any:
        if type(i) is int:
            return _item(self, i)
        return self.flat()[i]

    def __iter__(self):
        return chain(islice(self.base, self.k), self.tail)

    def __reversed__(self):
        return chain(reversed(self.tail), islice(reversed(self.base), len(self.base) - self.k, None))

    def flat(self) -> tuple:
        """The items as one tuple (a copy)."""
        base = self.base
        if isinstance(base, tuple):
            return (base if self.k == len(base) else base[:self.k]) + self.tail
        return (*base[:self.k], *self.tail)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, PrefixTuple)):
            return len(self) == len(other) and common_prefix(self, other) == len(self)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.flat())

    def __add__(self, other: object) -> tuple:
        if isinstance(other, (tuple, PrefixTuple)):
            return self.flat() + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple:
        if isinstance(other, tuple):
            return other + self.flat()
        return NotImplemented

    def __repr__(self) -> str:
        return repr(self.flat())

    def __reduce__(self):
        return (PrefixTuple, (self.base, self.k, self.tail))


class PrefixList(Sequence):
    """`base[:k] + tail` as one list whose tail can grow and be cut; the base is never changed
    (other PrefixLists may share it), so cutting into it only shortens `k`."""

    __slots__ = ("base", "k", "tail")

    def __init__(self, base: list | tuple, k: int, tail: list | None = None) -> None:
        assert 0 <= k <= len(base)
        self.base, self.k, self.tail = base, k, [] if tail is None else tail

    def __len__(self) -> int:
        return self.k + len(self.tail)

    def __getitem__(self, i: Any) -> Any:
        if type(i) is int:
            return _item(self, i)
        if type(i) is slice and i.step is None and (i.start or 0) == 0 and i.stop is not None \
                and 0 <= i.stop <= self.k:
            return list(self.base[:i.stop])
        return self.flat()[i]

    def __iter__(self):
        return chain(islice(self.base, self.k), self.tail)

    def __reversed__(self):
        return chain(reversed(self.tail), islice(reversed(self.base), len(self.base) - self.k, None))

    def flat(self) -> list:
        """The items as one list (a copy)."""
        return list(self.base[:self.k]) + self.tail

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, PrefixList)):
            return len(self) == len(other) and common_prefix(self, other) == len(self)
        return NotImplemented

    __hash__ = None   # type: ignore[assignment]   # mutable, as a list

    def __repr__(self) -> str:
        return repr(self.flat())

    def __reduce__(self):
        return (PrefixList, (self.base, self.k, self.tail))

    # --- the mutations the runner makes ----------------------------------------------------------
    def append(self, x: Any) -> None:
        self.tail.append(x)

    def extend(self, xs: Any) -> None:
        self.tail.extend(xs)

    def __iadd__(self, xs: Any) -> "PrefixList":
        self.tail.extend(xs)
        return self

    def insert(self, i: int, x: Any) -> None:
        """Insert before position `i` (bisect.insort calls this); inside the base the items are
        taken into the tail first, the base itself stays as it is."""
        if i < 0:
            i = max(i + len(self), 0)
        if i < self.k:
            self.tail = list(self.base[i:self.k]) + self.tail
            self.k = i
        self.tail.insert(i - self.k, x)

    def __delitem__(self, i: Any) -> None:
        if type(i) is not slice or i.step is not None or i.stop is not None:
            raise TypeError("PrefixList only cuts its end: del seq[n:]")
        start = 0 if i.start is None else i.start
        if start < 0:
            start = max(start + len(self), 0)
        if start >= self.k:
            del self.tail[start - self.k:]
        else:
            self.k, self.tail = start, []


_SHARING = (PrefixTuple, PrefixList)


#: Trailing positions `common_prefix` looks at one by one before comparing the rest at once.
TAIL = 4


def common_prefix(a: Sequence, b: Sequence, stop: int | None = None) -> int:
    """Length of the longest common prefix of two sequences, by equality. Two sharing sequences
    skip the part they hold in common by reference; the rest is compared as tuples or lists, in C
    and identity first: all at once, and when it differs, galloping back from the end (a request
    that appends, or moves its last marker, costs one or two comparisons), then bisecting. With
    `stop`, only the first `stop` items count."""
    n = min(len(a), len(b)) if stop is None else min(len(a), len(b), stop)
    skip = 0
    if isinstance(a, _SHARING) and isinstance(b, _SHARING) and a.base is b.base:
        skip = min(a.k, b.k, n)
    elif isinstance(a, _SHARING) and b is a.base:
        skip = min(a.k, n)
    elif isinstance(b, _SHARING) and a is b.base:
        skip = min(b.k, n)
    if skip == n:
        return n
    # A stream's next request usually differs from the previous one in its last few blocks (an
    # appended turn, a moved marker, a replaced tail): look at those one by one, then compare
    # everything before them at once, so the usual request costs one copy and one comparison.
    w = n - TAIL if n - skip > TAIL else skip
    first = n
    for i in range(n - 1, w - 1, -1):
        p, q = a[i], b[i]
        if p is not q and p != q:
            first = i
    if w == skip:
        return first
    x, y = _window(a, skip, w), _window(b, skip, w)
    if x == y:
        return first
    n = w - skip
    lo, hi, step = 0, n, 1
    while True:
        k = max(hi - step, 0)
        if x[:k] == y[:k]:
            lo = k
            break
        hi, step = k, step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if x[:mid] == y[:mid]:
            lo = mid
        else:
            hi = mid
    return skip + lo


def _window(s: Sequence, start: int, stop: int) -> tuple:
    """`s[start:stop]` as a tuple, by slicing (in C) rather than by iterating."""
    if type(s) is tuple:
        return s if start == 0 and stop == len(s) else s[start:stop]
    if type(s) is list:
        return tuple(s[start:stop])
    k = s.k   # type: ignore[attr-defined]
    head = s.base[start:min(stop, k)] if start < k else ()   # type: ignore[attr-defined]
    tail = s.tail[max(start - k, 0):max(stop - k, 0)] if stop > k else ()   # type: ignore[attr-defined]
    return tuple(head) + tuple(tail)


def share_tuple(items: list | tuple, like: Sequence | None) -> tuple | PrefixTuple:
    """`items` as a tuple that shares its leading items with `like` (a request sent before) where
    they agree on at least MIN_SHARED items and the rest is no longer than the shared part; else
    a plain tuple. Equal items are taken from `like`'s base: they are equal values, and one copy
    serves every request that repeats them."""
    if like is None or len(items) < MIN_SHARED:
        return tuple(items)
    m = common_prefix(like, items)
    if isinstance(like, PrefixTuple):
        base, k = like.base, min(m, like.k)
    elif type(like) is tuple:
        base, k = like, m
    else:
        return tuple(items)
    if k < MIN_SHARED or len(items) - k > k:
        return tuple(items)
    return PrefixTuple(base, k, tuple(items[k:]))


def share_list(src: list | PrefixList, k: int, across: bool = True) -> list | PrefixList:
    """The first `k` items of `src` as a new list that can be appended to and cut. Past MIN_SHARED
    items it shares them: with a PrefixList's base when they lie in it, else with a copy made once
    (a plain list's owner may cut and extend it in place, so its items cannot be referred to).
    `across` False: `src` is the same stream's list, a plain one is sliced as before (a stream's
    next request shares nothing with its own old list that the runner keeps, and a plain list reads
    fastest); a PrefixList is still shared (a fork child's later turns)."""
    if k < MIN_SHARED or (not across and type(src) is list):
        return src[:k] if type(src) is list else list(islice(src, k))
    if isinstance(src, PrefixList):
        if k <= src.k:
            return PrefixList(src.base, k)
        return PrefixList(src.flat()[:k], k)
    return PrefixList(src[:k], k)


def cut_known(known: list | PrefixList, below: int, across: bool = True) -> list | PrefixList:
    """The ascending positions of `known` that are below `below`, sharing them as share_list does."""
    return share_list(known, bisect_left(known, below), across)
