"""OpenAI and DeepSeek automatic caching pinned rule by rule with exact numbers (issue 22).

Blocks carry fixed token counts, so every figure below is the documented rule's arithmetic:
O-PC / O-OLD (OpenAI prompt-caching guide): every prefix of 1,024 tokens or more is cached, reads are
the longest cached prefix rounded down to 128, in_memory entries live 5 min idle (pessimistic), a read
refreshes them; GPT-5.6+ writes only at breakpoints, billed 1.25x. DS (DeepSeek kv_cache guide): a
hit needs a whole persisted unit (the end of a request's input, or the common prefix of two requests),
64-token units. See docs/rules.md#openai and docs/rules.md#deepseek.
"""
import pytest

from prefixsim.model import Block, Call, CauseKind, Layer, Request
from prefixsim.providers import get_policy
from prefixsim.providers.automatic import deepseek, openai
from prefixsim.runner import Simulator

from conftest import split


def blk(layer, name, tokens, path=None):
    return Block(layer, name.encode(), path if path is not None else name, tokens=tokens)


TOOLS = blk(Layer.TOOLS, "tools[0]", 500)
SYSTEM = blk(Layer.SYSTEM, "messages[0]", 600)                  # tools + system = 1,100 tokens


def msg(i, tokens, tag=""):
    return blk(Layer.MESSAGES, f"messages[{i}]{tag}", tokens, f"messages[{i}]")


def sim(provider="openai", bound="pessimistic", **kw):
    return Simulator(provider, tokenizer="approx", policy=get_policy(provider, bound), **kw)


# --- OpenAI before GPT-5.6: multi-block conversations ------------------------------------------------

def test_openai_conversation_with_appended_turns_reads_the_longest_cached_prefix():
    s = sim()
    turn1 = (TOOLS, SYSTEM, msg(1, 300))                          # 1,400 tokens
    first = s.step(Call(0, Request("gpt-4.1", turn1)))
    # a cold miss of a cacheable prompt is cold, not below the minimum; writes are free before GPT-5.6
    assert split(first) == (0, 0, 0, 1400)
    assert first.cause.kind == CauseKind.COLD and first.read_blocks == 0
    # one block appended: the longest cached prefix is the whole previous prompt, 1,400 -> 1,280
    turn2 = (*turn1, msg(2, 200))                                 # 1,600
    second = s.step(Call(10, Request("gpt-4.1", turn2)))
    assert split(second) == (1280, 0, 0, 320)
    assert second.read_blocks == 3 and second.cause.kind == CauseKind.HIT
    # three blocks appended: 1,600 -> 1,536
    turn3 = (*turn2, msg(3, 100), msg(4, 100), msg(5, 100))        # 1,900
    third = s.step(Call(20, Request("gpt-4.1", turn3)))
    assert split(third) == (1536, 0, 0, 364) and third.read_blocks == 4
    # every position past the minimum was written: a branch after turn 2's third block reads 1,400
    branch = s.step(Call(30, Request("gpt-4.1", (*turn3[:3], msg(2, 700, "other"))), stream="b"))
    assert split(branch) == (1280, 0, 0, 820)


def test_openai_prefix_of_exactly_the_minimum_is_cached_and_read_whole():
    s = sim()
    system = blk(Layer.SYSTEM, "messages[0]", 524)                # 500 + 524 = 1,024 exactly
    s.step(Call(0, Request("gpt-4.1", (TOOLS, system, msg(1, 100)))))
    other = s.step(Call(10, Request("gpt-4.1", (TOOLS, system, msg(1, 100, "x"))), stream="b"))
    assert split(other) == (1024, 0, 0, 100)                      # 1,024 is a multiple of 128: no rounding
    assert other.read_blocks == 2


def test_openai_prompt_of_exactly_the_minimum_is_cached_and_one_below_is_not():
    s = sim()
    exact = Request("gpt-4.1", (TOOLS, blk(Layer.SYSTEM, "messages[0]", 524)))
    cold = s.step(Call(0, exact))
    assert split(cold) == (0, 0, 0, 1024) and cold.cause.kind == CauseKind.COLD
    assert split(s.step(Call(10, exact))) == (1024, 0, 0, 0)
    s = sim()
    short = Request("gpt-4.1", (TOOLS, blk(Layer.SYSTEM, "messages[0]", 523)))
    for t in (0, 10):
        got = s.step(Call(t, short))
        assert split(got) == (0, 0, 0, 1023)
        assert str(got.cause) == "below_minimum (1023 tokens)"


def test_openai_read_just_under_a_multiple_of_128_rounds_down():
    s = sim()
    system = blk(Layer.SYSTEM, "messages[0]", 651)                # 1,151 = 1,024 + 127
    s.step(Call(0, Request("gpt-4.1", (TOOLS, system))))
    assert s.step(Call(10, Request("gpt-4.1", (TOOLS, system, msg(1, 10))))).usage.cache_read == 1024
    system = blk(Layer.SYSTEM, "system-652", 652, "messages[0]")  # 1,152 = 9 x 128
    s.step(Call(20, Request("gpt-4.1", (TOOLS, system))))
    assert s.step(Call(30, Request("gpt-4.1", (TOOLS, system, msg(1, 10))))).usage.cache_read == 1152


def test_openai_read_refreshes_the_idle_window():
    # in_memory: 300 s idle. Reads every 240 s keep the entry; the same gap without the reads expires it.
    s = sim()
    r = Request("gpt-4o", (TOOLS, SYSTEM))
    s.step(Call(0, r))
    assert s.step(Call(240, r)).usage.cache_read == 1024
    assert s.step(Call(480, r)).usage.cache_read == 1024          # 480 s after the write, 240 after the read
    gone = s.step(Call(781, r))                                   # idle 301 s
    assert gone.usage.cache_read == 0
    assert str(gone.cause) == "ttl_expired (entry at messages[0] idle 301 s > ttl 300 s)"


def test_openai_entry_is_readable_only_after_the_first_response():
    # ttft 1 s (the runner's default): a request 0.5 s after the write finds it pending
    s = sim()
    r = Request("gpt-4.1", (TOOLS, SYSTEM))
    s.step(Call(0, r))
    early = s.step(Call(0.5, r, stream="b"))
    assert early.usage.cache_read == 0
    assert str(early.cause) == "not_yet_available (entry at messages[0] written at t=0s, readable from t=1s)"
    assert s.step(Call(1, r, stream="c")).usage.cache_read == 1024


def test_openai_optimistic_bound_reads_what_the_pessimistic_one_lost():
    r = Request("gpt-4o", (TOOLS, SYSTEM))
    for bound, read in (("pessimistic", 0), ("optimistic", 1024)):
        s = sim(bound=bound)
        s.step(Call(0, r))
        assert s.step(Call(599, r)).usage.cache_read == read       # 10 min optimistic, 5 pessimistic


def test_policy_constructors_default_to_the_pessimistic_bound():
    assert openai().bound == deepseek().bound == "pessimistic"
    assert (openai().name, deepseek().name) == ("openai", "deepseek")
    with pytest.raises(AssertionError):
        openai("middle")


def test_describe_names_each_rule():
    d = openai().describe("gpt-4o")
    assert d["provider"] == "openai"
    assert d["minimum cacheable tokens"] == "1024" and d["hit increment"] == "multiples of 128 tokens"
    assert d["caching"] == ("automatic; cached at every position past the minimum; longest cached prefix read, "
                            "inside blocks (token level)")
    assert d["retention"] == ("300 s idle (pessimistic: the figures shown) to 600 s idle (optimistic: the "
                              "*_optimistic figures), refreshed by a read; cap 3600 s from the write")
    d = openai().describe("gpt-5.6")
    assert d["hit increment"] == "exact boundary"
    assert d["retention"] == "1800 s idle, refreshed by a read; cap none"
    # GPT-5.6 writes at breakpoints, which need not be the request's end
    assert d["caching"] == ("automatic; cached at its breakpoints (the latest eligible message end, explicit "
                            "markers); longest cached prefix read, at block boundaries")
    d = deepseek().describe("deepseek-chat")
    assert d["provider"] == "deepseek" and d["minimum cacheable tokens"] == "64"
    assert d["caching"] == ("automatic; cached at the request's end, and the common prefix of two requests "
                            "(read from the next); longest cached prefix read, at block boundaries")
    assert d["hit increment"] == "multiples of 64 tokens"
    assert openai().has_range("gpt-4o") and not openai().has_range("gpt-5.6")


# --- GPT-5.6+: writes at breakpoints, billed -------------------------------------------------------------

def test_gpt_5_6_write_premium_arithmetic_on_an_appended_turn():
    s = sim()
    turn1 = (TOOLS, SYSTEM, blk(Layer.MESSAGES, '{"role":"user"}1', 300, "messages[1]"))   # 1,400
    assert split(s.step(Call(0, Request("gpt-5.6", turn1)))) == (0, 0, 1400, 0)
    turn2 = (*turn1, blk(Layer.MESSAGES, '{"role":"assistant"}2', 200, "messages[2]"),
             blk(Layer.MESSAGES, '{"role":"user"}3', 76, "messages[3]"))                  # 1,676
    # read 1,400 at the exact boundary; the new user message's end is written: 276 tokens at the premium
    assert split(s.step(Call(10, Request("gpt-5.6", turn2)))) == (1400, 0, 276, 0)
