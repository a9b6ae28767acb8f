"""Properties of the chain and the replay (hypothesis)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixsim.core.chain import chain, namespace_digest
from prefixsim.core.simulator import Simulator
from prefixsim.model import Block, Call, Layer, Request

blocks_st = st.lists(st.tuples(st.integers(0, 2), st.binary(max_size=12)), max_size=12)


def req(spec, bp_last=False, model="claude-sonnet-4-5"):
    spec = sorted(spec, key=lambda x: x[0])
    bl = [Block(Layer(lay), d, f"b{i}", tokens=300) for i, (lay, d) in enumerate(spec)]
    if bp_last and bl:
        bl[-1] = bl[-1].with_breakpoint("5m")
    return Request(model, tuple(bl))


@given(blocks_st, blocks_st)
def test_leading_digests_equal_iff_leading_blocks_equal(a, b):
    ra, rb = req(a), req(b)
    d0 = namespace_digest("anthropic", "m")
    da, db = chain(d0, ra), chain(d0, rb)
    equal_blocks = 0
    for x, y in zip(ra.blocks, rb.blocks):
        if (x.layer, x.data) != (y.layer, y.data):
            break
        equal_blocks += 1
    equal_digests = 0
    for x, y in zip(da, db):
        if x != y:
            break
        equal_digests += 1
    assert equal_digests == equal_blocks


def _replay(calls, prices):
    s = Simulator("anthropic", tokenizer="approx", prices=prices)
    return [(o.usage, str(o.cause), o.cost_usd, o.call) for o in s.run(calls)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 900), blocks_st), min_size=1, max_size=6))
def test_replay_is_deterministic_and_conserves_tokens(spec):
    from conftest import PRICE_DATE

    from prefixsim.core.pricing import PriceBook
    prices = PriceBook(when=PRICE_DATE)
    calls = [Call(t, req(b, bp_last=True)) for t, b in spec]
    first, second = _replay(calls, prices), _replay(calls, prices)
    assert first == second
    for u, _, _, c in first:
        assert u.prompt_tokens == sum(b.tokens for b in c.request.blocks)


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 30), st.integers(1, 6), st.floats(0, 297))
def test_appending_never_lowers_the_next_read_inside_the_ttl(n, extra, gap):
    from conftest import PRICE_DATE

    from prefixsim.core.pricing import PriceBook
    s = Simulator("anthropic", tokenizer="approx", prices=PriceBook(when=PRICE_DATE))
    base = [(2, b"m%d" % i) for i in range(n)]
    o1 = s.step(Call(0, req(base, bp_last=True)))
    o2 = s.step(Call(2 + gap, req(base + [(2, b"x%d" % i) for i in range(extra)], bp_last=True)))
    assert o2.usage.cache_read >= o1.usage.cache_read
    assert o2.usage.cache_read == o1.usage.cache_read + o1.usage.cache_creation
