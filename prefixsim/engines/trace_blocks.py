"""Which block sizes an engine trace's hash ids can have been made with.

A trace names each request's input by hash ids, one per block of `block size` tokens: ceil(n / B)
of them for n input tokens (the last block partial), or floor(n / B) where a tool hashes full blocks
only. Replaying with another B reinterprets the ids' unit: the 14 ids of a 6,758-token request read
as 100,000-token blocks would be 1.4 M tokens, and the hit rate is then a number about no cache at
all. So a block size a caller gives is checked against every request before anything is replayed:
it must give every request its number of ids under one of the two counts.
"""
from __future__ import annotations

from typing import Iterable, Protocol

from prefixsim.errors import UserError


class _Request(Protocol):
    request_id: str
    input_length: int
    hash_ids: tuple[int, ...]


def ceil_fits(block_size: int, input_length: int, ids: int) -> bool:
    return -(-input_length // block_size) == ids


def floor_fits(block_size: int, input_length: int, ids: int) -> bool:
    return input_length // block_size == ids


def first_misfit(requests: Iterable[_Request], block_size: int) -> _Request | None:
    """None when every request has ceil(n / B) hash ids, or every one floor(n / B); else the first
    request that does not (under the count that fits more of the first requests)."""
    first = {}
    for rule in (ceil_fits, floor_fits):
        for r in requests:
            if not rule(block_size, r.input_length, len(r.hash_ids)):
                first[rule] = r
                break
        else:
            return None
    return first[ceil_fits]


def fitting_range(requests: Iterable[_Request]) -> tuple[int, int | None]:
    """(lowest, highest) block size giving every request ceil(n / B) ids (highest None: no upper
    bound; lowest > highest: none). n tokens in k ids: n / k <= B < n / (k - 1)."""
    low, high = 1, None
    for r in requests:
        n, k = r.input_length, len(r.hash_ids)
        if k == 0:
            if n:
                return 2, 1
            continue
        low = max(low, -(-n // k))
        if k >= 2:
            top = -(-n // (k - 1)) - 1
            high = top if high is None else min(high, top)
    return low, high


def check_block_size(requests: tuple[_Request, ...], given: int, native: int, fmt: str,
                     option: str = "--block-size") -> None:
    """Refuse `given` (a block size a caller asked for) when the hash ids cannot be blocks of that size,
    naming the first request that shows it and the block size the trace's format has (`native`)."""
    if given < 1:
        raise UserError(f"{option} {given}: a block holds at least 1 token")
    if given == native:
        return
    r = first_misfit(requests, given)
    if r is None:
        return
    made = -(-r.input_length // given)
    if first_misfit(requests, native) is None:
        own = f"this {fmt} trace's hash ids are {native}-token blocks (that size fits every request); leave {option} out"
    else:
        low, high = fitting_range(requests)
        sizes = ("no block size fits every request" if high is not None and low > high else
                 f"block sizes from {low:,} to {high:,} fit every request" if high is not None else
                 f"block sizes from {low:,} up fit every request")
        own = f"the {fmt} block size, {native}, does not fit it either; {sizes}"
    raise UserError(f"{option} {given} does not fit this trace: {r.request_id} has {r.input_length:,} input tokens "
                    f"in {len(r.hash_ids):,} hash ids, which {given}-token blocks would make {made:,}; {own}")
