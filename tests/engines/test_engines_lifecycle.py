"""Engine rules that need time and output: generated tokens are cached when a request ends (prompt +
output but the last token), and a running request holds its KV so it cannot be evicted.

Numbers are written from the rules (vllm-project/vllm `vllm/v1/core/kv_cache_manager.py`
allocate_slots / free; sgl-project/sglang `python/sglang/srt/mem_cache/radix_cache.py`
cache_finished_req / cache_unfinished_req / evict), not from the code's output.
"""
import pytest

from prefixsim.core.simulator import Simulator
from prefixsim.engines import RadixCache, VllmCache, serve
from prefixsim.engines.base import committed_tokens
from prefixsim.engines.policy import DEFAULT_DECODE_TOKENS_PER_S, DEFAULT_PREFILL_TOKENS_PER_S, EnginePolicy
from prefixsim.model import Block, Call, Layer, Request
from prefixsim.wire.anthropic import dumps

USER, ASSISTANT = dumps({"role": "user"}), dumps({"role": "assistant"})


def msg(i: int, role: bytes, text: bytes, tokens: int) -> Block:
    """Message i's only content block, with a fixed token count (ids drawn from its content)."""
    return Block(Layer.MESSAGES, role + text, f"messages[{i}].content[0]", tokens=tokens)


SYSTEM = Block(Layer.SYSTEM, b"system prompt", "system[0]", tokens=2000)
Q1 = msg(0, USER, b"first question", 100)
REPLY = msg(1, ASSISTANT, b"the model's reply", 400)
Q2 = msg(2, USER, b"second question", 100)
R1 = Request("llama-3.1-8b", (SYSTEM, Q1))            # 2,100 tokens, answered with 400
R2 = Request("llama-3.1-8b", (SYSTEM, Q1, REPLY, Q2))  # 2,600 tokens: r1 + its reply + 100


def simulator(engine, prices, **kw):
    return Simulator(engine, tokenizer="approx", policy=EnginePolicy(engine, encoding="approx", **kw),
                     prices=prices)


# --- generated tokens are cached ---------------------------------------------------------------------

@pytest.mark.parametrize("engine,read", [
    # vLLM caches full blocks of the 2,100 + 400 - 1 = 2,499 committed tokens: floor(2499/16)*16
    ("vllm", 2496),
    # SGLang inserts (input + output)[:kv_committed_len] = 2,499 tokens; the match cap is 2,599
    ("sglang", 2499),
])
def test_next_turn_reads_the_previous_reply(prices, engine, read):
    s = simulator(engine, prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    o2 = s.step(Call(60, R2, stream="main", output_tokens=50))
    assert (o2.usage.cache_read, o2.usage.input_tokens) == (read, 2600 - read)


@pytest.mark.parametrize("engine,read", [("vllm", 2496), ("sglang", 2499)])
def test_reply_learnt_while_the_request_still_runs(prices, engine, read):
    # r1 ends at 2100/10000 + 400/50 = 8.21 s; the next turn, sent at 1 s, names the reply first,
    # a third request after the end reads it
    s = simulator(engine, prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    early = s.step(Call(1, R2, stream="side", parent="main", output_tokens=1))
    late = s.step(Call(20, R2, stream="other", output_tokens=1))
    # while r1 runs only its prompt is cached: vLLM 131 blocks = 2,096, SGLang all 2,100
    assert early.usage.cache_read == {"vllm": 2096, "sglang": 2100}[engine]
    # the early request cached r2 (2,600 tokens, 162 full blocks) itself, so the third reads up to the cap
    assert late.usage.cache_read == {"vllm": 2592, "sglang": 2599}[engine]
    assert read <= late.usage.cache_read


def test_an_unquoted_reply_is_cached_but_never_read(prices):
    # the next prompt skips the reply (r1 + another question): the stand-in output takes space and
    # matches nothing
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    r3 = Request("llama-3.1-8b", (SYSTEM, Q1, msg(1, USER, b"never mind", 100)))
    assert s.step(Call(60, r3, stream="main", output_tokens=1)).usage.cache_read == 2100
    assert s.policy.caches["llama-3.1-8b"].used == 2100 + 399 + 100


def test_any_stream_that_quotes_the_reply_names_it(prices):
    # a log with no stream ids: the reply is whatever assistant message first follows r1's prompt
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    s.step(Call(30, Request("llama-3.1-8b", (Q2,)), stream="main", output_tokens=5))   # another conversation
    assert s.step(Call(60, R2, stream="elsewhere", output_tokens=1)).usage.cache_read == 2499


def test_reply_cut_to_the_output_tokens(prices):
    # the reply as quoted has 400 tokens but only 100 were generated: 2,100 + 99 committed
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=100))
    assert s.step(Call(60, R2, stream="main", output_tokens=1)).usage.cache_read == 2199


def test_committed_tokens_drop_the_last_output_token():
    assert committed_tokens([1, 2, 3], [4, 5]) == [1, 2, 3, 4]
    assert committed_tokens([1, 2, 3], []) == [1, 2, 3]
    c = VllmCache(block_size=4)
    assert serve(c, [1, 2, 3], output=[4, 5]).stored_tokens == 4     # one full block of 4 committed
    assert serve(VllmCache(block_size=4), [1, 2, 3], output=[4]).stored_tokens == 0


# --- running requests hold their blocks ------------------------------------------------------------

A = Request("m", (Block(Layer.SYSTEM, b"hot shared prefix", "system[0]", tokens=96),))
B = Request("m", (Block(Layer.SYSTEM, b"unrelated prompt", "system[0]", tokens=96),))


@pytest.mark.parametrize("engine,read_again", [
    # A holds its 6 blocks while it decodes; B finds 4 free blocks and cannot evict A's, so A's
    # prompt is whole when asked again: 5 blocks (the n-1 cap) = 80
    ("vllm", 80),
    # SGLang: A's path is locked; B stores 64 of its 96 tokens; A again reads 95 (cap n-1)
    ("sglang", 95),
])
def test_running_request_is_not_evicted(prices, engine, read_again):
    # A runs from 0 to 96/10000 + 2/1 s; B and A-again arrive while it runs
    s = simulator(engine, prices, capacity=160, decode_tokens_per_s=1)
    s.step(Call(0, A, stream="a", output_tokens=2))
    s.step(Call(0.1, B, stream="b", output_tokens=1))
    assert s.step(Call(0.2, A, stream="c", output_tokens=1)).usage.cache_read == read_again


@pytest.mark.parametrize("engine,read_again", [
    # A ended before B: its 6 free blocks are evicted tail first, 2 of them, leaving 4 = 64
    ("vllm", 64),
    # A ended (97 tokens cached, unlocked): B evicts the whole leaf, A again reads nothing
    ("sglang", 0),
])
def test_finished_request_is_evicted_by_policy(prices, engine, read_again):
    s = simulator(engine, prices, capacity=160, decode_tokens_per_s=1)
    s.step(Call(0, A, stream="a", output_tokens=2))
    s.step(Call(10, B, stream="b", output_tokens=1))
    assert s.step(Call(10.1, A, stream="c", output_tokens=1)).usage.cache_read == read_again


def test_pinned_prefix_survives_concurrent_load():
    # A hot prefix held by a long request stays while other prompts churn through the rest
    c = RadixCache(capacity=300)
    hot = list(range(1000, 1100))
    hit, hold = c.begin(hot + [1])
    for k in range(20):
        serve(c, list(range(k * 1000 + 5000, k * 1000 + 5150)))
    assert c.match(hot + [2]) == 100
    c.end(hold, hot + [1])
    for k in range(20, 22):
        serve(c, list(range(k * 1000 + 5000, k * 1000 + 5150)))
    assert c.match(hot + [2]) == 0      # released, least recently used: gone


def test_vllm_pool_evicts_only_unreferenced_blocks():
    c = VllmCache(capacity=64, block_size=16)       # 4 blocks
    hit, hold = c.begin(list(range(48)))             # 3 blocks held
    assert serve(c, list(range(100, 148))).stored_tokens == 16   # 1 free block; the rest cannot evict
    assert c.match(list(range(49))) == 48
    c.end(hold, list(range(48)))
    # now free: the queue holds B's block (freed first), then A's blocks tail first; 3 go
    assert serve(c, list(range(200, 248))).stored_tokens == 48
    assert (c.match(list(range(49))), c.match(list(range(100, 117)))) == (16, 0)


def test_request_time_defaults(prices):
    pol = EnginePolicy("vllm", encoding="approx")
    assert (DEFAULT_PREFILL_TOKENS_PER_S, DEFAULT_DECODE_TOKENS_PER_S) == (10_000, 50)
    assert "10,000 tokens/s" in pol.describe("m")["request time"]
    s = Simulator("vllm", tokenizer="approx", policy=pol, prices=prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))    # ends at 0.21 + 8 = 8.21 s
    pol.finish_until(8.2)
    assert len(pol._running) == 1
    pol.finish_until(8.21)
    assert pol._running == []


@pytest.mark.parametrize("cache", [VllmCache(block_size=4), RadixCache()], ids=["vllm", "sglang"])
def test_two_requests_with_the_same_reply_keep_one_copy(cache):
    # Both answer the same 8-token prompt; their 9 output tokens (8 committed) are cached under
    # stand-ins, then each learns the real reply: the second copy is dropped, not stored twice
    prompt, reply = list(range(1, 9)), list(range(100, 109))
    _, h1 = cache.begin(prompt)
    _, h2 = cache.begin(prompt)
    out1 = cache.end(h1, prompt + list(range(200, 208)))
    out2 = cache.end(h2, prompt + list(range(300, 308)))
    assert cache.used == 24
    cache.rekey(out1, prompt + reply[:8])
    assert (cache.used, cache.match(prompt + reply + [0])) == (24, 16)
    cache.rekey(out2, prompt + reply[:8])
    assert (cache.used, cache.match(prompt + reply + [0])) == (16, 16)
    assert cache.match(list(range(1, 9)) + list(range(300, 308)) + [0]) == 8


@pytest.mark.parametrize("cache", [VllmCache(capacity=16, block_size=4), RadixCache(capacity=16)],
                         ids=["vllm", "sglang"])
def test_an_evicted_output_stays_evicted_when_its_reply_is_learnt(cache):
    prompt, reply = list(range(1, 9)), list(range(100, 109))
    _, hold = cache.begin(prompt)
    out = cache.end(hold, prompt + list(range(200, 208)))     # the cache is full: 16 tokens
    serve(cache, list(range(500, 508)))                      # evicts the output (the freed tail / LRU leaf)
    cache.rekey(out, prompt + reply[:8])
    assert (cache.used, cache.match(prompt + reply + [0])) == (16, 8)


@pytest.mark.parametrize("limit", [("MAX_PENDING", 1), ("MAX_PENDING_TOKENS", 2199)])
def test_only_the_latest_unanswered_requests_wait_for_their_reply(prices, monkeypatch, limit):
    # at most 1 request, or 2,199 prompt tokens: r1 (2,100) and a 100-token request do not both fit
    import prefixsim.engines.policy as policy

    monkeypatch.setattr(policy, *limit)
    s = simulator("sglang", prices)
    s.step(Call(0, R1, stream="main", output_tokens=400))
    s.step(Call(30, Request("llama-3.1-8b", (Q2,)), stream="main", output_tokens=5))   # pushes r1 out
    # r1's reply stays a stand-in: the next turn reads r1's prompt only
    assert s.step(Call(60, R2, stream="main", output_tokens=1)).usage.cache_read == 2100


@pytest.mark.parametrize("shape", ["anthropic", "openai"])
def test_replies_in_rendered_api_bodies(prices, shape):
    # A chat log, rendered as prefixsim reads it: the second body quotes the first one's reply.
    # SGLang caches r1's prompt + 5 output tokens but the last; the quoted reply is longer, so the
    # next body reads the prompt and 4 reply tokens, then parts at the first stand-in token
    from prefixsim.sources.openai_log import render_openai
    from prefixsim.wire.anthropic import render_anthropic

    system = "You answer questions about the weather in plain words. " * 30
    turn1 = [{"role": "user", "content": "Will it rain in Oslo tomorrow afternoon?"}]
    turn2 = turn1 + [{"role": "assistant", "content": "Light rain is likely after two o'clock, clearing later."},
                     {"role": "user", "content": "And on Sunday?"}]
    if shape == "anthropic":
        r1 = render_anthropic({"model": "llama-3.1-8b", "system": system, "messages": turn1})
        r2 = render_anthropic({"model": "llama-3.1-8b", "system": system, "messages": turn2})
    else:
        sys_msg = [{"role": "system", "content": system}]
        r1 = render_openai({"model": "llama-3.1-8b", "messages": sys_msg + turn1})
        r2 = render_openai({"model": "llama-3.1-8b", "messages": sys_msg + turn2})
    s = simulator("sglang", prices)
    o1 = s.step(Call(0, r1, stream="main", output_tokens=5))
    o2 = s.step(Call(60, r2, stream="main", output_tokens=5))
    assert o2.usage.cache_read == o1.usage.prompt_tokens + 4
