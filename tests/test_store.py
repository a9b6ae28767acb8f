"""The store alone: TTL from request start, availability, capacity with LRU eviction."""
from prefixsim.model import Call, CauseKind
from prefixsim.runner import Simulator
from prefixsim.store import State, Store

from conftest import make_request, split


def test_states_over_time():
    s = Store()
    s.write(b"d", 100, now=0, available_at=2, ttl=300)
    assert [s.state(b"d", t) for t in (1, 2, 299, 300)] == [State.PENDING, State.LIVE, State.LIVE, State.EXPIRED]
    assert s.state(b"x", 0) is State.MISSING


def test_lru_eviction_by_capacity():
    s = Store(capacity=250)
    s.write(b"a", 100, 0, 0, 300)
    s.write(b"b", 100, 1, 1, 300)
    s.touch(b"a", 2)                      # a is now the most recently used
    s.write(b"c", 100, 3, 3, 300)         # over capacity: b goes
    assert s.state(b"b", 3) is State.EVICTED
    assert s.state(b"a", 3) is State.LIVE and s.state(b"c", 3) is State.LIVE


def test_evicted_entry_is_named_as_the_cause(prices):
    sim = Simulator("anthropic", tokenizer="approx", prices=prices)
    sim.store = Store(capacity=6000)
    sim.step(Call(0, make_request([5000, 100], {2: "5m"})))
    sim.step(Call(5, make_request([5000, 100], {2: "5m"}, tag=b"other")))   # evicts the first entry
    o = sim.step(Call(10, make_request([5000, 100], {2: "5m"})))
    assert split(o) == (0, 0, 5100, 0)
    assert o.cause.kind == CauseKind.EVICTED
