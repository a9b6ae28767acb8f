"""Engines as provider policies (the runner's `decide` protocol), token ids, and multi-node routing."""
import json

import pytest
from conftest import data_file, make_request

from prefixsim.core.simulator import Simulator
from prefixsim.core.tokens import ApproxTokenizer
from prefixsim.engines.cluster import ROUTINGS, compare_routings, render_cluster_text, replay_cluster
from prefixsim.engines.policy import EnginePolicy
from prefixsim.engines.tokens import BlockTokenIds, pseudo_ids
from prefixsim.errors import UserError
from prefixsim.model import Block, Call, CauseKind, Layer, Request

SYSTEM = Block(Layer.SYSTEM, b"You are a careful assistant. " * 40)   # 1160 chars: 290 approx tokens
TURN1 = Block(Layer.MESSAGES, b"hello there, how are you")               # 24 chars: 6 tokens
TURN2 = Block(Layer.MESSAGES, b"fine thanks, and you?")                  # 21 chars: 6 tokens


def sim(engine, prices, **kw):
    return Simulator(engine, tokenizer="approx", policy=EnginePolicy(engine, encoding="approx", **kw), prices=prices)


def request(*blocks, model="claude-sonnet-4-5", salt=""):
    return Request(model, blocks, cache_salt=salt)


@pytest.mark.parametrize("engine,second,third", [
    # vLLM: 296 tokens -> 18 full blocks (288); the next turn reads them; a repeat is capped at n-1
    ("vllm", 288, 288),
    # SGLang: token-granular, the whole 296-token first prompt is cached; a repeat reads n-1
    ("sglang", 296, 301),
])
def test_engine_policy_in_the_runner(prices, engine, second, third):
    s = sim(engine, prices)
    o1 = s.step(Call(0, request(SYSTEM, TURN1)))
    o2 = s.step(Call(10, request(SYSTEM, TURN1, TURN2)))
    o3 = s.step(Call(20, request(SYSTEM, TURN1, TURN2)))
    assert (o1.usage.cache_read, o1.usage.input_tokens, o1.cause.kind) == (0, 296, CauseKind.COLD)
    assert o2.usage.cache_read == second and o2.cause.kind == CauseKind.HIT
    assert o3.usage.cache_read == third
    assert o3.usage.cache_creation == 0 and o3.usage.prompt_tokens == 302


def test_salt_model_and_capacity(prices):
    s = sim("vllm", prices, capacity=160)  # 10 blocks: the 18-block prompt keeps its head only
    s.step(Call(0, request(SYSTEM, TURN1)))
    assert s.step(Call(1, request(SYSTEM, TURN1, salt="t2"))).usage.cache_read == 0
    assert s.step(Call(2, request(SYSTEM, TURN1, model="claude-opus-4-1"))).usage.cache_read == 0
    assert s.step(Call(3, request(SYSTEM, TURN1))).usage.cache_read <= 160


def test_fixed_size_blocks_and_gpu_seconds(prices):
    pol = EnginePolicy("sglang", encoding="approx", prefill_tokens_per_s=10_000)
    s = Simulator("sglang", tokenizer="approx", policy=pol, prices=prices)
    outs = [s.step(Call(t, make_request([2000, 3000, 500 + 100 * t]))) for t in range(3)]
    assert [o.usage.cache_read for o in outs] == [0, 5500, 5600]
    assert pol.gpu_seconds_saved(outs) == pytest.approx(1.11)
    assert pol.describe("m")["prefill rate"] == "10,000 tokens/s"


def test_unknown_engine_is_a_user_error():
    with pytest.raises(UserError, match="unknown engine"):
        EnginePolicy("tgi")
    with pytest.raises(UserError, match="unknown eviction"):
        EnginePolicy("sglang", eviction="random")


def test_token_ids_match_the_runs_counts():
    ids = BlockTokenIds("approx")
    assert len(ids.ids(SYSTEM)) == ApproxTokenizer().count_text(SYSTEM.data.decode())
    assert ids.ids(Block(Layer.SYSTEM, b"x", tokens=7)) == pseudo_ids(Block(Layer.SYSTEM, b"x").key, 7)
    assert len(ids.ids(TURN1, 9)) == 9                   # another tokenizer's count wins
    assert ids.ids(TURN1, 9) != ids.ids(TURN2, 9)
    tik = BlockTokenIds("cl100k_base")
    assert tik.ids(TURN1) == tik.ids(Block(Layer.TOOLS, TURN1.data))[:len(tik.ids(TURN1))]


def cluster_trace(tmp_path):
    # Four conversations of three turns, interleaved: each turn extends its conversation's prefix.
    recs = []
    for turn in range(3):
        for conv in range(4):
            ids = [0] + [100 * conv + k for k in range(1, 2 + 2 * turn)]
            recs.append({"timestamp": 1000 * len(recs), "input_length": 512 * len(ids), "hash_ids": ids})
    p = tmp_path / "conv.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return p


def test_prefix_routing_keeps_conversations_local(tmp_path):
    p = cluster_trace(tmp_path)
    by = {r["routing"]: r for r in compare_routings(p, nodes=3, capacity=None)}
    assert set(by) == set(ROUTINGS)
    glob = by["round_robin"]["global"]["hit_rate"]
    assert all(r["global"]["hit_rate"] == glob for r in by.values())   # the pool ignores routing
    # Affinity keeps each conversation's history on one node; only the shared block 0 is missed
    # once per node. Round robin scatters the turns, so most history is on another node.
    assert by["round_robin"]["local"]["hit_rate"] < by["prefix_hash"]["local"]["hit_rate"] < glob
    assert sum(n["requests"] for n in by["least_loaded"]["local"]["per_node"]) == 12
    assert "prefix_hash" in render_cluster_text(list(by.values()))


def test_one_node_local_equals_global(tmp_path):
    r = replay_cluster(cluster_trace(tmp_path), nodes=1, capacity=2048, routing="least_loaded")
    assert r["local"]["hit_rate"] == r["global"]["hit_rate"]


@pytest.mark.no_mutation
@pytest.mark.slow
def test_mooncake_local_vs_global():
    path = data_file("mooncake", "conversation_trace.jsonl")
    r = replay_cluster(path, nodes=4, capacity=2 * 10**6, routing="round_robin")
    assert r["local"]["hit_rate"] < r["global"]["hit_rate"] <= 0.3737
