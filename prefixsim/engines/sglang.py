"""SGLang's RadixCache: a radix tree over token ids, evicting unlocked leaves by a policy key.

Facts (docs/rules.md#sglang; sgl-project/sglang `python/sglang/srt/mem_cache/radix_cache.py`
@006b0e3d, `evict_policy.py`, `managers/schedule_batch.py`):
- token-granular matching (page size 1 by default); with a larger page size keys are truncated to
  whole pages and compared page by page;
- `extra_key` (LoRA, cache salt) namespaces the tree: child keys carry it, so nothing is shared
  across keys;
- `match_prefix` splits a node where the match ends and refreshes access times on the path;
- eviction takes leaves with lock_ref == 0 in policy order (lru default, lfu, fifo); a parent left
  childless becomes a candidate, so eviction eats a branch from its tip;
- a match is capped at input_len - 1 (`_compute_max_prefix_len`);
- after its prefill a request's prompt is inserted and its path locked (`cache_unfinished_req`,
  called from `scheduler_output_processor_mixin.py` @004ec010 "so others can match"); when it
  finishes, `cache_finished_req` inserts `(origin_input_ids + output_ids)[:kv_committed_len]`
  (prompt + output but the last token) and `dec_lock_ref` unlocks the path (`radix_cache.py`
  @006b0e3d);
- a request that does not fit waits in the queue (`schedule_policy.py` PrefillAdder counts only
  free and evictable tokens); a decoding batch out of memory retracts requests and frees their KV
  without inserting it (`schedule_batch.py` @fd3907ee `retract_decode`).
"""
from __future__ import annotations

from typing import Hashable, Sequence

from prefixsim.engines.base import EngineKeys
from prefixsim.engines.eviction import EvictionQueue


class _Node:
    __slots__ = ("key", "ckey", "children", "parent", "lock", "last_access", "created", "hits", "qseq")

    def __init__(self, key: tuple[int, ...], ckey: Hashable, parent: "_Node | None", now: int) -> None:
        self.key = key
        self.ckey = ckey  # this node's key in its parent's children: (extra key, first token or page)
        self.children: dict[Hashable, _Node] = {}
        self.parent = parent
        self.lock = 0
        self.last_access = now
        self.created = now
        self.hits = 0
        self.qseq = 0


def _common(a: tuple[int, ...], b: Sequence[int], start: int) -> int:
    """Length of the common prefix of `a` and `b[start:]`, comparing slices in C where possible."""
    n = min(len(a), len(b) - start)
    if tuple(b[start:start + n]) == a[:n]:
        return n
    lo, hi = 0, n  # binary search on prefix equality: O(n log n) in C instead of O(n) in Python
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tuple(b[start:start + mid]) == a[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class RadixCache:
    """SGLang's radix prefix cache over token ids, holding at most `capacity` tokens (None: unlimited)."""

    name = "sglang"

    def __init__(self, capacity: int | None = None, page_size: int = 1, eviction: str = "lru") -> None:
        if page_size < 1:
            raise ValueError("page_size must be positive")
        self.capacity = capacity
        self.page_size = page_size
        self._queue = EvictionQueue(eviction)
        self._clock = 0
        self.root = _Node((), None, None, 0)
        self.root.lock = 1  # as in SGLang: the root is never evicted
        self._used = 0
        self._stored = 0
        self.evictions = 0

    @property
    def used(self) -> int:
        return self._used

    @property
    def stored(self) -> int:
        return self._stored

    def _child_key(self, extra: tuple[str, str], key: Sequence[int], i: int) -> Hashable:
        p = self.page_size
        return (extra, key[i] if p == 1 else tuple(key[i:i + p]))

    def _aligned(self, n: int) -> int:
        return n - n % self.page_size

    def _walk(self, key: Sequence[int], extra: tuple[str, str], now: int) -> tuple[_Node, int]:
        """Descend as far as `key` matches, splitting the node where the match ends; refreshes the
        access time of every node on the path. Returns the deepest matched node and tokens matched."""
        node, i = self.root, 0
        while i < len(key):
            child = node.children.get(self._child_key(extra, key, i))
            if child is None:
                break
            m = self._aligned(_common(child.key, key, i))
            if m < len(child.key):
                head = self._split(child, m)
                head.last_access = now
                return head, i + m
            child.last_access = now
            node, i = child, i + m
        return node, i

    def _split(self, child: _Node, m: int) -> _Node:
        """Cut `child` after `m` tokens: a new inner node takes the head, `child` keeps the tail."""
        parent = child.parent
        assert parent is not None
        head = _Node(child.key[:m], child.ckey, parent, child.last_access)
        head.created, head.hits, head.lock = child.created, child.hits, child.lock
        parent.children[head.ckey] = head
        child.key = child.key[m:]
        child.ckey = (child.ckey[0], child.key[0] if self.page_size == 1 else child.key[:self.page_size])
        child.parent = head
        head.children[child.ckey] = child
        return head

    def _settle(self, node: _Node) -> None:
        """Queue `node` if it is an evictable leaf (unlocked, childless, not the root), else unqueue it."""
        if node.lock == 0 and not node.children:
            self._queue.offer(node)
        else:
            self._queue.withdraw(node)

    def match(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Tokens of a prompt found in the tree, within the first input_len - 1 tokens, page-aligned."""
        key = tokens[: self._aligned(max(len(tokens) - 1, 0))]
        if not key:
            return 0
        self._clock += 1
        node, matched = self._walk(key, (keys.lora, keys.salt), self._clock)
        n = node
        while n is not self.root:
            n.hits += 1
            n = n.parent  # type: ignore[assignment]
        if node is not self.root:
            self._settle(node)  # its access time changed: requeue at its new position
        return matched

    def insert(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Insert a finished request's tokens (page-aligned); returns tokens newly stored. When the
        cache is full, unlocked leaves off this path are evicted; what still does not fit is dropped."""
        return self._insert(tokens, keys)[0]

    def _insert(self, tokens: Sequence[int], keys: EngineKeys) -> tuple[int, _Node, int]:
        """`insert`, also returning the node the inserted key ends at and where the new leaf starts."""
        key = tokens[: self._aligned(len(tokens))]
        if not key:
            return 0, self.root, 0
        extra = (keys.lora, keys.salt)
        self._clock += 1
        now = self._clock
        node, i = self._walk(key, extra, now)
        if node is not self.root:
            self._settle(node)
        new = len(key) - i
        if new == 0:
            return 0, node, i
        if self.capacity is not None:
            room = self.capacity - self._used
            if room < new:
                self._lock(node)  # the request's own path is in use (SGLang `inc_lock_ref`)
                room += self.evict(new - room)
                self._unlock(node)
            new = min(new, self._aligned(max(room, 0)))
            if new == 0:
                return 0, node, i
        leaf = _Node(tuple(key[i:i + new]), self._child_key(extra, key, i), node, now)
        node.children[leaf.ckey] = leaf
        self._queue.withdraw(node)  # it has a child now
        self._used += new
        self._stored += new
        self._settle(leaf)
        return new, leaf, i

    def begin(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> tuple[int, _Node]:
        """A request starts: its hit, then its prompt is inserted and its path locked until `end`
        (after prefill the scheduler calls `cache_unfinished_req`, which inserts the prompt and
        moves the request's lock to its new last node; locked nodes are never evicted)."""
        hit = self.match(tokens, keys)
        _, node, _ = self._insert(tokens, keys)
        self._lock(node)
        return hit, node

    def end(self, hold: _Node, seq: Sequence[int], keys: EngineKeys = EngineKeys()) -> tuple[_Node, int] | None:
        """The request finishes with `seq` = prompt + output as committed: `cache_finished_req`
        inserts it, then `dec_lock_ref` unlocks the prompt's path. Returns the output's leaf and
        where it starts in `seq` (None when nothing new was stored)."""
        new, leaf, start = self._insert(seq, keys)
        self._unlock(hold)
        return (leaf, start) if new else None

    def rekey(self, output: tuple[_Node, int] | None, seq: Sequence[int], keys: EngineKeys = EngineKeys()) -> None:
        """The output's real tokens became known after `end`: the leaf stored under stand-in tokens
        takes the real ones, keeping its place in the eviction order. A leaf already evicted stays
        evicted; when a sibling already starts with the real tokens, the leaf is dropped and the
        real tokens inserted, so they merge with it."""
        if output is None:
            return
        leaf, start = output
        parent = leaf.parent
        if parent is None or parent.children.get(leaf.ckey) is not leaf or leaf.children:
            return
        real = tuple(seq[start:start + len(leaf.key)])
        extra = leaf.ckey[0]
        ckey = self._child_key(extra, real, 0)
        del parent.children[leaf.ckey]
        if ckey in parent.children:
            self._queue.withdraw(leaf)
            leaf.parent = None
            self._used -= len(leaf.key)
            if parent is not self.root:
                self._settle(parent)
            self.insert(seq[:start + len(real)], keys)
            return
        leaf.key, leaf.ckey = real, ckey
        parent.children[ckey] = leaf

    def evict(self, num_tokens: int) -> int:
        """Evict unlocked leaves in policy order until `num_tokens` are freed; returns tokens freed
        (whole nodes go, so it can be more)."""
        freed = 0
        while freed < num_tokens:
            leaf = self._queue.pop()
            if leaf is None:
                break
            parent = leaf.parent
            assert parent is not None and not leaf.children and leaf.lock == 0
            del parent.children[leaf.ckey]
            leaf.parent = None
            self._used -= len(leaf.key)
            freed += len(leaf.key)
            self.evictions += 1
            if parent is not self.root:
                self._settle(parent)  # a parent left childless becomes a candidate
        return freed

    def _lock(self, node: _Node) -> None:
        while node is not self.root:
            node.lock += 1
            self._queue.withdraw(node)
            node = node.parent  # type: ignore[assignment]

    def _unlock(self, node: _Node) -> None:
        while node is not self.root:
            node.lock -= 1
            if node.lock == 0:
                self._settle(node)
            node = node.parent  # type: ignore[assignment]
