"""The runner's Gemini explicit-cache paths pinned with exact values (issue 22: mutation testing).

G-CC (docs/rules.md#gemini-explicit-context-caching): creating a CachedContent bills its tokens as
input plus its storage for the time it is kept; a request naming one reads its first `blocks`
blocks at the cached rate whatever the implicit cache found, and the implicit decision stands
beyond them, tokens in order: read, then written, then uncached.
"""
import datetime as dt
from decimal import Decimal

from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator, _by_reference
from prefixsim.model import Block, CachedRef, Call, Cause, Layer, Request
from prefixsim.providers.base import Decision
from prefixsim.providers.registry import get_policy

CUM = [100, 300, 600, 1000]   # four blocks of 100, 200, 300 and 400 tokens


def dec(read, w5, w1h, uncached, hit, below=False):
    return Decision(read=read, write_5m=w5, write_1h=w1h, uncached=uncached, hit=hit, blocked=None,
                    below_minimum=below, breakpoints=())


def split(d):
    return d.read, d.write_5m, d.write_1h, d.uncached, d.hit


def test_a_reference_reads_its_blocks_over_a_cold_miss():
    out = _by_reference(dec(0, 0, 0, 1000, -1, below=True), 2, CUM)
    assert split(out) == (300, 0, 0, 700, 1)          # blocks 0-1 read, the rest uncached
    assert out.below_minimum is False                  # what was read is not below any minimum
    assert split(_by_reference(dec(0, 0, 0, 1000, -1), 1, CUM)) == (100, 0, 0, 900, 0)
    assert split(_by_reference(dec(0, 0, 0, 1000, -1), 4, CUM)) == (1000, 0, 0, 0, 3)


def test_writes_past_the_reference_stay_writes():
    # implicit: 100 read, 200 written (5m), 300 written (1h), 400 uncached; the reference covers 300
    out = _by_reference(dec(100, 200, 300, 400, 0), 2, CUM)
    assert split(out) == (300, 300, 0, 400, 1)        # 600 read-or-written: 300 of them past the reference
    out = _by_reference(dec(0, 100, 500, 400, -1), 2, CUM)
    assert split(out) == (300, 300, 0, 400, 1)        # 5m and 1h writes both cut by the reference


def test_a_deeper_implicit_read_stands():
    d = dec(300, 0, 300, 400, 1)                       # read exactly the referenced 300, then a 1h write
    assert _by_reference(d, 2, CUM) == d
    d = dec(600, 0, 0, 400, 2)
    assert _by_reference(d, 2, CUM) == d
    d = dec(0, 0, 0, 1000, -1, below=True)            # no blocks named: nothing changes
    assert _by_reference(d, 0, CUM) == d


class RecordingBook(PriceBook):
    """A price book that notes which (model, provider, time) each price was looked up for."""

    def __init__(self):
        super().__init__(when=dt.date(2026, 11, 30))
        self.asked = []

    def rates(self, model, provider=None, at=None):
        self.asked.append((model, provider, at))
        return super().rates(model, provider, at)


PREFIX = Block(Layer.SYSTEM, b"p" * 64, "system", None, 100_000)
TURN = Block(Layer.MESSAGES, b"q" * 64, "messages[0]", None, 1_000)


def test_creation_bills_input_output_and_storage():
    book = RecordingBook()
    sim = Simulator("gemini", tokenizer="approx", prices=book)
    made = sim.step(Call(30.0, Request("gemini-2.5-pro", (PREFIX, TURN)), stream="cache c", output_tokens=50,
                         cached=CachedRef("c", 2, create=True, kept_s=3600)))
    u = made.usage
    assert (u.input_tokens, u.cache_read, u.cache_creation, u.output_tokens) == (101_000, 0, 0, 50)
    # G-PR: 2.5 Pro input $1.25 / MTok (<= 200K), output $10 / MTok, storage $4.50 / MTok / h
    assert made.cost_usd == Decimal("0.12625") + Decimal("0.0005")
    assert made.storage_usd == Decimal("0.4545")       # 0.101 MTok x 1 h x 4.50
    assert made.cost_no_cache_usd == 0                 # without caching it would not exist
    assert made.cause == Cause() and str(made.cause) == ""
    assert (made.read_blocks, made.n_blocks) == (0, 2)
    assert made.price_source == PriceBook(when=dt.date(2026, 11, 30)).rates("gemini-2.5-pro", "gemini").source
    assert book.asked == [("gemini-2.5-pro", "gemini", book.start + dt.timedelta(seconds=30))]


def test_prices_are_looked_up_at_the_requests_own_time():
    book = RecordingBook()
    sim = Simulator("gemini", tokenizer="approx", prices=book)
    when = dt.datetime(2026, 11, 30, 18, 5, tzinfo=dt.UTC)
    sim.step(Call(0.0, Request("gemini-2.5-pro", (PREFIX,)), stream="cache c",
                  cached=CachedRef("c", 1, create=True, kept_s=60)), at=when)
    sim.step(Call(20.0, Request("gemini-2.5-pro", (PREFIX, TURN)), cached=CachedRef("c", 1)), at=when)
    sim.step(Call(40.0, Request("gemini-2.5-pro", (PREFIX, TURN)), cached=CachedRef("c", 1)))
    assert book.asked == [("gemini-2.5-pro", "gemini", when), ("gemini-2.5-pro", "gemini", when),
                          ("gemini-2.5-pro", "gemini", book.start + dt.timedelta(seconds=40))]


def test_the_implicit_cache_at_its_pessimistic_end_says_no_hit_is_promised():
    # Gemini implicit caching is best effort: the pessimistic end of its range assumes no hit, and
    # says why (the printed figure is what traffic shows: tests/providers/test_gemini_measured.py)
    sim = Simulator("gemini", tokenizer="approx", policy=get_policy("gemini", "pessimistic"))
    r = Request("gemini-2.5-pro", (Block(Layer.SYSTEM, b"s", "system", tokens=5000),
                                   Block(Layer.MESSAGES, b"m", "contents[0]", tokens=100)))
    first = sim.step(Call(0.0, r))
    again = sim.step(Call(10.0, r))
    assert (first.usage.input_tokens, again.usage.input_tokens, again.usage.cache_read) == (5100, 5100, 0)
    assert str(first.cause) == "cold"
    assert str(again.cause) == ("ttl_expired (entry at contents[0]: best effort, no hit assumed at the "
                                "pessimistic end (the optimistic figures assume one))")
