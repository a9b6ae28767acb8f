"""Every miss cause of the automatic caches pinned at its boundary (issue 37), in the scenario path
and on replay of a log of the same bodies (tests/cause_paths.py): OpenAI (128-token steps), DeepSeek
(64-token units), Gemini implicit (2.5; Gemini 3's 4,096-token units), every provider of
providers/others.py, and the rules for models the tables do not list (providers/unlisted.py).

The cause and its detail are compared as whole strings. On replay a cause that a rule's figure
decides (below_minimum, ttl_expired, evicted) ends with what of that rule is the stated default or
measured (providers/others.py cause_note), so the replay's expected detail is the scenario's plus
that note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from cause_paths import Conversation, assistant, both, replayed as replay_of, scenario, sized, system, user

from prefixsim.core.store import EntryState
from prefixsim.model import Cause
from prefixsim.providers.registry import get_policy

_STATED_TTL = "retention undocumented: stated default"
_STATED_BOTH = "minimum and retention undocumented: stated default"
_UNDOC = "rules undocumented: stated default"
_GEMINI_TTL = ("retention as public traffic shows, 600 s idle; documented: best effort, no hit promised "
               "(docs/rules.md#google-gemini)")
_DEEPSEEK_TTL = ("retention as public traffic shows, 43200 s idle; documented: a range (hours to days) "
                 "(docs/rules.md#deepseek)")
_G3_FLASH_MIN = ("minimum 4096 as public traffic shows (the figures shown); 1024 documented: the documentation "
                 "and the traffic disagree; the *_optimistic figures apply 1024 (docs/rules.md#google-gemini)")


@dataclass(frozen=True)
class Rule:
    """One policy's figures as the printed run applies them, and the notes a replay adds."""

    provider: str
    model: str
    least: int       # the minimum a read needs
    unit: int        # reads rounded down to a multiple of it
    ttl: float       # idle seconds an entry lives
    uri: str = ""
    below_note: str = ""
    ttl_note: str = ""

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


RULES = [
    Rule("openai", "gpt-4o-2024-08-06", 1024, 128, 300.0),
    Rule("openai", "gpt-5-mini", 1024, 128, 300.0),
    # GPT-5.5: 1,024 documented, but its breakpoints lie every 2,048 tokens: no read is shorter
    Rule("openai", "gpt-5.5", 2048, 2048, 1800.0),
    # GPT-5.6: writes at breakpoints only (message ends), read at lookups, exact counts
    Rule("openai", "gpt-5.6", 1024, 1, 1800.0),
    # "hours to days" documented; the printed figure keeps an entry 12 h idle, as public traffic shows
    Rule("deepseek", "deepseek-chat", 64, 64, 43200.0, ttl_note=_DEEPSEEK_TTL),
    Rule("gemini", "gemini-2.5-pro", 2048, 1, 600.0, below_note="minimum 2048 (docs/rules.md#google-gemini)",
         ttl_note=_GEMINI_TTL),
    Rule("gemini", "gemini-3-pro-preview", 4096, 4096, 600.0,
         below_note="minimum 4096 (docs/rules.md#google-gemini)", ttl_note=_GEMINI_TTL),
    # documented 1,024; what traffic shows (the printed figure) is one 4,096-token unit
    Rule("gemini", "gemini-3-flash-preview", 4096, 4096, 600.0, below_note=_G3_FLASH_MIN, ttl_note=_GEMINI_TTL),
    # Groq documents its retention (2 h without use), not its minimum: only a below_minimum says so
    Rule("groq", "moonshotai/kimi-k2-instruct-0905", 1024, 1, 7200.0, "https://api.groq.com/openai/v1/chat/completions",
         below_note="minimum undocumented: stated default"),
    Rule("zai", "glm-4.6", 1024, 1, 300.0, "https://api.z.ai/api/paas/v4/chat/completions",
         below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("moonshot", "kimi-k2-0905-preview", 1024, 1, 300.0, "https://api.moonshot.ai/v1/chat/completions",
         below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", 1024, 1, 300.0,
         "https://api.together.xyz/v1/chat/completions", below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("fireworks", "accounts/fireworks/models/llama-v3p1-8b-instruct", 1024, 1, 300.0,
         "https://api.fireworks.ai/inference/v1/chat/completions", below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("cohere", "command-a-03-2025", 1024, 1, 300.0, "https://api.cohere.com/compatibility/v1/chat/completions",
         below_note=_UNDOC, ttl_note=_UNDOC),
    Rule("other", "some-model-nobody-knows", 1024, 1, 300.0, below_note=_UNDOC, ttl_note=_UNDOC),
    # models the tables do not list (providers/unlisted.py): an OpenAI id's minimum is OpenAI's general
    # rule (O-OLD), its retention assumed; a Gemini id's minimum assumed, its retention what traffic shows
    Rule("openai", "gpt-4.5-preview", 1024, 128, 300.0,
         ttl_note="model not in OpenAI's tables, its retention undocumented: stated default"),
    Rule("gemini", "gemini-2.0-flash", 1024, 1, 600.0,
         below_note="model not in the Gemini tables, its minimum undocumented: stated default", ttl_note=_GEMINI_TTL),
]
#: No minimum: nothing is ever below it (their own examples read a few tokens).
NO_MINIMUM = [Rule("xai", "grok-4", 0, 1, 300.0, "https://api.x.ai/v1/chat/completions", ttl_note=_STATED_TTL),
              Rule("mistral", "mistral-large-latest", 0, 1, 300.0, "https://api.mistral.ai/v1/chat/completions",
                   ttl_note=_STATED_TTL)]
ALL = RULES + NO_MINIMUM


def conv(r: Rule) -> Conversation:
    return Conversation(r.provider, r.model, r.uri)


def noted(detail: str, note: str) -> str:
    return "; ".join(x for x in (detail, note) if x)


@pytest.mark.parametrize("r", ALL, ids=str)
def test_the_notes_a_replay_adds(r):
    """The expected replay notes above are the policies' own (a rule that changes its source changes them)."""
    from prefixsim.providers.others import cause_note

    policy = get_policy(r.provider, listed_only=False)
    if r.least:
        assert cause_note(policy, r.model, "below_minimum") == r.below_note
    assert cause_note(policy, r.model, "ttl_expired") == r.ttl_note


@pytest.mark.parametrize("r", RULES, ids=str)
def test_one_token_below_the_minimum_is_below_it(r, tmp_path):
    s = system()
    c = conv(r).send(0, s, sized(r.model, r.least - 1, s))
    causes, replayed, outs, _ = both(c, tmp_path)
    assert outs[0].usage.prompt_tokens == r.least - 1
    assert causes == [Cause("below_minimum", f"{r.least - 1} tokens")]
    assert replayed == [Cause("below_minimum", noted(f"{r.least - 1} tokens", r.below_note))]


@pytest.mark.parametrize("r", RULES, ids=str)
def test_exactly_the_minimum_is_cold_then_read_whole(r, tmp_path):
    s = system()
    first = sized(r.model, r.least, s)
    c = conv(r).send(0, s, first).send(60, s, first, assistant("Yes."), user("And then?"))
    causes, replayed, outs, _ = both(c, tmp_path)
    assert [o.usage.cache_read for o in outs] == [0, r.least]
    assert causes == replayed == [Cause("cold"), Cause()]


@pytest.mark.parametrize("r", [x for x in ALL if x.unit > 1], ids=str)
def test_a_read_ends_at_the_providers_unit(r, tmp_path):
    """One token short of the next unit reads the unit below it, whole; the cause is a hit's."""
    s = system()
    for extra, read in ((r.unit - 1, r.least), (r.unit, r.least + r.unit)):
        first = sized(r.model, r.least + extra, s)
        c = conv(r).send(0, s, first).send(60, s, first, assistant("Yes."), user("And then?"))
        causes, replayed, outs, _ = both(c, tmp_path)
        assert [o.usage.cache_read for o in outs] == [0, read], extra
        assert causes == replayed == [Cause("cold"), Cause()]


def _long_system(r: Rule) -> dict:
    """A system message (block 0) past the minimum (1,024 tokens where there is none) by 64 tokens, so
    that each path, which sizes the block a few tokens apart, reads it whole."""
    return {"role": "system", "content": sized(r.model, max(r.least, 1024) + 64)["content"]}


@pytest.mark.parametrize("r", ALL, ids=str)
def test_a_hit_at_block_0_then_a_changed_prefix(r, tmp_path):
    """Only block 0 is read: the cause names the first block that differs and its byte, never the
    minimum (the read is past it). DeepSeek persists the request's end only, GPT-5.6 its latest user
    message's end: nothing is read, the cause the same."""
    s = _long_system(r)
    c = conv(r).send(0, s, user("Tell me about Alpha.")).send(60, s, user("Tell me about Beta."))
    causes, replayed, outs, rows = both(c, tmp_path, same_reads=False)
    reads = [o.usage.cache_read for o in outs], [x.predicted.cache_read for x in rows]
    if r.provider == "deepseek" or r.model == "gpt-5.6":
        assert reads == ([0, 0], [0, 0])
    elif r.unit > 1:   # block 0 rounded down to the unit: the minimum, on both paths
        assert reads == ([0, r.least], [0, r.least])
    else:              # block 0 whole, as each path sizes it
        assert reads[0][1] > r.least and reads[1][1] > r.least and outs[1].read_blocks == 1
    assert causes == replayed == [Cause("cold"), Cause("prefix_changed", "messages layer, block 1 (messages[1]), byte 37")]


def _turns(r: Rule, n: int) -> list[dict]:
    """The first `n` messages of one conversation: a system message, then user and assistant turns;
    the first user message takes it past the minimum."""
    s = system()
    msgs = [s, sized(r.model, max(r.least, 1024) + 64, s)]
    k = 1
    while len(msgs) < n:
        msgs.append(assistant(f"Answer {k}.") if len(msgs) % 2 == 0 else user(f"Question {k}?"))
        k += len(msgs) % 2
    return msgs[:n]


@pytest.mark.parametrize("r", ALL, ids=str)
def test_an_entry_lives_its_ttl_and_not_a_second_more(r, tmp_path):
    """Idle one second short of the TTL: read; one second past it: expired, with its idle time."""
    ttl = int(r.ttl)
    for gap, cause in ((ttl - 1, Cause()),
                       (ttl + 1, Cause("ttl_expired", f"entry at messages[1] idle {ttl + 1} s > ttl {ttl} s"))):
        c = conv(r).send(0, *_turns(r, 2)).send(gap, *_turns(r, 4))
        causes, replayed, outs, _ = both(c, tmp_path)
        assert outs[1].usage.cache_read == (outs[0].usage.prompt_tokens // r.unit * r.unit if not cause.kind else 0)
        assert causes == [Cause("cold"), cause]
        note = r.ttl_note if cause.kind else ""
        assert replayed == [Cause("cold"), Cause(cause.kind, noted(cause.detail, note))]


@pytest.mark.parametrize("r", ALL, ids=str)
def test_the_deepest_entry_seen_is_named_the_later_of_two(r, tmp_path):
    """Two entries of the conversation (its first request's end, messages[1], and its second's,
    messages[3]) expire at different times: the one named is the deeper, past the live one read and
    when both are gone (its own idle time, not the other's)."""
    third = int(r.ttl) // 3
    for at, read_m1, named, idle in ((third * 4 + third // 2, True, 3, third * 4 + third // 2 - third),
                                     (third * 6, False, 3, third * 5)):
        c = (conv(r).send(0, *_turns(r, 2)).send(third, *_turns(r, 4))
             .send(2 * third, *_turns(r, 2), stream="other")    # another stream keeps messages[1] warm
             .send(at, *_turns(r, 6)))
        causes, replayed, outs, _ = both(c, tmp_path)
        assert (outs[3].usage.cache_read > 0) is read_m1
        cause = Cause("ttl_expired", f"entry at messages[{named}] idle {idle} s > ttl {int(r.ttl)} s")
        assert causes[3] == cause
        assert replayed[3] == Cause(cause.kind, noted(cause.detail, r.ttl_note))


@pytest.mark.parametrize("r", ALL, ids=str)
def test_an_entry_not_yet_readable(r, tmp_path):
    """Another stream sends the same prompt before the first response began: the entry is written
    but not readable (ttft 1 s)."""
    c = conv(r).send(0, *_turns(r, 2)).send(0.5, *_turns(r, 2), stream="b")
    causes, outs = scenario(c)
    assert [o.usage.cache_read for o in outs] == [0, 0]
    assert causes == [Cause("cold"), Cause("not_yet_available", "entry at messages[1] written at t=0s, readable from t=1s")]


def test_an_entry_not_yet_readable_on_replay(tmp_path):
    r = RULES[0]
    c = conv(r).send(0, *_turns(r, 2)).send(0.5, *_turns(r, 2), stream="b")
    _, outs = scenario(c)
    (_, second), _ = replay_of(c, outs, tmp_path)
    assert second.kind == "not_yet_available"
    written, readable = (float(x) for x in re.findall(r"t=([^s]+)s", second.detail))
    assert readable - written == 1.0   # written at the request's start, readable from its response (ttft 1 s)


@pytest.mark.parametrize("r", ALL, ids=str)
def test_a_model_switch_names_both_models(r, tmp_path):
    # another model of the same provider (a provider whose one rule covers every model: any other id)
    other = {"openai": "gpt-4.1-mini", "deepseek": "deepseek-reasoner", "gemini": "gemini-2.5-flash"}.get(
        r.provider, r.model + "-next")
    c = conv(r).send(0, *_turns(r, 2)).send(60, *_turns(r, 4), model=other)
    causes, replayed, outs, _ = both(c, tmp_path)
    assert outs[1].usage.cache_read == 0
    assert causes == replayed == [Cause("cold"), Cause("model_switch", f"{r.model} -> {other}")]


@pytest.mark.parametrize("r", RULES[:4], ids=str)
def test_a_compaction_names_where_the_history_was_cut(r):
    """A scenario's compaction event: the cause is the event, its detail where the prompt parted (byte 23:
    the first of the text, after {"role":"user","part":")."""
    s = system()
    big = sized(r.model, max(r.least, 1024) + 64, s)
    c = (conv(r).send(0, s, big, assistant("Yes."), user("More?"))
         .send(60, s, user("Summary of the conversation so far."), event="compaction"))
    causes, _ = scenario(c)
    assert causes == [Cause("cold"), Cause("compaction", "messages layer, block 1 (messages[1]), byte 23")]


def test_an_entry_evicted_for_capacity():
    """A store with a capacity (`Simulator(capacity=...)`): another stream's prompt pushes the first
    one's entries out."""
    r = RULES[0]
    a = _turns(r, 2)
    b = [system("Another assistant entirely."), sized(r.model, 1500, system("Another assistant entirely."))]
    c = conv(r).send(0, *a).send(10, *b, stream="b").send(20, *_turns(r, 4))
    causes, outs = scenario(c, store_capacity=2000)
    assert [o.usage.cache_read for o in outs] == [0, 0, 0]
    assert causes == [Cause("cold"), Cause("cold"), Cause("evicted", "entry at messages[1] evicted for capacity")]


def _document_turn(tail: str) -> dict:
    return user("Document:" + " cache" * 2000 + f" Question: {tail}")


@pytest.mark.parametrize("provider, model", [("openai", "gpt-4o-2024-08-06"), ("deepseek", "deepseek-chat")])
def test_a_read_inside_block_0_is_no_cold_miss(provider, model):
    """A prompt whose first block shares its start with another stream's: OpenAI reads that start
    (its breakpoints lie inside blocks), DeepSeek the common-prefix unit the second request made.
    Tokens were read, so the miss is not `cold` (nothing cached): as a read that ends inside a later
    block, a hit, the cause of the rest unknown to a new stream."""
    c = Conversation(provider, model)
    for i, tail in enumerate(("first?", "second?", "third?")):
        c.send(60 * i, _document_turn(tail), stream=f"s{i}")
    causes, outs = scenario(c)
    reads = [o.usage.cache_read for o in outs]
    assert reads == ([0, 1920, 1920] if provider == "openai" else [0, 0, 1984])
    assert [x for x, n in zip(causes, reads) if n] == [Cause()] * (2 if provider == "openai" else 1)


def test_a_prefix_cached_below_the_first_breakpoint_is_below_the_minimum(tmp_path):
    """GPT-5.5 caches from 1,024 tokens at 2,048-token breakpoints: a 1,500-token prefix is written
    but no read rounds up to it. Its follow-up read nothing because it is short, not because a lookup
    missed (`lookback_exceeded` is GPT-5.6's: lookups at message ends)."""
    r = Rule("openai", "gpt-5.5", 2048, 2048, 1800.0)
    s = system()
    first = sized(r.model, 1500, s)
    c = conv(r).send(0, s, first).send(60, s, first, assistant("Yes."), user("And then?"))
    causes, replayed, outs, _ = both(c, tmp_path)
    assert [o.usage.cache_read for o in outs] == [0, 0]
    assert causes == replayed == [Cause("below_minimum", "1500 tokens"),
                                  Cause("below_minimum", f"{outs[1].usage.prompt_tokens} tokens")]


# --- the read walk's own account (Decision.blocked, below_minimum), which the explainer reads when the
# store has no trace of the request's chain (the serving engines' convention, providers/base.py)

def _decide(model: str, sizes: list[int], states: dict[int, str], t: float = 1000.0):
    """One request of blocks of `sizes` tokens against a store holding an entry at each index of
    `states` ("live", "expired", "pending"); the policy's Decision."""
    from prefixsim.core.store import Store
    from prefixsim.model import Block, Layer, Request
    from prefixsim.providers.automatic import openai

    blocks = tuple(Block(Layer.MESSAGES, b"m%d" % i, f"messages[{i}]", tokens=n) for i, n in enumerate(sizes))
    digests = [b"%016d" % i for i in range(len(sizes))]
    cum = [sum(sizes[:i + 1]) for i in range(len(sizes))]
    store = Store()
    for j, state in states.items():
        written = {"live": t - 10, "expired": t - 400, "pending": t - 0.5}[state]
        store.write(digests[j], cum[j], written, written + 1, 300.0, j)
    return openai().decide(Request(model, blocks), digests, cum, store, t, t + 1)


def test_the_walk_reports_the_deepest_entry_it_could_not_use():
    dec = _decide("gpt-4o", [1100, 100, 100, 100], {1: "expired", 3: "pending"})
    assert (dec.hit, dec.blocked, dec.below_minimum) == (-1, (EntryState.PENDING, 3), False)
    dec = _decide("gpt-4o", [1100, 100, 100, 100], {0: "live", 2: "expired"})
    assert (dec.hit, dec.blocked, dec.read) == (0, (EntryState.EXPIRED, 2), 1024)
    # nothing of the chain in the store: nothing blocked
    assert _decide("gpt-4o", [1100, 100], {}).blocked is None
    # GPT-5.6 looks up at message ends (each block here is a user message): the deeper of two wins
    dec = _decide("gpt-5.6", [1100, 100, 100], {0: "expired", 1: "pending"})
    assert (dec.hit, dec.blocked, dec.below_minimum) == (-1, (EntryState.PENDING, 1), False)
    assert _decide("gpt-5.6", [1100, 100], {}).blocked is None
    dec = _decide("gpt-5.6", [1100, 100, 100], {0: "live", 2: "expired"})
    assert (dec.hit, dec.blocked, dec.read) == (0, (EntryState.EXPIRED, 2), 1100)


@given(sizes=st.lists(st.integers(1, 1500), min_size=1, max_size=6),
       states=st.dictionaries(st.integers(0, 5), st.sampled_from(["live", "expired", "pending"]), max_size=4),
       model=st.sampled_from(["gpt-4o", "gpt-5.5", "gpt-5.6"]))
@settings(max_examples=300, deadline=None)
def test_below_the_minimum_only_when_nothing_is_read(sizes, states, model):
    """A request said to be below the minimum read nothing and no block: a read is never shorter
    than the first read, so a request that reads is never below it (whatever its block 0 holds).
    Entries only where the policy writes them: from 1,024 tokens."""
    cum = [sum(sizes[:i + 1]) for i in range(len(sizes))]
    dec = _decide(model, sizes, {j: s for j, s in states.items() if j < len(sizes) and cum[j] >= 1024})
    if dec.below_minimum:
        assert (dec.read, dec.hit) == (0, -1)
    if dec.read:
        assert dec.read >= 1024 and not dec.below_minimum


@pytest.mark.parametrize("r", [x for x in RULES if x.model != "gpt-5.5"], ids=str)   # 5.5 writes from 1,024
def test_a_change_after_a_prompt_never_cached_is_no_changed_prefix(r, tmp_path):
    """The stream's previous prompt was below the minimum, so nothing of it was cached: the next
    one, changed at its first message, misses because nothing was there (`cold`), not because it
    changed."""
    s = system()
    c = (conv(r).send(0, s, sized(r.model, r.least - 1, s))
         .send(60, system("Another system prompt."), sized(r.model, r.least + 100, s)))
    causes, replayed, outs, _ = both(c, tmp_path)
    assert [o.usage.cache_read for o in outs] == [0, 0]
    assert causes == [Cause("below_minimum", f"{r.least - 1} tokens"), Cause("cold")]
    assert replayed == [Cause("below_minimum", noted(f"{r.least - 1} tokens", r.below_note)), Cause("cold")]


def test_a_logged_block_is_compared_inside_only_with_another_that_holds_its_text():
    """Two blocks sized by a log are compared token by token only when both hold what the model saw
    (`sees`): one synthetic block (a transcript's label) against a logged one is not, either way."""
    from prefixsim.model import Block, Layer, Request
    from prefixsim.providers.automatic import _comparable

    logged = Block(Layer.MESSAGES, b'{"role":"user","part":"Question 0?"}', tokens=9, sees=(2, ("user", "Question 0?")))
    label = Block(Layer.MESSAGES, b"history[3] (added by req_a)", tokens=9)
    params = (b"", b"", b"")
    for old, new in ((logged, label), (label, logged)):
        assert not _comparable(old, params, new, Request(RULES[0].model, (new,)))
    assert _comparable(logged, params, logged, Request(RULES[0].model, (logged,)))
