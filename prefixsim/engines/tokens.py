"""Token ids for rendered blocks: engines match token ids, while prefixsim's blocks carry bytes.

Text is tokenized with a tiktoken encoding (bundled offline, `prefixsim.core.tokens.load_encoding`)
or, for "approx", cut into 4-character pieces (the chars/4 estimate, so the counts agree). Blocks
with a fixed `tokens=` size, and blocks whose count the run took from another tokenizer, get
pseudo ids drawn from the block's content key: equal blocks get equal ids, different blocks share
none, so block-level prefix sharing is exact even without text.
"""
from __future__ import annotations

import random
from array import array
from typing import Sequence

import xxhash

from prefixsim.core.tokens import load_encoding
from prefixsim.model import Block, Request

_PSEUDO = 1 << 32  # pseudo ids sit above any real vocabulary, so they never equal a real token


def pseudo_ids(key: bytes, n: int) -> list[int]:
    """`n` deterministic ids derived from a block's content key."""
    if n <= 0:
        return []
    bits = random.Random(key).getrandbits(32 * n)
    return [_PSEUDO + x for x in array("I", bits.to_bytes(4 * n, "little"))]


class BlockTokenIds:
    """Token ids per block, memoized by block content (a history block recurs in every later turn)."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.encoding = encoding
        self._enc = None
        self._memo: dict[tuple[bytes, int | None], list[int]] = {}

    def _text_ids(self, text: str) -> list[int]:
        if self.encoding == "approx":
            h = xxhash.xxh3_64_intdigest
            return [_PSEUDO + h(text[i:i + 4].encode()) % _PSEUDO for i in range(0, len(text), 4)]
        if self._enc is None:
            self._enc = load_encoding(self.encoding)
        return self._enc.encode_ordinary(text)

    def ids(self, block: Block, n: int | None = None) -> list[int]:
        """Ids of `block`; `n` is the token count the run gave it, which the ids must match."""
        if block.tokens is not None:
            n = block.tokens
        memo_key = (block.key, n)
        out = self._memo.get(memo_key)
        if out is None:
            out = [] if block.tokens is not None else self._text_ids(block.data.decode("utf-8", errors="replace"))
            if n is not None and len(out) != n:
                out = pseudo_ids(block.key, n)
            self._memo[memo_key] = out
        return out

    def request_ids(self, request: Request, cum: Sequence[int] | None = None) -> list[int]:
        """All prompt ids of `request`; with `cum` (running token totals per block) each block has
        exactly the count the run assigned it."""
        out: list[int] = []
        prev = 0
        for j, b in enumerate(request.blocks):
            n = None if cum is None else cum[j] - prev
            out += self.ids(b, n)
            if cum is not None:
                prev = cum[j]
        return out
