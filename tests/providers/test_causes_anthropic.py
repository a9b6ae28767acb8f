"""Every miss cause of the Claude platforms (API, Bedrock, Vertex) at its boundary, with its detail
asserted as printed, from a scenario's simulator and from the replay of a log of the same bodies
(issue 37). The cases are tests/claude_causes.py's; each expected string is written from the rule."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from claude_causes import BLOCK_HEAD, FIRST_BLOCK_HEAD, PLATFORMS, causes, epoch, replayed, req, request_of, simulated
from conftest import PRICE_DATE, make_request

from prefixsim.core.chain import chain, namespace_digest
from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.core.store import EntryState, Store
from prefixsim.model import Call, CauseKind
from prefixsim.providers.registry import get_policy

A = "messages[0].content[0]"
SLACK = "; within the TTL's slack, where an entry is often still read (the TTL is a minimum)"


def usage(o):
    u = o.usage
    return (u.cache_read, u.cache_write_1h, u.cache_write_5m, u.input_tokens)


# --- cold and below_minimum: exactly at the minimum and one token below -------------------------

@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_prefix_of_exactly_the_minimum_is_written_one_token_less_is_below_it(tmp_path, platform):
    # Sonnet 4.5: 1,024 tokens on every platform (A-PC; Bedrock and Vertex keep the API's minimum)
    at = [req(0, ("A", 1024, "5m")), req(10, ("A", 1024, "5m"))]
    assert causes(platform, at, tmp_path) == ["cold", ""]
    assert [usage(o) for o in simulated(platform, at)] == [(0, 0, 1024, 0), (1024, 0, 0, 0)]
    below = [req(0, ("A", 1023, "5m")), req(10, ("A", 1023, "5m"))]
    assert causes(platform, below, tmp_path) == \
        ["below_minimum (1023 tokens)", "below_minimum (1023 tokens)"]   # nothing written: below again
    assert [usage(o) for o in simulated(platform, below)] == [(0, 0, 0, 1023)] * 2


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_later_breakpoint_that_reaches_the_minimum_writes_and_the_miss_is_cold(tmp_path, platform):
    # The first breakpoint (600) is below 1,024; the second reaches it at exactly 1,024, or misses by one.
    reach = [req(0, ("A", 600, "5m")), req(10, ("A", 600, "5m"), ("B", 424, "5m"))]
    assert causes(platform, reach, tmp_path) == ["below_minimum (600 tokens)", "cold"]
    assert usage(simulated(platform, reach)[1]) == (0, 0, 1024, 0)
    short = [req(0, ("A", 600, "5m")), req(10, ("A", 600, "5m"), ("B", 423, "5m"))]
    assert causes(platform, short, tmp_path) == ["below_minimum (600 tokens)", "below_minimum (1023 tokens)"]


def test_bedrock_spaces_checkpoints_by_the_minimum_on_claude_3_7(tmp_path):
    # Bedrock, Claude 3.7 Sonnet: each checkpoint needs 1,024 past the previous one that reached it.
    m = "claude-sonnet-3-7"
    spaced = [req(0, ("A", 1024, "5m"), model=m), req(10, ("A", 1024, "5m"), ("B", 1023, "5m"), model=m)]
    assert causes("bedrock", spaced, tmp_path) == ["cold", ""]
    assert usage(simulated("bedrock", spaced)[1]) == (1024, 0, 0, 1023)   # B not written: 1,023 past A
    enough = [req(0, ("A", 1024, "5m"), model=m), req(10, ("A", 1024, "5m"), ("B", 1024, "5m"), model=m)]
    assert causes("bedrock", enough, tmp_path) == ["cold", ""]
    assert usage(simulated("bedrock", enough)[1]) == (1024, 0, 1024, 0)
    # Vertex keeps the API's rule: 1,023 more is written, the prefix being 2,047 from the start
    assert usage(simulated("vertex", spaced)[1]) == (1024, 0, 1023, 0)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_request_without_a_breakpoint_is_cold_and_says_so(tmp_path, platform):
    assert causes(platform, [req(0, ("A", 5000))], tmp_path) == ["cold (no cache_control breakpoint)"]


# --- a hit at block 0 ---------------------------------------------------------------------------

@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_hit_at_block_0_is_a_hit_whatever_follows_it(tmp_path, platform):
    # Block 0 read, then an uncached tail one token short of the minimum, with or without a breakpoint:
    # the request read what it could, no cause (never below_minimum: the prefix read reached it).
    reqs = [req(0, ("A", 1024, "5m")), req(10, ("A", 1024, "5m"), ("T", 1023)),
            req(20, ("A", 1024, "5m"), ("T", 1023)), req(30, ("A", 1024), ("T", 1023), ("U", 1, "5m"))]
    assert causes(platform, reqs, tmp_path) == ["cold", "", "", ""]
    out = simulated(platform, reqs)
    assert [usage(o) for o in out] == [(0, 0, 1024, 0), (1024, 0, 0, 1023), (1024, 0, 0, 1023), (1024, 0, 1024, 0)]
    assert [o.read_blocks for o in out] == [0, 1, 1, 1]


# --- ttl_expired: the TTL and its grace, one second before, the slack's edge, through the lookback --

@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("gap,cause", [
    (300, ""),    # the TTL is a minimum: read at 300 s (ANTHROPIC_TTL_GRACE, 5 s)
    (304, ""),
    (305, f"ttl_expired (entry at {A} idle 305 s > ttl 300 s{SLACK})"),   # expires 5 s past the TTL exactly
    (315, f"ttl_expired (entry at {A} idle 315 s > ttl 300 s{SLACK})"),   # 15 s slack (ANTHROPIC_TTL_SLACK)
    (316, f"ttl_expired (entry at {A} idle 316 s > ttl 300 s)"),
])
def test_a_5m_entry_expires_5_s_past_300_s_and_says_its_idle_time(tmp_path, platform, gap, cause):
    assert causes(platform, [req(0, ("A", 2000, "5m")), req(gap, ("A", 2000, "5m"))], tmp_path) == ["cold", cause]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_1h_entry_expires_at_3600_s(tmp_path, platform):
    reqs = [req(0, ("A", 2000, "1h")), req(3599, ("A", 2000, "1h")), req(3599 + 3616, ("A", 2000, "1h"))]
    assert causes(platform, reqs, tmp_path) == ["cold", "", f"ttl_expired (entry at {A} idle 3616 s > ttl 3600 s)"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_reading_a_5m_entry_at_a_1h_breakpoint_keeps_it_5m(tmp_path, platform):
    # only breakpoints past the hit write (A-PC): the read refreshes the entry for its own 5 minutes
    reqs = [req(0, ("A", 2000, "5m")), req(10, ("A", 2000, "1h")), req(10 + 305, ("A", 2000, "5m"))]
    assert causes(platform, reqs, tmp_path) == ["cold", "", f"ttl_expired (entry at {A} idle 305 s > ttl 300 s{SLACK})"]
    assert [usage(o) for o in simulated(platform, reqs)] == [(0, 0, 2000, 0), (2000, 0, 0, 0), (0, 0, 2000, 0)]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_idle_time_counts_from_the_last_read(tmp_path, platform):
    reqs = [req(0, ("A", 2000, "5m")), req(200, ("A", 2000, "5m")), req(200 + 305, ("A", 2000, "5m"))]
    assert causes(platform, reqs, tmp_path) == ["cold", "", f"ttl_expired (entry at {A} idle 305 s > ttl 300 s{SLACK})"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_an_expired_entry_seen_through_the_lookback_is_named(tmp_path, platform):
    # The breakpoint is 5 blocks past the entry: the walk back reaches it, expired.
    later = req(400, ("A", 2000), *[(f"B{k}", 100) for k in range(1, 5)], ("B5", 100, "5m"))
    assert causes(platform, [req(0, ("A", 2000, "5m")), later], tmp_path, exact=False) == \
        ["cold", f"ttl_expired (entry at {A} idle 400 s > ttl 300 s)"]


# --- not_yet_available: a parallel request's write, directly and through the lookback -----------

@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("through", [False, True])
def test_a_write_not_yet_readable_names_when_it_becomes_readable(tmp_path, platform, through):
    second = req(0.5, ("A", 2000), ("B", 100, "5m"), stream="b") if through else req(0.5, ("A", 2000, "5m"), stream="b")
    reqs = [req(0, ("A", 2000, "5m")), second, req(1.0, ("A", 2000, "5m"), stream="c")]
    sim = [str(o.cause) for o in simulated(platform, reqs)]
    assert sim == ["cold", f"not_yet_available (entry at {A} written at t=0s, readable from t=1s)", ""]
    # A log's times are seconds since 1970: the detail names them to the millisecond, as the scenario's
    rows = replayed(tmp_path, platform, reqs)
    assert [str(r.cause) for r in rows] == \
        ["cold", f"not_yet_available (entry at {A} written at t={epoch(0):.0f}s, readable from t={epoch(1):.0f}s)", ""]
    half = replayed(tmp_path, platform,
                    [req(0.25, ("A", 2000, "5m")), req(0.5, ("A", 2000, "5m"), stream="b")])
    assert str(half[1].cause) == f"not_yet_available (entry at {A} written at t={epoch(0):.0f}.25s, readable from " \
                                 f"t={epoch(1):.0f}.25s)"


# --- evicted (a capacity: the simulator's; a log's replay has none on the Claude platforms) -----

@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("through", [False, True])
def test_an_evicted_entry_is_named_directly_and_through_the_lookback(platform, through):
    again = req(2, ("A", 1024), ("B", 10, "5m")) if through else req(2, ("A", 1024, "5m"))
    # 1,500 tokens hold one 1,024-token entry: C's write evicts A, the oldest
    out = simulated(platform, [req(0, ("A", 1024, "5m")), req(1, ("C", 1024, "5m"), stream="b"), again], capacity=1500)
    assert [str(o.cause) for o in out] == ["cold", "cold", f"evicted (entry at {A} evicted for capacity)"]


# --- lookback_exceeded: 20 blocks reach the entry, 21 do not; an entry past the last breakpoint --

@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("tail,cause", [
    (19, ""),   # the breakpoint on block 19 walks back over 19..0: it reads block 0
    (20, f"lookback_exceeded (entry at {A} is 21 blocks back from the breakpoint at messages[0].content[20] (window 20))"),
])
def test_the_lookback_reaches_20_blocks_the_breakpoint_s_own_included(tmp_path, platform, tail, cause):
    later = req(10, ("A", 2000), *[(f"B{k}", 50) for k in range(1, tail)], (f"B{tail}", 50, "5m"))
    assert causes(platform, [req(0, ("A", 2000, "5m")), later], tmp_path, exact=False) == ["cold", cause]
    assert usage(simulated(platform, [req(0, ("A", 2000, "5m")), later])[1])[0] == (2000 if tail == 19 else 0)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_an_entry_past_the_last_breakpoint_is_named(tmp_path, platform):
    reqs = [req(0, ("A", 2000), ("B", 500, "5m")), req(10, ("A", 2000, "5m"), ("B", 500))]
    assert causes(platform, reqs, tmp_path, exact=False) == \
        ["cold", "lookback_exceeded (entry at messages[0].content[1] lies after the last breakpoint)"]


# --- prefix_changed and model_switch: the layer, block and byte --------------------------------

@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_changed_block_is_named_to_the_byte(tmp_path, platform):
    # A's text is "A w w ...", A2's "A2 w ...": they part at the text's byte 1
    first = [req(0, ("A", 2000, "5m")), req(10, ("A2", 2000, "5m"))]
    assert causes(platform, first, tmp_path) == \
        ["cold", f"prefix_changed (messages layer, block 0 ({A}), byte {FIRST_BLOCK_HEAD + 1})"]
    # a hit at block 0, the parting at block 1 (no role before a message's later block)
    second = [req(0, ("A", 2000, "5m"), ("B", 2000, "5m")), req(10, ("A", 2000, "5m"), ("Bx", 2000, "5m"))]
    assert causes(platform, second, tmp_path, exact=False) == \
        ["cold", f"prefix_changed (messages layer, block 1 (messages[0].content[1]), byte {BLOCK_HEAD + 1})"]
    assert usage(simulated(platform, second)[1]) == (2000, 0, 2000, 0)
    system = [req(0, ("system", 3000, "5m"), ("A", 10)), req(10, ("systemX", 3000, "5m"), ("A", 10))]
    assert causes(platform, system, tmp_path, exact=False) == \
        ["cold", f"prefix_changed (system layer, block 0 (system[0]), byte {BLOCK_HEAD + 6})"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_model_switch_names_both_models(tmp_path, platform):
    reqs = [req(0, ("A", 2000, "5m")), req(10, ("A", 2000, "5m"), model="claude-opus-4-1")]
    assert causes(platform, reqs, tmp_path) == ["cold", "model_switch (claude-sonnet-4-5 -> claude-opus-4-1)"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_compaction_names_where_the_summary_parts_from_the_history(platform):
    # A compaction is a harness's event (a scenario's `compact`, a transcript's summary); a Messages log has none.
    reqs = [req(0, ("A", 2000, "5m"), ("B", 500, "5m")), req(10, ("A", 2000, "5m"), ("S", 300, "5m"))]
    sim = Simulator(platform, tokenizer="approx", prices=PriceBook(when=PRICE_DATE))
    assert str(sim.step(Call(0, request_of(reqs[0]), stream="a")).cause) == "cold"
    out = sim.step(Call(10, request_of(reqs[1]), stream="a", event=CauseKind.COMPACTION))
    assert str(out.cause) == f"compaction (messages layer, block 1 (messages[0].content[1]), byte {BLOCK_HEAD})"
    assert usage(out) == (2000, 0, 300, 0)


# --- two blocked candidates: the later one is named ---------------------------------------------

@pytest.mark.parametrize("platform", PLATFORMS)
def test_of_an_expired_and_a_pending_entry_the_later_pending_one_is_named(tmp_path, platform):
    abc = (("A", 2000), ("B", 100), ("C", 100, "5m"))
    reqs = [req(0, ("A", 2000, "5m")), req(400, *abc, stream="b"), req(400.5, *abc, stream="c")]
    sim = [str(o.cause) for o in simulated(platform, reqs)]
    assert sim[2] == "not_yet_available (entry at messages[0].content[2] written at t=400s, readable from t=401s)"
    rows = replayed(tmp_path, platform, reqs, exact=False)
    assert str(rows[2].cause) == (f"not_yet_available (entry at messages[0].content[2] written at t={epoch(400):.0f}s, "
                                  f"readable from t={epoch(401):.0f}s)")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_of_a_pending_and_an_expired_entry_the_later_expired_one_is_named(tmp_path, platform):
    abc = (("A", 2000), ("B", 100), ("C", 100, "5m"))
    reqs = [req(0, *abc), req(400, ("A", 2000, "5m"), stream="b"), req(400.25, *abc, stream="c")]
    assert causes(platform, reqs, tmp_path, exact=False)[2] == \
        "ttl_expired (entry at messages[0].content[2] idle 400 s > ttl 300 s)"


# --- the policy's own account of the walk (Decision.blocked, read when the store knows no prefix) --

def _decide(platform, entries, request_at, bps):
    """Decide a 3-block request (A 2000, B 100, C 100) with breakpoints `bps` (block indexes) after
    `entries` were written: (block, written at, readable at) each a 5m entry."""
    policy = get_policy(platform)
    r = make_request([2000, 100, 100], {i + 1: "5m" for i in bps}, layers=[2, 2, 2])
    digests = chain(namespace_digest(platform, "claude-sonnet-4-5"), r)
    cum = [2000, 2100, 2200]
    store = Store()
    for j, t, ready in entries:
        store.write(digests[j], cum[j], t, ready, 300.0, j)
    return policy.decide(r, digests, cum, store, request_at, request_at + 1)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_walk_reports_the_latest_entry_it_saw_and_could_not_use(platform):
    # block 0 expired, block 2 pending: both on the walk back from the breakpoint on block 2
    d = _decide(platform, [(0, 0, 1), (2, 400, 401)], 400.5, [2])
    assert (d.hit, d.blocked) == (-1, (EntryState.PENDING, 2))
    d = _decide(platform, [(0, 400, 401), (2, 0, 1)], 400.5, [2])
    assert (d.hit, d.blocked) == (-1, (EntryState.EXPIRED, 2))
    # a missing block between them is passed over, never reported
    d = _decide(platform, [(0, 0, 1)], 400.5, [2])
    assert (d.hit, d.blocked) == (-1, (EntryState.EXPIRED, 0))
    # two breakpoints: the later walk's entry wins over the earlier walk's
    d = _decide(platform, [(0, 0, 1), (1, 400, 401)], 400.5, [0, 2])
    assert (d.hit, d.blocked) == (-1, (EntryState.PENDING, 1))
    # what lies at or before the hit is not blocked
    d = _decide(platform, [(0, 390, 391), (2, 0, 1)], 400.5, [0, 2])
    assert (d.hit, d.blocked) == (0, (EntryState.EXPIRED, 2))
    assert _decide(platform, [(0, 390, 391)], 400.5, [2]).blocked is None
    assert _decide(platform, [], 400.5, [2]).blocked is None


# --- below_minimum means: nothing read, and no breakpoint's prefix reaches the minimum ----------

@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_request_that_read_block_0_is_never_below_the_minimum(platform):
    # Block 0 is live (an earlier request wrote it when its bytes were counted longer, as a transcript's
    # calibrated block may be) and no breakpoint of this request reaches the minimum: it read, so it
    # is not "below the minimum", whatever its sizes.
    policy = get_policy(platform)
    r = make_request([1000, 10], {1: "5m", 2: "5m"}, layers=[2, 2])
    digests = chain(namespace_digest(platform, "claude-sonnet-4-5"), r)
    store = Store()
    store.write(digests[0], 1024, 0, 1, 300.0, 0)   # written when these bytes were counted 1,024 tokens
    d = policy.decide(r, digests, [1000, 1010], store, 10, 11)
    assert (d.hit, d.read, d.below_minimum) == (0, 1000, False)


@given(sizes=st.lists(st.integers(0, 1500), min_size=1, max_size=6), data=st.data())
@settings(max_examples=300, deadline=None)
def test_below_minimum_is_exactly_nothing_read_and_every_breakpoint_short(sizes, data):
    """On every platform and any store: below_minimum iff the request read nothing, has breakpoints,
    and none of their prefixes reaches the minimum (1,024; Claude 3.7 on Bedrock: past the previous
    written checkpoint, which cannot change this, the first checkpoint to reach it being written)."""
    n = len(sizes)
    bps = sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=4)))
    platform = data.draw(st.sampled_from(PLATFORMS))
    model = data.draw(st.sampled_from(["claude-sonnet-4-5", "claude-sonnet-3-7"]))
    r = make_request(sizes, {i + 1: "5m" for i in bps}, model=model, layers=[2] * n)
    digests = chain(namespace_digest(platform, model), r)
    cum = [sum(sizes[:k + 1]) for k in range(n)]
    store = Store()
    for j in data.draw(st.sets(st.integers(0, n - 1))):
        written = data.draw(st.sampled_from([0.0, 9.5, -400.0]))   # live, pending or expired at t=10
        store.write(digests[j], cum[j], written, written + 1, 300.0, j)
    d = get_policy(platform).decide(r, digests, cum, store, 10.0, 11.0)
    assert d.below_minimum == (d.hit < 0 and bool(bps) and all(cum[i] < 1024 for i in bps))
    assert d.below_minimum <= (d.read + d.write_5m + d.write_1h == 0)


# --- prefix_changed in the tools layer, by a parameter, and a history cut -----------------------

@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_changed_tool_a_changed_tool_choice_and_a_cut_history_are_named(tmp_path, platform):
    tools = [req(0, ("toolR", 1500, "5m"), ("A", 600, "5m")), req(10, ("toolR2", 1500, "5m"), ("A", 600, "5m"))]
    # the definitions part after '{"name":"toolR' (14 bytes): everything from the tools layer on is lost
    assert causes(platform, tools, tmp_path, exact=False) == ["cold", "prefix_changed (tools layer, block 0 (tools[0]), byte 14)"]
    choice = [req(0, ("toolR", 1500, "5m"), ("A", 600, "5m")),
              req(10, ("toolR", 1500, "5m"), ("A", 600, "5m"), tool_choice={"type": "any"})]
    # tool_choice enters the chain with the messages layer: the tools are still read (A-PC)
    assert causes(platform, choice, tmp_path, exact=False) == \
        ["cold", "prefix_changed (messages layer, block 1 (messages[0].content[0]): messages-layer parameters changed)"]
    assert usage(simulated(platform, choice)[1]) == (1500, 0, 600, 0)
    cut = [req(0, ("A", 2000), ("B", 500, "5m")), req(10, ("A", 2000, "5m"))]
    assert causes(platform, cut, tmp_path, exact=False) == ["cold", "prefix_changed (history cut at block 1)"]


# --- the parting's wording in the simulator's own blocks (no log gives these) -------------------

def _sim(platform):
    return Simulator(platform, tokenizer="approx", prices=PriceBook(when=PRICE_DATE))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_parting_is_named_without_a_path_at_the_shorter_block_s_end(platform):
    from prefixsim.model import Block, Layer, Request

    s = _sim(platform)
    one = (Block(Layer.MESSAGES, b"abc", breakpoint="5m", tokens=2000),)
    s.step(Call(0, Request("claude-sonnet-4-5", one), stream="a"))
    longer = (Block(Layer.MESSAGES, b"abcd", breakpoint="5m", tokens=2000),)
    # b"abc" is all of b"abcd"'s first 3 bytes: they part at byte 3; a block without a path is named by its index
    assert str(s.step(Call(10, Request("claude-sonnet-4-5", longer), stream="a")).cause) == \
        "prefix_changed (messages layer, block 0, byte 3)"


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("before,after,cause", [
    ((b"effort:high", b"", b""), (b"effort:low", b"", b""),
     "prefix_changed (tools layer, block 0 (b1): effort changed (rendered ahead of the tools on claude-sonnet-4-5))"),
    ((b"", b"web", b""), (b"", b"", b""), "prefix_changed (system layer, block 1 (b2): system-layer parameters changed)"),
])
def test_a_changed_layer_parameter_names_its_layer(platform, before, after, cause):
    s = _sim(platform)
    s.step(Call(0, make_request([2000, 100], {1: "5m", 2: "5m"}, params=before), stream="a"))
    assert str(s.step(Call(10, make_request([2000, 100], {1: "5m", 2: "5m"}, params=after), stream="a")).cause) == cause


@pytest.mark.parametrize("platform", PLATFORMS)
def test_an_empty_prompt_has_no_cause_and_a_first_compaction_only_its_name(platform):
    s = _sim(platform)
    empty = s.step(Call(0, make_request([0], {1: "5m"}), stream="a"))
    assert (str(empty.cause), usage(empty)) == ("", (0, 0, 0, 0))
    from prefixsim.model import Request

    blockless = _sim(platform).step(Call(0, Request("claude-sonnet-4-5", ()), stream="a"))   # no blocks at all
    assert (str(blockless.cause), usage(blockless), blockless.n_blocks) == ("", (0, 0, 0, 0), 0)
    first = _sim(platform).step(Call(0, make_request([2000, 100], {2: "5m"}), stream="a", event=CauseKind.COMPACTION))
    assert str(first.cause) == "compaction"


@pytest.mark.parametrize("provider", [*PLATFORMS, "prefix"])
def test_one_documented_retention_no_range(provider):
    # a run reports both ends of a retention only when it is a range (Policy.has_range): not these
    policy = get_policy(provider)
    assert not policy.has_range() and not policy.has_range("claude-sonnet-4-5")


def test_the_policy_refuses_a_model_its_tables_lack_unless_told_otherwise():
    from prefixsim.errors import UserError
    from prefixsim.providers.anthropic import AnthropicPolicy
    from prefixsim.providers.unlisted import UNLISTED_CLAUDE

    with pytest.raises(UserError):
        AnthropicPolicy().minimum("claude-sonnet-9-9")
    assert AnthropicPolicy(listed_only=False).minimum("claude-sonnet-9-9") == UNLISTED_CLAUDE


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_breakpoint_without_a_path_is_named_by_its_index(platform):
    from prefixsim.model import Block, Layer, Request

    def blocks(n, bp):
        return tuple(Block(Layer.MESSAGES, b"x%d" % k, breakpoint="5m" if k == bp else None,
                           tokens=2000 if k == 0 else 10) for k in range(n))
    s = _sim(platform)
    s.step(Call(0, Request("claude-sonnet-4-5", blocks(1, 0)), stream="a"))
    o = s.step(Call(10, Request("claude-sonnet-4-5", blocks(21, 20)), stream="a"))
    assert str(o.cause) == "lookback_exceeded (entry at block 0 is 21 blocks back from the breakpoint at 20 (window 20))"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_model_switch_after_nothing_was_cached_is_not_the_cause(tmp_path, platform):
    # the previous request cached nothing (below the minimum): the switch lost nothing
    reqs = [req(0, ("A", 1023, "5m")), req(10, ("A", 1023, "5m"), model="claude-opus-4-1")]
    assert causes(platform, reqs, tmp_path) == ["below_minimum (1023 tokens)", "below_minimum (1023 tokens)"]
