"""A price class genai-prices does not list (prefixsim/core/fill.py): the provider's documented
multiplier, said so, never another class's price. Issue 31, case 4: genai-prices has no 1h write
price for Claude Opus 4.1 on Vertex; the workload (reconstructed, it gives both of the issue's
figures exactly): a 10,000-token system prompt cached 1h, two requests."""
import datetime as dt
from decimal import Decimal

import pytest

from prefixsim.api import run_file
from prefixsim.core.pricing import PriceBook
from prefixsim.errors import UserError

SCENARIO = """\
name: opus-1h
provider: vertex
model: claude-opus-4-1
tokenizer: approx
pace: 30s
ttl: {ttl}
breakpoints: system_and_tools
base:
  system: 10000
timeline:
  - request: 2
"""


def _run(tmp_path, ttl):
    p = tmp_path / f"v{ttl}.yaml"
    p.write_text(SCENARIO.format(ttl=ttl))
    v = run_file(str(p), dt.date(2026, 11, 30)).variants[0]
    return v, sum((o.cost_usd for o in v.outcomes), Decimal(0)).quantize(Decimal("0.000001"))


def test_opus_4_1_on_vertex_1h_writes_cost_twice_the_input_price(tmp_path):
    """$0.360416 (10,007 tokens written at 2 x $15), a loss against no caching; with the 5m price
    borrowed it printed $0.247837 and "28.2 % saved", so the 1h-vs-5m verdict flips."""
    v1, c1 = _run(tmp_path, "1h")
    v5, c5 = _run(tmp_path, "5m")
    assert [o.usage.cache_write_1h for o in v1.outcomes] == [10_007, 0]
    assert c1 == Decimal("0.360416") and c5 == Decimal("0.247837")
    no_cache = sum((v1.rates["claude-opus-4-1"].cost_without_cache(o.usage) for o in v1.outcomes), Decimal(0))
    assert c1 > no_cache > c5                              # 1h loses money here; 5m saves 28.2 %
    assert round((no_cache - c5) / no_cache * 100, 1) == Decimal("28.2")
    r = PriceBook(when=dt.date(2026, 11, 30)).rates("claude-opus-4-1", "vertex")
    assert r.cache_write_1h.base == Decimal(30) and "1h write = 2 x base input" in r.origins[4]
    assert "A-PR" in r.origins[4] and "genai-prices" in r.origins[3]


def test_listed_classes_keep_their_listed_price():
    r = PriceBook(when=dt.date(2026, 11, 30)).rates("claude-opus-4-6", "anthropic")
    assert r.cache_write_1h.base == Decimal(10) and all("genai-prices" in o for o in r.origins)


def test_a_long_context_tier_survives_a_filled_class():
    """A class filled from the multiplier keeps the input's long-context tiers (0.1 x each tier)."""
    from prefixsim.core import fill
    from prefixsim.core.genai import Tiered

    inp = Tiered(Decimal(3), ((200_000, Decimal(6)),))
    t, why = fill.missing("anthropic", "claude-sonnet-4-5", "cache_read", {"input": inp})
    assert t == Tiered(Decimal("0.3"), ((200_000, Decimal("0.6")),)) and "0.1 x base input" in why


def test_a_class_no_rule_gives_is_reported_missing():
    from prefixsim.core import fill
    from prefixsim.core.genai import Tiered

    with pytest.raises(UserError) as e:
        fill.missing("somecloud", "m", "cache_read", {"input": Tiered(Decimal(1))})
    assert str(e.value).startswith("no cache_read price for 'm' on somecloud")
