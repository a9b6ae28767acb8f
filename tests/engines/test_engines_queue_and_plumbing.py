"""Engine rules pinned with exact values (issue 22: mutation testing): the eviction queue both engines
use, and the request plumbing of engines/base.py.

SGLang `evict_policy.py` orders evictable leaves by lru (last access), lfu (hits, then last access)
or fifo (creation); vLLM's free queue is the lru case (docs/rules.md#vllm, docs/rules.md#sglang).
"""
import pytest

from prefixsim.engines.base import (
    DEFAULT_DECODE_TOKENS_PER_S,
    DEFAULT_PREFILL_TOKENS_PER_S,
    Served,
    committed_tokens,
    prefill_seconds,
    serve,
)
from prefixsim.engines.eviction import EVICTIONS, EvictionQueue
from prefixsim.engines.vllm import VllmCache
from prefixsim.errors import UserError


class Item:
    def __init__(self, name, last_access=0, created=0, hits=0):
        self.name, self.last_access, self.created, self.hits, self.qseq = name, last_access, created, hits, 0

    def __repr__(self):
        return self.name


def drain(q):
    out = []
    while (x := q.pop()) is not None:
        out.append(x.name)
    return out


def items():
    # name: (last access, created, hits)
    return [Item("a", 5, 1, 3), Item("b", 2, 4, 3), Item("c", 9, 2, 1), Item("d", 7, 3, 1)]


@pytest.mark.parametrize("policy,order", [
    ("lru", ["b", "a", "d", "c"]),      # last access 2, 5, 7, 9
    ("lfu", ["d", "c", "b", "a"]),      # hits 1 (access 7, 9), then hits 3 (access 2, 5)
    ("fifo", ["a", "c", "d", "b"])])    # created 1, 2, 3, 4
def test_each_policy_orders_by_its_key(policy, order):
    q = EvictionQueue(policy)
    for it in items():
        q.offer(it)
    assert q.policy == policy and len(q) == 4
    assert drain(q) == order
    assert len(q) == 0 and q.pop() is None


def test_ties_go_to_the_earlier_offer_and_a_reoffer_moves_an_item():
    q = EvictionQueue("lru")
    a, b, c = Item("a", 1), Item("b", 1), Item("c", 1)
    for it in (a, b, c):
        q.offer(it)
    q.offer(a)                      # offered again: now behind b and c on the same key
    assert len(q) == 3
    assert drain(q) == ["b", "c", "a"]
    assert (a.qseq, b.qseq, c.qseq) == (0, 0, 0)


def test_withdrawn_items_are_not_victims_until_offered_again():
    q = EvictionQueue("lru")
    a, b, c = Item("a", 1), Item("b", 2), Item("c", 3)
    for it in (a, b, c):
        q.offer(it)
    q.withdraw(a)
    q.withdraw(a)                   # twice: still one fewer candidate, not two
    assert len(q) == 2 and a.qseq == 0
    assert q.pop() is b
    a.last_access = 9
    q.offer(a)
    assert len(q) == 2
    assert drain(q) == ["c", "a"]
    q.withdraw(b)                   # not queued: nothing changes
    assert len(q) == 0


def test_many_stale_entries_keep_the_live_order():
    # withdrawing and re-offering leaves stale heap entries; past 2 x live + 1024 they are dropped
    q = EvictionQueue("lru")
    its = [Item(str(i), last_access=i) for i in range(10)]
    for it in its:
        q.offer(it)
    for rnd in range(300):
        for it in its[:5]:
            q.withdraw(it)
            it.last_access = 100 + rnd
            q.offer(it)
    assert len(q) == 10
    assert len(q._heap) <= 2 * 10 + 1024 + 1
    assert drain(q) == ["5", "6", "7", "8", "9", "0", "1", "2", "3", "4"]


def test_unknown_policy_is_named():
    assert EVICTIONS == ("lru", "lfu", "fifo")
    with pytest.raises(UserError, match=r"^unknown eviction policy 'mru' \(valid: lru, lfu, fifo\)$"):
        EvictionQueue("mru")
    assert EvictionQueue().policy == "lru"


def test_committed_tokens_are_prompt_and_output_but_its_last_token():
    assert committed_tokens([1, 2, 3], [7, 8, 9]) == [1, 2, 3, 7, 8]
    assert committed_tokens([1, 2, 3], [7]) == [1, 2, 3]
    assert committed_tokens((1, 2), ()) == [1, 2]


def test_serve_counts_hits_and_new_tokens():
    c = VllmCache(block_size=4)
    s = serve(c, list(range(10)), [100, 101, 102])      # committed: 10 + 2 = 12 tokens, 3 full blocks
    assert s == Served(10, 0, 12) and s.computed_tokens == 10
    s = serve(c, list(range(13)))                       # block 3 differs from token 10 on: 2 read
    assert (s.prompt_tokens, s.hit_tokens, s.stored_tokens, s.computed_tokens) == (13, 8, 4, 5)


def test_request_time_assumptions():
    assert DEFAULT_PREFILL_TOKENS_PER_S == 10_000.0 and DEFAULT_DECODE_TOKENS_PER_S == 50.0
    assert prefill_seconds(25_000, 10_000.0) == 2.5


def test_pseudo_ids_are_drawn_from_the_content_key_above_every_vocabulary():
    from prefixsim.engines.tokens import pseudo_ids

    a = pseudo_ids(b"key-a", 50)
    assert len(a) == 50 and a == pseudo_ids(b"key-a", 50)          # deterministic
    assert pseudo_ids(b"key-a", 20) == a[:20]                      # a shorter draw is a prefix
    assert all(2**32 <= x < 2**33 for x in a)
    assert not set(a) & set(pseudo_ids(b"key-b", 50))
    assert pseudo_ids(b"key-a", 0) == [] and pseudo_ids(b"key-a", -3) == []
    assert pseudo_ids(b"key-a", 1) == a[:1]


def test_block_ids_follow_the_runs_counts():
    from prefixsim.engines.tokens import BlockTokenIds, pseudo_ids
    from prefixsim.model import Block, Layer, Request

    ids = BlockTokenIds("approx")
    text = Block(Layer.SYSTEM, b"abcdefghij")                      # 10 characters: 3 pieces of <= 4
    got = ids.ids(text)
    assert len(got) == 3 and all(2**32 <= x < 2**33 for x in got)
    assert ids.ids(Block(Layer.SYSTEM, b"abcdXXXXij"))[0] == got[0]  # equal pieces, equal ids
    assert ids.ids(Block(Layer.SYSTEM, b"abcdXXXXij"))[1] != got[1]
    assert ids.ids(text, 3) == got                                 # the count agrees: the text's ids
    assert ids.ids(text, 5) == pseudo_ids(text.key, 5)             # it does not: content-derived ids
    sized = Block(Layer.SYSTEM, b"abcdefgh", tokens=2)                # fixed size: content ids even when
    assert ids.ids(sized) == pseudo_ids(sized.key, 2)               # the text happens to count the same
    bad = Block(Layer.SYSTEM, b"abcd\xff\xfeefgh")                    # not UTF-8: replaced, never an error
    assert len(ids.ids(bad)) == 3 and ids.ids(bad)[0] == got[0]
    fixed = Block(Layer.SYSTEM, b"x", tokens=4)
    assert ids.ids(fixed) == ids.ids(fixed, 99) == pseudo_ids(fixed.key, 4)   # a fixed size wins
    req = Request("m", (text, fixed))
    assert ids.request_ids(req) == got + pseudo_ids(fixed.key, 4)
    assert ids.request_ids(req, [5, 9]) == pseudo_ids(text.key, 5) + pseudo_ids(fixed.key, 4)
    assert ids.request_ids(req, [3, 7]) == got + pseudo_ids(fixed.key, 4)
    tik = BlockTokenIds()
    assert tik.encoding == "cl100k_base"
    assert tik.ids(Block(Layer.SYSTEM, b"hello world")) == [15339, 1917]   # cl100k_base ids
