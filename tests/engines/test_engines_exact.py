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


# --- trace: loading ------------------------------------------------------------------------------------

from prefixsim.engines.trace import (  # noqa: E402
    Replayed,
    Totals,
    curve_totals,
    load_trace,
    replay,
    replay_capacities,
    replay_pool,
    replay_trace,
    totals,
)


def write(path, *records, raw=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw + "".join(json.dumps(r) + "\n" for r in records))
    return path


def test_two_files_of_one_name_are_told_apart_and_merged_in_time_order(tmp_path):
    a = write(tmp_path / "a" / "t.jsonl", {"timestamp": 2000, "input_length": 5, "hash_ids": [1]})
    a.write_text(a.read_text() + "\n" + json.dumps({"timestamp": 1000, "input_length": 6, "output_length": 2,
                                                    "hash_ids": [1, 2]}) + "\n")
    b = write(tmp_path / "b" / "t.jsonl", {"timestamp": 1000, "input_length": 7, "hash_ids": [1]})
    tr = load_trace([a, str(b)])
    assert (tr.format, tr.block_size) == ("mooncake", 512)
    pa, pb = a.as_posix(), b.as_posix()
    # ms -> s; a tie at 1.0 s keeps file order; the second file's ids are namespaced by its index
    assert tr.requests == (
        TraceRequest(f"{pa}:3", 1.0, 6, 2, (1, 2), (1, 2), pa),
        TraceRequest(f"{pb}:1", 1.0, 7, 0, ((1, 1),), (1,), pb),
        TraceRequest(f"{pa}:1", 2.0, 5, 0, (1,), (1,), pa),
    )
    assert tr.sums == (18, 2, 4)


def test_one_file_is_named_by_its_name(tmp_path):
    p = write(tmp_path / "x" / "one.jsonl", {"timestamp": 0, "input_length": 0, "hash_ids": []})
    assert load_trace(p).requests == (TraceRequest("one.jsonl:1", 0.0, 0, 0, (), (), "one.jsonl"),)


def test_bailian_streams_follow_parents_to_the_root(tmp_path):
    p = write(tmp_path / "b.jsonl",
              {"chat_id": 1, "parent_chat_id": -1, "timestamp": 1.5, "input_length": 16, "hash_ids": [1],
               "turn": 1, "type": "text"},
              {"chat_id": 2, "parent_chat_id": 1, "timestamp": 2, "input_length": 32, "output_length": 4,
               "hash_ids": [1, 2], "turn": 2, "type": "text"},
              {"chat_id": 3, "parent_chat_id": 2, "timestamp": 3, "input_length": 48, "hash_ids": [1, 2, 3]},
              {"chat_id": 4, "parent_chat_id": 99, "timestamp": 4, "input_length": 16, "hash_ids": [9]},
              {"chat_id": 5, "timestamp": 5, "input_length": 16, "hash_ids": [8]})
    tr = load_trace(p)
    assert (tr.format, tr.block_size) == ("bailian", 16)
    # a grandchild joins its grandparent's stream; an unknown parent or none starts a new one
    assert [r.stream for r in tr.requests] == ["b.jsonl#1", "b.jsonl#1", "b.jsonl#1", "b.jsonl#4", "b.jsonl#5"]
    r0, r1 = tr.requests[:2]
    assert (r0.timestamp, r0.chat_id, r0.parent_chat_id, r0.turn, r0.type) == (1.5, 1, -1, 1, "text")
    assert (r1.timestamp, r1.output_length, r1.chat_id, r1.parent_chat_id) == (2.0, 4, 2, 1)
    assert tr.requests[4].parent_chat_id == -1 and tr.requests[4].turn is None and tr.requests[4].type is None


@pytest.mark.parametrize("text,msg,line", [
    ('{"timestamp": 0, "input_length": 5, "hash_ids": [1]}\n{"chat_id": 1, "timestamp": 0, "input_length": 5, '
     '"hash_ids": [1]}\n', "a bailian record in a mooncake trace", 2),
    ('{"input_length": 5, "hash_ids": [1]}\n',
     "missing field 'timestamp' (need timestamp, input_length, hash_ids)", 1),
    ('{"timestamp": 0, "input_length": 5, "hash_ids": ["x"]}\n', "bad field value: ", 1),
    ('\n\n{"timestamp": 0, "input_length": -1, "hash_ids": [1]}\n', "usage field input_length is negative", 3),
])
def test_bad_trace_lines_say_what_and_where(tmp_path, text, msg, line):
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    with pytest.raises(UserError) as e:
        load_trace(p)
    assert str(e.value.args[0]).startswith(msg) and (e.value.path, e.value.line) == (str(p), line)


def test_no_file_or_no_request_is_refused(tmp_path):
    with pytest.raises(UserError, match="^no trace file given$"):
        load_trace([])
    p = tmp_path / "blank.jsonl"
    p.write_text("\n  \n")
    with pytest.raises(UserError) as e:
        load_trace(p)
    assert (e.value.args[0], e.value.path) == ("trace has no requests", str(p))


# --- trace: counting -------------------------------------------------------------------------------

def test_totals_and_rates_by_hand():
    t = trace_of(([1, 2], 6), ([1, 2, 3], 12))
    rows = [Replayed(t.requests[0], 2, 0, 0, "cold"), Replayed(t.requests[1], 3, 2, 6, "")]
    tot = totals(rows, 5)
    assert tot == Totals(2, 18, 2, 6, 5, 2, 5)
    assert (tot.hit_rate, tot.block_hit_rate) == (6 / 18, 2 / 5)
    empty = totals([])
    assert empty == Totals(0, 0, 0, 0, 0, 0, 0) and (empty.hit_rate, empty.block_hit_rate) == (0.0, 0.0)
    assert rows[1].row() == {"request_id": "r1", "timestamp": 1.0, "stream": "s", "model": None, "observed": None,
                             "predicted": {"input_tokens": 6, "cache_creation_input_tokens": 0,
                                           "cache_read_input_tokens": 6},
                             "cause": ""}


@pytest.mark.parametrize("path", ["fast", "pool"])
def test_hit_tokens_are_the_run_capped_at_the_input(path):
    # 4-token blocks; unlimited. r1 reads 2 blocks of a 7-token prompt: min(8, 7) = 7. r2 reads 3 of 12.
    # r3 = [5, 1]: block 1 is cached but behind a miss: nothing read, cold (5 is new).
    t = trace_of(([1, 2, 3], 10), ([1, 2], 7), ([1, 2, 3, 4], 12), ([5, 1], 8))
    rows, tot = (replay if path == "fast" else replay_pool)(t, None)
    assert [(r.blocks, r.hit_blocks, r.hit_tokens, r.cause) for r in rows] == [
        (3, 0, 0, "cold"), (2, 2, 7, ""), (4, 3, 12, ""), (2, 0, 0, "cold")]
    assert tot == Totals(4, 37, 4, 19, 11, 5, 0)


@pytest.mark.parametrize("path", ["fast", "pool"])
def test_capacity_is_whole_blocks_and_lru_evicts_the_tail_first(path):
    # 11 tokens of 4-token blocks = 2 blocks. r0 [1, 2] frees 2 then 1 (2 is older). r1 [3] evicts 2;
    # r2 [1, 2] reads 1, stops at 2: evicted; it stores 2, evicting 3. r3 [3]: evicted; it evicts 2
    # (r2 freed 2 before 1). r4 [4, 5, 6] is longer than the pool: nothing read, cold; it evicts 1 and 3
    # and caches its head [4, 5].
    t = trace_of(([1, 2], 8), ([3], 4), ([1, 2], 8), ([3], 4), ([4, 5, 6], 12))
    rows, tot = (replay if path == "fast" else replay_pool)(t, 11)
    assert [(r.hit_blocks, r.hit_tokens, r.cause) for r in rows] == [
        (0, 0, "cold"), (0, 0, "cold"), (1, 4, "evicted"), (0, 0, "evicted"), (0, 0, "cold")]
    # evictions: r1 1, r2 1, r3 1, r4 2
    assert tot.evictions == 5 and tot.hit_tokens == 4


def trace_at(*requests: tuple[float, list, int, int], bs: int = BS) -> Trace:
    """Requests (timestamp s, keys, input_length, output_length)."""
    return Trace("mooncake", bs, tuple(TraceRequest(f"r{i}", t, n_in, n_out, tuple(keys), tuple(range(len(keys))), "s")
                                       for i, (t, keys, n_in, n_out) in enumerate(requests)))


@pytest.mark.parametrize("t_c,hits,evictions", [(11.5, [0, 4, 0, 4], 2), (11.25, [0, 4, 0, 8], 0)])
def test_a_running_request_holds_its_blocks_until_its_end(t_c, hits, evictions):
    # 2 blocks, prefill 2 tokens/s, decode 2 tokens/s. rb (t 10) reads [1] (4 of 6 tokens) and ends at
    # 10 + 2 / 2 + 1 / 2 = 11.5. rc [3] at 11.5 finds rb ended (end <= now): it evicts 2 (rb freed its
    # tail first) and rd reads 1 only, then evicts 3 for 2. At 11.25 rb still holds 1 and 2: rc caches
    # nothing, evicts nothing, and rd reads both.
    t = trace_at((0, [1], 4, 0), (10, [1, 2], 6, 1), (t_c, [3], 4, 0), (20, [1, 2], 8, 0))
    rows, tot = replay(t, 8, decode_tokens_per_s=2, prefill_tokens_per_s=2)
    assert [r.hit_tokens for r in rows] == hits
    assert tot.evictions == evictions
    assert rows[3].cause == ("evicted" if hits[3] == 4 else "")


def test_running_requests_default_to_the_default_prefill_rate():
    # prefill 10,000 tokens/s: ra (20,000 uncached tokens, no output) holds block 1 for 2 s. rb [2] at
    # 1.5 s cannot evict it (1 block); at 2.5 s it can, and rc then misses block 1.
    for t_b, hit in ((1.5, 4), (2.5, 0)):
        t = trace_at((0, [1], 20_000, 0), (t_b, [2], 4, 0), (3, [1], 4, 0))
        rows, _ = replay(t, 4, decode_tokens_per_s=1)
        assert rows[2].hit_tokens == hit, t_b


@pytest.fixture
def three(tmp_path):
    return write(tmp_path / "three.jsonl",
                 {"timestamp": 0, "input_length": 8, "output_length": 3, "hash_ids": [1, 2]},
                 {"timestamp": 1000, "input_length": 7, "output_length": 1, "hash_ids": [1, 2]},
                 {"timestamp": 2000, "input_length": 4, "hash_ids": [3]})


def test_replay_trace_summary_and_curve_by_hand(three):
    # 4-token blocks. 8 tokens (2 blocks): r1 reads both = min(8, 7) = 7; r2 [3] evicts 2.
    # 4 tokens (1 block): r0 caches its head [1]; r1 reads it (4); r2 evicts it. Unlimited: 7, no eviction.
    # 300 prefill tokens/s: 7 / 300 = 0.023 s, 4 / 300 = 0.013 s.
    out = replay_trace(three, capacities=[8, 4, None], block_size=4, prefill_tokens_per_s=300)
    point8 = {"capacity_tokens": 8, "hit_rate": 0.368421, "block_hit_rate": 0.4, "hit_tokens": 7, "hit_blocks": 2,
              "evictions": 1, "prefill_gpu_seconds_saved": 0.023}
    point4 = {"capacity_tokens": 4, "hit_rate": 0.210526, "block_hit_rate": 0.2, "hit_tokens": 4, "hit_blocks": 1,
              "evictions": 1, "prefill_gpu_seconds_saved": 0.013}
    unl = {**point8, "capacity_tokens": None, "evictions": 0}
    assert out["summary"] == {"format": "mooncake", "block_size": 4, "eviction": "lru", "requests": 3,
                              "input_tokens": 19, "output_tokens": 4, "blocks": 5, **point8,
                              "curve": [point8, point4, unl]}
    assert [(r["request_id"], r["predicted"]["cache_read_input_tokens"], r["cause"]) for r in out["requests"]] == [
        ("three.jsonl:1", 0, "cold"), ("three.jsonl:2", 7, ""), ("three.jsonl:3", 0, "cold")]
    table = replay_trace(three, capacities=[8, 4, None], block_size=4, prefill_tokens_per_s=300, fmt="table")
    assert table == {"requests": [], "summary": out["summary"]}
    one = replay_trace(three, capacities=[4], block_size=4)["summary"]
    assert "curve" not in one and "prefill_gpu_seconds_saved" not in one and one["hit_tokens"] == 4


def test_replay_trace_with_a_decode_rate_gives_the_first_capacitys_rows(three):
    # 10^9 output tokens/s and 10,000 prefill tokens/s: every request ends well before the next starts
    out = replay_trace(three, capacities=[8, 4], block_size=4, decode_tokens_per_s=10**9)
    assert [r["predicted"]["cache_read_input_tokens"] for r in out["requests"]] == [0, 7, 0]
    assert out["summary"]["decode_tokens_per_s"] == 10**9
    assert [p["hit_tokens"] for p in out["summary"]["curve"]] == [7, 4]


def test_replay_trace_refuses_bad_options(three):
    with pytest.raises(UserError, match=r"^unknown output format 'csv' \(valid: json, table\)$"):
        replay_trace(three, fmt="csv")
    with pytest.raises(UserError, match="^negative capacity -1$"):
        replay_trace(three, capacities=[8, -1])
    for bad in (-4, 0):   # 0 once meant "the trace's" in silence
        with pytest.raises(UserError, match=rf"^--block-size {bad}: a block holds at least 1 token$"):
            replay_trace(three, block_size=bad)
    assert replay_trace(three, capacities=[0])["summary"]["hit_tokens"] == 0


def test_curve_totals_takes_known_points_and_refuses_unknown_eviction():
    t = trace_of(([1, 2], 8), ([1, 2], 7), ([3], 4))
    marker = Totals(9, 9, 9, 9, 9, 9, 9)
    assert curve_totals(t, [8, 4, None], known={4: marker}) == [replay_pool(t, 8)[1], marker, replay_pool(t, None)[1]]
    with pytest.raises(UserError, match="unknown eviction policy 'mru'"):
        curve_totals(t, [None], "mru")
    with pytest.raises(UserError, match="unknown eviction policy 'mru'"):
        replay(t, None, "mru")


def test_replay_capacities_rows_at_the_first_and_causes_from_the_unlimited_pass():
    # 1 block: r0 [1, 2] caches [1] only (longer than the pool); r1 reads 1 and stops at 2, never
    # cached: a hit, not evicted. r2 [3] evicts 1, so r3 [1] misses: evicted.
    t = trace_of(([1, 2], 8), ([1, 2], 8), ([3], 4), ([1], 4))
    rows, tots = replay_capacities(t, [4, None], BS)
    assert [(r.hit_tokens, r.cause) for r in rows] == [(0, "cold"), (4, ""), (0, "cold"), (0, "evicted")]
    assert tots == [replay_pool(t, 4)[1], replay_pool(t, None)[1]]
    assert replay_capacities(t, [4, None], BS, rows=False) == ([], tots)


# --- lru: the stack-distance curve past one chunk of stamps ----------------------------------------

import random  # noqa: E402

from test_engines_lru import chained, scattered  # noqa: E402

from prefixsim.engines.lru import lru_curve  # noqa: E402


def spread(trace: Trace) -> list[int]:
    """Capacities in tokens around the boundaries that matter: 0-3 blocks, the longest request,
    the distinct blocks, and a few between; each also one token short of the next block."""
    longest = max(len(r.keys) for r in trace.requests)
    distinct = len({k for r in trace.requests for k in r.keys})
    blocks = {0, 1, 2, 3, longest - 1, longest, longest + 1, distinct // 7, distinct // 3, distinct // 2,
              distinct - 1, distinct, distinct + 1}
    return sorted({b * BS for b in blocks if b >= 0} | {b * BS + BS - 1 for b in blocks if b >= 0}) + [None]


@pytest.mark.slow
@pytest.mark.parametrize("kind,seed", [(chained, 7), (scattered, 8)])
def test_curve_over_thousands_of_stamps_equals_one_pool_per_capacity(kind, seed):
    # Live stamps are counted per chunk of 1,024; these traces stamp over 3,000 blocks, so ranks are
    # summed across chunks, and runs retired across a chunk boundary.
    rng = random.Random(seed)
    reqs = kind(rng, 420) if kind is chained else kind(rng, 560, universe=900)
    t = Trace("mooncake", BS, tuple(TraceRequest(f"r{i}", float(i), n, 1, tuple(k), (), "s") for i, (k, n) in enumerate(reqs)))
    assert sum(len(r.keys) for r in t.requests) > 3 * 1024
    caps = spread(t)
    assert curve_totals(t, caps) == [replay_pool(t, c)[1] for c in caps]


def test_a_run_of_4098_cached_blocks_is_retired_whole():
    # The second request finds 4,098 blocks cached as one run (more than the 4,096 zero bytes kept
    # at hand): all are retired, so the third request's ranks are right at every capacity.
    keys = list(range(4098))
    t = trace_of((keys, 4098 * BS), (keys, 4098 * BS - 1), ([5000], 4), (keys[:3], 12))
    caps = [0, BS, 2 * BS, 3 * BS, 4098 * BS, 4099 * BS, None]
    curve = lru_curve(t.requests, BS)
    assert curve.seg_start and curve.seg_end[0] - curve.seg_start[0] == 4097
    assert curve_totals(t, caps) == [replay_pool(t, c)[1] for c in caps]


# --- policy: engines as the runner's decide --------------------------------------------------------

from test_engines_lifecycle import Q1, Q2, R1, R2, SYSTEM, msg, simulator  # noqa: E402

from prefixsim.core.store import EntryState  # noqa: E402
from prefixsim.engines.policy import EnginePolicy, _stand_in, engine_options  # noqa: E402
from prefixsim.providers.base import Decision  # noqa: E402
from prefixsim.wire.anthropic import dumps  # noqa: E402

USER_, ASSISTANT_ = dumps({"role": "user"}), dumps({"role": "assistant"})
P100 = Request("m", (Block(Layer.SYSTEM, b"a hundred tokens", "system[0]", tokens=100),))
OTHER100 = Request("m", (Block(Layer.SYSTEM, b"another hundred", "system[0]", tokens=100),))


def decision(read, uncached, hit, blocked=None):
    return Decision(read=read, write_5m=0, write_1h=0, uncached=uncached, hit=hit, blocked=blocked,
                    below_minimum=False, breakpoints=())


def test_decide_returns_the_engines_split():
    # SGLang, page 1, unlimited: cold, then the same 2,100 tokens read but the last (block 1 holds it)
    pol = EnginePolicy("sglang", encoding="approx")
    assert pol.decide(R1, [], [2000, 2100], None, 0.0, 0.0, call=Call(0, R1)) == decision(0, 2100, -1)
    assert pol.decide(R1, [], [2000, 2100], None, 100.0, 100.0, call=Call(100, R1)) == decision(2099, 1, 1)
    # no blocks, no call: nothing read, nothing uncached
    assert pol.decide(Request("m", ()), [], [], None, 200.0, 200.0) == decision(0, 0, -1)


def test_decide_uses_the_runs_token_counts():
    # the run counted 30 tokens where cl100k counts 2 ("hello world"): the engine sees 30 ids
    req = Request("m", (Block(Layer.SYSTEM, b"hello world", "system[0]"),))
    pol = EnginePolicy("sglang")
    pol.decide(req, [], [30], None, 0.0, 0.0)
    assert pol.decide(req, [], [30], None, 10.0, 10.0) == decision(29, 1, 0)
    assert EnginePolicy("sglang").tokens.ids(req.blocks[0]) == [15339, 1917]   # the default encoding


def test_a_capacity_miss_is_blocked_by_eviction_and_salts_stay_apart():
    # 150 tokens: B's 100 evict A's (a whole leaf); A again reads nothing, the unlimited shadow 99
    pol = EnginePolicy("sglang", 150, encoding="approx")
    salted = Request("m", P100.blocks, cache_salt="s")
    other = Request("m", OTHER100.blocks, cache_salt="s")
    pol.decide(salted, [], [100], None, 0.0, 0.0)
    pol.decide(other, [], [100], None, 1.0, 1.0)
    assert pol.decide(salted, [], [100], None, 2.0, 2.0) == decision(0, 100, -1, (EntryState.EVICTED, 0))
    # another salt was never cached anywhere: cold, not blocked
    assert pol.decide(Request("m", P100.blocks, cache_salt="t"), [], [100], None, 3.0, 3.0) == decision(0, 100, -1)


def test_salted_requests_cache_under_their_salt():
    pol = EnginePolicy("sglang", encoding="approx")
    salted = Request("m", P100.blocks, cache_salt="s")
    pol.decide(salted, [], [100], None, 0.0, 0.0)
    assert pol.decide(salted, [], [100], None, 10.0, 10.0).read == 99
    assert pol.decide(P100, [], [100], None, 20.0, 20.0).read == 0


@pytest.mark.parametrize("t2,read", [(1.0, 0), (0.99, 99)])
def test_a_request_without_output_holds_its_kv_until_its_prefill_ends(t2, read):
    # 150 tokens, 100 tokens/s, no call (no output): P100 runs to 1.0 s. From then it can be evicted,
    # and OTHER100 evicts it (P100 asked at once reads nothing); before, OTHER100 caches only 50 beside it.
    pol = EnginePolicy("sglang", 150, encoding="approx", prefill_tokens_per_s=100)
    pol.decide(P100, [], [100], None, 0.0, 0.0)
    pol.decide(OTHER100, [], [100], None, t2, t2)
    assert pol.decide(P100, [], [100], None, t2, t2).read == read


@pytest.mark.parametrize("t3,read", [(1.2, 100), (1.19, 119)])
def test_only_uncached_tokens_take_prefill_time(t3, read):
    # 200 tokens, 100 tokens/s. r2 = P + 20 tokens reads P's 100 and prefills 20: it runs to
    # 1 + 20/100 = 1.2 s. OTHER100 then needs 20 more: it evicts r2's 20-token leaf once r2 ended.
    pol = EnginePolicy("sglang", 200, encoding="approx", prefill_tokens_per_s=100)
    longer = Request("m", (*P100.blocks, Block(Layer.MESSAGES, b"q", "messages[0].content[0]", tokens=20)))
    pol.decide(P100, [], [100], None, 0.0, 0.0)
    assert pol.decide(longer, [], [100, 120], None, 1.0, 1.0).read == 100
    pol.decide(OTHER100, [], [100], None, t3, t3)
    assert pol.decide(longer, [], [100, 120], None, t3, t3).read == read


def test_engine_policy_eviction_reaches_its_caches(prices):
    # 250 tokens, page 1. A, B, A again (A's 100 touched), C needs 50: LRU evicts B's leaf, FIFO A's
    # (inserted first). A once more: LRU reads 99, FIFO nothing.
    for eviction, read in (("lru", 99), ("fifo", 0)):
        s = simulator("sglang", prices, capacity=250, eviction=eviction)
        for t, r in enumerate((P100, OTHER100, P100, Request("m", (Block(Layer.SYSTEM, b"third", "system[0]", tokens=100),)))):
            s.step(Call(t, r))
        assert s.step(Call(10, P100)).usage.cache_read == read, eviction


OTHER_REPLY = msg(1, ASSISTANT_, b"some other reply", 400)


@pytest.mark.parametrize("r2", [
    Request("qwen2.5-7b", (SYSTEM, Q1, OTHER_REPLY, Q2)),                   # another model
    Request("llama-3.1-8b", (SYSTEM, Q1, OTHER_REPLY, Q2), cache_salt="s"),  # another salt
    Request("llama-3.1-8b", (Block(Layer.SYSTEM, b"system prompt 2", "system[0]", tokens=2000), Q1, OTHER_REPLY, Q2)),
], ids=["model", "salt", "prompt"])
def test_a_reply_is_learnt_only_from_the_same_prompt_model_and_salt(prices, r2):
    # r2 quotes another reply after a prompt that is not r1's (model, salt or content differ): r1 keeps
    # waiting, and r3 (r1's own next turn) reads r1's prompt + reply but its last token: 2,499
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    s.step(Call(30, r2, stream="x", output_tokens=1))
    assert s.step(Call(60, R2, stream="main", output_tokens=1)).usage.cache_read == 2499


def test_a_prompt_differing_in_its_first_token_is_not_the_same_prompt(prices):
    # approx tokens are 4 characters: the two systems differ in their first token only
    s1 = Block(Layer.SYSTEM, b"AAAA" + b"x" * 7996, "system[0]")
    s2 = Block(Layer.SYSTEM, b"BBBB" + b"x" * 7996, "system[0]")
    q = msg(0, USER_, b"q" * 400, None)
    reply = msg(1, ASSISTANT_, b"r" * 1600, None)       # 400 tokens
    other = msg(1, ASSISTANT_, b"o" * 1600, None)
    nxt = msg(2, USER_, b"n" * 400, None)
    s = simulator("sglang", prices)
    o1 = s.step(Call(0, Request("m", (s1, q)), output_tokens=400))
    s.step(Call(30, Request("m", (s2, q, other, nxt)), output_tokens=1))
    # r1's prompt and the first 400 tokens of its reply message but the last
    read = s.step(Call(60, Request("m", (s1, q, reply, nxt)), output_tokens=1)).usage.cache_read
    assert read == o1.usage.prompt_tokens + 399


def test_salted_reply_is_learnt_under_the_salt(prices):
    s = simulator("sglang", prices)
    s.step(Call(0, Request("llama-3.1-8b", R1.blocks, cache_salt="s"), output_tokens=400))
    r2 = Request("llama-3.1-8b", R2.blocks, cache_salt="s")
    assert s.step(Call(60, r2, output_tokens=1)).usage.cache_read == 2499


def test_a_reply_learnt_while_running_is_cached_at_the_end(prices):
    # r2 (t 1) quotes r1's reply while r1 runs (to 8.21 s); SGLang holds r2's 2,600 prompt tokens from
    # its start. r1 ends caching its prompt and the real reply but its last token: all already in r2's
    # path, so nothing is added (stand-ins would add 399 tokens).
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    s.step(Call(1, R2, stream="side", output_tokens=4000))
    s.policy.finish_until(20)
    assert s.policy.caches["llama-3.1-8b"].used == 2600


QA = Request("llama-3.1-8b", (msg(0, USER_, b"question a", 100),))
QA_NEXT = Request("llama-3.1-8b", (msg(0, USER_, b"question a", 100), msg(1, ASSISTANT_, b"answer a", 5),
                                   msg(2, USER_, b"more", 10)))


@pytest.mark.parametrize("limit,value", [("MAX_PENDING", 2), ("MAX_PENDING_TOKENS", 2200)])
def test_pending_limits_are_inclusive(prices, monkeypatch, limit, value):
    # exactly 2 requests, 2,100 + 100 = 2,200 tokens wait: both fit, so r1's reply is still learnt
    import prefixsim.engines.policy as policy

    monkeypatch.setattr(policy, limit, value)
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    s.step(Call(30, QA, stream="a", output_tokens=5))
    assert s.step(Call(60, R2, stream="main", output_tokens=1)).usage.cache_read == 2499


def test_pending_tokens_count_a_repeated_prompt_once(prices, monkeypatch):
    # r1 twice (the newer waits: 2,100 tokens, not 4,200), then QA: 2,200 fit in 2,200
    import prefixsim.engines.policy as policy

    monkeypatch.setattr(policy, "MAX_PENDING_TOKENS", 2200)
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    s.step(Call(10, R1, stream="main", output_tokens=400))
    s.step(Call(30, QA, stream="a", output_tokens=5))
    assert s.step(Call(60, R2, stream="main", output_tokens=1)).usage.cache_read == 2499


def test_pending_tokens_drop_what_is_forgotten_or_answered(prices, monkeypatch):
    import prefixsim.engines.policy as policy

    # 2,199 tokens: QA pushes r1 out (2,200); 100 tokens wait, so QB fits beside QA and QA's reply
    # (5 tokens, 4 committed) is read after its 100
    monkeypatch.setattr(policy, "MAX_PENDING_TOKENS", 2199)
    s = simulator("sglang", prices)
    s.step(Call(0, R1, output_tokens=400))
    s.step(Call(30, QA, output_tokens=5))
    s.step(Call(31, Request("llama-3.1-8b", (msg(0, USER_, b"question b", 100),)), output_tokens=5))
    assert s.step(Call(60, QA_NEXT, output_tokens=1)).usage.cache_read == 104
    # 2,700 tokens: R2 answers r1 (2,100 leave) and waits itself (2,600); R2's next turn reads its reply
    monkeypatch.setattr(policy, "MAX_PENDING_TOKENS", 2700)
    s = simulator("sglang", prices)
    s.step(Call(0, R1, output_tokens=400))
    s.step(Call(60, R2, output_tokens=5))
    r3 = Request("llama-3.1-8b", (*R2.blocks, msg(3, ASSISTANT_, b"answer two", 5), msg(4, USER_, b"three", 10)))
    assert s.step(Call(120, r3, output_tokens=1)).usage.cache_read == 2604


def test_a_two_block_reply_at_the_end_of_the_prompt():
    # The reply message has two content blocks and ends the prompt (a prefill to continue): both are
    # the reply. SGLang page 1: r1 caches its 10 tokens + 6 output tokens but the last.
    pol = EnginePolicy("sglang", encoding="approx")
    p = Request("m", (msg(0, USER_, b"hi", 10),))
    a0 = Block(Layer.MESSAGES, ASSISTANT_ + b"part one", "messages[1].content[0]", tokens=3)
    a1 = Block(Layer.MESSAGES, b"part two", "messages[1].content[1]", tokens=3)
    pol.decide(p, [], [10], None, 0.0, 0.0, call=Call(0, p, output_tokens=6))
    pol.finish_until()
    cont = Request("m", (*p.blocks, a0, a1))
    assert pol.decide(cont, [], [10, 13, 16], None, 100.0, 100.0).read == 15


def test_stand_in_outputs_are_deterministic():
    assert _stand_in(3, 5) == _stand_in(3, 5) != _stand_in(4, 5)


def test_describe_by_hand():
    from prefixsim.engines.policy import _SOURCES

    assert EnginePolicy().name == "vllm"
    assert EnginePolicy(encoding="approx").describe("m") == {
        "provider": "vllm", "caching": "automatic prefix caching, no TTL; hit capped at prompt length - 1",
        "block size": "16 tokens", "capacity": "unlimited", "eviction": "lru", "source": _SOURCES["vllm"],
        "prefill rate": "not given (engine.prefill_tokens_per_s turns cached tokens into GPU-seconds)",
        "request time": "uncached tokens / 10,000 tokens/s + output tokens / 50 tokens/s; running requests hold their KV",
        "output": "cached at the request's end, but its last token; its tokens are the reply a later prompt quotes "
                  "after this one"}
    d = EnginePolicy("sglang", 123456, lora="ad", cache_salt="s", prefill_tokens_per_s=2500,
                     decode_tokens_per_s=20).describe("m")
    assert (d["page size"], d["capacity"], d["lora"], d["cache salt"], d["prefill rate"], d["source"]) == (
        "1 tokens", "123,456 tokens", "ad", "s", "2,500 tokens/s", _SOURCES["sglang"])
    assert d["request time"].startswith("uncached tokens / 2,500 tokens/s + output tokens / 20 tokens/s")
    assert EnginePolicy("vllm", block_size=32).describe("m")["block size"] == "32 tokens"
    assert "block size" not in d and "lora" not in EnginePolicy().describe("m")
    with pytest.raises(ValueError, match=r"^no prefill rate given \(prefill_tokens_per_s\)$"):
        EnginePolicy().gpu_seconds_saved([])


def test_gib_capacity_needs_a_known_model():
    from prefixsim.engines.kvsize import MODELS
    from prefixsim.scenario.schema import EngineSpec

    with pytest.raises(UserError) as e:
        engine_options("vllm", EngineSpec(capacity="4GiB"), None, "approx")
    assert e.value.args[0] == f"engine.capacity '4GiB' is KV memory: set engine.kv_model to size it (known: {', '.join(MODELS)})"


# --- trace: more of the loader and replay_trace ----------------------------------------------------

def test_bailian_parent_zero_is_a_parent_and_ids_are_kept(tmp_path):
    p = write(tmp_path / "z.jsonl",
              {"chat_id": 0, "parent_chat_id": -1, "timestamp": 1, "input_length": 16, "hash_ids": [3]},
              {"chat_id": 7, "parent_chat_id": 0, "timestamp": 2, "input_length": 32, "hash_ids": [3, 4]})
    r0, r1 = load_trace(p).requests
    assert (r1.stream, r1.request_id, r1.hash_ids, r1.keys) == ("z.jsonl#0", "z.jsonl:2", (3, 4), (3, 4))
    assert (r0.request_id, r0.hash_ids) == ("z.jsonl:1", (3,))


@pytest.mark.parametrize("text,msg,col", [
    ('{"timestamp": 0, "input_length": 5, "output_length": -2, "hash_ids": [1]}',
     "usage field output_length is negative: -2 (a count is from 0 to ", None),
    ('[1, 2]', "a trace record must be a JSON object", None),
    ('{"timestamp": 0,, }', "not JSON: Expecting property name enclosed in double quotes", 17),
])
def test_more_bad_lines_by_hand(tmp_path, text, msg, col):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"timestamp": 0, "input_length": 5, "hash_ids": [1]}\n' + text + "\n")
    with pytest.raises(UserError) as e:
        load_trace(p)
    assert e.value.args[0].startswith(msg) and (e.value.path, e.value.line, e.value.col) == (str(p), 2, col)


def test_an_unreadable_trace_is_named(tmp_path, monkeypatch):
    import errno
    from pathlib import Path

    p = write(tmp_path / "t.jsonl", {"timestamp": 0, "input_length": 5, "hash_ids": [1]})

    def refuse(self, *a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(UserError) as e:
        load_trace(p)
    assert (e.value.args[0], e.value.path) == ("cannot read trace: Permission denied", str(p))


def test_replay_trace_passes_eviction_block_size_one_and_rates(three):
    # [1] [2] [1] [3] [1] at 2 blocks of 4 tokens: LRU keeps the refreshed 1 and evicts 2 for 3, so
    # the last [1] reads too (8 tokens in all); FIFO evicts 1, stored first (4). 1-token blocks are allowed.
    t = three.parent / "fifo.jsonl"
    write(t, *({"timestamp": i * 1000, "input_length": 4, "hash_ids": [k]} for i, k in enumerate([1, 2, 1, 3, 1])))
    assert replay_trace(t, capacities=[8], block_size=4, eviction="lru")["summary"]["hit_tokens"] == 8
    assert replay_trace(t, capacities=[8], block_size=4, eviction="fifo")["summary"]["hit_tokens"] == 4
    ones = write(three.parent / "ones.jsonl", {"timestamp": 0, "input_length": 2, "hash_ids": [1, 2]},
                 {"timestamp": 1000, "input_length": 3, "hash_ids": [1, 2, 3]})
    assert replay_trace(ones, block_size=1)["summary"]["hit_tokens"] == 2   # r1 reads [1, 2]: 2 tokens
    # a table never carries rows, with or without a decode rate
    assert replay_trace(three, capacities=[8], block_size=4, decode_tokens_per_s=10**9, fmt="table")["requests"] == []


def test_replay_trace_decode_runs_use_the_given_prefill_rate(tmp_path):
    # 1 block of 400 tokens; r0 has 400 uncached tokens: at 100 tokens/s it holds block 1 until 4 s, so
    # r1 [2] at 2 s cannot evict it and r2 [1] at 5 s reads it (its 4 tokens); at 10,000 tokens/s it
    # ended at 0.04 s. Two blocks hold both.
    p = write(tmp_path / "hold.jsonl", {"timestamp": 0, "input_length": 400, "hash_ids": [1]},
              {"timestamp": 2000, "input_length": 4, "hash_ids": [2]},
              {"timestamp": 5000, "input_length": 4, "hash_ids": [1]})
    slow = replay_trace(p, capacities=[400, 800], block_size=400, decode_tokens_per_s=10**9,
                        prefill_tokens_per_s=100)
    fast = replay_trace(p, capacities=[400, 800], block_size=400, decode_tokens_per_s=10**9)
    assert [r["predicted"]["cache_read_input_tokens"] for r in slow["requests"]] == [0, 0, 4]
    assert [r["predicted"]["cache_read_input_tokens"] for r in fast["requests"]] == [0, 0, 0]
    assert [pt["hit_tokens"] for pt in slow["summary"]["curve"]] == [4, 4]


@pytest.mark.parametrize("engine,capacity,read", [
    # SGLang: 2,100 prompt + 399 output tokens fill 2,499; the 399-token filler evicts the output leaf
    ("sglang", 2499, 2100),
    # vLLM, 16-token blocks: 156 full blocks of the 2,499 committed fill 2,496; the 396-token filler
    # (24 full blocks) evicts the 24 blocks r1 freed first (its tail, blocks 132-155). Block 131 (4
    # prompt + 12 output tokens) stays and learns its real tokens: R2 reads 132 blocks = 2,112
    ("vllm", 2496, 2112),
])
def test_an_evicted_reply_under_a_salt_and_lora_is_named_evicted(prices, engine, capacity, read):
    # r1 (salted, every block under the policy's LoRA) fills the cache with its prompt and output; a
    # filler evicts the output. R2 learns r1's reply: the cache's copy stays evicted, the unlimited
    # shadow's copy takes the real tokens under the same salt and LoRA and reads on, so the miss is
    # the capacity's: evicted.
    from prefixsim.model import CauseKind

    s = simulator(engine, prices, capacity=capacity, lora="adapter")
    s.step(Call(0, Request("llama-3.1-8b", R1.blocks, cache_salt="s"), output_tokens=400))
    s.step(Call(30, Request("llama-3.1-8b", (Block(Layer.SYSTEM, b"filler", "system[0]", tokens=capacity - 2100),))))
    o = s.step(Call(60, Request("llama-3.1-8b", R2.blocks, cache_salt="s"), output_tokens=1))
    assert (o.usage.cache_read, o.cause.kind) == (read, CauseKind.EVICTED)


def test_a_cached_head_with_gaps_counts_the_blocks_between():
    # r0 frees 5, 4, 3, 2, 1 (head newest): ranks 1..5. r1 = [1, 3, 5] finds all three cached, their
    # stamps falling with gaps (not one run): 3 ranks 3 and 5 ranks 5, as 2 and 4 are still between.
    # The pool: r0 is longer than C blocks below 5 and caches its head [1..C]; r1 then reads 1, then 3
    # when C >= 3, then 5 when C >= 5.
    t = trace_of(([1, 2, 3, 4, 5], 20), ([1, 3, 5], 12))
    caps = [b * BS for b in range(1, 7)]
    assert [x.hit_blocks for x in curve_totals(t, caps)] == [1, 1, 2, 2, 3, 3]
    assert curve_totals(t, caps) == [replay_pool(t, c)[1] for c in caps]


@pytest.mark.parametrize("eviction", ["lfu", "fifo"])
def test_a_curve_under_lfu_or_fifo_is_one_pool_per_capacity(eviction):
    # Only LRU has the inclusion property the one-pass curve rests on: several capacities under lfu
    # or fifo are replayed through the pool each, and give what lru does not. Two blocks: a is used
    # three times, then b, c, d each once, then a again (lfu keeps a; lru and fifo evicted it);
    # fifo evicts a even when a was just read.
    def k(*keys):
        return list(keys), len(keys) * BS

    t = trace_of(k(1), k(1), k(1), k(2), k(3), k(4), k(1), k(2), k(1), k(5), k(1))
    caps = [BS, 2 * BS, 3 * BS, None]
    got = curve_totals(t, caps, eviction)
    assert got == [replay_pool(t, c, eviction)[1] for c in caps]
    assert got != curve_totals(t, caps, "lru")


@pytest.mark.parametrize("eviction", ["lru", "lfu", "fifo"])
def test_a_curve_at_another_block_size_replays_at_that_size(eviction):
    # The trace's keys are 4-token blocks; replayed with 8-token blocks a capacity holds half as many
    # and a request's tokens fill half as many blocks: every point is the pool's at 8.
    def k(*keys):
        return list(keys), len(keys) * BS

    t = trace_of(k(1, 2), k(1, 2, 3), k(4, 5), k(1, 2, 3, 6), k(7), k(1, 2))
    caps = [8, 16, 24, None]
    got = curve_totals(t, caps, eviction, block_size=8)
    assert got == [replay_pool(t, c, eviction, 8)[1] for c in caps]
    assert got != curve_totals(t, caps, eviction)
