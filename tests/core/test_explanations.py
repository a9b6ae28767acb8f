"""Each miss cause's text and the block counts, pinned with exact values (issue 22). The causes are
what a user reads to find the breaker, so a lost or wrong detail is a wrong answer."""
import pytest
from conftest import make_request, split

from prefixsim.core.simulator import Simulator
from prefixsim.errors import RequestError
from prefixsim.model import Call, CauseKind


@pytest.fixture
def sim(prices):
    return Simulator("anthropic", tokenizer="approx", prices=prices)


def test_a_shorter_history_is_named_as_cut_at_its_length(sim):
    sim.step(Call(0, make_request([2000, 3000, 500, 400], {4: "5m"}), stream="s"))
    o = sim.step(Call(10, make_request([2000, 3000, 500], {3: "5m"}), stream="s"))
    assert split(o) == (0, 0, 5500, 0)
    assert (o.cause.kind, o.cause.detail) == (CauseKind.PREFIX_CHANGED, "history cut at block 3")
    assert (o.read_blocks, o.n_blocks) == (0, 3)


def test_an_entry_past_the_last_breakpoint_is_named(sim):
    sim.step(Call(0, make_request([2000, 3000, 500, 400], {4: "5m"}), stream="s"))
    o = sim.step(Call(10, make_request([2000, 3000, 500, 400, 300], {2: "5m"}), stream="s"))
    assert split(o) == (0, 0, 5000, 1200)
    assert (o.cause.kind, o.cause.detail) == (CauseKind.LOOKBACK_EXCEEDED, "entry at b4 lies after the last breakpoint")


def test_read_blocks_counts_the_blocks_read(sim):
    sim.step(Call(0, make_request([2000, 3000, 500, 400], {4: "5m"}), stream="s"))
    o = sim.step(Call(20, make_request([2000, 3000, 500, 400, 300], {5: "5m"}), stream="s"))
    assert split(o) == (5900, 0, 300, 0) and o.cause.kind == CauseKind.HIT
    assert (o.read_blocks, o.n_blocks) == (4, 5)


def test_an_entry_too_far_back_names_the_distance_and_the_window(sim):
    sizes = [100] * 40
    sim.step(Call(0, make_request(sizes[:15], {15: "5m"}), stream="s"))
    o = sim.step(Call(10, make_request(sizes[:36], {36: "5m"}), stream="s"))
    assert split(o) == (0, 0, 3600, 0)
    assert o.cause.kind == CauseKind.LOOKBACK_EXCEEDED
    assert o.cause.detail == "entry at b15 is 22 blocks back from the breakpoint at b36 (window 20)"


def test_a_pending_sibling_write_names_when_it_becomes_readable(sim):
    sim.step(Call(0, make_request([2000, 3000], {2: "5m"}), stream="a", ttft=2.5))
    o = sim.step(Call(1, make_request([2000, 3000], {2: "5m"}), stream="b"))
    assert split(o) == (0, 0, 5000, 0)
    assert (o.cause.kind, o.cause.detail) == (CauseKind.NOT_YET_AVAILABLE,
                                              "entry at b2 written at t=0s, readable from t=2.5s")


def test_a_cold_miss_above_the_minimum_is_cold_not_below_minimum(sim):
    o = sim.step(Call(0, make_request([600, 424], {2: "5m"})))      # exactly the Sonnet 4.5 minimum (1,024)
    assert split(o) == (0, 0, 1024, 0) and o.cause.kind == CauseKind.COLD
    o = sim.step(Call(1, make_request([600, 423], {2: "5m"}, tag=b"x"), stream="other"))  # one token short
    assert split(o) == (0, 0, 0, 1023)
    assert (o.cause.kind, o.cause.detail) == (CauseKind.BELOW_MINIMUM, "1023 tokens")


def test_no_breakpoint_at_all_is_cold_with_its_reason(sim):
    o = sim.step(Call(0, make_request([2000, 3000])))
    assert split(o) == (0, 0, 0, 5000)
    assert (o.cause.kind, o.cause.detail) == (CauseKind.COLD, "no cache_control breakpoint")


def test_a_model_switch_names_both_models(sim):
    sim.step(Call(0, make_request([2000, 3000], {2: "5m"}), stream="s"))
    o = sim.step(Call(5, make_request([2000, 3000], {2: "5m"}, model="claude-opus-4-1"), stream="s"))
    assert split(o) == (0, 0, 5000, 0)
    assert (o.cause.kind, o.cause.detail) == (CauseKind.MODEL_SWITCH, "claude-sonnet-4-5 -> claude-opus-4-1")


@pytest.mark.parametrize("auto,last,ok", [("5m", "1h", False), ("1h", "5m", False), ("5m", "5m", True), ("1h", "1h", True)])
def test_automatic_ttl_must_agree_with_an_explicit_ttl_on_the_last_block(sim, auto, last, ok):
    req = make_request([2000, 3000], {2: last}, auto=auto)
    if ok:   # the automatic breakpoint coincides with the explicit one: one breakpoint, one write
        o = sim.step(Call(0, req))
        w = (o.usage.cache_write_5m, o.usage.cache_write_1h)
        assert w == ((5000, 0) if last == "5m" else (0, 5000))
    else:
        with pytest.raises(RequestError, match="conflicts with an explicit"):
            sim.step(Call(0, req))


def test_a_small_breakpoint_beside_a_writable_one_is_cold_not_below_minimum(sim):
    """below_minimum is for a request that could write nothing: a breakpoint under the minimum next to
    one above it still writes, so a first request is simply cold."""
    o = sim.step(Call(0, make_request([500, 4500], {1: "5m", 2: "5m"})))
    assert split(o) == (0, 0, 5000, 0) and o.cause.kind == CauseKind.COLD


@pytest.mark.parametrize("explicit,ok", [(3, True), (4, False)])
def test_automatic_caching_needs_a_free_breakpoint_slot(sim, explicit, ok):
    """A-PC: at most 4 breakpoints, automatic mode's included (when the last block has none)."""
    sizes = [300] * 6
    req = make_request(sizes, {i: "5m" for i in range(1, explicit + 1)}, auto="5m")
    if ok:
        assert split(sim.step(Call(0, req))) == (0, 0, 1800, 0)
    else:
        with pytest.raises(RequestError, match=r"^automatic caching needs a free breakpoint slot but 4 explicit "
                                               r"cache_control blocks are set \(at most 4; A-PC\)$"):
            sim.step(Call(0, req))


def test_a_1h_breakpoint_after_a_5m_one_names_its_place(sim):
    with pytest.raises(RequestError, match=r"^a 1h cache_control at b3 comes after a 5m one; 1h entries must "
                                           r"come before 5m entries \(A-PC\)$"):
        sim.step(Call(0, make_request([2000, 3000, 500], {2: "5m", 3: "1h"})))
