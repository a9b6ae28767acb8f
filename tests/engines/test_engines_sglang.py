"""SGLang radix-cache semantics on small hand-made token sequences (docs/rules.md#sglang)."""
import pytest

from prefixsim.engines import EngineKeys, RadixCache, serve


def shape(node, depth=0):
    """The tree as nested (key, [children]) sorted, to assert splits."""
    return sorted((c.key, shape(c)) for c in node.children.values())


def test_match_splits_node_where_it_ends():
    c = RadixCache()
    c.insert([1, 2, 3, 4, 5])
    assert c.match([1, 2, 3, 9, 9]) == 3
    assert shape(c.root) == [((1, 2, 3), [((4, 5), [])])]
    c.insert([1, 2, 3, 9, 9])
    assert shape(c.root) == [((1, 2, 3), [((4, 5), []), ((9, 9), [])])]
    assert c.used == 7


def test_token_granular_match_and_cap():
    c = RadixCache()
    c.insert(list(range(10)))
    assert c.match(list(range(7)) + [99]) == 7   # a 16-token vLLM block would give 0
    assert c.match(list(range(10))) == 9         # input_len - 1
    assert c.match([0]) == 0


def test_page_size_truncates_keys():
    c = RadixCache(page_size=4)
    assert c.insert(list(range(10))) == 8
    assert c.match(list(range(6)) + [99, 99, 99]) == 4
    assert c.match(list(range(9))) == 8


def test_finished_request_inserts_prompt_and_output_but_the_last_token():
    # cache_finished_req inserts (input + output)[:kv_committed_len]: the last sampled token has no KV
    c = RadixCache()
    r = serve(c, [1, 2, 3], output=[4, 5])
    assert (r.hit_tokens, r.stored_tokens) == (0, 4)
    assert c.match([1, 2, 3, 4, 5, 6]) == 4


def test_extra_key_namespaces():
    c = RadixCache()
    c.insert([1, 2, 3, 4], EngineKeys(lora="a"))
    assert c.match([1, 2, 3, 4, 5], EngineKeys(lora="b")) == 0
    assert c.match([1, 2, 3, 4, 5], EngineKeys(lora="a")) == 4
    assert c.match([1, 2, 3, 4, 5], EngineKeys(lora="a", salt="s")) == 0


def test_only_leaves_are_evicted_and_parents_follow():
    c = RadixCache(capacity=6)
    c.insert([1, 2, 3, 4])
    c.insert([1, 2, 5, 6])   # root -> (1,2) -> {(3,4), (5,6)}
    c.insert([7, 8])         # evicts leaf (3,4), the least recent; inner (1,2) stays
    assert shape(c.root) == [((1, 2), [((5, 6), [])]), ((7, 8), [])]
    c.insert([9, 10])        # evicts (5,6): (1,2) is now a childless leaf, so a candidate
    c.insert([11, 12])       # ... and goes next, before the newer (7,8)
    assert shape(c.root) == [((7, 8), []), ((9, 10), []), ((11, 12), [])]
    assert c.used == 6


def test_insert_never_evicts_its_own_path():
    c = RadixCache(capacity=4)
    c.insert([1, 2, 3, 4])
    assert c.insert([1, 2, 3, 4, 5, 6]) == 0     # the path is locked and nothing else is evictable
    assert c.match([1, 2, 3, 4, 5]) == 4 and c.used == 4


@pytest.mark.parametrize("policy,order,victim", [
    # A used twice, then B inserted: LRU and FIFO drop A (older access / older), LFU drops B (no hits)
    ("lru", "AAB", "A"), ("lfu", "AAB", "B"), ("fifo", "AAB", "A"),
    # A, B inserted, then A used: LRU and LFU drop B, FIFO still drops A (created first)
    ("lru", "BA", "B"), ("lfu", "BA", "B"), ("fifo", "BA", "A"),
])
def test_eviction_policy_is_a_key(policy, order, victim):
    seqs = {"A": [1, 2, 3, 4], "B": [5, 6, 7, 8]}
    c = RadixCache(capacity=8, eviction=policy)
    c.insert(seqs["A"])
    for step in order:
        if step == "A":
            assert c.match(seqs["A"] + [0]) == 4
        else:
            c.insert(seqs["B"])
    c.insert([9, 10, 11, 12])
    gone = [name for name, s in seqs.items() if c.match(s + [0]) == 0]
    assert gone == [victim]


def test_capacity_never_exceeded():
    c = RadixCache(capacity=50)
    for k in range(30):
        serve(c, [k % 3] * 5 + list(range(k * 7, k * 7 + 20)), output=[k] * 3)
        assert c.used <= 50
