"""docs/worked-examples.md, example by example."""
import pytest
from conftest import make_request, split

from prefixsim.core.simulator import Simulator
from prefixsim.errors import RequestError
from prefixsim.model import Call, CauseKind


def sim(prices, provider="anthropic", ttft=1.0):
    return Simulator(provider, tokenizer="approx", ttft=ttft, prices=prices)


def test_e1_two_turns_breakpoint_on_last_block(prices):
    s = sim(prices)
    r1 = s.step(Call(0, make_request([2000, 3000, 500], {3: "5m"})))
    r2 = s.step(Call(10, make_request([2000, 3000, 500, 400, 300], {5: "5m"})))
    assert split(r1) == (0, 0, 5500, 0)
    assert split(r2) == (5500, 0, 700, 0)
    # read(t) == read(t-1) + write(t-1)
    assert r2.usage.cache_read == r1.usage.cache_read + r1.usage.cache_creation
    assert r1.cause.kind == CauseKind.COLD and r2.cause.kind == CauseKind.HIT


def test_e2_lookback_twenty_positions(prices):
    s = sim(prices)
    assert split(s.step(Call(0, make_request([100] * 15, {15: "5m"})))) == (0, 0, 1500, 0)
    miss = s.step(Call(10, make_request([100] * 35, {35: "5m"})))
    assert split(miss) == (0, 0, 3500, 0)
    assert miss.cause.kind == CauseKind.LOOKBACK_EXCEEDED


@pytest.mark.parametrize("n_blocks,expected", [(34, (1500, 0, 1900, 0)), (35, (1500, 0, 1900, 100))])
def test_e2_breakpoint_on_block_34_reaches_15(prices, n_blocks, expected):
    # worked-examples.md gives 1500/0/1900/0, which holds when request 2 ends at block 34; with 35
    # blocks the 35th lies after the last breakpoint and is uncached input (A-PC: input_tokens counts
    # the tokens after the last breakpoint).
    s = sim(prices)
    s.step(Call(0, make_request([100] * 15, {15: "5m"})))
    assert split(s.step(Call(10, make_request([100] * n_blocks, {34: "5m"})))) == expected


def test_e3_mixed_ttls(prices):
    s = sim(prices)
    r1 = s.step(Call(0, make_request([2000, 3000, 500, 400, 300], {2: "1h", 5: "5m"})))
    assert split(r1) == (0, 5000, 1200, 0)
    r2 = s.step(Call(600, make_request([2000, 3000, 500, 400, 300, 500, 300], {2: "1h", 7: "5m"})))
    assert split(r2) == (5000, 0, 2000, 0)
    assert r2.cause.kind == CauseKind.TTL_EXPIRED


def test_e3_1h_after_5m_is_an_error(prices):
    with pytest.raises(RequestError, match="1h entries must come before 5m"):
        sim(prices).step(Call(0, make_request([2000, 3000, 500], {2: "5m", 3: "1h"})))


def test_e4_entry_readable_only_after_first_response(prices):
    s = sim(prices, ttft=2.0)
    rs = [s.step(Call(0, make_request([5000, 100], {2: "5m"}))) for _ in range(3)]
    assert [split(r) for r in rs] == [(0, 0, 5100, 0)] * 3
    assert [r.cause.kind for r in rs[1:]] == [CauseKind.NOT_YET_AVAILABLE] * 2
    assert split(s.step(Call(3, make_request([5000, 100], {2: "5m"})))) == (5100, 0, 0, 0)


def test_e5_below_minimum_is_silent(prices):
    s = sim(prices)
    for t in (0, 10):
        r = s.step(Call(t, make_request([600, 300], {2: "5m"})))
        assert split(r) == (0, 0, 0, 900)
        assert r.cause.kind == CauseKind.BELOW_MINIMUM


def test_e6_hit_refreshes_ttl(prices):
    s = sim(prices)
    got = [split(s.step(Call(t, make_request([4000, 100], {2: "5m"})))) for t in (0, 240, 480, 840)]
    assert got == [(0, 0, 4100, 0), (4100, 0, 0, 0), (4100, 0, 0, 0), (0, 0, 4100, 0)]


def test_e7_lifetime_counts_from_request_start(prices):
    """E7 with the TTL's grace (ANTHROPIC_TTL_GRACE, 5 s: the TTL is a minimum, and public traffic reads
    up to about 311 s; docs/rules.md#anthropic-ttl-and-refresh): the lifetime counts from the start of
    the request, not the end of its 4-minute answer, so the next request past 305 s misses (E7's 301 s
    reads). Counted from the answer's end it would read until 540 s."""
    s = sim(prices)
    s.step(Call(0, make_request([4000, 100], {2: "5m"}), output_tokens=8000, ttft=1.0))
    r = s.step(Call(306, make_request([4000, 100], {2: "5m"})))
    assert split(r) == (0, 0, 4100, 0)
    assert r.cause.kind == CauseKind.TTL_EXPIRED
    s = sim(prices)
    s.step(Call(0, make_request([4000, 100], {2: "5m"}), output_tokens=8000, ttft=1.0))
    assert split(s.step(Call(301, make_request([4000, 100], {2: "5m"})))) == (4100, 0, 0, 0)


def test_e8_automatic_mode(prices):
    s = sim(prices)
    sizes = [2000, 3000, 500]
    got = []
    for t in range(4):
        got.append(split(s.step(Call(t * 10, make_request(sizes, auto="5m")))))
        sizes = sizes + [400, 300]
    assert got[0] == (0, 0, 5500, 0)
    assert got[1] == (5500, 0, 700, 0) and got[2] == (6200, 0, 700, 0) and got[3] == (6900, 0, 700, 0)


def test_e8_fifth_breakpoint_is_an_error(prices):
    s = sim(prices)
    with pytest.raises(RequestError, match="free breakpoint slot"):
        s.step(Call(0, make_request([2000] * 6, {1: "5m", 2: "5m", 3: "5m", 4: "5m"}, auto="5m")))
    with pytest.raises(RequestError, match="at most 4"):
        s.step(Call(0, make_request([2000] * 6, {1: "5m", 2: "5m", 3: "5m", 4: "5m", 5: "5m"})))


@pytest.mark.parametrize("extra_bp,expected", [(False, (0, 0, 6200, 0)), (True, (5000, 0, 1200, 0))])
def test_e9_tool_choice_invalidates_messages_only(prices, extra_bp, expected):
    s = sim(prices)
    bps = {5: "5m", **({2: "5m"} if extra_bp else {})}
    sizes = [2000, 3000, 500, 400, 300]
    s.step(Call(0, make_request(sizes, bps, params=(b"", b"", b'{"tool_choice":{"type":"auto"}}'))))
    r = s.step(Call(10, make_request(sizes, bps, params=(b"", b"", b'{"tool_choice":{"type":"any"}}'))))
    assert split(r) == expected
    assert r.cause.kind == CauseKind.PREFIX_CHANGED
    assert "messages-layer parameters changed" in r.cause.detail


@pytest.mark.parametrize("bps", [{5: "5m"}, {2: "5m", 5: "5m"}])
def test_e9_tool_definition_change_loses_everything(prices, bps):
    s = sim(prices)
    s.step(Call(0, make_request([2000, 3000, 500, 400, 300], bps)))
    r = s.step(Call(10, make_request([2000, 3000, 500, 400, 300], bps, tag=b"x")))
    assert split(r) == (0, 0, 6200, 0)


def test_e10_model_switch_is_another_cache(prices):
    s = sim(prices)
    s.step(Call(0, make_request([2000, 3000, 500], {3: "5m"})))
    r = s.step(Call(10, make_request([2000, 3000, 500, 400, 300], {5: "5m"}, model="claude-opus-4-1")))
    assert split(r) == (0, 0, 6200, 0)
    assert r.cause.kind == CauseKind.MODEL_SWITCH


def test_e11_openai_automatic_128_increments(prices):
    s = sim(prices, provider="openai")
    req = make_request([1500], model="gpt-4.1", layers=[2])
    assert split(s.step(Call(0, req))) == (0, 0, 0, 1500)
    assert split(s.step(Call(5, req))) == (1408, 0, 0, 92)
    small = make_request([1000], model="gpt-4.1", layers=[2], tag=b"s")
    assert split(s.step(Call(6, small))) == (0, 0, 0, 1000)
    assert split(s.step(Call(7, small))) == (0, 0, 0, 1000)


def test_e11_openai_cached_tokens_priced_at_family_discount(prices):
    for model, discount in (("gpt-4o", "0.5"), ("gpt-4.1", "0.25"), ("gpt-5", "0.1")):
        r = prices.rates(model, "openai")
        assert r.cache_read.base / r.input.base == __import__("decimal").Decimal(discount), model
