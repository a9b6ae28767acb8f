"""The store alone: TTL from request start, availability, capacity with LRU eviction."""
from conftest import make_request, split

from prefixsim.core.simulator import Simulator
from prefixsim.core.store import EntryState, Store
from prefixsim.model import Call, CauseKind


def test_states_over_time():
    s = Store()
    s.write(b"d", 100, now=0, available_at=2, ttl=300)
    assert [s.state(b"d", t) for t in (1, 2, 299, 300)] == [EntryState.PENDING, EntryState.LIVE, EntryState.LIVE, EntryState.EXPIRED]
    assert s.state(b"x", 0) is EntryState.MISSING


def test_lru_eviction_by_capacity():
    s = Store(capacity=250)
    s.write(b"a", 100, 0, 0, 300)
    s.write(b"b", 100, 1, 1, 300)
    s.touch(b"a", 2)                      # a is now the most recently used
    s.write(b"c", 100, 3, 3, 300)         # over capacity: b goes
    assert s.state(b"b", 3) is EntryState.EVICTED
    assert s.state(b"a", 3) is EntryState.LIVE and s.state(b"c", 3) is EntryState.LIVE


def test_evicted_entry_is_named_as_the_cause(prices):
    sim = Simulator("anthropic", tokenizer="approx", prices=prices)
    sim.store = Store(capacity=6000)
    sim.step(Call(0, make_request([5000, 100], {2: "5m"})))
    sim.step(Call(5, make_request([5000, 100], {2: "5m"}, tag=b"other")))   # evicts the first entry
    o = sim.step(Call(10, make_request([5000, 100], {2: "5m"})))
    assert split(o) == (0, 0, 5100, 0)
    assert o.cause.kind == CauseKind.EVICTED


def test_ttl_miss_names_the_idle_time_before_the_rewrite(prices):
    """The same prompt 400 s after its only write: the entry idled 400 s past a 300 s TTL. The
    request rewrites that very entry, and the message must still read the idle time it found."""
    sim = Simulator("anthropic", tokenizer="approx", prices=prices)
    sim.step(Call(0, make_request([2000, 100], {2: "5m"})))
    o = sim.step(Call(400, make_request([2000, 100], {2: "5m"})))
    assert split(o) == (0, 0, 2100, 0)
    assert o.cause.kind == CauseKind.TTL_EXPIRED
    assert o.cause.detail == "entry at b2 idle 400 s > ttl 300 s"


def test_ttl_miss_idle_time_counts_from_the_last_read(prices):
    """Written at 0, read at 200 (refreshes it), then asked for at 530: idle 330 s, not 530 s."""
    sim = Simulator("anthropic", tokenizer="approx", prices=prices)
    sim.step(Call(0, make_request([2000, 100], {2: "5m"})))
    sim.step(Call(200, make_request([2000, 100], {2: "5m"})))
    o = sim.step(Call(530, make_request([2000, 100], {2: "5m"})))
    assert o.cause.detail == "entry at b2 idle 330 s > ttl 300 s"
