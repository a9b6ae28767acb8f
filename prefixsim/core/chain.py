"""Chained digests: d0 names the cache a request's prefix lives in, d_i = H(d_{i-1} || key(block_i)).

Hashing is kept apart from storage (as vLLM keeps block hashes in `kv_cache_utils` and the blocks in
`block_pool`): a digest says which prefix a position holds, the store (core/store.py) only what was
written under it, when it became readable and when it expires.
"""
from __future__ import annotations

import xxhash

from prefixsim.model import Request

_h = xxhash.xxh3_128_digest
_LAYER_MARK = b"\x01layer"


def namespace_digest(provider: str, model: str, workspace: str = "", salt: str = "") -> bytes:
    """d0 = H(namespace): what separates caches (provider, model, workspace, cache salt)."""
    return _h("\0".join(("prefixsim/1", provider, model, workspace, salt)).encode())


def chain(d0: bytes, request: Request) -> list[bytes]:
    """d_i = H(d_{i-1} || key(block_i)), one digest per block boundary.

    A layer's invalidating parameters are mixed in where the chain enters that layer, before its
    first block (and before any later layer's first block when that layer is empty).
    """
    out: list[bytes] = []
    extend_chain(out, d0, request, 0)
    return out


def extend_chain(out: list[bytes], d0: bytes, request: Request, start: int) -> None:
    """Append the digests of `request.blocks[start:]` to `out`, which holds those of the first
    `start` blocks (blocks come in layer order, so the chain has entered the layer of block start-1)."""
    params = request.layer_params
    blocks = request.blocks
    d = out[start - 1] if start else d0
    entered = blocks[start - 1].layer if start else -1
    append = out.append
    for i in range(start, len(blocks)):
        b = blocks[i]
        layer = b.layer
        while entered < layer:
            entered += 1
            if params[entered]:
                d = _h(d + _LAYER_MARK + params[entered])
        d = _h(d + b.key)
        append(d)
