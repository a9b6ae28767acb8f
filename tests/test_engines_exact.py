"""Trace replay, LRU capacity curves, multi-node routing, Mooncake export and `make_cache` on small
traces counted by hand from the rules (docs/rules.md#engine-traces-mooncake-bailian): a request reads
its leading cached run, hit tokens = min(run x block size, input_length), a pool of C tokens holds
C // block size blocks, a request frees its blocks tail first, and the least recently freed go first.

These are the exact, fast checks the mutation runs use (the real Mooncake trace tests are too slow
to re-run per mutant); each number below is worked out in the comment beside it.
"""
import json

import pytest

from prefixsim.engines import ENGINES, make_cache
from prefixsim.engines.cluster import ROUTINGS, Router, compare_routings, render_cluster_text, replay_cluster
from prefixsim.engines.export import export_mooncake
from prefixsim.engines.sglang import RadixCache
from prefixsim.engines.trace import Trace, TraceRequest
from prefixsim.engines.vllm import VllmCache
from prefixsim.errors import UserError
from prefixsim.model import Block, Call, Layer, Request

BS = 4


def trace_of(*requests: tuple[list, int], bs: int = BS, t0: float = 0.0) -> Trace:
    """Requests (keys, input_length), one a second from `t0`, each with output_length 1."""
    return Trace("mooncake", bs, tuple(TraceRequest(f"r{i}", t0 + i, n_in, 1, tuple(keys), tuple(range(len(keys))), "s")
                                       for i, (keys, n_in) in enumerate(requests)))


def rates(requests, hit_rate, block_hit_rate, hit_tokens):
    return {"requests": requests, "hit_rate": hit_rate, "block_hit_rate": block_hit_rate, "hit_tokens": hit_tokens}


# --- cluster: local nodes against one pooled cache -------------------------------------------------

def test_round_robin_unlimited_local_and_global_by_hand():
    # Round robin on 2 nodes: r0, r2 on node 0; r1, r3 on node 1. Each request extends the last.
    t = trace_of(([1, 2], 8), ([1, 2, 3], 12), ([1, 2, 3, 4], 16), ([1, 2, 3, 4], 15))
    r = replay_cluster(t, nodes=2, capacity=None)
    # node 0: r0 cold, r2 reads [1, 2] (8 tokens); node 1: r1 cold, r3 reads [1, 2, 3] (12)
    # global: r1 reads 2 blocks (8), r2 3 (12), r3 4 = min(16, 15) = 15 tokens
    assert r == {"nodes": 2, "routing": "round_robin", "capacity_per_node_tokens": None, "block_size": 4,
                 "eviction": "lru",
                 "local": {**rates(4, 0.392157, 0.384615, 20),               # 20 / 51, 5 / 13 blocks
                           "per_node": [rates(2, 0.333333, 0.333333, 8),     # 8 / 24, 2 / 6
                                        rates(2, 0.444444, 0.428571, 12)]},  # 12 / 27, 3 / 7
                 "global": rates(4, 0.686275, 0.692308, 35)}                 # 35 / 51, 9 / 13


def test_global_pool_is_every_nodes_whole_blocks():
    # 10 tokens a node of 4-token blocks: 2 blocks a node, so the pooled cache holds 2 x 2 = 4.
    t = trace_of(([1, 2], 8), ([3, 4], 8), ([5], 4), ([1, 2], 8), ([1], 4))
    r = replay_cluster(t, nodes=2, capacity=10, routing="round_robin")
    # node 0 (r0, r2, r4): r2 evicts 2 (r0 freed its tail first), so r4 reads 1. node 1 (r1, r3): no hit.
    # global (4 blocks, freed order 2 1 4 3): r2 evicts 2; r3 reads 1 (not 2) and evicts 4; r4 reads 1.
    # A pool of 5 would have kept 2 for r3 (12 hit tokens, not 8).
    assert r["local"] == {**rates(5, 0.125, 0.125, 4),
                          "per_node": [rates(3, 0.25, 0.25, 4), rates(2, 0.0, 0.0, 0)]}
    assert r["global"] == rates(5, 0.25, 0.25, 8)
    assert (r["capacity_per_node_tokens"], r["block_size"]) == (10, 4)


def test_a_given_block_size_overrides_the_traces():
    # 8-token blocks: 10 tokens hold 1 block a node, 2 pooled. Round robin puts r1 on node 1 (cold);
    # globally r1 reads block 1 = 8 tokens.
    t = trace_of(([1, 2], 16), ([1, 3], 16))
    r = replay_cluster(t, nodes=2, capacity=10, block_size=8)
    assert r["block_size"] == 8
    assert r["global"] == rates(2, 0.25, 0.25, 8)   # 8 / 32 tokens, 1 / 4 blocks
    assert r["local"]["hit_tokens"] == 0


def test_least_loaded_routes_by_prefill_work_lowest_index_on_ties():
    # load = uncached tokens computed. r0 -> 0 (load 8); r1 -> 1 (12); r2 -> 2 (16); r3 -> 0 (8, lowest):
    # reads [1, 2], computes 0; r4 -> 0 (8): reads 2 blocks, computes 12 -> 20; r5 -> 1 (12) -> 16;
    # r6 -> 1 (16, tie with node 2, lower index): reads [1, 2, 3] = 12 tokens.
    t = trace_of(([1, 2], 8), ([1, 2, 3], 12), ([1, 2, 3, 4], 16), ([1, 2], 8), ([1, 2, 3, 4, 5], 20),
                 ([9], 4), ([1, 2, 3], 12))
    r = replay_cluster(t, nodes=3, capacity=None, routing="least_loaded")
    assert [(n["requests"], n["hit_tokens"]) for n in r["local"]["per_node"]] == [(3, 16), (3, 12), (1, 0)]


def test_least_loaded_router_load_is_the_sum_of_computed_tokens():
    router = Router("least_loaded", 3)
    router.done(0, 5)
    router.done(0, 2)
    router.done(2, 6)
    assert router.load == [7, 0, 6]
    assert router.pick(None) == 1
    router.done(1, 7)
    assert router.pick(None) == 2      # loads 7, 7, 6
    router.done(2, 1)
    assert router.pick(None) == 0      # 7, 7, 7: the lowest index


def test_round_robin_router_cycles():
    router = Router("round_robin", 3)
    assert [router.pick(None) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]


@pytest.mark.parametrize("prefix_blocks,same", [(2, True), (3, False)])
def test_prefix_hash_routes_by_the_first_prefix_blocks(prefix_blocks, same):
    # 64 nodes: requests sharing the hashed head meet on one node; with the third block hashed too
    # [1, 2, 3] and [1, 2, 4] go apart (they land on different nodes for these keys).
    router = Router("prefix_hash", 64, prefix_blocks)
    a, b = trace_of(([1, 2, 3], 12), ([1, 2, 4], 12)).requests
    assert (router.pick(a) == router.pick(b)) is same


def test_prefix_hash_default_is_two_blocks_and_keeps_their_history_local():
    t = trace_of(([1, 2, 3], 12), ([1, 2, 4], 12), ([1, 2, 4, 5], 16))
    r = replay_cluster(t, nodes=64, capacity=None, routing="prefix_hash")
    # all three share [1, 2]: one node; r1 reads 2 blocks (8), r2 reads 3 (12) - as the global pool
    assert r["local"]["hit_tokens"] == r["global"]["hit_tokens"] == 20
    assert sorted(n["requests"] for n in r["local"]["per_node"] if n["requests"]) == [3]


def test_router_refuses_unknown_routing_and_no_nodes():
    with pytest.raises(UserError, match=r"^unknown routing 'rand' \(valid: round_robin, prefix_hash, least_loaded\)$"):
        Router("rand", 2)
    with pytest.raises(UserError, match="^need at least one node$"):
        Router("round_robin", 0)
    assert Router("round_robin", 1).nodes == 1


def test_compare_routings_passes_eviction_and_block_size(tmp_path):
    t = trace_of(([1, 2], 16), ([1, 3], 16))
    out = compare_routings(t, 2, 10, eviction="fifo", block_size=8)
    assert [r["routing"] for r in out] == list(ROUTINGS)
    assert {(r["eviction"], r["block_size"], r["nodes"], r["capacity_per_node_tokens"]) for r in out} == {("fifo", 8, 2, 10)}
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps({"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}) + "\n"
                 + json.dumps({"timestamp": 5, "input_length": 700, "hash_ids": [1, 2]}) + "\n")
    # from a file: Mooncake 512-token blocks; r1 reads 2 blocks = min(1024, 700) globally
    assert [r["global"]["hit_tokens"] for r in compare_routings(p, 1, None)] == [700, 700, 700]
    assert replay_cluster(p, 1, None)["global"]["hit_tokens"] == 700


def test_cluster_table_by_hand():
    def result(routing, nodes, cap, lh, gh, lb, gb):
        return {"routing": routing, "nodes": nodes, "capacity_per_node_tokens": cap,
                "local": {"hit_rate": lh, "block_hit_rate": lb}, "global": {"hit_rate": gh, "block_hit_rate": gb}}
    text = render_cluster_text([result("round_robin", 2, None, 0.392157, 0.686275, 0.384615, 0.692308),
                                result("least_loaded", 12, 1234567, 0.125, 0.25, 0.0, 1.0)])
    assert text.splitlines() == [
        "     routing  nodes  capacity/node  local hit  global hit  local blocks  global blocks",
        "------------  -----  -------------  ---------  ----------  ------------  -------------",
        " round_robin      2      unlimited     39.22%      68.63%        38.46%         69.23%",
        "least_loaded     12      1,234,567     12.50%      25.00%         0.00%        100.00%",
        "hit = hit tokens / input tokens (token-weighted); global = one pool of nodes x capacity",
    ]


# --- export: a replay written as a Mooncake trace --------------------------------------------------

def request(model="m", salt="", workspace="", *blocks):
    return Request(model, tuple(blocks), workspace=workspace, cache_salt=salt)


SYS = Block(Layer.SYSTEM, b"system", tokens=3)
U1 = Block(Layer.MESSAGES, b"user one", tokens=2)
U2 = Block(Layer.MESSAGES, b"user two", tokens=3)


def lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_export_calls_by_hand(tmp_path):
    # 2-token blocks. A = SYS + U1 (5 tokens: blocks [s s] [s u] [u], the last partial),
    # B = SYS + U2 (6: [s s] [s v] [v v]) shares A's first block only, C = A on another model shares
    # nothing. Written in time order (C at 1.0 s first), ids numbered by first appearance.
    a = Call(2.5, request("m", "", "", SYS, U1), output_tokens=7)
    b = Call(4.0, request("m", "", "", SYS, U2))
    c = Call(1.0, request("other", "", "", SYS, U1))
    p = tmp_path / "out.jsonl"
    assert export_mooncake([a, b, c], p, block_size=2) == 3
    assert lines(p) == [
        {"timestamp": 0, "input_length": 5, "output_length": 0, "hash_ids": [0, 1, 2]},
        {"timestamp": 1500, "input_length": 5, "output_length": 7, "hash_ids": [3, 4, 5]},
        {"timestamp": 3000, "input_length": 6, "output_length": 0, "hash_ids": [3, 6, 7]},
    ]


def test_export_namespace_separates_salt_and_workspace(tmp_path):
    calls = [Call(0, request("m", "", "", SYS, U1)), Call(1, request("m", "s1", "", SYS, U1)),
             Call(2, request("m", "", "w1", SYS, U1)), Call(3, request("m", "", "", SYS, U1))]
    p = tmp_path / "out.jsonl"
    export_mooncake(calls, p, block_size=2)
    assert [x["hash_ids"] for x in lines(p)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 1, 2]]


def test_export_default_block_is_512_tokens(tmp_path):
    big = Block(Layer.SYSTEM, b"long", tokens=1025)   # 512 + 512 + 1: three ids
    p = tmp_path / "out.jsonl"
    export_mooncake([Call(0, request("m", "", "", big))], p)
    assert lines(p) == [{"timestamp": 0, "input_length": 1025, "output_length": 0, "hash_ids": [0, 1, 2]}]


def test_export_text_blocks_with_an_encoding(tmp_path):
    # approx: 4 characters a token; "abcdefgh" + "abcdijkl": tokens [abcd efgh] vs [abcd ijkl]
    one = Block(Layer.SYSTEM, b"abcdefgh")
    two = Block(Layer.SYSTEM, b"abcdijkl")
    p = tmp_path / "out.jsonl"
    export_mooncake([Call(0, request("m", "", "", one)), Call(1, request("m", "", "", two))], p,
                    block_size=1, encoding="approx")
    assert [(x["input_length"], x["hash_ids"]) for x in lines(p)] == [(2, [0, 1]), (2, [0, 2])]


def test_export_mixes_trace_requests_and_mooncake_dicts(tmp_path):
    # dicts carry ms, trace requests seconds; t0 is the earliest (1.0 s); output_length defaults to 0
    items = [{"timestamp": 2500, "input_length": 1000, "hash_ids": [7, 8]},
             {"timestamp": 1000, "input_length": 600, "output_length": 3, "hash_ids": [7]},
             TraceRequest("r", 3.25, 10, 2, ("a", "b"), (0, 1), "s")]
    p = tmp_path / "out.jsonl"
    assert export_mooncake(items, p) == 3
    assert lines(p) == [
        {"timestamp": 0, "input_length": 600, "output_length": 3, "hash_ids": [0]},
        {"timestamp": 1500, "input_length": 1000, "output_length": 0, "hash_ids": [0, 1]},
        {"timestamp": 2250, "input_length": 10, "output_length": 2, "hash_ids": [2, 3]},
    ]


def test_export_of_nothing_writes_an_empty_file(tmp_path):
    p = tmp_path / "out.jsonl"
    assert export_mooncake([], p) == 0
    assert p.read_text() == ""


# --- make_cache ------------------------------------------------------------------------------------

def test_make_cache_defaults_are_the_engines():
    v = make_cache("vllm")
    assert isinstance(v, VllmCache) and (v.capacity, v.block_size, v.pool.eviction) == (None, 16, "lru")
    s = make_cache("sglang")
    assert isinstance(s, RadixCache) and (s.capacity, s.page_size, s._queue.policy) == (None, 1, "lru")
    assert ENGINES == ("vllm", "sglang")


def test_make_cache_passes_capacity_block_size_and_eviction():
    v = make_cache("vllm", 64, block_size=8, eviction="fifo")
    assert (v.capacity, v.block_size, v.pool.capacity, v.pool.eviction) == (64, 8, 8, "fifo")
    s = make_cache("sglang", 64, block_size=4, eviction="lfu")
    assert (s.capacity, s.page_size, s._queue.policy) == (64, 4, "lfu")
    with pytest.raises(UserError, match=r"^unknown engine 'trt' \(valid: vllm, sglang\)$"):
        make_cache("trt")


def test_cluster_pools_use_the_given_eviction():
    # One node of 2 blocks: r2 reads 1 again. LRU then evicts 2 for r3 and r4 reads 1; FIFO evicts 1
    # (stored first) and r4 misses. Local and global pools are both 2 blocks here.
    t = trace_of(([1], 4), ([2], 4), ([1], 4), ([3], 4), ([1], 4))
    lru = replay_cluster(t, nodes=1, capacity=8, eviction="lru")
    fifo = replay_cluster(t, nodes=1, capacity=8, eviction="fifo")
    assert (lru["local"]["hit_tokens"], lru["global"]["hit_tokens"]) == (8, 8)
    assert (fifo["local"]["hit_tokens"], fifo["global"]["hit_tokens"]) == (4, 4)


def test_replay_cluster_passes_prefix_blocks_and_the_router_defaults_to_two():
    # [1, 2, 3] and [1, 2, 4] share two leading blocks, not three: hashing three parts them on 64 nodes
    t = trace_of(([1, 2, 3], 12), ([1, 2, 4], 12))
    three = replay_cluster(t, nodes=64, capacity=None, routing="prefix_hash", prefix_blocks=3)
    assert (three["local"]["hit_tokens"], three["global"]["hit_tokens"]) == (0, 8)
    router = Router("prefix_hash", 64)
    assert router.prefix_blocks == 2 and router.pick(t.requests[0]) == router.pick(t.requests[1])


def test_export_tokenizes_text_with_cl100k_by_default(tmp_path):
    # cl100k_base: "hello world" is 2 tokens ("hello", " world")
    p = tmp_path / "out.jsonl"
    export_mooncake([Call(0, request("m", "", "", Block(Layer.SYSTEM, b"hello world")))], p)
    assert lines(p) == [{"timestamp": 0, "input_length": 2, "output_length": 0, "hash_ids": [0]}]


def test_export_keeps_the_given_order_of_simultaneous_requests(tmp_path):
    # Same timestamp: written as given (not by length or ids), so ids number in replay order.
    items = [{"timestamp": 0, "input_length": 9, "output_length": 1, "hash_ids": [5]},
             {"timestamp": 0, "input_length": 3, "output_length": 0, "hash_ids": [4]}]
    p = tmp_path / "out.jsonl"
    export_mooncake(items, p)
    assert [(x["input_length"], x["hash_ids"]) for x in lines(p)] == [(9, [0]), (3, [1])]
