"""Rules of docs/rules.md that no other test pins down. Every expected number is the documented one
(the source named in docs/rules.md), written here by hand, not read back from prefixsim's tables."""
import copy
from dataclasses import replace
from decimal import Decimal

import pytest
from cc_fixtures import Transcript
from conftest import PRICE_DATE, make_request, split

from prefixsim.core.chain import chain, namespace_digest
from prefixsim.core.pricing import PriceBook, Tiered
from prefixsim.core.simulator import Simulator
from prefixsim.core.store import EntryState, Store
from prefixsim.errors import RequestError, UserError
from prefixsim.model import Block, Call, CauseKind, Usage
from prefixsim.providers.base import Decision
from prefixsim.providers.prefix import PrefixPolicy
from prefixsim.providers.tables import canonical_model
from prefixsim.sources import load
from prefixsim.wire.anthropic import render_anthropic


def sim(provider, model=None, ttft=1.0):
    """A simulator priced by a flat sheet, so models genai-prices does not know still run."""
    sheet = {model: {"input": 1, "output": 1}} if model else None
    return Simulator(provider, tokenizer="approx", ttft=ttft, prices=PriceBook(sheet, when=PRICE_DATE))


def with_block(req, i, data):
    """`req` with block `i` given other bytes (same layer, size and breakpoint)."""
    b = req.blocks[i]
    new = Block(b.layer, data, b.path, b.breakpoint, tokens=b.tokens)
    return replace(req, blocks=req.blocks[:i] + (new,) + req.blocks[i + 1:])


# --- Anthropic ---------------------------------------------------------------------------------

# Prompt-caching page, 2026-08-21 table; Opus/Sonnet 3.x and Haiku 3 from the 2025-07 page.
MINIMUMS = [
    ("claude-opus-5", 512), ("claude-fable-5", 512), ("claude-mythos-5", 512),
    ("claude-opus-4-7", 2048), ("claude-mythos-preview", 2048),
    ("claude-opus-4-6", 4096), ("claude-opus-4-5", 4096), ("claude-haiku-4-5", 4096),
    ("claude-opus-4-8", 1024), ("claude-sonnet-5", 1024), ("claude-sonnet-4-6", 1024),
    ("claude-sonnet-4-5", 1024), ("claude-opus-4-1", 1024), ("claude-opus-4", 1024), ("claude-sonnet-4", 1024),
    ("claude-haiku-3-5", 2048), ("claude-sonnet-3-7", 1024), ("claude-opus-3", 1024), ("claude-haiku-3", 2048),
    # after the 2026-08-21 copy (issue 31): third-party quotes of October 2026, and Haiku 5.5 by assumption
    ("claude-opus-5-5", 512), ("claude-sonnet-5-5", 512), ("claude-fable-5-1", 512), ("claude-mythos-5-1", 512),
    ("claude-fable-5-2", 512), ("claude-mythos-5-2", 512), ("claude-haiku-5-5", 4096),
]


@pytest.mark.parametrize("model,minimum", MINIMUMS)
def test_anthropic_minimum_cacheable_length_by_model(model, minimum):
    s = sim("anthropic", model)
    below = s.step(Call(0, make_request([minimum - 1], {1: "5m"}, model=model, tag=b"below")))
    assert split(below) == (0, 0, 0, minimum - 1) and below.cause.kind == CauseKind.BELOW_MINIMUM
    at = s.step(Call(1, make_request([minimum], {1: "5m"}, model=model, tag=b"at")))
    assert split(at) == (0, 0, minimum, 0)


def test_anthropic_unknown_model_is_a_user_error():
    with pytest.raises(UserError, match="unknown Anthropic model"):
        sim("anthropic", "claude-opus-9").step(Call(0, make_request([2000], {1: "5m"}, model="claude-opus-9")))


@pytest.mark.parametrize("given,canonical", [
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("anthropic/claude-3-5-haiku-latest", "claude-haiku-3-5"),
    ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),
    ("claude-3-7-sonnet-20250219", "claude-sonnet-3-7"),
    ("claude-opus-4-0", "claude-opus-4"),
])
def test_anthropic_model_ids_are_canonicalised(given, canonical):
    assert canonical_model(given) == canonical


def test_anthropic_automatic_ttl_conflicting_with_the_last_block_is_an_error():
    with pytest.raises(RequestError, match="conflicts"):
        sim("anthropic").step(Call(0, make_request([2000, 3000], {2: "5m"}, auto="1h")))


def test_anthropic_1h_entry_lives_an_hour():
    s = sim("anthropic")
    s.step(Call(0, make_request([4000, 100], {2: "1h"})))
    assert split(s.step(Call(3599, make_request([4000, 100], {2: "1h"})))) == (4100, 0, 0, 0)
    s = sim("anthropic")
    s.step(Call(0, make_request([4000, 100], {2: "1h"})))
    late = s.step(Call(3605, make_request([4000, 100], {2: "1h"})))   # 5 s past the hour (ANTHROPIC_TTL_GRACE)
    assert split(late) == (0, 4100, 0, 0) and late.cause.kind == CauseKind.TTL_EXPIRED


def test_a_read_refreshes_the_entries_before_the_hit():
    # t=0 writes entries at b2 and b3 (expire at 300); t=200 reads b3 through a breakpoint on b5, which
    # also keeps b2 alive until 500; t=400 changes b3 and finds b2 still readable.
    s = sim("anthropic")
    s.step(Call(0, make_request([2000, 3000, 500], {2: "5m", 3: "5m"})))
    s.step(Call(200, make_request([2000, 3000, 500, 400, 300], {5: "5m"})))
    changed = with_block(make_request([2000, 3000, 600], {2: "5m", 3: "5m"}), 2, b"other")
    assert split(s.step(Call(400, changed))) == (5000, 0, 600, 0)


def test_parallel_writes_take_the_earliest_availability():
    s = Store()
    s.write(b"d", 100, now=0, available_at=5, ttl=300)
    s.write(b"d", 100, now=1, available_at=2, ttl=300)
    assert s.state(b"d", 3) is EntryState.LIVE


def _digests(body):
    r = render_anthropic(body)
    return chain(namespace_digest("anthropic", r.model), r)


def test_citations_and_output_config_enter_the_chain_at_their_layer():
    doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a fact"}}
    base = {"model": "claude-sonnet-4-5", "tools": [{"name": "t", "input_schema": {"type": "object"}}],
            "system": "s", "messages": [{"role": "user", "content": [doc, {"type": "text", "text": "q"}]}]}
    cited = copy.deepcopy(base)
    cited["messages"][0]["content"][0]["citations"] = {"enabled": True}
    effort = dict(base, output_config={"effort": "low"})
    a, b, c = _digests(base), _digests(cited), _digests(effort)
    # citations: system and messages lose their entries (the document block itself also changed)
    assert a[0] == b[0] and a[1] != b[1]
    # output_config (effort): tools and system survive, messages do not
    assert a[:2] == c[:2] and a[2] != c[2]


def test_workspace_separates_caches():
    s = sim("anthropic")
    s.step(Call(0, replace(make_request([4000, 100], {2: "5m"}), workspace="a")))
    other = s.step(Call(10, replace(make_request([4000, 100], {2: "5m"}), workspace="b")))
    assert split(other) == (0, 0, 4100, 0)
    same = s.step(Call(20, replace(make_request([4000, 100], {2: "5m"}), workspace="a")))
    assert split(same) == (4100, 0, 0, 0)


def test_anthropic_usage_input_excludes_cached_tokens():
    u = Usage(input_tokens=10, cache_write_5m=200, cache_write_1h=300, cache_read=4000)
    assert u.cache_creation == 500 and u.prompt_tokens == 4510


# --- Claude Code -----------------------------------------------------------------------------

def test_transcript_requests_keep_the_ttl_their_writes_show(tmp_path):
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, ttl="1h")
    t.user(10, "more")
    t.call(10, "r1", 20000, 500, ttl="1h")
    recs = load(t.write(tmp_path / "proj" / "s.jsonl"))
    for r in recs:
        assert {b.breakpoint for b in r.call.request.blocks} - {None} == {"1h"}


# --- OpenAI ----------------------------------------------------------------------------------------

# The printed figure is the pessimistic end of each documented window (docs/rules.md#openai-retention).
@pytest.mark.parametrize("model,idle", [("gpt-4o", 300), ("gpt-4.1", 1800), ("gpt-5", 1800), ("gpt-5.6", 1800)])
def test_openai_retention_by_family(model, idle):
    req = make_request([2048], model=model, layers=[2])
    s = sim("openai", model)
    s.step(Call(0, req))
    assert s.step(Call(idle - 1, req)).usage.cache_read == 2048
    s = sim("openai", model)
    s.step(Call(0, req))
    late = s.step(Call(idle + 1, req))
    assert late.usage.cache_read == 0 and late.cause.kind == CauseKind.TTL_EXPIRED


@pytest.mark.parametrize("model,billed", [("gpt-4.1", False), ("gpt-5", False), ("gpt-5.6", True)])
def test_openai_writes_are_billed_from_gpt_5_6(model, billed):
    s = sim("openai", model)
    first = s.step(Call(0, make_request([1500], model=model, layers=[2])))
    assert split(first) == ((0, 0, 1500, 0) if billed else (0, 0, 0, 1500))


def test_unknown_openai_model_is_a_user_error():
    with pytest.raises(UserError, match="unknown OpenAI model"):
        sim("openai", "davinci-002").step(Call(0, make_request([2000], model="davinci-002", layers=[2])))


# --- DeepSeek --------------------------------------------------------------------------------------

def test_deepseek_64_token_units():
    s = sim("deepseek", "deepseek-chat")
    req = make_request([100], model="deepseek-chat", layers=[2])
    assert split(s.step(Call(0, req))) == (0, 0, 0, 100)
    assert split(s.step(Call(5, req))) == (64, 0, 0, 36)        # 100 tokens hold one whole 64-token unit
    small = make_request([63], model="deepseek-chat", layers=[2], tag=b"s")
    s.step(Call(6, small))
    assert s.step(Call(7, small)).usage.cache_read == 0         # < 64 tokens: never cached


def test_deepseek_entries_kept_an_hour_at_the_pessimistic_end_and_12_hours_as_traffic_shows():
    """'Hours to days' (DS news0802) read as 1 h to 24 h; the printed figure is what public traffic shows,
    12 h idle (docs/rules.md#deepseek): a follow-up 2 h later reads, one 12 h and a second later does not."""
    from prefixsim.core.simulator import Simulator
    from prefixsim.providers.registry import get_policy

    req = make_request([640], model="deepseek-chat", layers=[2])
    for bound, kept in (("pessimistic", 3600), ("printed", 43200), ("optimistic", 86400)):
        for gap, read in ((kept - 1, 640), (kept + 1, 0)):
            s = Simulator(provider="deepseek", policy=get_policy("deepseek", bound), tokenizer="approx",
                          prices=sim("deepseek", "deepseek-chat").prices)
            s.step(Call(0, req))
            assert s.step(Call(gap, req)).usage.cache_read == read, (bound, gap)
    s = sim("deepseek", "deepseek-chat")
    s.step(Call(0, req))
    assert s.step(Call(7200, req)).usage.cache_read == 640   # the printed figure: read after two hours


# --- the seeds' demo rules (provider: prefix) ---------------------------------------------------

def test_prefix_demo_rules_every_boundary_no_minimum_no_expiry():
    s = sim("prefix", "claude-sonnet-4-5")
    s.step(Call(0, make_request([10, 20, 30])))
    other = with_block(make_request([10, 20, 30]), 2, b"changed")
    # no breakpoints, no minimum: every boundary was written, so the first two blocks are read
    assert split(s.step(Call(1, other))) == (30, 0, 0, 30)
    # no TTL: ten days later the whole first prompt is still there; writes carry no premium
    assert split(s.step(Call(864000, make_request([10, 20, 30, 40])))) == (60, 0, 0, 40)


def _prefix_decide(policy, store, sizes, now, available_at, edited=None):
    """PrefixPolicy.decide on a request of blocks sized `sizes` (block `edited` given other bytes)."""
    req = make_request(sizes)
    if edited is not None:
        req = with_block(req, edited, b"edited")
    cum = [sum(sizes[:i + 1]) for i in range(len(sizes))]
    return policy.decide(req, chain(namespace_digest("prefix", "m"), req), cum, store, now, available_at)


def _prefix(read, uncached, hit, blocked=None):
    # the demo model: no write premium (nothing billed as a write), no minimum, no breakpoints
    return Decision(read=read, write_5m=0, write_1h=0, uncached=uncached, hit=hit, blocked=blocked,
                    below_minimum=False, breakpoints=())


def test_prefix_demo_reads_the_longest_readable_prefix_and_names_what_blocks_it():
    p, store = PrefixPolicy(), Store()
    assert _prefix_decide(p, store, [10, 20, 30], 0, 1) == _prefix(0, 60, -1)
    # before the first response began every boundary is pending: nothing read, the first one blocks
    assert _prefix_decide(p, store, [10, 20, 30, 40], 0.5, 1.5) == _prefix(0, 100, -1, (EntryState.PENDING, 0))
    # the parallel rewrite kept the earliest availability (t=1); the 4th boundary is readable at 1.5
    assert _prefix_decide(p, store, [10, 20, 30, 40, 50], 1.2, 2.2) == _prefix(60, 90, 2, (EntryState.PENDING, 3))
    assert _prefix_decide(p, store, [10, 20, 30, 40, 50], 3, 4) == _prefix(150, 0, 4)
    # an edited third block: the two boundaries before it are read, no entry blocks the edited one
    assert _prefix_decide(p, store, [10, 20, 30, 40, 50], 5, 6, edited=2) == _prefix(30, 120, 1)
    assert _prefix_decide(p, store, [10], 7, 8) == _prefix(10, 0, 0)
    assert _prefix_decide(p, store, [], 9, 10) == _prefix(0, 0, -1)   # no blocks: nothing to read or write
    # the boundary right after the hit blocks it even when it is the request's last
    assert _prefix_decide(p, store, [10, 20, 30, 40, 50, 60], 11, 12) == _prefix(150, 60, 4)
    assert _prefix_decide(p, store, [10, 20, 30, 40, 50, 60], 11.5, 12.5) == _prefix(150, 60, 4, (EntryState.PENDING, 5))


def test_prefix_demo_with_a_ttl_reads_only_an_unbroken_live_prefix():
    p, store = PrefixPolicy(ttl=300), Store()
    assert p.describe("m") == {"provider": "prefix", "caching": "every block boundary written and read (seed 003 demo)",
                               "minimum cacheable tokens": "none", "ttl": "300 s"}
    assert PrefixPolicy().describe("m")["ttl"] == "none"
    _prefix_decide(p, store, [10], 0, 0)                                        # lives to 300
    # a read of the first boundary refreshes it to 200 + 300; the two new ones live to 500
    assert _prefix_decide(p, store, [10, 20, 30], 200, 200) == _prefix(10, 50, 0)
    assert _prefix_decide(p, store, [10], 450, 450) == _prefix(10, 0, 0)         # first to 750
    # only the hit is refreshed: at 550 the second boundary expired (500) and stops the read
    assert _prefix_decide(p, store, [10, 20, 30], 550, 550) == _prefix(10, 50, 0, (EntryState.EXPIRED, 1))
    # all three now live to 850; reading the third refreshes it alone, to 900
    assert _prefix_decide(p, store, [10, 20, 30], 600, 600) == _prefix(60, 0, 2)
    # at 860 the third lives but the first expired: a prefix is read only from its start
    assert _prefix_decide(p, store, [10, 20, 30], 860, 860) == _prefix(0, 60, -1, (EntryState.EXPIRED, 0))


def test_prefix_demo_under_a_capacity_reads_only_an_unbroken_prefix():
    # each boundary's entry holds its prefix: 10 + 30 + 60 = 100 tokens fill the store exactly
    p, store = PrefixPolicy(), Store(capacity=100)
    assert _prefix_decide(p, store, [10, 20, 30], 0, 0) == _prefix(0, 60, -1)
    assert len(store) == 3
    # one more token evicts the least recently used entry, the first boundary
    _prefix_decide(p, store, [1], 1, 1, edited=0)
    assert _prefix_decide(p, store, [10, 20, 30], 2, 2) == _prefix(0, 60, -1, (EntryState.EVICTED, 0))


# --- pricing -----------------------------------------------------------------------------------

# Anthropic pricing page (2026-08-21), USD per MTok: input, 5m write, 1h write, read, output.
ANTHROPIC_PRICES = [
    ("claude-opus-4-5", "5", "6.25", "10", "0.5", "25"),
    ("claude-opus-4-1", "15", "18.75", "30", "1.5", "75"),
    ("claude-sonnet-4-5", "3", "3.75", "6", "0.3", "15"),
    ("claude-haiku-4-5", "1", "1.25", "2", "0.1", "5"),
    ("claude-3-5-haiku", "0.8", "1", "1.6", "0.08", "4"),
]


@pytest.mark.parametrize("model,inp,w5,w1,read,out", ANTHROPIC_PRICES)
def test_anthropic_prices_from_genai_prices(prices, model, inp, w5, w1, read, out):
    r = prices.rates(model, "anthropic")
    assert (r.input.base, r.cache_write_5m.base, r.cache_write_1h.base, r.cache_read.base, r.output.base) == \
        tuple(Decimal(x) for x in (inp, w5, w1, read, out))
    assert "genai-prices" in r.source and "2026-11-30" in r.source


def test_price_sheet_defaults_to_anthropic_multipliers():
    r = PriceBook({"m": {"input": 4, "output": 20}}, when=PRICE_DATE).rates("m")
    assert (r.cache_read.base, r.cache_write_5m.base, r.cache_write_1h.base) == \
        (Decimal("0.4"), Decimal("5.00"), Decimal("8"))
    given = PriceBook({"m": {"input": 4, "output": 20, "cache_read": 1}}, when=PRICE_DATE).rates("m")
    assert given.cache_read.base == 1


def test_openai_writes_cost_plain_input_when_genai_prices_has_no_write_price(prices):
    r = prices.rates("gpt-4.1", "openai")
    assert r.cache_write_5m.base == r.cache_write_1h.base == r.input.base == Decimal("2")


def test_cliff_tier_prices_every_token_past_the_threshold():
    t = Tiered(Decimal(3), ((200_000, Decimal(6)),))
    assert t.at(200_000) == 3 and t.at(200_001) == 6


def test_cost_is_exact_decimal(prices):
    r = prices.rates("claude-sonnet-4-5", "anthropic")
    u = Usage(input_tokens=1_000, cache_write_5m=10_000, cache_write_1h=20_000, cache_read=100_000, output_tokens=2_000)
    # 1,000 x 3 + 10,000 x 3.75 + 20,000 x 6 + 100,000 x 0.30 + 2,000 x 15, per million
    assert r.cost(u) == Decimal("0.2205")
    assert r.cost_without_cache(u) == Decimal("0.423")


def test_claude_platforms_describe_where_their_rules_differ_from_the_api():
    from prefixsim.providers.registry import get_policy
    from prefixsim.providers.tables import BEDROCK, VERTEX

    minimum = "1024 (A-PC, docs/rules.md#anthropic-minimum-cacheable-length)"
    api = get_policy("anthropic").describe("claude-sonnet-4-5")
    assert api["minimum cacheable tokens"] == minimum and "platform rules" not in api
    assert api["ttl"] == ("5m default or 1h, refreshed by a hit, counted from request start (A-PC); read 5 s past it, "
                          "as public traffic shows (the TTL is a minimum: docs/rules.md#anthropic-ttl-and-refresh)")
    # Bedrock: checkpoints spaced by the minimum on Claude 3.x, 1h only on Claude 4.5 and later
    old = get_policy("bedrock").describe("claude-sonnet-3-7")
    assert old["minimum cacheable tokens"] == "1024 (A-PC 2025-07 (haystack PR #2051), docs/rules.md#anthropic-minimum-cacheable-length: Opus/Sonnet 3.x)" + "; on this platform each checkpoint needs it past the previous checkpoint"
    assert old["ttl"] == "5m only on bedrock for claude-sonnet-3-7: a 1h breakpoint is written and billed as 5m"
    assert old["platform rules"] == BEDROCK.source
    assert get_policy("bedrock").describe("claude-sonnet-4-5")["ttl"] == api["ttl"]
    # Vertex: the API's rules, entries shared across the project
    vertex = get_policy("vertex").describe("claude-sonnet-4-5")
    assert (vertex["minimum cacheable tokens"], vertex["ttl"], vertex["platform rules"]) == (minimum, api["ttl"], VERTEX.source)


# --- Claude on Bedrock (docs/rules.md#bedrock-and-vertex-claude) -------------------------------------

def _bedrock():
    return Simulator("bedrock", tokenizer="approx", prices=PriceBook(when=PRICE_DATE))


def test_bedrock_a_checkpoint_needs_the_minimum_past_the_previous_written_one():
    # Claude 3.7 Sonnet, minimum 1,024 (AWS: each cachePoint at least the minimum past the previous one)
    from prefixsim.model import Layer, Request

    def req(*blocks):
        return Request("claude-sonnet-3-7", tuple(Block(Layer.MESSAGES, d, d.decode(), bp, tokens=n)
                                                  for d, n, bp in blocks))
    head = ((b"a", 1000, None), (b"b", 24, "5m"))                 # first checkpoint at exactly 1,024: written
    s = _bedrock()
    assert split(s.step(Call(0, req(*head, (b"c", 1024, "5m"), (b"q", 10, None))))) == (0, 0, 2048, 10)
    # a request that shares only the first checkpoint reads it: it was written at exactly the minimum
    assert split(s.step(Call(10, req(*head, (b"d", 50, "5m")), stream="b"))) == (1024, 0, 0, 50)
    # 1,023 past the first: the second checkpoint is not written, its tokens are plain input
    s = _bedrock()
    assert split(s.step(Call(0, req(*head, (b"c", 1023, "5m"), (b"q", 10, None))))) == (0, 0, 1024, 1033)


def test_bedrock_a_1h_breakpoint_on_a_model_without_1h_is_a_5m_entry():
    # Claude Opus 4.1 on Bedrock: 5m only; the 1h breakpoint is written, billed and kept as 5m
    s = _bedrock()
    req = make_request([4000, 100], {2: "1h"}, model="claude-opus-4-1")
    assert split(s.step(Call(0, req))) == (0, 0, 4100, 0)
    assert split(s.step(Call(290, req))) == (4100, 0, 0, 0)     # read within 5 min: kept to 590 s
    late = s.step(Call(900, req))                               # 310 s idle > 300 s
    assert split(late) == (0, 0, 4100, 0) and late.cause.kind == CauseKind.TTL_EXPIRED


def test_automatic_cache_control_skips_the_prompts_closing_tokens_after_a_single_block():
    # A-PC automatic caching: the breakpoint goes on the last cacheable block; a log's closing tokens
    # (PROMPT_END) are not content, so even after the first block they stay uncached
    from prefixsim.model import PROMPT_END, Layer, Request

    req = Request("claude-sonnet-4-5", (Block(Layer.MESSAGES, b"only", "messages[0]", tokens=2000),
                                        Block(Layer.MESSAGES, PROMPT_END, "end", tokens=5)), auto_cache="5m")
    got = Simulator("anthropic", tokenizer="approx", prices=PriceBook(when=PRICE_DATE)).step(Call(0, req))
    assert split(got) == (0, 0, 2000, 5)


def test_an_unknown_provider_is_named_with_the_nearest_and_the_valid_ones():
    from prefixsim.providers.registry import get_policy

    with pytest.raises(UserError) as e:
        get_policy("antropic")
    assert str(e.value) == ("unknown provider 'antropic' (did you mean 'anthropic'? valid: anthropic, bedrock, vertex, "
                            "gemini, openai, deepseek, prefix, vllm, sglang, groq, mistral, xai, zai, moonshot, together, "
                            "fireworks, cohere, other)")
