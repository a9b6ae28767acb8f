from decimal import Decimal

import pytest

from prefixsim.cached_content import CachedContent, storage, storage_cost
from prefixsim.errors import UserError
from prefixsim.pricing import PriceBook


def test_storage_two_hours_2_5_pro():
    # G-PR: 2.5 Pro storage $4.50 / MTok / h; 100 K tokens kept 2 h = 0.1 × 2 × 4.50 = $0.90
    s, _ = storage("gemini-2.5-pro", PriceBook())
    c = CachedContent.create("ctx", 0.0, ttl_s=7200)
    assert storage_cost(100_000, c.kept_s, s) == Decimal("0.90")


def test_default_ttl_one_hour_and_expiry():
    c = CachedContent.create("ctx", 10.0)
    assert c.end == 3610.0 and c.alive(3609.9) and not c.alive(3610.0)
    s, _ = storage("gemini-2.5-flash", PriceBook())   # $1.00 / MTok / h
    assert storage_cost(1_000_000, c.kept_s, s) == Decimal("1.00")


def test_update_ttl_counts_from_update_and_delete_ends_billing():
    c = CachedContent.create("ctx", 0.0)     # expires at 1 h
    c.update_ttl(1800.0, 7200)               # now expires at 2.5 h
    assert c.end == 9000.0
    c.delete(5400.0)                         # kept 1.5 h
    s, _ = storage("gemini-2.5-pro", PriceBook())
    assert storage_cost(100_000, c.kept_s, s) == Decimal("0.675")   # 0.1 × 1.5 × 4.50
    with pytest.raises(UserError):
        c.update_ttl(6000.0, 60)


def test_bad_ttl():
    with pytest.raises(UserError):
        CachedContent.create("ctx", 0.0, ttl_s=0)


def test_simulator_creation_storage_and_read_by_reference():
    from prefixsim.model import Block, CachedRef, Call, Layer, Request
    from prefixsim.runner import Simulator
    prefix = Block(Layer.SYSTEM, b"p" * 64, "system", None, 100_000)
    turn = Block(Layer.MESSAGES, b"q" * 64, "messages[0]", None, 1_000)
    sim = Simulator("gemini", tokenizer="approx")   # pessimistic implicit: no implicit hit
    made = sim.step(Call(0.0, Request("gemini-2.5-pro", (prefix,)), stream="cache c",
                         cached=CachedRef("c", 1, create=True, kept_s=7200)))
    assert made.usage.input_tokens == 100_000 and made.storage_usd == Decimal("0.90")
    assert made.cost_usd == Decimal("0.125")          # 0.1 MTok at $1.25 input (≤200K)
    read = sim.step(Call(60.0, Request("gemini-2.5-pro", (prefix, turn)), cached=CachedRef("c", 1)))
    assert read.usage.cache_read == 100_000 and read.usage.input_tokens == 1_000
