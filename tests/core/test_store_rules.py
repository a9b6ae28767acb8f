"""The store's rules pinned with exact numbers (issue 22): TTL refresh and the longer of two TTLs,
expired entries kept for the explanation, LRU order under a capacity and its exact boundaries.
Each test is written from the rule (A-PC: the lifetime counts from the start of the request that
last wrote or read the entry; a 1h and a 5m write of one prefix keep the longer), not from output."""
import pytest

from prefixsim.core.chain import chain, extend_chain, namespace_digest
from prefixsim.core.store import EntryState, Store
from prefixsim.model import Block, Layer, Request


def test_a_5m_write_over_a_live_1h_entry_keeps_its_hour():
    s = Store()
    s.write(b"d", 1000, now=0, available_at=1, ttl=3600)
    s.write(b"d", 1000, now=100, available_at=101, ttl=300)   # the same prefix, written again at 5m
    e = s.get(b"d")
    assert (e.ttl, e.expires_at, e.available_at) == (3600, 3600, 1)
    assert s.state(b"d", 3599) is EntryState.LIVE and s.state(b"d", 3600) is EntryState.EXPIRED


def test_a_grace_keeps_an_entry_past_its_ttl_from_every_write_and_read():
    """ANTHROPIC_TTL_GRACE: the TTL is a minimum; an entry is read up to `grace` seconds past it,
    counted from its latest write or read, and its `ttl` stays the TTL the request asked for."""
    s = Store()
    s.write(b"d", 1000, now=0, available_at=1, ttl=300, depth=0, grace=5)
    e = s.get(b"d")
    assert (e.ttl, e.expires_at) == (300, 305)
    assert s.state(b"d", 304.9) is EntryState.LIVE and s.state(b"d", 305) is EntryState.EXPIRED
    s.touch(b"d", 200)
    assert s.get(b"d").expires_at == 505
    s.touch_prefix([b"d"], 0, 400)   # a logged read, applied when the entry is next looked at
    assert s.get(b"d").expires_at == 705 and s.state(b"d", 704.9) is EntryState.LIVE


def test_a_1h_write_over_a_live_5m_entry_extends_it_to_the_hour():
    s = Store()
    s.write(b"d", 1000, now=0, available_at=1, ttl=300)
    s.write(b"d", 1000, now=200, available_at=201, ttl=3600)
    e = s.get(b"d")
    assert (e.ttl, e.expires_at, e.available_at, e.last_used) == (3600, 3800, 1, 200)


def test_a_parallel_rewrite_is_readable_from_the_earliest_first_token():
    s = Store()
    s.write(b"d", 10, now=0, available_at=5, ttl=300)
    s.write(b"d", 10, now=1, available_at=3, ttl=300)
    assert s.state(b"d", 2.9) is EntryState.PENDING and s.state(b"d", 3) is EntryState.LIVE
    assert s.get(b"d").expires_at == 301


def test_a_read_refreshes_from_the_reading_request_start_and_never_shortens():
    s = Store()
    s.write(b"d", 10, now=0, available_at=0, ttl=300)
    s.touch(b"d", 250)
    assert s.get(b"d").expires_at == 550 and s.get(b"d").last_used == 250
    s.touch(b"d", 100)            # an earlier start (out-of-order feed) never shortens the life
    assert s.get(b"d").expires_at == 550


def test_an_expired_entry_stays_visible_and_a_rewrite_starts_afresh():
    s = Store()
    s.write(b"d", 10, now=0, available_at=1, ttl=300)
    assert s.state(b"d", 300) is EntryState.EXPIRED and s.get(b"d").last_used == 0
    s.write(b"d", 10, now=900, available_at=902, ttl=300)
    e = s.get(b"d")
    assert (e.written_at, e.available_at, e.expires_at, e.last_used) == (900, 902, 1200, 900)
    assert s.births == 1   # a digest is born once, however often it is rewritten


def _digests(n):
    req = Request(model="m", blocks=tuple(Block(Layer.MESSAGES, b"b%d" % i, f"b{i}", None, tokens=1)
                                          for i in range(n)))
    return chain(namespace_digest("p", "m"), req)


@pytest.mark.parametrize("capacity", [None, 10**9])
def test_a_prefix_read_refreshes_every_live_ancestor_block_0_included(capacity):
    s = Store(capacity)
    ds = _digests(3)
    for j, d in enumerate(ds):
        s.write(d, 100 * (j + 1), now=0, available_at=0, ttl=300, depth=j)
    s.touch_prefix(ds, 2, now=200)
    assert [s.get(d).expires_at for d in ds] == [500, 500, 500]
    s.touch_prefix(ds, 0, now=400)        # a read of block 0 alone refreshes block 0 alone
    assert [s.get(d).expires_at for d in ds] == [700, 500, 500]
    assert s.state(ds[1], 500) is EntryState.EXPIRED and s.state(ds[0], 699) is EntryState.LIVE


@pytest.mark.parametrize("capacity", [None, 10**9])
def test_a_prefix_read_does_not_revive_an_expired_ancestor(capacity):
    s = Store(capacity)
    ds = _digests(2)
    s.write(ds[0], 100, now=0, available_at=0, ttl=300, depth=0)
    s.write(ds[1], 200, now=250, available_at=250, ttl=300, depth=1)
    s.touch_prefix(ds, 1, now=400)        # ds[0] expired at 300: the read must not bring it back
    assert s.state(ds[0], 400) is EntryState.EXPIRED and s.get(ds[1]).expires_at == 700


def test_capacity_exactly_full_keeps_everything_one_more_token_evicts_the_oldest():
    s = Store(capacity=300)
    s.write(b"a", 100, 0, 0, 300)
    s.write(b"b", 200, 1, 1, 300)          # exactly 300: nothing goes
    assert s.state(b"a", 1) is EntryState.LIVE and s.state(b"b", 1) is EntryState.LIVE
    s.write(b"c", 1, 2, 2, 300)            # 301: the least recently used goes
    assert s.state(b"a", 2) is EntryState.EVICTED
    assert s.state(b"b", 2) is EntryState.LIVE and s.state(b"c", 2) is EntryState.LIVE


def test_a_hit_moves_the_entry_up_the_lru_order():
    s = Store(capacity=300)
    s.write(b"a", 100, 0, 0, 300)
    s.write(b"b", 100, 1, 1, 300)
    s.write(b"c", 100, 2, 2, 300)
    s.touch(b"a", 3)
    s.write(b"d", 100, 4, 4, 300)          # b is now the least recently used
    assert [s.state(x, 4) for x in (b"a", b"b", b"c", b"d")] == [EntryState.LIVE, EntryState.EVICTED, EntryState.LIVE, EntryState.LIVE]


def test_a_rewrite_of_a_live_entry_also_moves_it_up():
    s = Store(capacity=200)
    s.write(b"a", 100, 0, 0, 300)
    s.write(b"b", 100, 1, 1, 300)
    s.write(b"a", 100, 2, 2, 300)          # the same prefix written again
    s.write(b"c", 100, 3, 3, 300)
    assert s.state(b"a", 3) is EntryState.LIVE and s.state(b"b", 3) is EntryState.EVICTED


def test_rewriting_an_expired_entry_counts_its_tokens_once():
    s = Store(capacity=200)
    s.write(b"a", 100, 0, 0, 300)
    s.write(b"a", 100, 400, 400, 300)      # expired, then rewritten: still 100 tokens in use
    s.write(b"b", 100, 401, 401, 300)      # 200: exactly full, nothing evicted
    assert s.state(b"a", 401) is EntryState.LIVE and s.state(b"b", 401) is EntryState.LIVE


def test_a_prompt_larger_than_the_capacity_does_not_evict_itself():
    s = Store(capacity=100)
    s.write(b"a", 50, 0, 0, 300)
    s.write(b"big", 500, 1, 1, 300)
    assert s.state(b"big", 1) is EntryState.LIVE and s.state(b"a", 1) is EntryState.EVICTED


def test_an_evicted_entry_written_again_is_live_and_no_longer_evicted():
    s = Store(capacity=100)
    s.write(b"a", 100, 0, 0, 300)
    s.write(b"b", 100, 1, 1, 300)
    assert s.state(b"a", 1) is EntryState.EVICTED and s.known(b"a")
    s.write(b"a", 100, 2, 2, 300)
    assert s.state(b"a", 2) is EntryState.LIVE and s.state(b"b", 2) is EntryState.EVICTED
    assert s.births == 2


@pytest.mark.parametrize("params", [(b"", b"", b""), (b"tc", b"", b""), (b"", b"sys", b""), (b"", b"", b"think"),
                                    (b"a", b"b", b"c")])
def test_extending_a_chain_from_any_block_gives_the_whole_chain(params):
    """The runner extends a stream's chain block by block; it must equal the chain built at once,
    layer parameters included (they enter where the chain enters their layer)."""
    layers = [Layer.TOOLS, Layer.TOOLS, Layer.SYSTEM, Layer.MESSAGES, Layer.MESSAGES, Layer.MESSAGES]
    req = Request(model="m", layer_params=params,
                  blocks=tuple(Block(lay, b"k%d" % i, f"b{i}", None, tokens=1) for i, lay in enumerate(layers)))
    d0 = namespace_digest("p", "m")
    whole = chain(d0, req)
    assert len(set(whole)) == len(whole)
    for start in range(len(layers)):
        out = whole[:start]
        extend_chain(out, d0, req, start)
        assert out == whole, start


def test_a_layer_parameter_changes_every_digest_from_its_layer_on_and_none_before():
    layers = [Layer.TOOLS, Layer.SYSTEM, Layer.MESSAGES, Layer.MESSAGES]
    blocks = tuple(Block(lay, b"k%d" % i, f"b{i}", None, tokens=1) for i, lay in enumerate(layers))
    d0 = namespace_digest("p", "m")
    plain = chain(d0, Request(model="m", blocks=blocks))
    for layer, first in ((0, 0), (1, 1), (2, 2)):
        params = tuple(b"x" if i == layer else b"" for i in range(3))
        other = chain(d0, Request(model="m", blocks=blocks, layer_params=params))
        assert [a == b for a, b in zip(plain, other)] == [j < first for j in range(4)]


@pytest.mark.parametrize("capacity", [None, 10**9])
def test_a_logged_prefix_read_applies_within_the_entry_lifetime_only(capacity):
    """The lazy refresh (no capacity) must give what an immediate refresh gives at the boundaries:
    a read at the instant an entry becomes readable refreshes it; a read at its expiry does not.
    With a capacity the read is applied at once, by the same rule."""
    s = Store(capacity)
    ds = _digests(2)
    s.write(ds[0], 100, now=0, available_at=2, ttl=300, depth=0)
    s.write(ds[1], 200, now=0, available_at=2, ttl=300, depth=1)
    s.touch_prefix(ds, 1, now=2)
    assert [s.get(d).expires_at for d in ds] == [302, 302] and s.get(ds[0]).last_used == 2
    s.write(ds[1], 200, now=302, available_at=303, ttl=300, depth=1)   # ds[1] rewritten; ds[0] expired at 302
    s.touch_prefix(ds, 1, now=302)
    assert s.get(ds[0]).expires_at == 302 and s.get(ds[0]).last_used == 2
    assert s.state(ds[0], 302) is EntryState.EXPIRED


@pytest.mark.parametrize("capacity", [None, 10**9])
def test_a_logged_prefix_read_before_the_first_token_does_not_refresh(capacity):
    s = Store(capacity)
    ds = _digests(2)
    s.write(ds[0], 100, now=0, available_at=5, ttl=300, depth=0)
    s.touch_prefix(ds, 1, now=4)
    assert s.get(ds[0]).expires_at == 300 and s.get(ds[0]).last_used == 0


def test_under_a_capacity_a_prefix_read_moves_every_block_it_read_up_the_lru_order():
    s = Store(capacity=400)
    ds = _digests(2)
    s.write(ds[0], 100, now=0, available_at=0, ttl=300, depth=0)
    s.write(ds[1], 100, now=0, available_at=0, ttl=300, depth=1)
    s.write(b"other", 100, now=1, available_at=1, ttl=300)
    s.touch_prefix(ds, 1, now=2)                 # ds[0] and ds[1] are now more recent than `other`
    s.write(b"new", 200, now=3, available_at=3, ttl=300)
    assert s.state(b"other", 3) is EntryState.EVICTED
    assert all(s.state(d, 3) is EntryState.LIVE for d in ds)


def test_a_rewrite_at_the_instant_of_expiry_is_a_new_entry():
    s = Store()
    s.write(b"d", 10, now=0, available_at=1, ttl=300)
    s.write(b"d", 10, now=300, available_at=302, ttl=300)
    e = s.get(b"d")
    assert (e.written_at, e.available_at, e.expires_at) == (300, 302, 600)
    assert s.state(b"d", 301) is EntryState.PENDING


def test_one_large_write_evicts_as_many_entries_as_it_needs():
    s = Store(capacity=300)
    for i, name in enumerate((b"a", b"b", b"c")):
        s.write(name, 100, i, i, 300)
    s.write(b"d", 250, 3, 3, 300)        # 550 tokens: a, b and c must all go to get back under 300
    assert [s.state(x, 3) for x in (b"a", b"b", b"c", b"d")] == [EntryState.EVICTED] * 3 + [EntryState.LIVE]
    s.write(b"e", 50, 4, 4, 300)         # exactly 300 again: nothing more goes
    assert s.state(b"d", 4) is EntryState.LIVE and s.state(b"e", 4) is EntryState.LIVE
