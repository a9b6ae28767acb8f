"""OpenAI and DeepSeek automatic caching pinned rule by rule with exact numbers (issue 22).

Blocks carry fixed token counts, so every figure below is the documented rule's arithmetic:
O-PC / O-OLD (OpenAI prompt-caching guide): every prefix of 1,024 tokens or more is cached, reads are
the longest cached prefix rounded down to 128, in_memory entries live 5 min idle (pessimistic), a read
refreshes them; GPT-5.6+ writes only at breakpoints, billed 1.25x. DS (DeepSeek kv_cache guide): a
hit needs a whole persisted unit (the end of a request's input, or the common prefix of two requests),
64-token units. See docs/rules.md#openai and docs/rules.md#deepseek.
"""
import pytest
from conftest import split

from prefixsim.core.simulator import Simulator
from prefixsim.errors import UserError
from prefixsim.model import Block, Call, CauseKind, Layer, Request
from prefixsim.providers.registry import get_policy
from prefixsim.providers.automatic import deepseek, gemini, openai


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


def test_policy_constructors_default_to_the_printed_figure_which_is_the_pessimistic_end():
    # the printed figure is the range's pessimistic end unless a rule prints what traffic shows (Gemini,
    # DeepSeek's retention)
    assert openai().bound == deepseek().bound == "printed"
    rule = openai().rule_of("gpt-4o")
    assert rule.printed == "pessimistic" and rule.idle("printed") == rule.idle("pessimistic")
    assert rule.minimum("printed") == rule.minimum("pessimistic") and rule.step("printed") == rule.increment
    rule = deepseek().rule_of("deepseek-chat")   # only its retention is measured: its unit and minimum documented
    assert rule.printed == "measured" and (rule.idle("pessimistic"), rule.idle("printed"), rule.idle("optimistic")) \
        == (3600, 43200, 86400)
    assert rule.minimum("printed") == rule.minimum("pessimistic") == 64 and rule.step("printed") == rule.increment == 64
    assert (openai().name, deepseek().name) == ("openai", "deepseek")
    with pytest.raises(AssertionError):
        openai("middle")



def test_policy_constructors_refuse_an_unlisted_model_unless_asked_to_take_the_unlisted_rule():
    # a scenario's model must be listed (a misspelling is named); only a replay of real traffic
    # (listed_only=False) gives an unlisted model the provider's rule for unlisted ones
    for make, model in ((openai, "gpt-9-turbo"), (gemini, "gemini-9-ultra")):
        with pytest.raises(UserError, match="unknown"):
            make().rule_of(model)
        assert make(listed_only=False).rule_of(model).min_tokens == 1024


def test_the_gemini_policy_defaults_to_the_measured_figure_and_keeps_the_one_asked():
    # G-CC: implicit caching is best effort; the printed figure is what traffic shows, between the
    # pessimistic end (no hit promised) and the optimistic one
    assert (gemini().name, gemini().bound) == ("gemini", "printed")
    assert gemini().rule_of("gemini-2.5-pro").printed == "measured"
    assert gemini("optimistic").bound == "optimistic" and gemini("pessimistic").bound == "pessimistic"
    assert get_policy("gemini", "optimistic").describe("gemini-2.5-flash")["provider"] == "gemini"

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


# --- GPT-5.6+: which message ends are breakpoints (O-PC "How prefix matching works") ---------------------

def part(path, data, tokens):
    return Block(Layer.MESSAGES, data.encode(), path, tokens=tokens)


DEV = blk(Layer.SYSTEM, "input[0]", 600)


@pytest.mark.parametrize("kind,output", [(b"function_call_output", b"one"),
                                         (b"function_call_output", b"\xff bytes that are no UTF-8"),
                                         (b"custom_tool_call_output", b"one")])
def test_gpt_5_6_only_the_last_tool_response_of_a_group_is_a_breakpoint(kind, output):
    s = sim()
    user_ = part("input[1]", '{"content":"go","role":"user"}', 100)        # role not first: decoded
    call = part("input[2]", '{"type":"function_call","call_id":"c1"}', 50)
    out1 = Block(Layer.MESSAGES, b'{"type":"' + kind + b'","call_id":"c1","output":"' + output + b'"}',
                 "input[3]", tokens=200)
    out2 = part("input[4]", '{"type":"function_call_output","call_id":"c2","output":"two"}', 100)
    # request 1 ends with a group of one tool response: the implicit breakpoint is its end, 1,450
    assert split(s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, user_, call, out1))))) == (0, 0, 1450, 0)
    # request 2 adds a second response to that group: only the group's last is eligible, so the end of
    # the first (cached) is no lookup boundary; the user message end and developer end were not written
    second = s.step(Call(10, Request("gpt-5.6", (TOOLS, DEV, user_, call, out1, out2))))
    assert split(second) == (0, 0, 1550, 0)
    assert str(second.cause) == ("lookback_exceeded (entry at input[3] is not one of this request's cache "
                                 "lookup boundaries)")


def test_gpt_5_6_chat_tool_messages_form_groups_too():
    s = sim()
    user_ = part("messages[1]", '{"role":"user","content":"go"}', 100)
    asst = part("messages[2]", '{"role":"assistant","tool_calls":[]}', 50)
    t1 = part("messages[3]", '{"role":"tool","tool_call_id":"c1","content":"one"}', 200)
    t2 = part("messages[4]", '{"role":"tool","tool_call_id":"c2","content":"two"}', 100)
    assert split(s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, user_, asst, t1, t2))))) == (0, 0, 1550, 0)


def test_gpt_5_6_a_message_of_several_blocks_ends_at_its_last_block():
    s = sim()
    first = part("messages[1].content[0]", '{"role":"user"}{"type":"text","text":"a"}', 100)
    second = part("messages[1].content[1]", '{"type":"text","text":"b"}', 100)
    assert split(s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, first, second))))) == (0, 0, 1300, 0)
    # a whole prompt that is one two-block user message (no tools, no developer message)
    s = sim()
    a = part("messages[0].content[0]", '{"role":"user"}{"type":"text","text":"a"}', 600)
    b = part("messages[0].content[1]", '{"type":"text","text":"b"}', 600)
    assert split(s.step(Call(0, Request("gpt-5.6", (a, b))))) == (0, 0, 1200, 0)


def test_gpt_5_6_unnamed_blocks_are_messages_of_their_own():
    s = sim()
    user_ = part("", '{"role":"user","content":"q"}', 100)
    asst = part("", '{"role":"assistant","content":"a"}', 100)
    # the latest user message ends at block 2; the assistant block after it is not part of it
    assert split(s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, user_, asst))))) == (0, 0, 1200, 100)


def test_gpt_5_6_text_that_is_not_json_counts_as_a_user_message():
    s = sim()
    odd = part("messages[1]", "{not json", 100)
    assert split(s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, odd))))) == (0, 0, 1200, 0)


def test_gpt_5_6_without_a_user_message_writes_at_the_developer_end():
    s = sim()
    asst = part("messages[1]", '{"role":"assistant","content":"a"}', 100)
    assert split(s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, asst))))) == (0, 0, 1100, 100)


# --- DeepSeek: persisted prefix units (DS kv_cache) ------------------------------------------------------

def text(layer, s, path):
    return Block(layer, s.encode(), path)


A = blk(Layer.SYSTEM, "messages[0]", 1100)


def ds_sim(**kw):
    return sim("deepseek", **kw)


def test_deepseek_request_end_of_exactly_64_tokens_is_cached():
    s = ds_sim()
    r = Request("deepseek-chat", (blk(Layer.MESSAGES, "messages[0]", 64),))
    assert split(s.step(Call(0, r))) == (0, 0, 0, 64)
    assert split(s.step(Call(10, r))) == (64, 0, 0, 0)
    s = ds_sim()
    r = Request("deepseek-chat", (blk(Layer.MESSAGES, "messages[0]", 63),))
    s.step(Call(0, r))
    got = s.step(Call(10, r))
    assert split(got) == (0, 0, 0, 63) and str(got.cause) == "below_minimum (63 tokens)"


def test_deepseek_common_prefix_ending_at_a_block_boundary():
    # A + B, A + C: A is persisted as their common prefix; A + D reads it (1,100 -> 1,088 in 64s)
    s = ds_sim()
    s.step(Call(0, Request("deepseek-chat", (A, blk(Layer.MESSAGES, "B-messages[1]", 100, "messages[1]")))))
    second = s.step(Call(10, Request("deepseek-chat", (A, blk(Layer.MESSAGES, "C-messages[1]", 100, "messages[1]"))),
                         stream="2"))
    assert second.usage.cache_read == 0
    third = s.step(Call(20, Request("deepseek-chat", (A, blk(Layer.MESSAGES, "X-messages[1]", 100, "messages[1]"))),
                        stream="3"))
    assert split(third) == (1088, 0, 0, 112) and third.read_blocks == 1


def test_deepseek_a_read_through_a_common_prefix_at_a_block_boundary_refreshes_it():
    # A + B, A + C: A is persisted at t=10 at its chain position (1 h idle, pessimistic); A + C + D at 2,000
    # reads A + C, which keeps A alive too (Store.touch_prefix): A + X at 4,000, past 10 + 3,600, still reads
    # A, 1,100 -> 1,088 (found by mutation testing: A written at another depth is not refreshed by that read)
    s = ds_sim()
    c = blk(Layer.MESSAGES, "C-messages[1]", 100, "messages[1]")
    s.step(Call(0, Request("deepseek-chat", (A, blk(Layer.MESSAGES, "B-messages[1]", 100, "messages[1]")))))
    s.step(Call(10, Request("deepseek-chat", (A, c))))
    assert s.step(Call(2000, Request("deepseek-chat", (A, c, msg(2, 100))))).usage.cache_read == 1152
    got = s.step(Call(4000, Request("deepseek-chat", (A, blk(Layer.MESSAGES, "X-messages[1]", 100, "messages[1]")))))
    assert split(got) == (1088, 0, 0, 112) and got.read_blocks == 1 and got.cause.kind == CauseKind.PREFIX_CHANGED


def test_deepseek_common_prefix_of_exactly_64_tokens():
    s = ds_sim()
    for t, tail in ((0, "B"), (10, "C")):
        s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 256 + tail * 40, "messages[0]"),)),
                    stream=tail))
    third = s.step(Call(20, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 256 + "X" * 40, "messages[0]"),)),
                        stream="X"))
    assert split(third) == (64, 0, 0, 10)


@pytest.mark.parametrize("common", [63, 40])
def test_deepseek_common_prefix_below_64_tokens_is_not_persisted(common):
    s = ds_sim()
    for t, tail in ((0, "B"), (10, "C"), (20, "X")):
        got = s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * (4 * common) + tail * 200,
                                                               "messages[0]"),)), stream=tail))
        assert split(got) == (0, 0, 0, common + 50) and got.cause.kind == CauseKind.COLD
    assert len(s.store) == 3                                       # the three request ends, no common unit


def test_deepseek_short_shared_start_at_a_block_boundary_is_not_persisted():
    s = ds_sim()
    head = blk(Layer.SYSTEM, "messages[0]", 40)
    for t, tail in ((0, "B"), (10, "C"), (20, "X")):
        got = s.step(Call(t, Request("deepseek-chat", (head, blk(Layer.MESSAGES, tail, 100, "messages[1]"))),
                          stream=tail))
        assert split(got) == (0, 0, 0, 140) and got.read_blocks == 0 and got.cause.kind == CauseKind.COLD
    assert len(s.store) == 3


def test_deepseek_common_prefix_one_token_into_a_block():
    s = ds_sim()
    for t, tail in ((0, "B"), (10, "C")):
        s.step(Call(t, Request("deepseek-chat", (A, text(Layer.MESSAGES, "ZZZZ" + tail * 40, "messages[1]"))),
                    stream=tail))
    third = s.step(Call(20, Request("deepseek-chat", (A, text(Layer.MESSAGES, "ZZZZ" + "X" * 40, "messages[1]"))),
                        stream="X"))
    assert third.usage.cache_read == 1088                          # 1,100 + 1 = 1,101 -> 1,088


def test_deepseek_two_common_units_under_one_parent_both_stay_readable():
    s = ds_sim()
    p, r = "p" * 400, "r" * 400                                     # 100 tokens each
    for t, tail in ((0, p + "B" * 40), (10, p + "C" * 40), (20, r + "D" * 40), (30, r + "E" * 40)):
        s.step(Call(t, Request("deepseek-chat", (A, text(Layer.MESSAGES, tail, "messages[1]"))), stream=tail))
    # A + p.. is a unit of 1,200 tokens (1,152 read); A alone (persisted when r.. followed p..) gives 1,088
    got = s.step(Call(40, Request("deepseek-chat", (A, text(Layer.MESSAGES, p + "F" * 40, "messages[1]"))), stream="F"))
    assert got.usage.cache_read == 1152
    got = s.step(Call(50, Request("deepseek-chat", (A, text(Layer.MESSAGES, r + "G" * 40, "messages[1]"))), stream="G"))
    assert got.usage.cache_read == 1152


def test_deepseek_an_expired_common_unit_is_not_read():
    s = ds_sim()
    for t, head, tail in ((0, "D", "B"), (10, "D", "C"), (3000, "E", "B"), (3010, "E", "C")):
        s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, head * 1000 + tail * 200, "messages[0]"),)),
                    stream=f"{t}"))
    # the D unit was written at t=10: idle past 1 h at t=3,700 (the E unit, written at 3,010, is live)
    got = s.step(Call(3700, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000 + "X" * 200, "messages[0]"),)),
                      stream="late"))
    assert got.usage.cache_read == 0
    got = s.step(Call(3701, Request("deepseek-chat", (text(Layer.MESSAGES, "E" * 1000 + "X" * 200, "messages[0]"),)),
                      stream="late-e"))
    assert got.usage.cache_read == 192                             # 250 -> 192


def test_deepseek_common_unit_keeps_the_optimistic_window():
    s = ds_sim(bound="optimistic")
    for t, tail in ((0, "B"), (10, "C")):
        s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000 + tail * 200, "messages[0]"),)),
                    stream=tail))
    got = s.step(Call(7210, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000 + "X" * 200, "messages[0]"),)),
                      stream="X"))
    assert got.usage.cache_read == 192                             # 2 h idle: inside the optimistic 24 h


@pytest.mark.parametrize("capacity,read", [(850, 256), (849, 192)])
def test_deepseek_common_unit_takes_its_tokens_in_a_bounded_store(capacity, read):
    # two request ends of 300 tokens and their 250-token common unit: 850 tokens in all
    s = Simulator("deepseek", tokenizer="approx", policy=get_policy("deepseek"), capacity=capacity)
    r1 = Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000 + "B" * 200, "messages[0]"),))
    s.step(Call(0, r1))
    s.step(Call(10, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000 + "C" * 200, "messages[0]"),)), stream="c"))
    # at 849 the first end was evicted for the unit: the same request again reads the unit, 250 -> 192
    assert s.step(Call(20, r1, stream="again")).usage.cache_read == read


def test_deepseek_common_prefix_counts_tokenizer_tokens():
    from prefixsim.core.tokens import get_tokenizer

    tok = get_tokenizer("cl100k_base")
    doc = " word" * 300                                           # 300 cl100k tokens, 1,500 bytes
    s = Simulator("deepseek", tokenizer="cl100k_base", policy=get_policy("deepseek"))
    for t, tail in ((0, " alpha"), (10, " omega")):                # tails of 200 tokens
        s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, doc + tail * 200, "messages[0]"),)), stream=tail))
    got = s.step(Call(20, Request("deepseek-chat", (text(Layer.MESSAGES, doc + " delta" * 200, "messages[0]"),)),
                      stream="d"))
    assert tok.count_text(doc) == 300
    assert got.usage.cache_read == 256                             # 300 -> 256 (the chars/4 count, 375, would give 320)


def test_gpt_5_6_initial_developer_group_ends_at_its_last_message():
    s = sim()
    dev2 = blk(Layer.SYSTEM, "input[1]", 300)
    asst = part("input[2]", '{"role":"assistant","content":"a"}', 100)
    got = s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, dev2, asst))))
    assert split(got) == (0, 0, 1400, 100) and got.read_blocks == 0
    # no tools: the developer group starts the prompt
    s = sim()
    first = blk(Layer.SYSTEM, "input[0]", 1100)
    assert split(s.step(Call(0, Request("gpt-5.6", (first, asst))))) == (0, 0, 1100, 100)
    # a prompt that ends with the developer group, and one of tools only
    assert split(sim().step(Call(0, Request("gpt-5.6", (TOOLS, DEV))))) == (0, 0, 1100, 0)
    only_tools = sim().step(Call(0, Request("gpt-5.6", (blk(Layer.TOOLS, "tools[0]", 1100),))))
    assert split(only_tools) == (0, 0, 0, 1100) and only_tools.cause.kind == CauseKind.COLD


def test_empty_requests_cost_nothing():
    for model in ("gpt-5.6", "gpt-4.1"):
        got = sim().step(Call(0, Request(model, ())))
        assert split(got) == (0, 0, 0, 0) and got.read_blocks == 0
    got = ds_sim().step(Call(0, Request("deepseek-chat", ())))
    assert split(got) == (0, 0, 0, 0)


def test_gpt_5_6_explicit_marker_past_the_end_is_ignored():
    got = sim().step(Call(0, Request("gpt-5.6", (TOOLS, DEV), cache_mode="explicit", explicit=(1, 2))))
    assert split(got) == (0, 0, 1100, 0)


@pytest.mark.parametrize("later,read", [(50, 0), (49, 1200)])
def test_gpt_5_6_looks_up_the_first_2_and_latest_50_explicit_breakpoints(later, read):
    # O-PC: lookups at the first 2 and the latest 50 explicit breakpoints. Request 1 marks blocks 0, 1,
    # 2 and writes at block 2 (1,200; the first two are below the minimum). Request 2 marks 0, 1, 2
    # and `later` more: with 50 more, block 2 is the 51st latest and neither of the first two.
    head = (part("messages[0]", "m0", 100), part("messages[1]", "m1", 100), part("messages[2]", "m2", 1000))
    s = sim()
    first = s.step(Call(0, Request("gpt-5.6", head, cache_mode="explicit", explicit=(0, 1, 2))))
    assert split(first) == (0, 0, 1200, 0)
    tail = tuple(part(f"messages[{3 + k}]", f"t{k}", 10) for k in range(later))
    got = s.step(Call(10, Request("gpt-5.6", head + tail, cache_mode="explicit", explicit=tuple(range(3 + later)))))
    # written: from the read to the deepest of the (at most four) marked ends
    assert split(got) == (read, 0, 1200 + 10 * later - read, 0)


# --- OpenAI before GPT-5.6: reads inside the first differing block, only where bytes compare --------------

def test_openai_reads_inside_a_system_block():
    # tools 500 + 1,500 common system tokens (6,000 equal characters) = 2,000 -> 1,920
    s = sim()
    s.step(Call(0, Request("gpt-4.1", (TOOLS, text(Layer.SYSTEM, "S" * 6000 + "a" * 40, "messages[0]")))))
    got = s.step(Call(10, Request("gpt-4.1", (TOOLS, text(Layer.SYSTEM, "S" * 6000 + "b" * 40, "messages[0]"))),
                      stream="b"))
    assert got.usage.cache_read == 1920 and got.read_blocks == 1


def test_openai_does_not_read_into_a_block_of_fixed_size_or_of_another_layer():
    # a block sized by a count may hold a label, not its text; a block in another layer follows other
    # layer parameters: neither is compared byte by byte (docs/rules.md#openai-automatic-prompt-caching)
    s = sim()
    s.step(Call(0, Request("gpt-4.1", (TOOLS, text(Layer.SYSTEM, "S" * 6000 + "a" * 40, "messages[0]")))))
    fixed = Block(Layer.SYSTEM, b"S" * 6000 + b"b" * 40, "messages[0]", tokens=1510)
    assert s.step(Call(10, Request("gpt-4.1", (TOOLS, fixed)), stream="b")).usage.cache_read == 0
    other_layer = text(Layer.MESSAGES, "S" * 6000 + "c" * 40, "messages[0]")
    assert s.step(Call(20, Request("gpt-4.1", (TOOLS, other_layer)), stream="c")).usage.cache_read == 0


def test_deepseek_entry_read_is_older_than_the_end_written_after_it():
    # capacity 2,500: A+B (1,200) then A+B+C reads it and writes 1,300; a 200-token request then evicts
    # the least recently used, A+B (read before A+B+C was written), so A+B+D reads nothing
    s = Simulator("deepseek", tokenizer="approx", policy=get_policy("deepseek"), capacity=2500)
    b, c, d = (blk(Layer.MESSAGES, f"{x}-messages[1]", 100, "messages[1]") for x in "BCD")
    s.step(Call(0, Request("deepseek-chat", (A, b))))
    assert s.step(Call(10, Request("deepseek-chat", (A, b, blk(Layer.MESSAGES, "C2", 100, "messages[2]"))))).usage.cache_read == 1152
    s.step(Call(20, Request("deepseek-chat", (blk(Layer.MESSAGES, "other", 200, "messages[0]"),)), stream="x"))
    got = s.step(Call(30, Request("deepseek-chat", (A, b, d)), stream="y"))
    assert got.usage.cache_read == 0 and got.cause.kind == CauseKind.EVICTED


def test_deepseek_common_units_are_remembered_for_a_bounded_number_of_parents(monkeypatch):
    from prefixsim.providers import automatic

    monkeypatch.setattr(automatic, "REMEMBERED_PARENTS", 2)
    s = ds_sim()
    heads = [blk(Layer.SYSTEM, f"head-{k}", 1100, "messages[0]") for k in range(3)]
    t = 0
    for head in heads:                      # a common unit under each of three parents, oldest first
        for tail in ("B", "C"):
            t += 10
            s.step(Call(t, Request("deepseek-chat", (head, text(Layer.MESSAGES, "p" * 400 + tail * 40, "messages[1]"))),
                        stream=f"{t}"))
    reads = [s.step(Call(100 + k, Request("deepseek-chat", (head, text(Layer.MESSAGES, "p" * 400 + "X" * 40,
                                                                            "messages[1]"))), stream=f"r{k}")).usage.cache_read
             for k, head in enumerate(heads)]
    # the oldest parent's unit is forgotten (its head alone, persisted at the block boundary, is not: the
    # two requests under it parted inside the block); the two newest still read 1,100 + 100 -> 1,152
    assert reads == [0, 1152, 1152]


def test_deepseek_a_read_of_a_common_unit_refreshes_it():
    # 1 h idle (pessimistic): the unit D.. written at t=10 is read at 3,000 (by a request that shares more
    # with the latest one, so its own new unit is D.. + C..) and again at 6,500, 3,500 s after that read
    s = ds_sim()
    for t, tail in ((0, "B" * 200), (10, "C" * 200), (3000, "C" * 100 + "Z" * 100), (6500, "Y" * 200)):
        got = s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000 + tail, "messages[0]"),)),
                          stream=str(t)))
        assert got.usage.cache_read == (192 if t > 10 else 0)


def test_deepseek_common_prefix_of_exactly_64_tokens_at_a_block_boundary():
    s = ds_sim()
    head = blk(Layer.SYSTEM, "messages[0]", 64)
    for t, tail in ((0, "B"), (10, "C")):
        s.step(Call(t, Request("deepseek-chat", (head, blk(Layer.MESSAGES, tail, 100, "messages[1]"))), stream=tail))
    got = s.step(Call(20, Request("deepseek-chat", (head, blk(Layer.MESSAGES, "X", 100, "messages[1]"))), stream="X"))
    assert split(got) == (64, 0, 0, 100) and got.read_blocks == 1


def test_deepseek_a_request_that_is_exactly_the_common_prefix_reads_it():
    s = ds_sim()
    for t, tail in ((0, "B"), (10, "C")):
        s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000 + tail * 200, "messages[0]"),)),
                    stream=tail))
    got = s.step(Call(20, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1000, "messages[0]"),)), stream="d"))
    assert split(got) == (192, 0, 0, 58)                            # 250 tokens, the whole unit -> 192


def test_gpt_5_6_a_user_message_is_recognised_wherever_its_role_key_is():
    s = sim()
    user_ = part("messages[1]", '{"content":"go","role":"user"}', 100)
    asst = part("messages[2]", '{"content":"ok","role":"assistant"}', 100)
    assert split(s.step(Call(0, Request("gpt-5.6", (TOOLS, DEV, user_, asst))))) == (0, 0, 1200, 100)


def test_gpt_5_6_exact_minimum_and_below_it():
    exact = sim().step(Call(0, Request("gpt-5.6", (TOOLS, blk(Layer.SYSTEM, "input[0]", 524)))))
    assert split(exact) == (0, 0, 1024, 0) and exact.cause.kind == CauseKind.COLD
    short = sim().step(Call(0, Request("gpt-5.6", (TOOLS, blk(Layer.SYSTEM, "input[0]", 500),
                                                   part("input[1]", '{"role":"user"}', 10)))))
    assert split(short) == (0, 0, 0, 1010) and str(short.cause) == "below_minimum (1010 tokens)"


def test_gpt_5_6_a_read_of_the_first_block_refreshes_it():
    # 30 min after the latest write or reuse (O-PC): block 0 written at 0, read at 1,000, read again at 2,500
    s = sim()
    first = blk(Layer.SYSTEM, "input[0]", 1100)
    for t in (0, 1000, 2500):
        got = s.step(Call(t, Request("gpt-5.6", (first, part("input[1]", '{"role":"user"}%d' % t, 100)), explicit=(0,))))
        assert got.usage.cache_read == (1100 if t else 0)


def test_gpt_5_6_writes_at_most_four_breakpoints_the_deepest():
    s = sim()
    marked = tuple(part(f"messages[{k}]", f"m{k}", 1100 if k == 0 else 100) for k in range(5))   # 1,100 .. 1,500
    assert split(s.step(Call(0, Request("gpt-5.6", marked, cache_mode="explicit", explicit=tuple(range(5)))))) \
        == (0, 0, 1500, 0)
    # the shallowest marked end was not written
    got = s.step(Call(10, Request("gpt-5.6", (marked[0], part("messages[1]", "other", 100)), cache_mode="explicit",
                                  explicit=(0,))))
    assert got.usage.cache_read == 0


def test_describe_gives_the_rule_source():
    assert openai().describe("gpt-4o")["source"] == openai().rule(Request("gpt-4o", ())).source


def test_openai_a_part_block_read_rounded_to_nothing_is_no_hit():
    # bug found by mutation testing: 100 + 100 common tokens round down to 0 (under 1,024), yet the
    # request was reported as a hit of one block; it is a miss, below the minimum for its 250 tokens
    s = sim()
    head = blk(Layer.SYSTEM, "messages[0]", 100)
    s.step(Call(0, Request("gpt-4.1", (head, text(Layer.MESSAGES, "D" * 4000, "messages[1]")))))
    got = s.step(Call(10, Request("gpt-4.1", (head, text(Layer.MESSAGES, "D" * 400 + "E" * 200, "messages[1]"))),
                      stream="b"))
    assert split(got) == (0, 0, 0, 250) and got.read_blocks == 0
    assert str(got.cause) == "below_minimum (250 tokens)"
    # above the minimum, the same rounded-away read is a cold miss
    got = s.step(Call(20, Request("gpt-4.1", (head, text(Layer.MESSAGES, "D" * 400 + "F" * 4000, "messages[1]"))),
                      stream="c"))
    assert got.usage.cache_read == 0 and got.read_blocks == 0 and got.cause.kind == CauseKind.COLD


def test_openai_a_part_block_read_is_never_more_than_the_blocks_own_size():
    # Two logged blocks (sized by the log, holding what the model saw) compared token by token: their
    # texts count 2 + 1 + 200 tokens by the tokenizer, but the log sized each block at 100, so the part of
    # the block read is at most its 100: 1,100 + 100 = 1,200 -> 1,152, never 1,100 + 203 -> 1,280
    s = sim()
    head = blk(Layer.SYSTEM, "messages[0]", 1100)
    seen = (2, ("user", "A" * 800))

    def logged(tail):
        return Block(Layer.MESSAGES, b'{"role":"user","part":"' + b"A" * 800 + tail, "messages[1]", tokens=100, sees=seen)

    s.step(Call(0, Request("gpt-4.1", (head, logged(b'"}')))))
    got = s.step(Call(10, Request("gpt-4.1", (head, logged(b'","name":"x"}'))), stream="b"))
    assert split(got) == (1152, 0, 0, 48) and got.read_blocks == 1


def test_gpt_5_5_a_prefix_cached_below_the_first_breakpoint_is_below_the_minimum_past_that_breakpoint_too():
    # GPT-5.5 caches from 1,024 tokens at 2,048-token breakpoints: the 1,500-token first block is written but
    # no read rounds up to it, so its 2,500-token follow-up reads nothing because the only cached prefix is
    # short (below_minimum, with the prompt's size), not because a lookup missed it
    s = sim()
    head = blk(Layer.SYSTEM, "messages[0]", 1500)
    assert str(s.step(Call(0, Request("gpt-5.5", (head,)))).cause) == "below_minimum (1500 tokens)"
    got = s.step(Call(10, Request("gpt-5.5", (head, msg(1, 1000)))))
    assert split(got) == (0, 0, 0, 2500) and got.read_blocks == 0
    assert str(got.cause) == "below_minimum (2500 tokens)"


def test_openai_a_common_start_one_token_short_of_the_minimum_reads_nothing():
    s = sim()
    s.step(Call(0, Request("gpt-4.1", (text(Layer.MESSAGES, "D" * 4092 + "a" * 400, "messages[0]"),))))
    got = s.step(Call(10, Request("gpt-4.1", (text(Layer.MESSAGES, "D" * 4092 + "b" * 400, "messages[0]"),)), stream="b"))
    assert got.usage.cache_read == 0                               # 1,023 common tokens: under 1,024


def test_openai_a_read_of_the_first_block_refreshes_it():
    # in_memory, 300 s idle: block 0 (1,100) written at 0, read at 240 and at 480 by other continuations
    s = sim()
    first = blk(Layer.SYSTEM, "messages[0]", 1100)
    for t in (0, 240, 480):
        got = s.step(Call(t, Request("gpt-4o", (first, msg(1, 100, str(t)))), stream=str(t)))
        assert got.usage.cache_read == (1024 if t else 0)


def test_deepseek_a_whole_first_block_that_is_the_common_prefix_reads_all_of_it():
    s = ds_sim()
    for t, tail in ((0, "B"), (10, "C")):
        s.step(Call(t, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1024 + tail * 200, "messages[0]"),)),
                    stream=tail))
    got = s.step(Call(20, Request("deepseek-chat", (text(Layer.MESSAGES, "D" * 1024, "messages[0]"),)), stream="d"))
    assert split(got) == (256, 0, 0, 0)


@pytest.mark.parametrize("tokenizer,common", [("approx", 5750), ("cl100k_base", 4600)])
def test_openai_reads_the_common_start_in_tokens_not_bytes(tokenizer, common):
    from prefixsim.core.tokens import get_tokenizer

    tok = get_tokenizer(tokenizer)
    doc = " word" * 4600                                          # 23,000 characters
    s = Simulator("openai", tokenizer=tokenizer, policy=get_policy("openai"))
    s.step(Call(0, Request("gpt-4.1", (text(Layer.MESSAGES, doc + " alpha" * 2000, "messages[0]"),))))
    got = s.step(Call(10, Request("gpt-4.1", (text(Layer.MESSAGES, doc + " omega" * 2000, "messages[0]"),)), stream="b"))
    # cl100k: one token per " word"; chars/4: 23,001 common characters (with the next space) -> 5,750
    assert tokenizer == "approx" or tok.count_text(doc) == common
    assert got.usage.cache_read == common - common % 128


# --- The response's own tokens stay cached after the prompt (O-PC: the cache holds the KV states the
# model computed, generating output tokens included; DS kv_cache: the output's end is a unit) ---------

def test_openai_a_reply_sent_back_is_read_with_the_prompt_before_it():
    s = sim()
    prompt = (TOOLS, msg(1, 400))                                 # 900 tokens: under the 1,024 minimum
    reply = msg(2, 252)                                           # the reply as the next request sends it back
    assert split(s.step(Call(0, Request("gpt-4.1", prompt, output=(reply,))))) == (0, 0, 0, 900)
    # prompt + reply = 1,152 tokens (9 x 128), past the minimum: cached at the reply's end and read whole
    got = s.step(Call(10, Request("gpt-4.1", (*prompt, reply, msg(3, 100)))))
    assert split(got) == (1152, 0, 0, 100) and got.read_blocks == 3


def test_openai_a_reply_continues_the_chain_with_the_requests_own_parameters():
    # a prompt that ends before the messages layer: the reply enters it, mixing in that layer's
    # parameters as the next request's chain does (here an image flag)
    s = sim()
    params = (b"", b"", b"images")
    reply = msg(1, 180)
    s.step(Call(0, Request("gpt-4.1", (TOOLS, SYSTEM), layer_params=params, output=(reply,))))
    got = s.step(Call(10, Request("gpt-4.1", (TOOLS, SYSTEM, reply, msg(2, 100)), layer_params=params)))
    assert split(got) == (1280, 0, 0, 100)                        # 1,100 + 180, not the system's 1,100 -> 1,024


def test_openai_a_reply_to_an_empty_prompt_is_cached_from_the_namespace_start():
    s = sim()
    reply = msg(0, 1152)
    assert split(s.step(Call(0, Request("gpt-4.1", (), output=(reply,))))) == (0, 0, 0, 0)
    assert split(s.step(Call(10, Request("gpt-4.1", (reply, msg(1, 100)))))) == (1152, 0, 0, 100)


def test_openai_a_reply_of_several_items_is_cached_at_each_end_past_the_minimum():
    s = sim()
    prompt = (TOOLS, SYSTEM)                                      # 1,100 tokens
    reply = (blk(Layer.MESSAGES, "output[0]", 180), blk(Layer.MESSAGES, "output[1]", 128))   # ends 1,280 and 1,408
    s.step(Call(0, Request("gpt-4.1", prompt, output=reply)))
    assert split(s.step(Call(10, Request("gpt-4.1", (*prompt, *reply, msg(3, 100)))))) == (1408, 0, 0, 100)
    # a branch that keeps the first item only reads up to its end (every position is cached, O-PC)
    got = s.step(Call(20, Request("gpt-4.1", (*prompt, reply[0], msg(3, 100, "b"))), stream="b"))
    assert split(got) == (1280, 0, 0, 100)


def test_openai_a_reply_is_counted_by_the_tokenizer_when_it_has_no_fixed_size():
    s = sim()
    prompt = (TOOLS, msg(1, 400))                                 # 900 tokens
    reply = Block(Layer.MESSAGES, b"x" * 1008, "messages[2]")     # approx: 1,008 characters / 4 = 252 tokens
    s.step(Call(0, Request("gpt-4.1", prompt, output=(reply,))))
    got = s.step(Call(10, Request("gpt-4.1", (*prompt, reply, msg(3, 100)))))
    assert split(got) == (1152, 0, 0, 100)


def test_openai_a_reply_that_leaves_the_conversation_under_the_minimum_is_not_cached():
    s = sim()
    prompt = (msg(0, 300),)
    reply = msg(1, 100)
    s.step(Call(0, Request("gpt-4.1", prompt, output=(reply,))))
    got = s.step(Call(10, Request("gpt-4.1", (*prompt, reply, msg(2, 100)))))
    # nothing was written (400 tokens < 1,024): a miss below the minimum, not an entry that was passed by
    assert split(got) == (0, 0, 0, 500) and str(got.cause) == "below_minimum (500 tokens)"


def test_openai_a_reply_ending_at_exactly_the_minimum_is_cached():
    s = sim()
    prompt = (TOOLS, msg(1, 400))                                 # 900
    reply = msg(2, 124)                                           # 1,024 exactly
    s.step(Call(0, Request("gpt-4.1", prompt, output=(reply,))))
    assert split(s.step(Call(10, Request("gpt-4.1", (*prompt, reply, msg(3, 100)))))) == (1024, 0, 0, 100)


def test_openai_a_cached_reply_is_refreshed_by_reads_up_to_the_one_hour_cap():
    # in_memory (O-PC): 5 min idle (pessimistic), refreshed by a read, at most 1 h from the write
    s = sim()
    prompt = (TOOLS, SYSTEM)                                      # 1,100
    reply = (blk(Layer.MESSAGES, "output[0]", 52), blk(Layer.MESSAGES, "output[1]", 128))   # ends 1,152 and 1,280
    s.step(Call(0, Request("gpt-4.1", prompt, retention="in_memory", output=reply)))
    for k, t in enumerate(range(250, 3600, 250)):                 # each read 250 s after the last one: kept alive
        again = Request("gpt-4.1", (*prompt, *reply, msg(3, 100, f"#{k}")), retention="in_memory")
        assert split(s.step(Call(t, again, stream=f"s{k}"))) == (1280, 0, 0, 100), t
    late = s.step(Call(3650, Request("gpt-4.1", (*prompt, *reply, msg(3, 100, "late")), retention="in_memory")))
    assert split(late) == (0, 0, 0, 1380)
    assert late.cause.kind == CauseKind.TTL_EXPIRED and "past its 3600 s maximum lifetime" in str(late.cause)


def test_openai_a_reply_is_kept_for_the_optimistic_window_at_the_optimistic_bound():
    s = sim(bound="optimistic")
    prompt = (TOOLS, SYSTEM)
    reply = msg(1, 180)
    s.step(Call(0, Request("gpt-4.1", prompt, retention="in_memory", output=(reply,))))
    # 450 s idle: past the pessimistic 5 min, within the optimistic 10 min
    got = s.step(Call(450, Request("gpt-4.1", (*prompt, reply, msg(2, 100)), retention="in_memory")))
    assert split(got) == (1280, 0, 0, 100)


def test_gemini_2_5_flash_a_reply_is_cached_below_the_documented_minimum_at_the_optimistic_bound():
    # traffic shows 2.5 Flash reading below its documented 2,048, so the optimistic end applies no minimum,
    # to the reply's end as to the prompt's: the next request reads 500 + 100, not the prompt's 500
    s = sim("gemini", bound="optimistic")
    prompt = (blk(Layer.SYSTEM, "messages[0]", 300), msg(1, 200))
    reply = msg(2, 100)
    assert split(s.step(Call(0, Request("gemini-2.5-flash", prompt, output=(reply,))))) == (0, 0, 0, 500)
    got = s.step(Call(10, Request("gemini-2.5-flash", (*prompt, reply, msg(3, 50)))))
    assert split(got) == (600, 0, 0, 50) and got.read_blocks == 3


def test_deepseek_a_reply_is_cached_at_its_end_only():
    # DS kv_cache: the end of the output is a unit; the positions inside it are not
    s = ds_sim()
    prompt = (blk(Layer.SYSTEM, "messages[0]", 128), msg(1, 64))  # 192
    reply = (blk(Layer.MESSAGES, "output[0]", 64), blk(Layer.MESSAGES, "output[1]", 64))   # ends 256 and 320
    s.step(Call(0, Request("deepseek-chat", prompt, output=reply)))
    assert split(s.step(Call(10, Request("deepseek-chat", (*prompt, *reply, msg(3, 64)))))) == (320, 0, 0, 64)
    got = s.step(Call(20, Request("deepseek-chat", (*prompt, reply[0], msg(3, 64, "b"))), stream="b"))
    assert split(got) == (192, 0, 0, 128)                        # the prompt's end, not the first item's


def test_openai_remembered_block_text_is_counted_exactly_and_the_oldest_parent_forgotten_first(monkeypatch):
    # The part-block read needs the text the latest chain continued with; that memory is bounded in
    # bytes (automatic.REMEMBERED_BYTES), least recently written parent forgotten first.
    from prefixsim.providers import automatic

    monkeypatch.setattr(automatic, "REMEMBERED_BYTES", 9000)
    s = sim()
    heads = [blk(Layer.TOOLS, f"tools-{k}", 500, "tools[0]") for k in range(3)]   # fixed size: no text kept
    held = []
    for k, n in enumerate((3000, 4000, 5000)):
        s.step(Call(k, Request("gpt-4.1", (heads[k], text(Layer.SYSTEM, "S" * n, "messages[0]"))), stream=str(k)))
        held.append(s.policy._held)
    # 3,000, then 7,000, then 12,000 > 9,000: the first parent's 3,000 bytes go, exactly 9,000 stay
    assert held == [3000, 7000, 9000]
    reads = {}
    for k in (2, 1, 0):   # newest first; each probe's 4,400 bytes replace its parent's text
        probe = Request("gpt-4.1", (heads[k], text(Layer.SYSTEM, "S" * 2400 + "x" * 2000, "messages[0]")))
        reads[k] = s.step(Call(10 + k, probe, stream=f"p{k}")).usage.cache_read
        held.append(s.policy._held)
    # 500 + 2,400 / 4 common tokens = 1,100 -> 1,024 where the parent's text is remembered, none where not
    assert reads == {2: 1024, 1: 1024, 0: 0}
    assert held[3:] == [8400, 8800, 8800]       # 9,000 - 5,000 + 4,400; - 4,000 + 4,400; + 4,400 - 4,400
