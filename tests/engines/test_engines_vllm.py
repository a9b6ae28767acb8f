"""vLLM block-pool semantics on small hand-made token sequences (docs/rules.md#vllm)."""
import pytest

from prefixsim.engines import EngineKeys, VllmCache, serve
from prefixsim.engines.vllm import NONE_HASH, BlockPool, block_hashes, extra_keys, hash_block

A = list(range(1000, 1048))   # 3 full 16-token blocks
B = list(range(2000, 2032))   # 2 full blocks


def test_only_full_blocks_are_cached():
    c = VllmCache(block_size=16)
    assert serve(c, list(range(35))).stored_tokens == 32  # 2 full blocks, 3-token tail dropped
    assert c.used == 32
    assert c.match(list(range(35))) == 32
    assert c.match(list(range(20)) + [-1] * 15) == 16      # parts in block 2: block-aligned hit


@pytest.mark.parametrize("n,hit", [(32, 16), (33, 32), (48, 32), (49, 48)])
def test_hit_capped_at_prompt_length_minus_one(n, hit):
    c = VllmCache(block_size=16)
    c.insert(list(range(64)))
    # A full hit must still recompute the last token, so a prompt ending on a block edge loses a block.
    assert c.match(list(range(n))) == hit


def test_chain_hash_is_parent_tokens_extra():
    keys = EngineKeys(lora="adapter-a", salt="tenant-1")
    hs = block_hashes(A, 16, keys)
    assert hs[0] == hash_block(NONE_HASH, A[:16], extra_keys(keys, 0))
    assert hs[1] == hash_block(hs[0], A[16:32], extra_keys(keys, 1))
    assert hs[2] == hash_block(hs[1], A[32:48], extra_keys(keys, 2))


def test_salt_on_first_block_only_lora_on_every_block():
    keys = EngineKeys(lora="adapter-a", salt="tenant-1")
    assert b"tenant-1" in extra_keys(keys, 0) and b"adapter-a" in extra_keys(keys, 0)
    for i in (1, 2, 7):
        assert b"tenant-1" not in extra_keys(keys, i)
        assert b"adapter-a" in extra_keys(keys, i)
    assert extra_keys(EngineKeys(), 0) == b""


@pytest.mark.parametrize("a,b,shared", [
    (EngineKeys(salt="x"), EngineKeys(salt="x"), 32),
    (EngineKeys(salt="x"), EngineKeys(salt="y"), 0),
    (EngineKeys(lora="l1"), EngineKeys(lora="l2"), 0),
    (EngineKeys(), EngineKeys(lora="l1"), 0),
])
def test_keys_separate_caches(a, b, shared):
    c = VllmCache(block_size=16)
    c.insert(A, a)
    assert c.match(A, b) == shared


def test_freed_chain_tail_is_evicted_first():
    c = VllmCache(capacity=64, block_size=16)  # 4 blocks
    c.insert(A)
    c.insert(B)  # needs 2 blocks, 1 free: evicts A's tail block, not its head
    assert c.used == 64
    assert c.match(A + [0]) == 32


def test_least_recently_freed_request_goes_first():
    c = VllmCache(capacity=80, block_size=16)  # 5 blocks
    c.insert(A)
    c.insert(B)
    serve(c, A + [0])              # A is used again: B is now the older one
    c.insert(list(range(3000, 3032)))
    assert c.match(A + [0]) == 48 and c.match(B + [0]) == 0


def test_a_prompt_longer_than_the_cache_keeps_its_head():
    c = VllmCache(capacity=32, block_size=16)
    assert c.insert(A) == 32
    assert c.match(A + [0]) == 32


def test_capacity_never_exceeded_and_evict_frees_blocks():
    c = VllmCache(capacity=100, block_size=16)  # 6 blocks
    for k in range(20):
        c.insert(list(range(k * 100, k * 100 + 40)))
        assert c.used <= 96
    assert c.evict(20) == 32 and c.used == 64


@pytest.mark.parametrize("policy,survivor", [("lru", "a"), ("lfu", "a"), ("fifo", "b")])
def test_pool_eviction_policies(policy, survivor):
    p = BlockPool(capacity=2, eviction=policy)
    p.store(["a"])
    p.store(["b"])
    p.store(["a"])  # a: newer access (lru) and more uses (lfu), but created first (fifo)
    p.store(["c"])
    assert survivor in p.blocks and len(p) == 2


def test_block_hashes_from_a_later_block_continue_the_chain():
    from prefixsim.engines.vllm import block_hashes

    keys = EngineKeys(lora="a", salt="s")
    tokens = list(range(100))
    full = block_hashes(tokens, 16, keys)
    assert block_hashes(tokens, 16, keys, start=2, parent=full[1]) == full[2:]
    assert block_hashes(tokens, 16, keys, 4, start=2, parent=full[1]) == full[2:4]
    assert block_hashes(tokens, 16, keys, start=6, parent=full[5]) == []
