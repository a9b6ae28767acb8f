"""Pricing pinned with exact decimals (issue 22): long-context tiers from the token after their start
(genai-prices: a tier applies when the prompt is larger than its start), price sheets that set a
price to zero, defaults from the Anthropic multipliers, and the provider id taking part in the look-up."""
from decimal import Decimal

import pytest

from prefixsim.core.pricing import PriceBook
from prefixsim.errors import UserError
from prefixsim.model import Usage


def test_a_tier_applies_from_the_token_after_its_start(prices):
    r = prices.rates("claude-sonnet-4-5", "anthropic")        # $3 / MTok, $6 past 200,000 prompt tokens
    at = Usage(input_tokens=200_000)
    past = Usage(input_tokens=200_001)
    assert r.cost(at) == Decimal("0.6")                          # 200,000 x $3 / 1e6
    assert r.cost(past) == Decimal("1.200006")                   # 200,001 x $6 / 1e6


def test_the_tier_is_chosen_by_the_whole_prompt_not_by_one_class(prices):
    r = prices.rates("claude-sonnet-4-5", "anthropic")
    u = Usage(input_tokens=1, cache_read=200_000, output_tokens=1000)   # prompt 200,001: every class at its tier
    assert r.cost(u) == (Decimal(6) + 200_000 * Decimal("0.6") + 1000 * Decimal("22.5")) / 1_000_000
    assert r.cost_without_cache(u) == (200_001 * Decimal(6) + 1000 * Decimal("22.5")) / 1_000_000


def test_each_token_class_has_its_own_price(prices):
    r = prices.rates("claude-sonnet-4-5", "anthropic")          # 3 / 0.30 / 3.75 / 6 / 15 per MTok
    u = Usage(input_tokens=1_000, cache_write_5m=2_000, cache_write_1h=3_000, cache_read=4_000, output_tokens=5_000)
    assert r.cost(u) == Decimal("0.003") + Decimal("0.0075") + Decimal("0.018") + Decimal("0.0012") + Decimal("0.075")


def test_a_price_sheet_may_set_a_price_to_zero():
    book = PriceBook({"m": {"input": 2, "output": 8, "cache_read": 0, "cache_write_5m": 0}})
    r = book.rates("m")
    assert r.cost(Usage(input_tokens=10**6, cache_read=10**6, cache_write_5m=10**6)) == Decimal(2)
    assert r.cost(Usage(cache_write_1h=10**6)) == Decimal(4)     # unset 1h write: 2x input


def test_unset_sheet_prices_default_to_the_anthropic_multipliers():
    r = PriceBook({"m": {"input": 10, "output": 50}}).rates("m")
    assert r.per_mtok() == {"input": Decimal(10), "output": Decimal(50), "cache_read": Decimal("1.0"),
                            "cache_write_5m": Decimal("12.50"), "cache_write_1h": Decimal(20)}


@pytest.mark.parametrize("row,needle", [({"input": -1, "output": 1}, "out of range"), ({"input": 1}, "required"),
                                        ({"input": "x", "output": 1}, "not a number"), ({"input": 1, "output": 1, "cached": 1}, "unknown keys")])
def test_bad_sheet_rows_are_user_errors(row, needle):
    with pytest.raises(UserError, match=needle):
        PriceBook({"m": row}).rates("m")


def test_the_provider_id_takes_part_in_the_look_up(prices):
    assert prices.rates("gpt-4o", "openai").per_mtok()["input"] == Decimal("2.5")
    with pytest.raises(UserError, match="no price"):
        prices.rates("gpt-4o", "anthropic")


def test_a_sheet_row_wins_over_genai_prices_and_says_so(prices):
    book = PriceBook({"claude-sonnet-4-5": {"input": 1, "output": 2}}, sheet_source="team sheet")
    r = book.rates("claude-sonnet-4-5", "anthropic")
    assert r.per_mtok()["input"] == Decimal(1) and r.source == "team sheet"


def test_deepseek_time_of_day_windows_and_their_edges():
    """genai-prices' DeepSeek windows (api-docs.deepseek.com pricing): 00:30-16:30 UTC at the standard
    rate, the rest of the day at half. A request is priced by the window its own time falls in; the
    window's start belongs to it, its end to the next."""
    import datetime as dt

    book = PriceBook(when=dt.date(2026, 3, 30))
    day = dt.datetime(2026, 3, 30, tzinfo=dt.UTC)
    rate = {h: book.rates("deepseek-chat", "deepseek", day + dt.timedelta(hours=h)).per_mtok()["input"]
            for h in (0, 0.49, 0.5, 16.49, 16.5, 23.99)}
    assert rate == {0: Decimal("0.135"), 0.49: Decimal("0.135"), 0.5: Decimal("0.27"), 16.49: Decimal("0.27"),
                    16.5: Decimal("0.135"), 23.99: Decimal("0.135")}
    assert book.rates_at("deepseek-chat", "deepseek", 9.5 * 3600).per_mtok()["input"] == Decimal("0.135")  # 07:00 + 9.5 h
    assert book.rates_at("deepseek-chat", "deepseek", 9 * 3600).per_mtok()["input"] == Decimal("0.27")     # 16:00
    assert book.windows("deepseek-chat", "deepseek") == (
        "00:00-00:30 UTC input 0.135, cache read 0.035, output 0.55; 00:30-16:30 UTC input 0.27, cache read 0.07, "
        "output 1.1; 16:30-24:00 UTC input 0.135, cache read 0.035, output 0.55 (USD/MTok; each request priced "
        "at its own time)")
    assert book.windows("claude-sonnet-4-5", "anthropic") is None
    assert book.start == dt.datetime(2026, 3, 30, 7, tzinfo=dt.UTC)


def test_a_price_book_caches_rates_per_window_not_per_request():
    import datetime as dt

    book = PriceBook(when=dt.date(2026, 3, 30))
    day = dt.datetime(2026, 3, 30, tzinfo=dt.UTC)
    a = book.rates("deepseek-chat", "deepseek", day + dt.timedelta(hours=1))
    b = book.rates("deepseek-chat", "deepseek", day + dt.timedelta(hours=15))
    c = book.rates("deepseek-chat", "deepseek", day + dt.timedelta(hours=17))
    assert a is b and a is not c                       # one look-up per window
    assert book.rates("claude-sonnet-4-5", "anthropic", day) is book.rates("claude-sonnet-4-5", "anthropic", day + dt.timedelta(hours=20))


def test_rates_name_their_model_whatever_priced_them(prices):
    assert prices.rates("claude-sonnet-4-5", "anthropic").model == "claude-sonnet-4-5"
    assert PriceBook({"m": {"input": 1, "output": 2}}).rates("m").model == "m"
    assert prices.rates("llama-3.1-8b", "vllm").model == "llama-3.1-8b"


def test_a_sheet_1h_write_price_is_used_when_given():
    r = PriceBook({"m": {"input": 2, "output": 8, "cache_write_1h": 3}}).rates("m")
    assert r.cost(Usage(cache_write_1h=10**6)) == Decimal(3)


@pytest.mark.parametrize("value,ok", [(1_000_000, True), ("1000000.0", True), (1_000_000.01, False), (True, False),
                                      ([1], False), ("nan", False)])
def test_a_sheet_price_up_to_the_cap_is_accepted(value, ok):
    from prefixsim.core.pricing import sheet_price

    if ok:
        assert sheet_price("m", "input", value) == Decimal(1_000_000)
    else:
        with pytest.raises(UserError, match=r"^price sheet for m: input "):
            sheet_price("m", "input", value)


def test_an_unknown_sheet_key_is_named_with_the_valid_ones():
    with pytest.raises(UserError) as e:
        PriceBook({"m": {"input": 1, "output": 1, "cached": 1}}).rates("m")
    assert str(e.value) == ("price sheet for m: unknown keys ['cached'] (valid: input, output, cache_read, "
                            "cache_write_5m, cache_write_1h)")


def test_a_time_without_a_zone_is_utc():
    import datetime as dt

    book = PriceBook(when=dt.date(2026, 3, 30))
    naive, aware = dt.datetime(2026, 3, 30, 16, 29), dt.datetime(2026, 3, 30, 16, 29, tzinfo=dt.UTC)
    assert book.rates("deepseek-chat", "deepseek", naive) is book.rates("deepseek-chat", "deepseek", aware)
    assert book.rates("deepseek-chat", "deepseek", naive).per_mtok()["input"] == Decimal("0.27")
    east = dt.datetime(2026, 3, 31 - 1, 17, 29, tzinfo=dt.timezone(dt.timedelta(hours=1)))   # 16:29 UTC
    assert book.rates("deepseek-chat", "deepseek", east).per_mtok()["input"] == Decimal("0.27")


def test_a_clock_start_without_a_zone_is_utc_and_keeps_its_time():
    import datetime as dt

    from prefixsim.core.pricing import clock_start

    assert clock_start(None, dt.datetime(2026, 11, 28, 18, 0)) == dt.datetime(2026, 11, 28, 18, 0, tzinfo=dt.UTC)
    assert clock_start(dt.date(2026, 11, 24), dt.datetime(2026, 11, 28, 19, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))) \
        == dt.datetime(2026, 11, 24, 18, 0, tzinfo=dt.UTC)


@pytest.fixture
def far_east(monkeypatch):
    """The machine's local zone set 8 h east of UTC: nothing in pricing may use local time."""
    import time

    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_times_are_utc_whatever_the_machines_zone(far_east):
    import datetime as dt

    from prefixsim.core.pricing import _genai_cuts, clock_start

    book = PriceBook(when=dt.date(2026, 3, 30))
    assert book.rates("deepseek-chat", "deepseek", dt.datetime(2026, 3, 30, 16, 29)).per_mtok()["input"] == Decimal("0.27")
    assert book.rates("deepseek-chat", "deepseek", dt.datetime(2026, 3, 30, 16, 30)).per_mtok()["input"] == Decimal("0.135")
    assert clock_start(None, dt.datetime(2026, 11, 28, 18, 0)) == dt.datetime(2026, 11, 28, 18, 0, tzinfo=dt.UTC)
    assert book.windows("deepseek-chat", "deepseek").startswith("00:00-00:30 UTC input 0.135")
    import genai_prices

    calc = genai_prices.calc_price(genai_prices.Usage(input_tokens=1, output_tokens=1), model_ref="deepseek-chat",
                                   provider_id="deepseek", genai_request_timestamp=book.start)
    assert _genai_cuts(calc.model) == (1800, 59400)      # 00:30 and 16:30 UTC


def test_a_sheet_is_named_as_a_price_sheet_by_default_and_a_missing_price_says_what_to_do(prices):
    assert PriceBook({"m": {"input": 1, "output": 2}}).rates("m").source == "price sheet"
    with pytest.raises(UserError) as e:
        prices.rates("no-such-model-xyz", "anthropic")
    assert str(e.value).endswith("give one in the scenario's price sheet")


@pytest.mark.parametrize("model,provider,near", [
    # the provider's own id first, though another provider lists a closer-looking one
    # (all providers: 'gpt-4-1106-preview', 'deepseek-v3p2', 'claude-opus-4.8')
    ("gpt-4-1", "openai", "gpt-4.1"), ("deepseek-v3-2", "deepseek", "deepseek-v3.2"),
    ("claude-opus-4.0", "anthropic", "claude-opus-4-0"),
    # nothing near it at the provider: the nearest id of any provider
    ("deepseek-v3", "openai", "deepseek-v3p2")])
def test_an_unpriced_model_is_named_with_the_nearest_id_the_providers_own_first(prices, model, provider, near):
    with pytest.raises(UserError) as e:
        prices.rates(model, provider)
    assert str(e.value).startswith(f"no price for model {model!r} (did you mean {near!r}?) in genai-prices ")


@pytest.mark.parametrize("model,price_id,rates", [
    # docs/rules.md (Bedrock prices, GP aws): a `global.` profile pays the global price, however the
    # model is named after it; every other id the regional one, 10 % above on Sonnet 4.5
    ("global.anthropic.claude-sonnet-4-5", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", ("3", "0.3", "15")),
    ("Global.anthropic.claude-sonnet-4-5-20250929-v1:0", "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
     ("3", "0.3", "15")),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0",
     ("3.3", "0.33", "16.5")),
    ("claude-haiku-4-5", "regional.anthropic.claude-haiku-4-5-20251001-v1:0", ("1.1", "0.11", "5.5"))])
def test_bedrock_ids_pay_the_global_or_the_regional_price(prices, model, price_id, rates):
    r = prices.rates(model, "bedrock")
    per = r.per_mtok()
    assert (per["input"], per["cache_read"], per["output"]) == tuple(Decimal(x) for x in rates)
    assert f": aws/{price_id}, prices as of" in r.source


def test_a_model_bedrock_does_not_list_is_named_as_unpriced(prices):
    with pytest.raises(UserError) as e:
        prices.rates("gpt-4o", "bedrock")
    assert str(e.value).startswith("no price for model 'gpt-4o'")


@pytest.mark.parametrize("value,says", [
    (-1, "input -1 is out of range (0 to 1,000,000 USD per MTok)"), ("x", "input 'x' is not a number (USD per MTok)"),
    (True, "input must be a number (USD per MTok)"), ([3], "input must be a number (USD per MTok)")])
def test_a_bad_sheet_price_is_named_by_model_and_key(value, says):
    with pytest.raises(UserError) as e:
        PriceBook({"my-model": {"input": value, "output": 1}}).rates("my-model")
    assert str(e.value) == f"price sheet for my-model: {says}"


def test_a_sheet_may_give_gemini_explicit_cache_storage_beside_the_token_prices():
    # storage_mtok_hour prices a CachedContent's storage (G-PR), not a token class
    r = PriceBook({"m": {"input": 2, "output": 8, "storage_mtok_hour": 4.5}}).rates("m")
    assert r.cost(Usage(input_tokens=10**6, output_tokens=10**6)) == Decimal(10)


def test_a_design_priced_before_its_snapshots_release_day_is_refused_and_on_that_day_priced():
    import datetime as dt

    model = "gpt-4o-2024-08-06"                       # the snapshot of 2024-08-06 (its id says so)
    with pytest.raises(UserError) as e:
        PriceBook(when=dt.date(2024, 8, 5), designs=True).rates(model, "openai")
    assert str(e.value).startswith(f"{model} is the snapshot of 2024-08-06: on 2024-08-05 (the price date) it did "
                                   "not exist yet")
    assert PriceBook(when=dt.date(2024, 8, 6), designs=True).rates(model, "openai").model == model
    # real traffic is priced at its logged time whatever that clock said (designs=False)
    assert PriceBook(when=dt.date(2024, 8, 5)).rates(model, "openai").model == model
    from prefixsim.core.pricing import snapshot_date

    assert snapshot_date("claude-haiku-4-5-20251001") == dt.date(2025, 10, 1)   # year, month, day in that order
    assert snapshot_date("claude-x-20251399") is None                           # digits that are no date


def test_an_unpriced_model_nothing_is_near_gets_no_hint(prices):
    with pytest.raises(UserError) as e:
        prices.rates("zzzz-qqqq", "openai")
    assert str(e.value).startswith("no price for model 'zzzz-qqqq' in genai-prices ")


@pytest.mark.parametrize("model,listed", [("gpt-5.6-2026-05-14", "gpt-5.6-sol"), ("openai/gpt-5.6-sol", "gpt-5.6-sol"),
                                          ("openrouter/openai/gpt-5.6-sol", "gpt-5.6-sol")])
def test_a_router_prefix_or_a_snapshot_date_genai_prices_does_not_list_is_priced_by_the_family(prices, model, listed):
    # as providers write names: a router's `openai/` prefix, a dated snapshot genai-prices lists by its
    # family only; the rates keep the name as given and their source names the id that priced them
    r = prices.rates(model, "openai")
    assert r.model == model and f": openai/{listed}, prices as of" in r.source


def test_a_usage_genai_prices_rejects_is_one_line_naming_the_model(monkeypatch):
    """genai-prices raises ValueError for usage it cannot price (non-finite arithmetic, a negative
    leaf): the user sees one line with the model and its reason, not a traceback."""
    import datetime as dt

    import genai_prices

    from prefixsim.core import pricing

    def refuse(*a, **k):
        raise ValueError("Usage arithmetic produced a non-finite float")

    monkeypatch.setattr(genai_prices, "calc_price", refuse)
    with pytest.raises(UserError) as e:
        pricing._from_genai_prices("claude-sonnet-4-5", "anthropic", dt.datetime(2026, 1, 5, tzinfo=dt.UTC))
    assert str(e.value) == "no price for model 'claude-sonnet-4-5': Usage arithmetic produced a non-finite float"


def test_a_model_genai_prices_lists_without_an_output_price_is_named(monkeypatch):
    """Rates need both token prices: a model listed with an input price and no output price (or the
    reverse) is one line asking for a price sheet, not a price computed from a missing number."""
    import datetime as dt
    from types import SimpleNamespace

    import genai_prices

    from prefixsim.core import pricing

    for inp, out in ((Decimal(3), None), (None, Decimal(15))):
        listed = SimpleNamespace(model_price=SimpleNamespace(input_mtok=inp, output_mtok=out))
        monkeypatch.setattr(genai_prices, "calc_price", lambda *a, **k: listed)
        with pytest.raises(UserError) as e:
            pricing._from_genai_prices("claude-sonnet-4-5", "anthropic", dt.datetime(2026, 1, 5, tzinfo=dt.UTC))
        assert str(e.value) == "genai-prices has no token prices for 'claude-sonnet-4-5'; give one in a price sheet"
