"""Issue 37: every cause an audit (usage recorded, no prompt) names from usage and timing alone,
pinned at its boundary with its detail (replay/audit_causes.py), on Claude, an automatic cache and a
provider without rules; and through the replay as through the class."""
from decimal import Decimal

import pytest

from prefixsim.model import Block, Call, Cause, Layer, Request, Usage
from prefixsim.replay import replay
from prefixsim.replay.audit_causes import UsageCauses, audit_losses
from prefixsim.sources.record import Record

SONNET = "claude-sonnet-4-5-20250929"   # minimum 1,024
GPT = "gpt-4o-2024-08-06"               # minimum 1,024, retention 5-10 min (optimistic 3,600 s at most)


def _rec(t, usage, model=SONNET, provider="anthropic", stream="s", i=0):
    block = Block(Layer.MESSAGES, b"p", "messages[0]", tokens=max(1, usage.prompt_tokens))
    call = Call(t=t, request=Request(model=model, blocks=(block,)), stream=stream, label=f"r{i}")
    return Record(call, f"r{i}", "2025-12-02T10:00:00Z", usage, "x.jsonl", i + 1, provider=provider, audit=True)


def _causes(recs, hour=()):
    uc = UsageCauses(set(hour))
    return [uc.cause(r) for r in recs]


W = Usage(input_tokens=10, cache_write_5m=20_000)


def test_the_first_request_is_cold_at_the_minimum_and_below_it_one_token_short():
    assert _causes([_rec(0, Usage(input_tokens=1024))]) == [(Cause("cold", "first request of its stream; from usage"), 0)]
    assert _causes([_rec(0, Usage(input_tokens=1023))]) == [(Cause("below_minimum", "1,023 tokens < 1,024; from usage"), 0)]
    # a first request that read: a cache outside the data, no miss
    assert _causes([_rec(0, Usage(input_tokens=10, cache_read=2000))]) == [(Cause(), 0)]


def test_a_stream_whose_last_request_kept_nothing_names_no_miss_but_the_minimum():
    first = _rec(0, Usage(input_tokens=5000))   # kept nothing (no write reported)
    assert _causes([first, _rec(10, Usage(input_tokens=5000))])[1] == (Cause(), 0)
    assert _causes([first, _rec(10, Usage(input_tokens=900))])[1] == (Cause("below_minimum", "900 tokens < 1,024; from usage"), 0)


def test_reading_everything_kept_is_no_miss_and_one_token_less_is():
    kept = _rec(0, W)
    assert _causes([kept, _rec(20, Usage(input_tokens=5, cache_read=20_000, cache_write_5m=300))])[1] == (Cause(), 0)
    got = _causes([kept, _rec(20, Usage(input_tokens=5, cache_read=19_999, cache_write_5m=301))])[1]
    assert got == (Cause("prefix_changed", "read 19,999 of the 20,000 kept 20 s earlier; the prompt is not recorded, "
                         "so whether the prefix changed or the entry was evicted is unknown"), 1)
    # a shorter prompt can lose only what it holds
    short = _causes([kept, _rec(20, Usage(input_tokens=1500, cache_read=0))])[1]
    assert short[1] == 1500 and short[0].kind == "prefix_changed"


def test_the_ttl_edge_is_the_gap_equal_to_the_ttl_and_its_grace():
    # as the simulator counts it: the TTL and 5 s past it (providers/tables.py: anthropic_lifetime)
    lost = Usage(input_tokens=10, cache_write_5m=20_000)
    assert _causes([_rec(0, W), _rec(305, lost)])[1] == (Cause("ttl_expired", "idle 305 s > ttl 5m; from usage"), 20_000)
    assert _causes([_rec(0, W), _rec(304.5, lost)])[1][0].kind == "prefix_changed"
    # a stream that wrote 1h keeps its entry for the hour
    assert _causes([_rec(0, W), _rec(3604, lost)], hour={"s"})[1][0].kind == "prefix_changed"
    assert _causes([_rec(0, W), _rec(3605, lost)], hour={"s"})[1] == (Cause("ttl_expired", "idle 3,605 s > ttl 1h; from usage"), 20_000)


def test_a_short_prompt_after_a_loss_is_below_the_minimum_and_lost_nothing():
    assert _causes([_rec(0, W), _rec(400, Usage(input_tokens=1023))])[1] == (
        Cause("below_minimum", "1,023 tokens < 1,024; from usage"), 0)
    assert _causes([_rec(0, W), _rec(400, Usage(input_tokens=1024))])[1] == (
        Cause("ttl_expired", "idle 400 s > ttl 5m; from usage"), 1024)


def test_streams_and_models_keep_apart():
    recs = [_rec(0, W, stream="a"), _rec(10, Usage(input_tokens=5000), stream="b", i=1),
            _rec(20, Usage(input_tokens=5000), model="claude-haiku-4-5", stream="a", i=2)]
    assert [c.kind for c, _ in _causes(recs)] == ["cold", "cold", "cold"]


def _gpt(t, usage, i=0):
    return _rec(t, usage, model=GPT, provider="openai", i=i)


def test_an_automatic_cache_expires_only_past_its_optimistic_retention():
    kept = _gpt(0, Usage(input_tokens=2000, cache_read=8064))
    ttl, minimum, name, unit = UsageCauses(set()).limits("openai", GPT, False)
    assert (minimum, unit) == (1024, 128) and name == f"{ttl:.0f} s retained at most" and ttl > 300
    before = _causes([kept, _gpt(ttl - 1, Usage(input_tokens=10_000), i=1)])[1]
    at = _causes([kept, _gpt(ttl, Usage(input_tokens=10_000), i=1)])[1]
    # the 10,064-token prompt was kept whole but its last 80 tokens (reads come in 128-token units)
    assert before[0].kind == "prefix_changed" and before[1] == 9_984
    assert at == (Cause("ttl_expired", f"idle {ttl:,.0f} s > {name}; from usage"), 9_984)


def test_an_automatic_cache_keeps_a_prompt_it_reports_no_write_for():
    # OpenAI reports no writes: a cold 10,000-token prompt is cached all the same, so a request 20 s
    # later that read none of it lost it (it was read as no miss when only reads and writes counted)
    cold = _gpt(0, Usage(input_tokens=10_000))
    got = _causes([cold, _gpt(20, Usage(input_tokens=10_500), i=1)])[1]
    assert got[0].kind == "prefix_changed" and got[1] == 9_984 and "of the 9,984 kept 20 s earlier" in got[0].detail
    # one token under the minimum keeps nothing; at the minimum, the minimum
    assert _causes([_gpt(0, Usage(input_tokens=1023)), _gpt(20, Usage(input_tokens=2000), i=1)])[1] == (Cause(), 0)
    assert _causes([_gpt(0, Usage(input_tokens=1024)), _gpt(20, Usage(input_tokens=2000), i=1)])[1][1] == 1024
    # reading the kept units whole is no miss
    assert _causes([cold, _gpt(20, Usage(input_tokens=516, cache_read=9_984), i=1)])[1] == (Cause(), 0)


def test_a_provider_without_rules_takes_the_stated_default():
    from prefixsim.providers.others import STATED_DEFAULT

    got = UsageCauses(set()).limits("no-such-provider", "m", False)
    assert got == (STATED_DEFAULT.ttl_optimistic, STATED_DEFAULT.min_tokens, f"{STATED_DEFAULT.ttl_optimistic:.0f} s",
                   STATED_DEFAULT.increment)
    # Claude reports its writes: no unit
    assert UsageCauses(set()).limits("anthropic", SONNET, True) == (3605.0, 1024, "ttl 1h", 0)


def test_the_replay_names_the_same_causes_as_the_class():
    recs = [_rec(0, W, i=0), _rec(20, Usage(input_tokens=5, cache_read=19_999, cache_write_5m=301), i=1),
            _rec(400, Usage(input_tokens=10, cache_write_5m=20_300), i=2), _rec(410, Usage(input_tokens=1023), i=3)]
    rows = replay(recs).rows
    assert [(r.cause, r.lost_tokens) for r in rows] == _causes(recs)
    assert [r.cause.kind for r in rows] == ["cold", "prefix_changed", "ttl_expired", "below_minimum"]


def test_losses_are_summed_by_cause_with_missing_costs_kept_missing():
    class Row:
        def __init__(self, kind, tokens, cost, lost, audit=True):
            self.audit, self.cause, self.lost_tokens = audit, Cause(kind), tokens
            self.cost_observed, self.lost_usd = cost, lost

    rows = [Row("ttl_expired", 100, Decimal("0.5"), Decimal("0.2")), Row("ttl_expired", 50, None, None),
            Row("prefix_changed", 7, None, None), Row("", 0, Decimal(1), Decimal(0)),
            Row("ttl_expired", 999, Decimal(9), Decimal(9), audit=False)]
    assert audit_losses(rows) == [("prefix_changed", 1, 7, None, None),
                                  ("ttl_expired", 2, 150, Decimal("0.5"), Decimal("0.2"))]


@pytest.mark.parametrize("missed,expect", [(0, None), (1, "one read")])
def test_lost_cost_of_one_token_is_positive(missed, expect):
    from prefixsim.core.pricing import PriceBook
    from prefixsim.replay.audit_causes import lost_cost

    rates = PriceBook().rates(SONNET, "anthropic")
    u = Usage(input_tokens=5, cache_write_5m=0, cache_write_1h=3, cache_read=0, output_tokens=1)
    got = lost_cost(u, missed, rates)
    assert (got > 0) == bool(expect)
    if missed:   # the 1h write goes first when there is no 5m write
        assert got == rates.cost(u) - rates.cost(Usage(5, 0, 2, 1, 1))
