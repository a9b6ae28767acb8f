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
