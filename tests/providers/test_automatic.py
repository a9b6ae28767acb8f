"""Automatic prefix caches (OpenAI, DeepSeek), rule by rule, on multi-block conversations.

O-PC = developers.openai.com/api/docs/guides/prompt-caching (archived copy @25f7cbb7, GPT-5.6 era);
O-OLD = its earlier copy; DS = api-docs.deepseek.com/guides/kv_cache and /news/news0802.
The chars/4 estimate ("approx") makes every size below plain arithmetic: 4 characters = 1 token.
"""
import pytest
from conftest import split

from prefixsim.core.simulator import Simulator
from prefixsim.core.tokens import common_prefix_tokens, get_tokenizer
from prefixsim.model import Block, Call, CauseKind, Layer, Request
from prefixsim.sources.openai_log import render_openai

TOOLS = Block(Layer.TOOLS, b"T" * 200, "tools[0]")              # 50 tokens
SYSTEM = Block(Layer.SYSTEM, b"S" * 400, "messages[0]")          # 100 tokens
DOC = "D" * 18000                                                 # 4,500 tokens


def user(text, i=1):
    return Block(Layer.MESSAGES, text.encode(), f"messages[{i}]")


def req(model, *msgs, retention=""):
    return Request(model, (TOOLS, SYSTEM, *msgs), retention=retention)


def sim(provider="openai", tokenizer="approx", bound="pessimistic"):
    from prefixsim.providers.registry import get_policy
    return Simulator(provider, tokenizer=tokenizer, policy=get_policy(provider, bound))


# --- OpenAI before GPT-5.6: breakpoints at token intervals, so a prefix ending inside a block is read

@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-4o", "gpt-5"])
def test_same_document_other_question_reads_the_common_start(model):
    # tools 50 + system 100 + document 4,500 = 4,650 common tokens; cached_tokens rounded down to
    # a multiple of 128 (O-PC): 4,608. Block boundaries alone would give 0 (the first cacheable
    # boundary is the end of the user block, which differs).
    s = sim()
    first = s.step(Call(0, req(model, user(DOC + "Question: what does clause 4 say?"))))
    second = s.step(Call(10, req(model, user(DOC + "Question: who signed it?")), stream="other"))
    assert first.usage.cache_read == 0
    assert second.usage.cache_read == 4608
    assert second.usage.input_tokens == second.usage.prompt_tokens - 4608


def test_edited_last_turn_of_a_conversation_reads_into_the_edited_block():
    s = sim()
    q1 = "Summarise it. " + "Q" * 986                      # 250 tokens
    a1 = Block(Layer.MESSAGES, b"A" * 2000, "messages[2]")  # 500 tokens
    s.step(Call(0, req("gpt-4.1", user(DOC + q1))))
    full = s.step(Call(10, req("gpt-4.1", user(DOC + q1), a1, user("E" * 4000 + "one", 3))))
    assert full.usage.cache_read == 4864 - 4864 % 128       # 50+100+4,500+250 = 4,900 -> 4,864
    # the last message edited after 4,000 equal characters (1,000 tokens): 4,900 + 500 + 1,000 = 6,400
    edited = s.step(Call(20, req("gpt-4.1", user(DOC + q1), a1, user("E" * 4000 + "two", 3))))
    assert edited.usage.cache_read == 6400
    assert edited.cause.kind == CauseKind.PREFIX_CHANGED


def test_tiktoken_counts_whole_tokens_of_the_common_start():
    tok = get_tokenizer("cl100k_base")
    doc = " word" * 4600                                   # one cl100k token per " word"
    assert tok.count_text(doc) == 4600
    s = sim(tokenizer="cl100k_base")
    s.step(Call(0, req("gpt-4.1", user(doc + " alpha"))))
    got = s.step(Call(10, req("gpt-4.1", user(doc + " omega")), stream="b"))
    common = tok.count_text("T" * 200) + tok.count_text("S" * 400) + 4600
    assert got.usage.cache_read == common - common % 128


def test_a_token_straddling_the_difference_is_not_counted():
    tok = get_tokenizer("cl100k_base")
    # " world" / " worlds" share 6 bytes but not the token: only "hello" is common
    assert tok.count_text("hello world") == tok.count_text("hello worlds") == 2
    assert common_prefix_tokens(tok, b"hello world", b"hello worlds") == (1, 5)
    assert common_prefix_tokens(get_tokenizer("approx"), b"abcdefgh", b"abcdefgX") == (1, 4)


def test_gpt_5_5_breakpoints_every_2048_tokens():
    # O-PC "Summary of model differences": GPT-5.5 implicit breakpoints at 2,048-token intervals
    s = sim()
    s.step(Call(0, req("gpt-5.5", user(DOC + "first"))))
    got = s.step(Call(10, req("gpt-5.5", user(DOC + "second")), stream="b"))
    assert got.usage.cache_read == 4096                      # 4,650 common -> the breakpoint at 4,096


def test_gpt_5_6_writes_at_the_request_end_and_reads_the_exact_boundary():
    s = sim()
    a1 = Block(Layer.MESSAGES, b"A" * 2002, "messages[2]")    # 501 tokens (rounded up)
    first = s.step(Call(0, req("gpt-5.6", user(DOC + "first question"))))      # 4,654 tokens
    assert split(first) == (0, 0, 4654, 0)                   # written at 1.25x (O-PC)
    # O-PC gotcha "A shared prefix is not always a cached prefix": only the end was written
    other = s.step(Call(10, req("gpt-5.6", user(DOC + "other question")), stream="b"))
    assert other.usage.cache_read == 0
    follow = s.step(Call(20, req("gpt-5.6", user(DOC + "first question"), a1, user("next", 3))))
    assert follow.usage.cache_read == 4654                   # exact boundary, no 128 rounding
    assert follow.usage.cache_write_5m == 501 + 1


def test_a_read_through_a_block_does_not_change_which_sibling_its_parent_remembers():
    # The part-block read compares a new block with the one the latest chain *written* past the parent
    # continued with: A then B (which reads A's common start and writes its own chain) leaves B
    # remembered; a later read through A (A + more) writes nothing at A, so B stays the sibling, and a
    # block sharing 1,250 tokens with B (1,000 with A) reads 150 + 1,250 = 1,400 -> 1,280
    # (found by mutation testing: remembering the blocks up to the read too would compare with A, 1,024)
    s = sim()
    a, b = user(DOC[:4000] + "A" * 2000), user(DOC[:4000] + "B" * 2000)
    s.step(Call(0, req("gpt-4.1", a)))
    assert s.step(Call(10, req("gpt-4.1", b), stream="b")).usage.cache_read == 1024     # 1,150 -> 1,024
    assert s.step(Call(20, req("gpt-4.1", a, user("more", 2)))).usage.cache_read == 1536
    got = s.step(Call(30, req("gpt-4.1", user(DOC[:4000] + "B" * 1000 + "C" * 1000)), stream="c"))
    assert got.usage.cache_read == 1280


# --- retention -------------------------------------------------------------------------------

def test_in_memory_entries_live_at_most_an_hour_from_the_write():
    # O-PC: in_memory entries stay "around 5 to 10 minutes of inactivity, up to one hour"
    s = sim()
    r = req("gpt-4o", user(DOC))
    reads = [s.step(Call(t, r)).usage.cache_read for t in range(0, 3600 + 240, 240)]
    assert reads[0] == 0 and all(x == 4608 for x in reads[1:15])  # t = 240 .. 3,360
    assert reads[15] == 0                                      # t = 3,600: past the cap, rewritten


def test_expiry_causes_name_the_window_that_ended():
    s = sim()
    r = req("gpt-4o", user(DOC))
    s.step(Call(0, r))
    idle = s.step(Call(420, r))                                # the miss rewrites the entry: say why it missed
    assert str(idle.cause) == "ttl_expired (entry at messages[1] idle 420 s > ttl 300 s)"
    for t in range(660, 3781, 240):                            # reads up to t = 3,780, idle 240 s each
        assert s.step(Call(t, r)).usage.cache_read == 4608
    capped = s.step(Call(4030, r))                             # idle 250 s, but 3,610 s after the write
    assert capped.usage.cache_read == 0
    assert "maximum lifetime" in str(capped.cause) and "3600 s" in str(capped.cause)


def test_reading_a_long_prefix_keeps_its_shorter_prefixes_alive():
    s = sim()
    big_system = Block(Layer.SYSTEM, b"S" * 6000, "messages[0]")          # 50 + 1,500 tokens
    base = Request("gpt-4o", (TOOLS, big_system, user(DOC)))
    s.step(Call(0, base))
    s.step(Call(240, Request("gpt-4o", (*base.blocks, user("more", 2)))))    # reads the whole base
    fork = s.step(Call(480, Request("gpt-4o", (TOOLS, big_system, user("X" * 8000)))))
    assert fork.usage.cache_read == 1536                      # 1,550 tokens read at t=480, 1,536 reported


@pytest.mark.parametrize("bound,read", [("pessimistic", 0), ("optimistic", 4608)])
def test_in_memory_window_is_a_range(bound, read):
    s = sim(bound=bound)
    r = req("gpt-4o", user(DOC))
    s.step(Call(0, r))
    assert s.step(Call(420, r)).usage.cache_read == read      # idle 7 min: inside 10, outside 5


@pytest.mark.parametrize("bound,read", [("pessimistic", 0), ("optimistic", 4608)])
def test_extended_retention_is_a_range(bound, read):
    # O-PC: '24h' "typically keeps entries available for around 30 minutes and ... up to 24 hours"
    s = sim(bound=bound)
    r = req("gpt-4.1", user(DOC))
    s.step(Call(0, r))
    assert s.step(Call(3 * 3600, r)).usage.cache_read == read


def test_prompt_cache_retention_in_memory_is_read_from_the_request():
    body = {"model": "gpt-4.1", "prompt_cache_retention": "in_memory",
            "messages": [{"role": "system", "content": "S" * 6000}, {"role": "user", "content": "hi"}]}
    r = render_openai(body)
    assert r.retention == "in_memory"
    s = sim()
    s.step(Call(0, r))
    assert s.step(Call(420, r)).usage.cache_read == 0        # 7 min idle > in_memory's 5 min
    default = render_openai({**body, "prompt_cache_retention": None})
    s.step(Call(1000, default))
    assert s.step(Call(1420, default)).usage.cache_read > 0  # 24h default: 30 min pessimistic


# --- DeepSeek ------------------------------------------------------------------------------

def test_deepseek_common_prefix_is_read_from_the_third_request():
    # DS kv_cache: A+B then A+C misses (no unit A+C matches fully), but the common prefix A is
    # persisted; A+D then reads A. A = tools 50 + system 100 + document 4,500 = 4,650 -> 4,608 (64s)
    s = sim("deepseek")
    first = s.step(Call(0, req("deepseek-chat", user(DOC + "B" * 40))))
    second = s.step(Call(10, req("deepseek-chat", user(DOC + "C" * 40)), stream="2"))
    third = s.step(Call(20, req("deepseek-chat", user(DOC + "X" * 40)), stream="3"))
    assert (first.usage.cache_read, second.usage.cache_read) == (0, 0)
    assert third.usage.cache_read == 4608


def test_deepseek_multi_turn_reads_the_previous_input_end():
    s = sim("deepseek")
    s.step(Call(0, req("deepseek-chat", user(DOC + "Q" * 40))))                 # 4,660 tokens
    a1 = Block(Layer.MESSAGES, b"A" * 400, "messages[2]")
    nxt = s.step(Call(10, req("deepseek-chat", user(DOC + "Q" * 40), a1, user("more", 3))))
    assert nxt.usage.cache_read == 4660 - 4660 % 64


# --- the range in results ----------------------------------------------------------------------

SCENARIO = """name: openai-gaps
model: gpt-4o
provider: openai
tokenizer: approx
pace: 15s
base:
  system: 6000
  history: {turns: 2, user: 80, assistant: 300}
timeline:
  - request: 1
  - wait: 7m
  - request: 1
"""


def test_scenario_results_carry_both_bounds(tmp_path):
    from prefixsim.api import run_scenario
    from prefixsim.report.tables import scenario_text

    p = tmp_path / "gaps.yaml"
    p.write_text(SCENARIO)
    res = run_scenario(str(p))
    v = res.to_json()["variants"][0]
    rows, summary = v["requests"], v["summary"]
    # the 7-minute gap (plus 15 s pace) is past the pessimistic 5 minutes, inside the optimistic 10
    assert rows[1]["cache_read_input_tokens"] == 0 and rows[1]["cache_read_input_tokens_optimistic"] > 0
    assert summary["retention_bound"] == "pessimistic"
    assert summary["cache_read_input_tokens_optimistic"] == sum(r["cache_read_input_tokens_optimistic"] for r in rows)
    assert summary["cost_usd_optimistic"] < summary["cost_usd"]
    text = scenario_text(res)
    assert "pessimistic bound" in text and "read (opt.)" in text


# --- GPT-5.6+: breakpoints (O-PC "How caching works", "How prefix matching works", "Gotchas") ------

STATIC = "S" * 6000
MARK = {"mode": "explicit"}


def body(*items, mode=None):
    b = {"model": "gpt-5.6", "input": list(items)}
    if mode:
        b["prompt_cache_options"] = {"mode": mode}
    return b


def dev(text, marked=False):
    part = {"type": "input_text", "text": text}
    if marked:
        part["prompt_cache_breakpoint"] = MARK
    return {"role": "developer", "content": [part]}


def tokens_through(request, i):
    tok = get_tokenizer("approx")
    return sum(tok.count_text(b.data.decode()) for b in request.blocks[:i + 1])


def test_gpt_5_6_explicit_breakpoint_after_static_content():
    # O-PC gotcha "A shared prefix is not always a cached prefix", remedied with an explicit-only marker
    s = sim()
    r1 = render_openai(body(dev(STATIC, True), {"role": "user", "content": "dynamic one"}, mode="explicit"))
    r2 = render_openai(body(dev(STATIC, True), {"role": "user", "content": "dynamic two"}, mode="explicit"))
    static = tokens_through(r1, 0)
    first, second = s.step(Call(0, r1)), s.step(Call(10, r2))
    # explicit-only: the write ends at the marker, the dynamic rest is uncached with no write charge
    assert split(first) == (0, 0, static, first.usage.prompt_tokens - static)
    assert second.usage.cache_read == static                  # exact, not a multiple of 128
    assert static % 128 != 0


def test_gpt_5_6_marker_is_not_part_of_the_prefix():
    plain = render_openai(body(dev(STATIC), {"role": "user", "content": "q"}))
    marked = render_openai(body(dev(STATIC, True), {"role": "user", "content": "q"}))
    assert plain.blocks == marked.blocks and marked.explicit == (0,) and plain.explicit == ()


def test_gpt_5_6_extending_a_message_prevents_reuse():
    # O-PC gotcha: request 1 ends with user "Content A"; request 2 extends that message -> no reuse
    s = sim()
    s.step(Call(0, render_openai(body(dev(STATIC), {"role": "user", "content": "Content A"}))))
    got = s.step(Call(10, render_openai(body(dev(STATIC), {"role": "user", "content": "Content A + Content B"}))))
    assert got.usage.cache_read == 0


def test_gpt_5_6_switching_to_explicit_only_misses_the_implicit_write():
    s = sim()
    s.step(Call(0, render_openai(body(dev(STATIC), {"role": "user", "content": "question"}))))
    follow = [dev(STATIC), {"role": "user", "content": "question"},
              {"role": "user", "content": [{"type": "input_text", "text": "follow-up", "prompt_cache_breakpoint": MARK}]}]
    assert s.step(Call(10, render_openai(body(*follow, mode="explicit")))).usage.cache_read == 0
    # implicit mode keeps the earlier user-message end as a lookup boundary: it is read
    assert s.step(Call(20, render_openai(body(*follow[:2], {"role": "user", "content": "other"})))).usage.cache_read \
        == tokens_through(render_openai(body(*follow[:2])), 1)


def test_gpt_5_6_multi_turn_agent_reads_the_previous_user_message_end():
    s = sim()
    turn1 = [dev(STATIC), {"role": "user", "content": "Can you do it?"}]
    r1 = render_openai(body(*turn1))
    s.step(Call(0, r1))
    turn2 = [*turn1, {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c1", "output": "result " * 50},
             {"role": "assistant", "content": "Done."}, {"role": "user", "content": "Can you also do that?"}]
    r2 = render_openai(body(*turn2))
    got = s.step(Call(10, r2))
    assert got.usage.cache_read == tokens_through(r1, 1)
    # written: from the read to the implicit breakpoint at the end of the last user message, 1.25x
    assert got.usage.cache_write_5m == got.usage.prompt_tokens - got.usage.cache_read


@pytest.mark.slow
def test_replay_of_openai_traffic_carries_both_bounds(tmp_path):
    import json

    from prefixsim.replay import WhatIf, replay, to_json
    from prefixsim.sources import load

    chat = {"model": "gpt-4o", "messages": [{"role": "system", "content": "S" * 6000}, {"role": "user", "content": "hi"}]}
    p = tmp_path / "oa.jsonl"
    p.write_text("".join(json.dumps({"request": chat, "timestamp": f"2026-11-30T10:{m:02d}:00Z"}) + "\n"
                         for m in (0, 7)))                     # 7 minutes idle: inside 10, outside 5
    doc = to_json(replay(load(p), WhatIf(provider="openai")))
    second = doc["requests"][1]
    assert second["predicted"]["cache_read_input_tokens"] == 0
    assert second["predicted_optimistic"]["cache_read_input_tokens"] > 0
    assert doc["summary"]["retention_bound"] == "pessimistic"
    assert doc["summary"]["cost_predicted_optimistic_usd"] < doc["summary"]["cost_predicted_usd"]


def test_cli_replays_an_openai_log_under_openai_rules(tmp_path):
    import json

    from click.testing import CliRunner

    from prefixsim.cli import cli

    chat = {"model": "gpt-4o", "messages": [{"role": "system", "content": "S" * 6000}, {"role": "user", "content": "hi"}]}
    use = {"prompt_tokens": 1502, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1408}}
    p = tmp_path / "oa.jsonl"
    p.write_text("".join(json.dumps({"request": chat, "response": {"usage": use}, "timestamp": f"2026-11-30T10:0{m}:00Z"})
                         + "\n" for m in (0, 1)))
    res = CliRunner().invoke(cli, ["replay", str(p), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    # the replay runs each request under the provider it was sent to
    assert doc["summary"]["variant"]["provider"] == "observed"
    assert [r["provider"] for r in doc["requests"]] == ["openai", "openai"]
    # 1,502 prompt tokens, 1,408 read: OpenAI's cached rate for gpt-4o is half the input rate
    assert doc["requests"][1]["predicted"]["cache_read_input_tokens"] == 1408
    assert doc["requests"][1]["cost_observed_usd"] == doc["requests"][1]["cost_predicted_usd"]
    assert "openai/gpt-4o" in doc["summary"]["price_source"]


def test_shipped_openai_retention_scenario_says_what_its_description_says():
    from pathlib import Path

    from conftest import PRICE_DATE

    from prefixsim.api import run_scenario

    res = run_scenario(str(Path(__file__).resolve().parents[2] / "scenarios" / "openai-retention.yaml"), PRICE_DATE)
    rows = {v.variant: v.rows() for v in res.variants}
    four_o = rows["gpt-4o in_memory"]
    assert four_o[3]["cache_read_input_tokens"] == 0 and four_o[3]["cache_read_input_tokens_optimistic"] > 0  # 7 min
    assert four_o[4]["cache_read_input_tokens"] == four_o[4]["cache_read_input_tokens_optimistic"] == 0      # 12 min
    assert all(r["cache_read_input_tokens"] > 0 for r in rows["gpt-4.1 24h"][1:])
    five_six = rows["gpt-5.6"]
    for prev, r in zip(five_six, five_six[1:]):   # each request reads exactly what the previous one sent
        assert r["cache_read_input_tokens"] == prev["cache_read_input_tokens"] + prev["cache_write_5m_tokens"]
    assert "cache_read_input_tokens_optimistic" not in five_six[0]   # 30 minutes: no range


def test_gpt_5_6_looks_up_at_most_20_earlier_eligible_message_ends():
    # O-PC "How prefix matching works": the implicit breakpoint and up to 20 earlier eligible message
    # endings. Request 1's end is the 22nd eligible end back from request 2's: not looked up.
    s = sim()
    turn1 = [dev(STATIC), {"role": "user", "content": "first"}]
    s.step(Call(0, render_openai(body(*turn1))))
    later = [m for k in range(21) for m in ({"role": "assistant", "content": f"a{k}"}, {"role": "user", "content": f"u{k}"})]
    far = s.step(Call(10, render_openai(body(*turn1, *later))))
    assert far.usage.cache_read == 0
    assert far.cause.kind == CauseKind.LOOKBACK_EXCEEDED and "lookup boundaries" in far.cause.detail
    near = s.step(Call(20, render_openai(body(*turn1, *later[:40])), stream="b"))   # 20 earlier ends: looked up
    assert near.usage.cache_read == tokens_through(render_openai(body(*turn1)), 1)


def test_remembered_block_text_is_bounded(monkeypatch):
    from prefixsim.providers import automatic

    monkeypatch.setattr(automatic, "REMEMBERED_BYTES", 50_000)
    s = sim()
    doc = "D" * 20000
    for k in range(40):   # 40 sessions after the same tools and system, each with a 20,004-byte message
        s.step(Call(k, req("gpt-4.1", user(f"{k:04d}" + doc)), stream=str(k)))
    assert s.policy._held <= 50_000
    # what is still remembered still reads into the parting block: 150 + (4 + 19,000) / 4 = 4,901 -> 4,864
    got = s.step(Call(100, req("gpt-4.1", user("0039" + doc[:19000] + "changed")), stream="x"))
    assert got.usage.cache_read == 4864


@pytest.mark.parametrize("bound,read", [("pessimistic", 0), ("optimistic", 4608)])
def test_deepseek_retention_hours_to_days_is_a_range(bound, read):
    # DS news0802: unused caches are cleared after "a few hours to a few days": 1 h .. 24 h idle
    s = sim("deepseek", bound=bound)
    r = req("deepseek-chat", user(DOC + "Q" * 40))
    s.step(Call(0, r))
    assert s.step(Call(2 * 3600, r)).usage.cache_read == read
