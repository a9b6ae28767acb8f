"""vLLM v1 automatic prefix caching: chained block hashes over full token blocks, a pool of cached
blocks, and a free queue that evicts unreferenced blocks, chain tails first.

Facts (docs/rules.md#vllm; vllm-project/vllm `vllm/v1/core/kv_cache_utils.py`
@001cabc1, `vllm/v1/core/block_pool.py` @002f3491, `vllm/v1/core/kv_cache_manager.py`,
`docs/design/prefix_caching.md` @01ff8bff):
- block hash = H(parent hash, block token ids, extra keys); the first parent is NONE_HASH;
- only full blocks are hashed and cached, including blocks filled by generated tokens;
- extra keys: the LoRA name on every block, the cache salt on the first block only;
- a hit is capped at num_tokens - 1 (the last token is recomputed for its logits), block-aligned;
- unreferenced blocks wait in a free queue; a request frees its blocks in reverse order, so among
  blocks freed together the chain's tail is evicted first; allocation evicts from the head;
- a running request holds its blocks (ref count > 0, out of the free queue) until it finishes; its
  prompt blocks are cached when it is scheduled, its output's full blocks as decoding fills them, up
  to the tokens already fed back: prompt + output but the last token (`kv_cache_manager.py`
  @003df296 `allocate_slots` caps num_tokens_to_cache at request.num_tokens, `free`;
  `single_type_kv_cache_manager.py` @002f3491 `cache_blocks`, `free`);
- when no free block is left, a waiting request stays waiting and a running one preempts the
  lowest-priority running request (`vllm/v1/core/sched/scheduler.py` @00024d31 `schedule`).
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Hashable, Sequence

import xxhash

from prefixsim.engines.base import EngineKeys
from prefixsim.engines.eviction import EvictionQueue

DEFAULT_BLOCK_SIZE = 16  # vLLM `vllm/config/cache.py` DEFAULT_BLOCK_SIZE

# vLLM draws NONE_HASH at random per process unless PYTHONHASHSEED is set (`init_none_hash`);
# a fixed seed keeps prefixsim's output identical from run to run.
NONE_HASH = xxhash.xxh3_128_digest(b"prefixsim/vllm/NONE_HASH")


def extra_keys(keys: EngineKeys, index: int) -> bytes:
    """Extra hash input of block `index`: the LoRA name on every block, the cache salt on block 0
    only (vLLM `generate_block_hash_extra_keys`)."""
    out = b"\x00lora:" + keys.lora.encode() if keys.lora else b""
    if index == 0 and keys.salt:
        out += b"\x00salt:" + keys.salt.encode()
    return out


def hash_block(parent: bytes, tokens: Sequence[int], extra: bytes = b"") -> bytes:
    """One block's hash: H(parent hash, token ids, extra keys), as vLLM `hash_block_tokens`."""
    return xxhash.xxh3_128_digest(parent + array("q", tokens).tobytes() + extra)


def block_hashes(tokens: Sequence[int], block_size: int = DEFAULT_BLOCK_SIZE,
                 keys: EngineKeys = EngineKeys(), limit: int | None = None, *, start: int = 0,
                 parent: bytes = NONE_HASH) -> list[bytes]:
    """Chained hashes of the full blocks of `tokens` (at most `limit` blocks); a partial tail has none.

    With `start`, only blocks `start`, `start` + 1, ... are hashed, `parent` being the hash of block
    `start` - 1. Equal to folding `hash_block` over the blocks; the token bytes are packed once.
    """
    n = len(tokens) // block_size
    if limit is not None:
        n = min(n, limit)
    if n <= start:
        return []
    buf = array("q", tokens[start * block_size: n * block_size]).tobytes()
    width = 8 * block_size
    first, rest = extra_keys(keys, 0), extra_keys(keys, 1)
    h = xxhash.xxh3_128_digest
    out: list[bytes] = []
    for i in range(n - start):
        parent = h(parent + buf[i * width:(i + 1) * width] + (rest if i + start else first))
        out.append(parent)
    return out


@dataclass(slots=True, eq=False)
class _Block:
    key: Hashable
    last_access: int
    created: int
    hits: int = 0
    qseq: int = 0
    ref: int = 0


@dataclass(slots=True)
class BlockPool:
    """Cached blocks by chain hash, at most `capacity` blocks (None: unlimited).

    Works on any hashable block keys, so Mooncake `hash_ids` (already chained) replay through the
    same pool as vLLM's own hashes. vLLM's pool is LRU only; `eviction` also allows lfu / fifo.
    """

    capacity: int | None = None
    eviction: str = "lru"
    blocks: dict[Hashable, _Block] = field(default_factory=dict)
    evicted: set[Hashable] = field(default_factory=set)
    evictions: int = 0
    stored: int = 0  # blocks newly cached so far
    _queue: EvictionQueue = field(init=False)
    _clock: int = 0

    def __post_init__(self) -> None:
        self._queue = EvictionQueue(self.eviction)

    def __len__(self) -> int:
        return len(self.blocks)

    def run(self, keys: Sequence[Hashable]) -> int:
        """How many leading blocks are cached: the lookup stops at the first miss."""
        blocks = self.blocks
        n = 0
        for k in keys:
            if k not in blocks:
                break
            n += 1
        return n

    def store(self, keys: Sequence[Hashable]) -> list[int]:
        """A request holds the blocks `keys` and then frees them at once (`acquire` then `release`).
        Returns the indices of newly cached blocks; when the request alone exceeds the capacity,
        its chain is cut there."""
        held, missing = self.acquire(keys)
        self.release(held)
        return missing

    def acquire(self, keys: Sequence[Hashable]) -> tuple[list[_Block], list[int]]:
        """A running request takes the blocks `keys` (ref count + 1): cached ones are touched out of
        the free queue (a hit for LFU), missing ones allocated, evicting unreferenced blocks from the
        queue head when full. Held blocks cannot be evicted until `release`. Returns the held blocks
        (the chain's head when the pool cannot hold all of it) and the indices newly cached."""
        blocks, queue = self.blocks, self._queue
        self._clock += 1
        now = self._clock
        slots: list[_Block | None] = []
        missing: list[int] = []
        for i, k in enumerate(keys):
            b = blocks.get(k)
            if b is None:
                missing.append(i)
            else:
                b.hits += 1
                b.ref += 1
                queue.withdraw(b)  # vLLM `touch`: a hit block leaves the free queue
            slots.append(b)
        if self.capacity is not None and missing:
            room = self.capacity - len(blocks)
            if room < len(missing):
                room += self._evict_blocks(len(missing) - room)
            if room < len(missing):
                # Every other block is held by a running request: a full pool caches the chain's
                # head, not its tail (the engine would make the request wait; see `VllmCache`).
                missing = missing[:room]
        evicted = self.evicted
        self.stored += len(missing)
        for i in missing:
            k = keys[i]
            b = slots[i] = blocks[k] = _Block(k, now, now, ref=1)
            evicted.discard(k)
        return [b for b in slots if b is not None], missing

    def release(self, held: Sequence[_Block]) -> None:
        """A request ends and frees `held` in reverse chain order (vLLM `KVCacheManager.free`): the
        tail gets the oldest stamp, so among these blocks it is evicted first and the shared head
        survives longest. A block still held by another request stays out of the queue."""
        clock, blocks, queue = self._clock, self.blocks, self._queue
        for b in reversed(held):
            b.ref -= 1
            clock += 1
            b.last_access = clock
            if b.ref == 0 and self.capacity is not None and blocks.get(b.key) is b:
                queue.offer(b)
        self._clock = clock

    def rekey(self, old: Sequence[Hashable], new: Sequence[Hashable]) -> None:
        """Give cached blocks new keys in place (same recency, same holders): blocks cached under
        stand-in keys learn their real content. A block whose new key is already cached is dropped
        (the cached copy wins); one already evicted stays evicted."""
        blocks = self.blocks
        for o, n in zip(old, new):
            b = blocks.get(o)
            if b is None or o == n:
                continue
            del blocks[o]
            if n in blocks:
                if b.ref == 0:
                    self._queue.withdraw(b)
                continue
            b.key = n
            blocks[n] = b
            self.evicted.discard(n)

    def evict(self, n: int) -> int:
        """Evict up to `n` unreferenced blocks from the queue head; returns how many went."""
        return self._evict_blocks(n)

    def _evict_blocks(self, n: int) -> int:
        done = 0
        while done < n:
            b = self._queue.pop()
            if b is None:
                break
            del self.blocks[b.key]
            self.evicted.add(b.key)
            done += 1
        self.evictions += done
        return done


@dataclass(slots=True)
class _Hold:
    """A running request's prompt blocks: their hashes and the pool blocks it holds."""

    hashes: list[bytes]
    blocks: list[_Block]


@dataclass(frozen=True, slots=True)
class _Output:
    """The blocks a finished request's output filled: where they start in its chain, the hash before
    them and theirs."""

    start: int
    parent: bytes
    hashes: list[bytes]


class VllmCache:
    """vLLM's prefix cache over token ids: `block_size`-token blocks, `capacity` tokens (None: unlimited).

    The capacity counts cached full blocks only (capacity // block_size of them); the KV memory a
    running request's partial last block takes is not modelled. A running request holds its prompt
    blocks from `begin` to `end` (ref count > 0: never evicted); its output blocks are allocated at
    `end`, when the whole output is known. When every block is held, the pool caches the head of a
    new chain and drops its tail: vLLM would instead keep the request waiting (`allocate_slots`
    returns None) or preempt a running one; prefixsim serves requests at their own times.
    """

    name = "vllm"

    def __init__(self, capacity: int | None = None, block_size: int = DEFAULT_BLOCK_SIZE,
                 eviction: str = "lru") -> None:
        if block_size < 1:
            raise ValueError("block_size must be positive")
        self.capacity = capacity
        self.block_size = block_size
        self.pool = BlockPool(None if capacity is None else capacity // block_size, eviction)

    @property
    def used(self) -> int:
        return len(self.pool) * self.block_size

    @property
    def stored(self) -> int:
        return self.pool.stored * self.block_size

    def match(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Cached tokens for a prompt: whole blocks within the first n-1 tokens (`kv_cache_manager.py`
        caps the hit at num_tokens - 1 so the last token is recomputed for its logits)."""
        if len(tokens) < 2:
            return 0
        limit = (len(tokens) - 1) // self.block_size
        return self.pool.run(block_hashes(tokens, self.block_size, keys, limit)) * self.block_size

    def insert(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Cache the full blocks of a finished request's tokens; returns tokens newly cached."""
        return len(self.pool.store(block_hashes(tokens, self.block_size, keys))) * self.block_size

    def begin(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> tuple[int, _Hold]:
        """A request starts: its hit, then its prompt's full blocks are cached and held (vLLM caches
        them when the request is scheduled, so a request arriving while it runs can read them)."""
        hashes = block_hashes(tokens, self.block_size, keys)
        hit = self.pool.run(hashes[:max(len(tokens) - 1, 0) // self.block_size]) * self.block_size
        held, _ = self.pool.acquire(hashes)
        return hit, _Hold(hashes, held)

    def end(self, hold: _Hold, seq: Sequence[int], keys: EngineKeys = EngineKeys()) -> _Output:
        """The request finishes with `seq` = prompt + output as committed (`committed_tokens`): the
        full blocks its output filled are cached, then every block it held is freed, tail first."""
        start = len(hold.hashes)
        parent = hold.hashes[-1] if start else NONE_HASH
        hashes = block_hashes(seq, self.block_size, keys, start=start, parent=parent)
        out: list[_Block] = []
        if len(hold.blocks) == start:  # a prompt chain cut for capacity has no place for its output
            out, _ = self.pool.acquire(hashes)
        self.pool.release(hold.blocks + out)
        return _Output(start, parent, hashes)

    def rekey(self, output: _Output, seq: Sequence[int], keys: EngineKeys = EngineKeys()) -> None:
        """The output's real tokens became known after `end` (the next turn quotes them): the blocks
        cached under stand-in tokens take the real hashes, keeping their place in the free queue."""
        hashes = block_hashes(seq, self.block_size, keys, output.start + len(output.hashes), start=output.start,
                              parent=output.parent)
        self.pool.rekey(output.hashes, hashes)

    def evict(self, num_tokens: int) -> int:
        """Evict unreferenced blocks, chain tails and least recently freed first."""
        n = -(-num_tokens // self.block_size)
        return self.pool.evict(n) * self.block_size
