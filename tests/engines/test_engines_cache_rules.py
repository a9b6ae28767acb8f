"""vLLM block pool and SGLang radix tree rules pinned with exact values (issue 22: mutation testing).
Each test is written from docs/rules.md#vllm and docs/rules.md#sglang, not from today's output."""
import pytest

from prefixsim.engines.vllm import VllmCache


def test_vllm_evicts_whole_blocks_for_a_token_count():
    c = VllmCache(capacity=64, block_size=4)
    c.insert(list(range(16)))                      # 4 full blocks, freed at once
    assert c.evict(5) == 8                         # 5 tokens need 2 whole blocks
    assert c.used == 8 and c.pool.evictions == 2
    assert c.evict(4) == 4 and c.evict(100) == 4   # then 1 block; then the last one left
    assert c.used == 0 and c.evict(1) == 0
    assert c.pool.evictions == 4 and c.pool.evicted == set(c.pool.evicted) and len(c.pool.evicted) == 4


def test_sglang_common_prefix_at_any_offset():
    from prefixsim.engines.sglang import _common

    node = (1, 2, 3, 4, 5, 6, 7, 8)
    assert _common(node, [1, 2, 3, 4, 5, 6, 7, 8, 9], 0) == 8     # the whole node
    assert _common(node, [0, 0, 1, 2, 3], 2) == 3                 # the key runs out first
    for k in range(8):                                            # first difference at each place
        key = [9, *node[:k], -1, *node[k + 1:]]
        assert _common(node, key, 1) == k
    assert _common(node, [1, 2, 3], 3) == 0 and _common((), [1], 0) == 0


def test_sglang_pages_split_and_match_page_by_page():
    from prefixsim.engines.sglang import RadixCache

    c = RadixCache(page_size=2)
    assert c.insert([1, 2, 3, 4, 5, 6, 7]) == 6                    # whole pages only
    assert c.match([1, 2, 3, 9, 9]) == 2                           # page (3, 4) differs
    assert c.insert([1, 2, 3, 4, 8, 8]) == 2                       # splits after 4 tokens
    assert c.match([1, 2, 3, 4, 5, 6, 0]) == 6                     # the tail still found by its page
    assert c.match([1, 2, 3, 4, 8, 8, 0]) == 6
    assert c.match([1, 2, 3, 4, 5]) == 4 and c.used == 8


def test_vllm_one_token_blocks_keep_the_last_token_uncached():
    import pytest

    c = VllmCache(block_size=1)
    c.insert([5, 6, 7])
    assert c.match([5, 6]) == 1 and c.match([5]) == 0 and c.match([]) == 0
    hit, _ = c.begin([5])                          # a one-token prompt recomputes its only token
    assert hit == 0
    hit, _ = c.begin([5, 6, 7])
    assert hit == 2
    with pytest.raises(ValueError, match="^block_size must be positive$"):
        VllmCache(block_size=0)


def test_vllm_rekey_keeps_recency_and_drops_a_duplicate():
    from prefixsim.engines.vllm import BlockPool

    p = BlockPool(capacity=2)
    p.store(["a"])
    p.store(["z"])
    p.rekey(["a"], ["b"])                          # a's block is b now, still older than z
    assert set(p.blocks) == {"b", "z"}
    p.store(["c"])
    assert set(p.blocks) == {"z", "c"} and p.evicted == {"b"}
    p.rekey(["z"], ["c"])                          # c is already cached: z's block is dropped
    assert set(p.blocks) == {"c"}
    held, _ = p.acquire(["y"])
    p.rekey(["y"], ["c"])                          # dropped while a request holds it
    p.release(held)
    assert set(p.blocks) == {"c"}
    assert p.evict(5) == 1 and p.blocks == {}      # only c was left to evict
    p.rekey(["c"], ["d"])                          # already evicted: stays evicted
    assert p.blocks == {} and p.run(["d"]) == 0


def test_sglang_evicts_whole_leaves_until_enough_is_freed():
    from prefixsim.engines.sglang import RadixCache

    c = RadixCache(capacity=10)
    for seq in ([1, 2], [3, 4], [5, 6]):
        c.insert(seq)
    assert c.evict(3) == 4                        # two 2-token leaves, the least recent first
    assert c.used == 2 and c.evictions == 2
    assert c.match([5, 6, 0]) == 2 and c.match([1, 2, 0]) == 0
    assert c.evict(1) == 2 and c.evictions == 3 and c.evict(1) == 0


def test_serve_uses_the_requests_keys_for_prompt_and_output():
    from prefixsim.engines import EngineKeys, serve
    from prefixsim.engines.sglang import RadixCache

    keys = EngineKeys(lora="adapter", salt="s")
    for c in (VllmCache(block_size=4), RadixCache()):
        serve(c, list(range(8)), [50, 51, 52, 53, 54], keys)   # committed: 8 + 4 tokens
        assert c.match(list(range(8)) + [50, 51, 52, 53, 99], keys) == 12
        assert c.match(list(range(8)) + [50, 51, 52, 53, 99]) == 0


def test_both_caches_count_tokens_newly_stored():
    import pytest

    from prefixsim.engines.sglang import RadixCache

    s, v = RadixCache(), VllmCache(block_size=4)
    assert s.stored == v.stored == s.used == v.used == 0
    s.insert([1, 2, 3, 4, 5]), v.insert([1, 2, 3, 4, 5])
    s.insert([1, 2, 3, 4, 5, 6, 7, 8, 9]), v.insert([1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert (s.stored, v.stored) == (9, 8)         # tokens; vLLM whole blocks only
    with pytest.raises(ValueError, match="^page_size must be positive$"):
        RadixCache(page_size=0)


@pytest.mark.parametrize("policy,kept", [("lru", 1), ("fifo", 0)])
def test_vllm_cache_passes_its_eviction_policy_to_the_pool(policy, kept):
    c = VllmCache(capacity=2, block_size=1, eviction=policy)
    assert (c.capacity, c.block_size) == (2, 1)
    c.insert([7])
    c.insert([8])
    c.insert([7])                 # 7's block is freed again: the more recent (lru), yet created first (fifo)
    c.insert([9])
    assert c.match([7, 0]) == kept and c.used == 2
