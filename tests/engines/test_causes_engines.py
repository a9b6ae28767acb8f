"""Every miss cause of the serving engines pinned at its boundary (issue 37): vLLM (16-token blocks)
and SGLang (1-token pages by default), in the scenario path and on replay of a log of the same bodies
as a what-if (`prefixsim replay --provider vllm`; tests/cause_paths.py).

An engine reads whole blocks (pages) of the prompt but its last token (`hit capped at prompt length
- 1`), keeps no TTL, and evicts for capacity only; a miss the capacity caused is told by an unlimited
shadow cache (engines/policy.py).
"""
from __future__ import annotations

import pytest
from cause_paths import Conversation, assistant, both, scenario, sized, system, user

from prefixsim.model import Cause

M = "gpt-4o"


@pytest.mark.parametrize("n, reads, causes", [
    # one block: its last token is never read, so nothing can be: below the minimum, both times
    (16, [0, 0], [Cause("below_minimum", "16 tokens")] * 2),
    # one token more: the block is read
    (17, [0, 16], [Cause("cold"), Cause()]),
    (32, [0, 16], [Cause("cold"), Cause()]),
    (33, [0, 32], [Cause("cold"), Cause()]),
])
def test_vllm_reads_whole_blocks_but_the_last_token(n, reads, causes, tmp_path):
    c = Conversation("vllm", M).send(0, sized(M, n)).send(60, sized(M, n))
    got, replayed, outs, _ = both(c, tmp_path)
    assert [o.usage.cache_read for o in outs] == reads
    assert got == replayed == causes


@pytest.mark.parametrize("page, n, reads, causes", [
    (16, 16, [0, 0], [Cause("below_minimum", "16 tokens")] * 2),
    (16, 17, [0, 16], [Cause("cold"), Cause()]),
    (1, 16, [0, 15], [Cause("cold"), Cause()]),
])
def test_sglang_pages(page, n, reads, causes):
    c = Conversation("sglang", M).send(0, sized(M, n)).send(60, sized(M, n))
    got, outs = scenario(c, block_size=page)
    assert [o.usage.cache_read for o in outs] == reads
    assert got == causes


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_changed_prefix_names_its_block_and_byte(engine, tmp_path):
    """The second request changes the user message after the system one: the engine reads the
    system message's blocks (and, SGLang, the user message's frame), the cause is where it parted."""
    s = system("S " * 60)
    c = Conversation(engine, M).send(0, s, user("Tell me about Alpha.")).send(60, s, user("Tell me about Beta."))
    got, replayed, outs, _ = both(c, tmp_path, same_reads=False)
    assert outs[1].usage.cache_read > 0
    assert got == replayed == [Cause("cold"), Cause("prefix_changed", "messages layer, block 1 (messages[1]), byte 37")]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_changed_first_block_is_no_cold_miss(engine, tmp_path):
    """A change inside block 0: what was read of it (SGLang: its common tokens) makes the request a
    partial read; what was not is where the prompt parted, never `cold`."""
    c = (Conversation(engine, M).send(0, user("Tell me about Alpha" + " cache" * 60))
         .send(60, user("Tell me about Beta" + " cache" * 60)))
    got, replayed, outs, _ = both(c, tmp_path, same_reads=False)
    assert got[1] == replayed[1] == Cause("prefix_changed", "messages layer, block 0 (messages[0]), byte 37")


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_model_switch_names_both_models(engine, tmp_path):
    """Another model is another server: nothing of the stream's cache is read."""
    m = sized(M, 64)
    c = Conversation(engine, M).send(0, m).send(60, m, assistant("Yes."), user("And?"), model="gpt-4.1")
    got, replayed, outs, _ = both(c, tmp_path)
    assert [o.usage.cache_read for o in outs] == [0, 0]
    assert got == replayed == [Cause("cold"), Cause("model_switch", "gpt-4o -> gpt-4.1")]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_evicted_names_the_first_block_not_read(engine):
    """A capacity of 64 tokens: another stream's 64-token prompt evicts the first one's blocks; the
    first stream's next turn names the first block it could not read."""
    a = sized(M, 40)
    b = user("Something else entirely" + " other" * 60)
    c = (Conversation(engine, M).send(0, a).send(10, b, stream="b")
         .send(20, a, assistant("Yes."), user("And?")))
    got, outs = scenario(c, capacity=64)
    # SGLang's 1-token pages keep the message frame both prompts share ({"role":"user","part":")
    assert [o.usage.cache_read for o in outs] == ([0, 0, 0] if engine == "vllm" else [0, 7, 7])
    assert got == [Cause("cold"), Cause("cold" if engine == "vllm" else ""),
                   Cause("evicted", "entry at messages[0] evicted for capacity")]



# --- engine traces (Mooncake hash ids): the fast LRU pass's causes, every path it takes, against the pool

def _trace(requests: list[tuple[list, int]], bs: int = 4):
    from prefixsim.engines.trace import Trace, TraceRequest

    return Trace("mooncake", bs, tuple(TraceRequest(f"r{i}", float(i), n, 1, tuple(keys), tuple(range(len(keys))), "s")
                                       for i, (keys, n) in enumerate(requests)))


def _causes(requests: list[tuple[list, int]], cap_blocks: int) -> list[list[str]]:
    """The causes of every path: the block pool (the reference), the fast pass with keys it counts
    densely or in a set of evicted keys, and the one told by the unlimited pass."""
    from prefixsim.engines.lru import replay_lru
    from prefixsim.engines.trace import replay_pool

    trace = _trace(requests)
    pool = [r.cause for r in replay_pool(trace, cap_blocks * 4)[0]]
    fast = replay_lru(trace.requests, cap_blocks, 4).causes
    seen = replay_lru(trace.requests, cap_blocks, 4, seen=replay_lru(trace.requests, None, 4)).causes
    as_text = [([str(k) for k in keys], n) for keys, n in requests]   # no longer the dense ints 0 .. n-1
    named = replay_lru(_trace(as_text).requests, cap_blocks, 4).causes
    return [pool, fast, seen, named]


@pytest.mark.parametrize("requests, cap, causes", [
    # exactly the capacity (2 blocks): kept whole, read again
    ([([0, 1], 8), ([0, 1], 8)], 2, ["cold", ""]),
    # one block more than the pool: its head kept, its tail never stored: the tail is cold (a hit)
    ([([0, 1, 2], 12), ([0, 1, 2], 12)], 2, ["cold", ""]),
    # a hit at block 0, then a block never seen: a hit (the rest is new)
    ([([0, 1], 8), ([0, 2], 8)], 4, ["cold", ""]),
    # block 0 evicted by another request: evicted at block 0
    ([([0, 1], 8), ([2, 3], 8), ([0, 1], 8)], 2, ["cold", "cold", "evicted"]),
    # block 0 read, block 1 evicted (the tail goes first): evicted after a read
    ([([0, 1], 8), ([2], 4), ([0, 1], 8)], 2, ["cold", "cold", "evicted"]),
    # two evicted blocks, the first missing one decides (block 0 here, though block 1 was evicted too)
    ([([0, 1], 8), ([2, 3], 8), ([0, 1, 4], 12)], 2, ["cold", "cold", "evicted"]),
])
def test_trace_causes_at_their_boundaries(requests, cap, causes):
    assert _causes(requests, cap) == [causes] * 4


@pytest.mark.parametrize("engine, unit", [("vllm", 16), ("sglang", 1), ("sglang", 4)])
def test_the_smallest_prompts_are_below_the_minimum(engine, unit):
    """At the engine's decide: 1 token up to one block (page) is below the minimum, one more is not;
    an empty prompt is no miss at all."""
    from prefixsim.engines.policy import EnginePolicy
    from prefixsim.model import Block, Layer, Request

    for n, below in ((0, False), (1, True), (unit, True), (unit + 1, False)):
        pol = EnginePolicy(engine, block_size=None if unit in (16, 1) else unit, encoding="approx")
        req = Request("m", (Block(Layer.SYSTEM, b"x", "system[0]", tokens=n),) if n else ())
        assert pol.decide(req, [], [n] if n else [], None, 0.0, 0.0).below_minimum is below, n
