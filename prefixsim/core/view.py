"""A request's chain view (digests, running token totals, breakpoint marks, known positions), built
from the view of the request it follows so that its cost grows with its new blocks, not its history.

A stream's next request usually repeats the previous one's blocks (often the very same objects) and
appends a few. Equal leading blocks have equal token counts and marks, and equal leading block keys
(under the same namespace and layer parameters) have equal digests, so only the rest is computed.
The only history-sized work left is copying and comparing arrays of references in C.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass
from typing import Callable, Sequence, cast

from prefixsim.core.chain import extend_chain
from prefixsim.core.sharedseq import common_prefix, cut_known, share_list
from prefixsim.core.store import Store
from prefixsim.model import Block, Request


@dataclass(slots=True)
class View:
    """One request as the runner sees it. `digests` may be shared with the stream's later requests,
    which append to it: only its first `n` items are this request's. The lists may be PrefixLists
    sharing their leading items with another stream's (a fork's siblings), so N children sharing a
    long prefix hold it once (sharedseq)."""

    request: Request
    d0: bytes
    n: int
    digests: list[bytes]
    cum: list[int]
    marks: list[tuple[int, str]]   # (block index, ttl) of every cache_control marker
    ordered: bool                  # blocks come in layer order (render order), so chains can be extended
    store: Store
    known: list[int]               # positions whose digest the store knows (any state), ascending
    births: int                    # ... as of this many first writes in the store
    parting: int | None = None     # first position whose digest differs from the reference's
    extent: int = -1               # deepest position with a store entry after the request ran
    t: float = 0.0
    pinned: int = 0                # `digests` positions below this are read through the store's log
    lane: object = None            # the stream whose chain this is, as entered in the store (Store.enter)
    shared: int = 0                # `digests` positions below this are SHARED in the store (entered by 2+ lanes)


def equal_prefix(a: Sequence[Block], b: Sequence[Block]) -> int:
    """Length of the longest common prefix of two block sequences, by equality (compared in C,
    identity first; sequences sharing a base skip what they share: sharedseq.common_prefix)."""
    return common_prefix(a, b)


def _param_limit(old: Request, new: Request, n: int) -> int:
    """How many leading blocks can share digests given the two requests' layer parameters: those
    before the first layer whose parameters differ (they enter the chain where it enters that layer)."""
    if old.layer_params == new.layer_params:
        return n
    layer = next(i for i, (x, y) in enumerate(zip(old.layer_params, new.layer_params)) if x != y)
    blocks = new.blocks
    k = 0
    while k < n and blocks[k].layer < layer:
        k += 1
    return k


def view(req: Request, d0: bytes, ref: View | None, own: bool, count: Callable[[Block], int],
         store: Store, lane: object = None, base: View | None = None) -> View:
    """The view of `req` under namespace `d0`, reusing `ref` (the stream's previous request, or the
    request a fork descends from). `own`: ref is this stream's, so its digest list may be appended to.
    With `lane`, the chain is entered in the store under it (the positions ref's lane entered again
    only when ref is another lane's), so later reads and writes are told apart by lane.

    `base`: another stream's view to reuse instead of ref when it shares more leading blocks (a fork's
    previous child: the children share the parent's history and N placeholders, so each child costs
    its directive, not N blocks); ref still says where the request parted (`parting`)."""
    blocks = req.blocks
    n = len(blocks)
    back = ref   # where the request parted from, for the explanation
    if base is not None and base is not ref and base.store is store and base.ordered and base.d0 == d0:
        m_ref = equal_prefix(ref.request.blocks, blocks) if ref is not None and ref.ordered and ref.d0 == d0 else 0
        if equal_prefix(base.request.blocks, blocks) > m_ref:
            ref, own = base, False
    usable = ref is not None and ref.ordered and ref.d0 == d0
    m = equal_prefix(ref.request.blocks, blocks) if usable else 0   # type: ignore[union-attr]
    ordered = True
    prev = blocks[m - 1].layer if m else -1
    for i in range(m, n):
        if blocks[i].layer < prev:
            ordered = False
            break
        prev = blocks[i].layer
    if usable and ordered:
        rb = ref.request.blocks  # type: ignore[union-attr]
        limit = _param_limit(ref.request, req, min(ref.n, n))  # type: ignore[union-attr]
        md = min(m, limit)
        while md < limit and rb[md].key == blocks[md].key:
            md += 1
        if own and md >= ref.pinned and ref.n == len(ref.digests):  # type: ignore[union-attr]
            # The stream's list is cut past the common prefix and extended, not copied: the store's
            # read log keeps every list a read went through, only for positions below `pinned`, so a
            # copy per request (a request that replaces its tail) would pin one history per request.
            digests = ref.digests  # type: ignore[union-attr]
            del digests[md:]
        else:
            digests = share_list(ref.digests, md, not own)  # type: ignore[union-attr]
        extend_chain(digests, d0, req, md)
    else:
        digests = []
        extend_chain(digests, d0, req, 0)
        md = 0
        if ref is not None:
            top = min(ref.n, n)
            while md < top and ref.digests[md] == digests[md]:
                md += 1

    if own and ref is not None and type(ref.cum) is list:
        # The stream's own running totals are cut past the common prefix and extended, not copied
        # (a copy costs the whole history per request): nothing reads a view's totals once the
        # stream's next view is built (fork children copy or share theirs: share_list).
        cum = ref.cum
        del cum[m:]
    else:
        # a PrefixList stands in for the list (it takes the runner's appends and cuts): sharedseq
        cum = cast(list[int], share_list(ref.cum, m, not own)) if m else []  # type: ignore[union-attr]
    total = cum[-1] if cum else 0
    for i in range(m, n):
        total += count(blocks[i])
        cum.append(total)
    marks = [mk for mk in ref.marks if mk[0] < m] if m else []  # type: ignore[union-attr]
    marks += [(i, blocks[i].breakpoint) for i in range(m, n) if blocks[i].breakpoint]

    shared = 0
    if lane is not None:
        # Positions another lane's list gave (below md, or all without ref) are entered again unless
        # already SHARED; this lane's own list entered them before.
        mine = own and ref is not None and ref.lane == lane
        start = md if mine else min(ref.shared, md) if ref is not None else 0
        first = store.enter(lane, digests, start, n)
        shared = ref.shared if mine and ref.shared < md else first   # type: ignore[union-attr]
    known = _known(digests, n, md, ref if usable and ordered and ref.store is store else None,  # type: ignore[union-attr]
                   store, not own)
    pinned = ref.pinned if ref is not None and digests is ref.digests else 0
    if back is not ref and back is not None:
        top = min(back.n, n)
        md = common_prefix(back.digests, digests, top)
    ref = back
    parting = None
    if ref is not None:
        if md < min(ref.n, n):
            parting = md
        elif n < ref.n:
            parting = n
    return View(req, d0, n, digests, cum, marks, ordered, store, known, store.births, parting, pinned=pinned,
                lane=lane, shared=shared)


def _known(digests: list[bytes], n: int, md: int, ref: View | None, store: Store, across: bool) -> list[int]:
    """Positions of `digests[:n]` the store knows. Knowing is for ever (expired and evicted entries
    stay known), so the reference's known positions below `md` still hold; add the first writes since
    it looked that land on those positions, and look up the positions past `md`."""
    if ref is None:
        return [j for j in range(n) if store.known(digests[j])]
    if not across and type(ref.known) is list:   # the stream's own list, cut in place as `cum` is
        known = ref.known
        del known[bisect_left(known, md):]
    else:
        known = cast(list[int], cut_known(ref.known, md, across))   # a PrefixList stands in, as for `cum`
    if not note_births(known, digests, md, store, ref.births, ref.lane):
        return [j for j in range(n) if store.known(digests[j])]
    known += [j for j in range(md, n) if store.known(digests[j])]
    return known


def note_births(known: list[int], digests: list[bytes], n: int, store: Store, since: int,
                lane: object = None) -> bool:
    """Add to `known` the positions below `n` first written since `since`; False when a write did not
    say its position (then the caller looks everything up). `lane`: the lane that entered
    `digests[:n]` in the store before `since` (only its own and shared digests' first writes can land there)."""
    for d, depth in store.born_since(since, lane):
        if depth < 0:
            return False
        if depth < n and digests[depth] == d:
            insort(known, depth)
    return True
