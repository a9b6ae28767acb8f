"""vLLM block pool and SGLang radix tree rules pinned with exact values (issue 22: mutation testing).
Each test is written from docs/rules.md#vllm and docs/rules.md#sglang, not from today's output."""
from prefixsim.engines.vllm import VllmCache


def test_vllm_evicts_whole_blocks_for_a_token_count():
    c = VllmCache(capacity=64, block_size=4)
    c.insert(list(range(16)))                      # 4 full blocks, freed at once
    assert c.evict(5) == 8                         # 5 tokens need 2 whole blocks
    assert c.used == 8 and c.pool.evictions == 2
    assert c.evict(4) == 4 and c.evict(100) == 4   # then 1 block; then the last one left
    assert c.used == 0 and c.evict(1) == 0


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
